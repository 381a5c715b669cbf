# exact stacks the clients' factors in the output's dtype, input 1's: with client 2's factors stored in float16, an
# output after the float32 client 1 keeps client 2's A rows exactly (float16 widens exactly) and one after the
# float16 client rounds client 1's A rows to float16 once, as numpy's astype does; both give numpy's float64 mean
# update to their dtype's precision.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors, write_safetensors
path = "client2/adapter_model.safetensors"
tensors, meta = read_safetensors(path)
write_safetensors(path, {n: a.astype(np.float16) if ".lora_" in n else a for n, a in tensors.items()}, meta)
PY
"$WAVG" merge -q client1 client2 -o f32/
"$WAVG" merge -q client2 client1 -w 2,1 -o f16/
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update, read_adapter, update_of
for out, clients, weights, dtype, tol in (("f32", ["client1", "client2"], [1, 1], np.float32, 1e-6),
                                          ("f16", ["client2", "client1"], [2, 1], np.float16, 2e-3)):
    tensors, _ = read_safetensors(out + "/adapter_model.safetensors")
    want, _ = mean_update(clients, weights)
    got = update_of(out)
    for m in want:
        a = tensors[m + ".lora_A.weight"]
        assert a.dtype == dtype, (out, m, a.dtype)
        stacked = np.concatenate([read_adapter(c)[1][m][0].astype(dtype) for c in clients])
        assert np.array_equal(a, stacked), (out, m, a, stacked)
        assert np.allclose(got[m], want[m], rtol=tol, atol=tol), (out, m, got[m], want[m])
print("factors stacked in input 1's dtype")
PY
