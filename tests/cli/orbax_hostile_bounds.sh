# Small hostile Orbax checkpoints (per-leaf zarr v2, written as JSON by hand): an array whose .zarray claims 2^80
# float32 values in one chunk of 8 bytes (refused in one error line, exit 1), and one whose chunk grid claims 2^60
# chunks of one value, one of them stored (zarr reads the others as the fill value: listed, exit 0), and a tree of
# 180,000 leaves without arrays beside one array (parsed in time linear in the leaves: it took minutes while the
# metadata's objects were searched key by key): inspect ends each within 256 MiB and 20 s
# (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
import json
import os
def leaf(keys):
    return {"key_metadata": [{"key": k, "key_type": 2} for k in keys],
            "value_metadata": {"value_type": "jax.Array", "skip_deserialize": False}}
def step(folder, leaves, arrays):
    os.makedirs(folder)
    tree = {repr(tuple(keys)): leaf(keys) for keys in leaves}
    json.dump({"tree_metadata": tree, "use_ocdbt": False, "use_zarr3": False}, open(f"{folder}/_METADATA", "w"))
    for name, (shape, chunks, key) in arrays.items():
        os.makedirs(f"{folder}/{name}")
        json.dump({"chunks": chunks, "compressor": None, "dtype": "<f4", "fill_value": None, "filters": None,
                   "order": "C", "shape": shape, "zarr_format": 2}, open(f"{folder}/{name}/.zarray", "w"))
        open(f"{folder}/{name}/{key}", "wb").write(b"\0" * 8)
step("shape", [["w"]], {"w": ([1 << 40, 1 << 40], [1 << 40, 1 << 40], "0.0")})
step("grid", [["w"]], {"w": ([1 << 30, 1 << 30], [1, 1], "0.0")})
step("many", [["w"]], {"w": ([2], [2], "0")})
meta = json.load(open("many/_METADATA"))
for i in range(180000):
    meta["tree_metadata"][f"n{i}"] = {"key_metadata": [{"key": f"n{i}"}], "value_metadata": {"value_type": "None"}}
json.dump(meta, open("many/_METADATA", "w"))
PY
for f in shape grid; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f
done
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect many | tail -n 2
