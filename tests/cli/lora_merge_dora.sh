# DoRA adapters merge part by part, as DoRA separates them: two DoRA clients (ranks 2 and 1) weighted 1:3 give a
# DoRA adapter (use_dora kept, rank 3) whose magnitude vector is numpy's weighted mean of theirs and whose s*B*A is
# numpy's float64 mean update; folded into the base (--lora-apply) that gives m * (W + dW) / ||W + dW|| with the
# mean magnitude m, the mean update dW and each output row's norm, as peft's DoRA layer computes its weight.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" "$SAMPLES/lora/base.safetensors" .
cp -r "$SAMPLES/lora/dora" "$SAMPLES/lora/dora2" .
"$WAVG" merge dora dora2 -w 1,3 -o agg/
"$WAVG" merge -q --lora-apply base.safetensors dora dora2 -w 1,3 -o folded.safetensors
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update, read_adapter, update_of
config, modules, other = read_adapter("agg")
assert config["use_dora"] is True and config["r"] == 3, config
want, want_other = mean_update(["dora", "dora2"], [1, 3])
mag = "base_model.model.layers.0.q_proj.lora_magnitude_vector"
assert np.allclose(want_other[mag], (np.array([2, 3, 4]) + 3 * np.array([1, 5, 2])) / 4)
assert sorted(other) == [mag] and np.allclose(other[mag], want_other[mag], rtol=1e-6), other
got = update_of("agg")
for m, dw in want.items():
    assert np.allclose(got[m], dw, rtol=1e-6, atol=1e-6), (m, got[m], dw)
base = read_safetensors("base.safetensors")[0]
folded = read_safetensors("folded.safetensors")[0]
w = base["layers.0.q_proj.weight"].astype(np.float64) + want["base_model.model.layers.0.q_proj"]
w = (want_other[mag] / np.linalg.norm(w, axis=1))[:, None] * w
assert np.allclose(folded["layers.0.q_proj.weight"], w, rtol=1e-6, atol=1e-6), (folded["layers.0.q_proj.weight"], w)
for n in ("layers.0.v_proj.weight", "head.weight"):
    assert np.array_equal(folded[n], base[n]), n
print("DoRA: mean magnitude, mean update, folded as numpy folds it")
PY
