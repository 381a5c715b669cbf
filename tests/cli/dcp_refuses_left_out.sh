# A DCP folder output keeps input 1's .metadata and data files whole, so it cannot leave out a tensor of input 1:
# --optimizer-state drop and --exclude are refused (exit 2) naming the first tensor (they used to exit 0 with input 1's
# values of it still in the folder), and nothing is written. A .safetensors output leaves them out.
R="$SAMPLES"/dcp/run
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o out/ --optimizer-state drop 2>&1 || echo "exit $?"
test ! -e out
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o out/ --exclude 'model.fc*.bias' 2>&1 || echo "exit $?"
test ! -e out
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o out.safetensors --optimizer-state drop
/usr/bin/python3 - <<'PY'
import json, struct
with open("out.safetensors", "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
print(sorted(k for k in header if k != "__metadata__"))
PY
