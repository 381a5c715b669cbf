# --weight-by KEY weights adapters by their metadata entry KEY (FedAvg: num_examples in each
# adapter_model.safetensors' __metadata__): three clients with 10, 30 and 20 examples merge into the exact mean
# update with weights 1:3:2 (numpy's float64 sum_i w_i s_i B_i A_i), and --lora-apply with --weight-by folds that
# update into the base; an adapter without the entry is refused, naming it (exit 1).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" "$SAMPLES/lora/base.safetensors" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/client3" .
/usr/bin/python3 -c 'from lora_tools import set_examples; set_examples({"client1": 10, "client2": 30, "client3": 20})'
"$WAVG" merge -q client1 client2 client3 --weight-by num_examples -o agg/
"$WAVG" merge -q --lora-apply base.safetensors client1 client2 client3 --weight-by num_examples -o folded.safetensors
cp -r "$SAMPLES/lora/client3" plain
"$WAVG" merge -q client1 plain --weight-by num_examples -o refused/ 2>&1 || echo "exit $?"
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update, update_of
want, others = mean_update(["client1", "client2", "client3"], [1, 3, 2])
got = update_of("agg")
for m, dw in want.items():
    assert np.allclose(got[m], dw, rtol=1e-6, atol=1e-6), (m, got[m], dw)
base = read_safetensors("base.safetensors")[0]
folded = read_safetensors("folded.safetensors")[0]
for m, dw in want.items():
    n = m[len("base_model.model."):] + ".weight"
    assert np.allclose(folded[n], base[n] + dw, rtol=1e-6, atol=1e-6), n
assert np.allclose(folded["head.weight"], others["base_model.model.head.weight"], rtol=1e-6)
print("weighted by num_examples")
PY
