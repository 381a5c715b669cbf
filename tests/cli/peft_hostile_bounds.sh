# PEFT adapter folders copied from samples/lora/client1 whose adapter_config.json declares a rank of 2^40, and
# nests 1,000,000 JSON arrays: inspect refuses each in one line, exit 1, within 256 MiB and 20 s
# (tests/support/bounded.py).
for f in rank deep; do
  mkdir $f && cp "$SAMPLES"/lora/client1/* $f/
done
/usr/bin/python3 - <<'PY'
import json
config = json.load(open("rank/adapter_config.json"))
config["r"] = 1 << 40
json.dump(config, open("rank/adapter_config.json", "w"))
text = open("deep/adapter_config.json").read().rstrip()
open("deep/adapter_config.json", "w").write(text[:-1] + ', "nested": ' + "[" * 1000000 + "]" * 1000000 + "}")
PY
for f in rank deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f
done
