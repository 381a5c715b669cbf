# --lora frozen-a (FFA-LoRA): clients sharing A bit for bit get A copied and B averaged, which is the exact mean
# update (numpy's float64 sum_i w_i s_i B_i A_i); clients whose A differ are refused, naming the first module.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" .
/usr/bin/python3 - <<'PY'
import shutil, numpy as np
from hf_tools import read_safetensors, write_safetensors
for k in (1, 2):
    shutil.copytree(f"client{k}", f"frozen{k}")
    t, meta = read_safetensors(f"client{k}/adapter_model.safetensors")
    t = {n: (read_safetensors("client1/adapter_model.safetensors")[0][n] if ".lora_A." in n else v)
         for n, v in t.items()}
    write_safetensors(f"frozen{k}/adapter_model.safetensors", t, meta)
PY
"$WAVG" merge -q frozen1 frozen2 -w 1,3 --lora frozen-a -o ffa/
/usr/bin/python3 - <<'PY'
import numpy as np
from lora_tools import mean_update, update_of
want, _ = mean_update(["frozen1", "frozen2"], [1, 3])
got = update_of("ffa")
for m in want:
    assert np.allclose(got[m], want[m], rtol=1e-6, atol=1e-7), m
print("frozen A: the exact mean update")
PY
"$WAVG" merge -q client1 client2 --lora frozen-a -o bad/ || { code=$?; [ ! -e bad ] || echo "bad/ written"; exit $code; }
