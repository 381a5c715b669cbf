# merge --lora-apply folds adapters into input 1, their base, in the base's format: one LoRA adapter gives
# W + s*B*A for each adapted weight and its saved head module in place of the base's; a DoRA adapter gives
# m * (W + s*B*A) / ||W + s*B*A|| (the norm of each output row, as peft's get_weight_norm); three clients weighted
# 1:2:1 give W plus their mean update (numpy's float64 sum_i w_i s_i B_i A_i). Every value within float32 rounding
# of numpy's.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" "$SAMPLES/lora/base.safetensors" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/client3" "$SAMPLES/lora/dora" .
"$WAVG" merge -q --lora-apply base.safetensors client1 -o one.safetensors
"$WAVG" merge -q --lora-apply base.safetensors dora -o dora.safetensors
"$WAVG" merge --lora-apply base.safetensors client1 client2 client3 -w 1,2,1 -o mean.safetensors
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update, read_adapter, update_of
base = {n: v.astype(np.float64) for n, v in read_safetensors("base.safetensors")[0].items()}
def check(out, want):
    got = read_safetensors(out)[0]
    assert sorted(got) == sorted(want), (out, sorted(got))
    for n in want:
        assert got[n].dtype == np.float32 and np.allclose(got[n], want[n], rtol=1e-6, atol=1e-6), (out, n, got[n], want[n])
def name(module):
    return module[len("base_model.model."):] + ".weight"
want = dict(base)
for m, dw in update_of("client1").items():
    want[name(m)] = base[name(m)] + dw
want["head.weight"] = read_adapter("client1")[2]["base_model.model.head.weight"]
check("one.safetensors", want)
want = dict(base)
_, modules, other = read_adapter("dora")
for m, (a, b, s) in modules.items():
    w = base[name(m)] + s * b @ a
    mag = other[m + ".lora_magnitude_vector"]
    want[name(m)] = (mag / np.linalg.norm(w, axis=1))[:, None] * w
check("dora.safetensors", want)
updates, others = mean_update(["client1", "client2", "client3"], [1, 2, 1])
want = dict(base)
for m, dw in updates.items():
    want[name(m)] = base[name(m)] + dw
want["head.weight"] = others["base_model.model.head.weight"]
check("mean.safetensors", want)
print("folded as numpy folds them")
PY
