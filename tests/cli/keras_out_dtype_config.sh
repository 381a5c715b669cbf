# With --out-dtype, a .keras output's config.json records the new dtype: every layer's DTypePolicy names it, an
# InputLayer's dtype (the data's) stays float32, and the weights are float16 datasets (read with h5py and zipfile).
# Without --out-dtype config.json is input 1's byte for byte.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
K=$SAMPLES/keras3
"$WAVG" convert -q "$K/nested_a.keras" --out-dtype float16 -o half.keras
"$WAVG" merge -q "$K/nested_a.keras" "$K/nested_b.keras" -o same.keras
/usr/bin/python3 - "$K" <<'PY'
import io, json, sys, zipfile
import h5py
k = sys.argv[1]
def policies(node, found, in_input=False):
    if isinstance(node, list):
        for x in node: policies(x, found, in_input)
    elif isinstance(node, dict):
        here = in_input or node.get("class_name") == "InputLayer"
        d = node.get("dtype")
        if isinstance(d, dict): found.add(("policy", d["config"]["name"]))
        elif isinstance(d, str): found.add(("input" if here else "string", d))
        for v in node.values(): policies(v, found, here)
    return found
z = zipfile.ZipFile("half.keras")
print(sorted(policies(json.loads(z.read("config.json")), set())))
dtypes = set()
with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
    f.visititems(lambda n, d: dtypes.add(str(d.dtype)) if isinstance(d, h5py.Dataset) else None)
print(sorted(dtypes))
print(zipfile.ZipFile("same.keras").read("config.json") == zipfile.ZipFile(f"{k}/nested_a.keras").read("config.json"))
PY
