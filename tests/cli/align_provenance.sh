# align's output records how it was made: wavg_command align, wavg_method "weight matching to" the reference, and
# both models fingerprinted in wavg_inputs, the input then the reference (--to), each as given with its XXH3-128
# from Python's xxhash, read back with h5py independently of wavg.
/usr/bin/python3 -c 'import h5py, xxhash' 2>/dev/null || { echo "no h5py/xxhash"; exit 77; }
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" .
"$WAVG" align -q node2.h5 --to node1.h5 -o aligned.h5
/usr/bin/python3 - <<'PY'
import json, h5py, xxhash
def xxh(n): return xxhash.xxh3_128_hexdigest(open(n, "rb").read())
with h5py.File("aligned.h5", "r") as f:
    meta = {k: (v if isinstance(v, str) else v.decode()) for k, v in f.attrs.items() if k.startswith("wavg_")}
assert meta["wavg_command"] == "align", meta
assert meta["wavg_method"] == "weight matching to node1.h5", meta
assert json.loads(meta["wavg_inputs"]) == [{"file": n, "xxh3_128": xxh(n)} for n in ("node2.h5", "node1.h5")], meta
assert "wavg_base" not in meta
print("align records", meta["wavg_method"], "and both models")
PY
