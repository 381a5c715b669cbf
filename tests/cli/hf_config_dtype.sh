# A Hugging Face folder output's config.json says the dtype its weights are written in (transformers' torch_dtype,
# or dtype as transformers >= 4.56 writes it), so from_pretrained(dtype="auto") loads them as stored: --out-dtype,
# a recipe's dtype, and a float16 model's merge; a config.json that already says so is copied byte for byte.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import write_safetensors
for name, dtype in (("a", np.float32), ("b", np.float32), ("h1", np.float16), ("h2", np.float16)):
    os.makedirs(name)
    write_safetensors(f"{name}/model.safetensors", {"w": np.arange(6, dtype=dtype).reshape(2, 3),
                                                    "step": np.array([3], dtype=np.int64)}, {"format": "pt"})
# Python's json.dump (indent 2, as save_pretrained writes it); h1 says "dtype" (transformers >= 4.56).
for name, key, value in (("a", "torch_dtype", "float32"), ("b", "torch_dtype", "float32"), ("h1", "dtype", "float32"),
                         ("h2", "torch_dtype", "float16")):
    with open(f"{name}/config.json", "w") as f:
        json.dump({"hidden_size": 3, key: value, "rope_theta": 10000.0, "rms_norm_eps": 1e-05}, f, indent=2)
PY
printf 'models:\n  - model: a\n    parameters:\n      weight: 1\n  - model: b\n    parameters:\n      weight: 1\nmerge_method: linear\ndtype: bfloat16\n' > r.yml
"$WAVG" merge -q a/ b/ --out-dtype float16 -o half/
"$WAVG" merge -q --recipe r.yml -o bf/
"$WAVG" merge -q a/ b/ -o same/
"$WAVG" merge -q h1/ h2/ -o h/
"$WAVG" convert -q h2/ -o h2c/
/usr/bin/python3 - <<'PY'
import json
for out, key, want in (("half", "torch_dtype", "float16"), ("bf", "torch_dtype", "bfloat16"),
                       ("same", "torch_dtype", "float32"), ("h", "dtype", "float16")):
    config = json.load(open(f"{out}/config.json"))
    assert config[key] == want and config["rms_norm_eps"] == 1e-05 and config["rope_theta"] == 10000.0, (out, config)
    print(out, key, config[key])
assert open("same/config.json", "rb").read() == open("a/config.json", "rb").read()
assert open("h2c/config.json", "rb").read() == open("h2/config.json", "rb").read()
print("unchanged byte for byte where it says the dtype written")
PY
