# torch 2's uint16/32/64 tensors (_rebuild_tensor_v3 over an UntypedStorage: samples/torch_uint, written by
# torch 2.15) are read with their dtypes and shapes, strides, storage offset and shared storage; a convert gives
# exactly the closed forms that numpy computed when the samples were made (expected.npz), and a mean averages the
# float32 tensor and copies input 1's integers (--int-policy first), or names each integer tensor that differs and
# the first differing element (--int-policy equal, exit 3). A float8 tensor is refused in one line naming its dtype,
# exit 1, no output written.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "python3-numpy missing"; exit 77; }
cp "$SAMPLES"/torch_uint/a.pt "$SAMPLES"/torch_uint/b.pt "$SAMPLES"/torch_uint/f8.pt .
"$WAVG" inspect a.pt
"$WAVG" convert -q a.pt -o a.safetensors
"$WAVG" merge -q a.pt b.pt -o mean.safetensors
"$WAVG" merge -q a.pt b.pt --int-policy equal -o equal.safetensors || echo "--int-policy equal: exit $?"
"$WAVG" merge -q f8.pt a.pt -o f8_mean.pt || echo "f8.pt: exit $?"
[ ! -e f8_mean.pt ] && [ ! -e equal.safetensors ] || { echo "an output was written"; exit 1; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$SAMPLES"/torch_uint/expected.npz <<'PY'
import sys
import numpy as np
from safetensors_tools import load
want = np.load(sys.argv[1])
names = ["u16", "u32", "u64", "u16_slice", "w", "opt.step", "tagged"]
_, got = load("a.safetensors")
assert sorted(got) == sorted(names), sorted(got)
for n in names:
    a = want["a/" + n]
    assert got[n].dtype == a.dtype and got[n].shape == a.shape and np.array_equal(got[n], a), n
_, mean = load("mean.safetensors")
for n in names:
    a, b = want["a/" + n], want["b/" + n]
    ref = ((a.astype(np.float64) + b) / 2).astype(a.dtype) if a.dtype == np.float32 else a
    assert mean[n].dtype == a.dtype and np.array_equal(mean[n], ref), n
    assert n == "w" or not np.array_equal(a, b), n  # each integer tensor differs between the inputs
print("convert and mean: the closed forms")
PY
