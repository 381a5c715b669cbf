# The output keeps input 1's whole tree: every group, every attribute with its value and type, every dataset's
# dtype, shape and storage layout; only averaged values differ, and the root gains wavg's provenance attributes
# (wavg_version, wavg_command, wavg_method, wavg_inputs). Checked with h5py, independently of wavg.
PY=
for p in python3 /usr/bin/python3; do "$p" -c 'import h5py' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || { echo "h5py is not installed"; exit 77; }
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" "$SAMPLES/mlp/node3.h5" -o avg.h5 -q
"$WAVG" merge "$SAMPLES/dtypes/a.h5" "$SAMPLES/dtypes/b.h5" -o d.h5 -q
"$PY" - "$SAMPLES/mlp/node1.h5" avg.h5 "$SAMPLES/dtypes/a.h5" d.h5 <<'PYEOF'
import sys, h5py, numpy as np
def describe(f):
    out = []
    def attrs(obj):
        return sorted((k, str(obj.attrs.get_id(k).dtype), repr(obj.attrs[k])) for k in obj.attrs
                      if not (obj.name == "/" and k.startswith("wavg_")))
    out.append(("/", "group", attrs(f)))
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out.append((name, "dataset", str(obj.dtype), obj.shape, obj.chunks, obj.compression, attrs(obj)))
        else:
            out.append((name, "group", attrs(obj)))
    f.visititems(visit)
    return out
for a, b in [(sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])]:
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        da, db = describe(fa), describe(fb)
        if da != db:
            print("tree differs:", a, b)
            for x, y in zip(da, db):
                if x != y: print(" ", x, "\n ", y)
            sys.exit(1)
        added = sorted(k for k in fb.attrs if k.startswith("wavg_"))
        if added != ["wavg_command", "wavg_inputs", "wavg_method", "wavg_version"]:
            print("provenance attributes:", added)
            sys.exit(1)
        print(f"{b}: same tree as input 1 ({len(da)} objects) plus provenance")
PYEOF
