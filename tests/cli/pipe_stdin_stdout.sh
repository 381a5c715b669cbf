# Pipes: `-` reads an input from standard input and `-o -` writes the output to standard output (with --format),
# so merges chain in a shell pipeline: mean(node1, node2) piped into a 2:1 weighted merge with node3 is the mean of
# the three, compared with numpy's over h5py's reading of the inputs. The result line goes to stderr when the
# output is stdout, and the provenance names the piped input "-".
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
M=$SAMPLES/mlp
"$WAVG" merge "$M/node1.h5" "$M/node2.h5" -o - --format hdf5 2>first.err \
  | "$WAVG" merge - "$M/node3.h5" -w 2,1 -o avg.h5
cat first.err
cat "$M/node1.h5" | "$WAVG" convert - -o - --format safetensors 2>convert.err > one.safetensors
cat convert.err
/usr/bin/python3 - "$M" "$ROOT/tests/cli" <<'PY'
import json, sys
import h5py, numpy as np
sys.path.insert(0, sys.argv[2])
import safetensors_tools
from h5_tools import datasets as weights
m = sys.argv[1]
ins = [weights(f"{m}/node{i}.h5") for i in (1, 2, 3)]
avg = weights("avg.h5")
floats = [n for n in avg if avg[n].dtype.kind == "f"]
print(len(floats), "float datasets, each numpy's mean within 1 ulp:",
      all(np.allclose(avg[n], np.mean([x[n].astype(np.float64) for x in ins], axis=0), rtol=2e-7, atol=0)
          for n in floats))
with h5py.File("avg.h5", "r") as f:
    v = f.attrs["wavg_inputs"]
    print([d["file"].replace(m, "M") for d in json.loads(v if isinstance(v, str) else v.decode())])
meta, tensors = safetensors_tools.load("one.safetensors")
print([d["file"] for d in json.loads(meta["wavg_inputs"])], len(tensors), "tensors, each node1's:",
      sorted(tensors) == sorted(ins[0]) and all(np.array_equal(tensors[n], ins[0][n]) for n in tensors))
PY
