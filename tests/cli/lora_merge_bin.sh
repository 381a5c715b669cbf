# --format peft-bin writes the adapter folder with adapter_model.bin, a torch.save state_dict: torch.load reads
# the exact aggregate of two clients (numpy's float64 mean update within float32 rounding, A stacked bit for bit),
# wavg reads the folder back as an adapter (inspect), and written with --force over a safetensors adapter it
# removes the old adapter_model.safetensors, which peft would load first; the safetensors writer does the same for
# an old adapter_model.bin.
/usr/bin/python3 -c 'import numpy, torch' 2>/dev/null || { echo "numpy or torch missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" .
"$WAVG" merge -q client1 client2 --format peft-bin -o bin/
ls bin
"$WAVG" inspect bin | head -1
cp -r client1 over
"$WAVG" merge -q client1 client2 --format peft-bin -o over --force
ls over
"$WAVG" merge -q client1 client2 -o over --force
ls over
/usr/bin/python3 - <<'PY'
import numpy as np, torch
from lora_tools import mean_update, pattern, read_adapter
import json, math
state = torch.load("bin/adapter_model.bin")
config = json.load(open("bin/adapter_config.json"))
want, want_other = mean_update(["client1", "client2"], [1, 1])
for m, dw in want.items():
    a = state[m + ".lora_A.weight"].double().numpy()
    b = state[m + ".lora_B.weight"].double().numpy()
    r = pattern(config["rank_pattern"], m, config["r"])
    s = pattern(config["alpha_pattern"], m, config["lora_alpha"]) / r
    assert a.shape[0] == r and np.allclose(s * b @ a, dw, rtol=1e-6, atol=1e-6), m
    stacked = np.concatenate([read_adapter(c)[1][m][0] for c in ("client1", "client2")])
    assert np.array_equal(a, stacked), m
for n, v in want_other.items():
    assert np.allclose(state[n].double().numpy(), v, rtol=1e-6), n
print("adapter_model.bin: the exact mean update")
PY
