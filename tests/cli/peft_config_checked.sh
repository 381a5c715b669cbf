# An adapter's config is checked against its tensors before anything is read (exit 1): a config whose r says 3
# where the factors have rank 2, and a module with factor A but no factor B.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
cp -r "$SAMPLES/lora/client1" wrong_r
cp -r "$SAMPLES/lora/client1" no_b
/usr/bin/python3 - <<'PY'
import json
from hf_tools import read_safetensors, write_safetensors
c = json.load(open("wrong_r/adapter_config.json"))
c["r"] = 3
json.dump(c, open("wrong_r/adapter_config.json", "w"))
t, meta = read_safetensors("no_b/adapter_model.safetensors")
del t["base_model.model.layers.0.v_proj.lora_B.weight"]
write_safetensors("no_b/adapter_model.safetensors", t, meta)
PY
status=0
"$WAVG" inspect wrong_r || status=$?
"$WAVG" inspect no_b || status=$?
exit $status
