# --force replaces an existing TensorFlow checkpoint (its .index, its data shard and the `checkpoint` state file,
# whose names the prefix fixes): the new one reads back (tests/cli/tf_bundle.py, independent of wavg) as numpy's
# float64 mean of the new inputs, an old checkpoint's other data shards (PREFIX.data-00001-of-00002) go, and other
# files beside it stay. Without --force the old checkpoint is refused and stays.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
D=$SAMPLES/dtypes
"$WAVG" merge -q "$D/a.h5" "$D/a.h5" -o out.ckpt --format tensorflow --tf-state
echo notes > out.ckpt.notes
echo stale > out.ckpt.data-00001-of-00002
code=0
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o out.ckpt --format tensorflow --tf-state 2>&1 || code=$?
echo "without --force: exit $code"
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o out.ckpt --format tensorflow --tf-state --force
ls -A
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$D" <<'PY'
import sys
import h5py, numpy as np
import tf_bundle as tb
a, b = h5py.File(sys.argv[1] + "/a.h5", "r"), h5py.File(sys.argv[1] + "/b.h5", "r")
ckpt = tb.read_checkpoint("out.ckpt")
for n in ("layer1/b", "layer1/w", "layer2/w", "quant/table", "step"):
    x, y = a[n][()], b[n][()]
    want = ((x.astype(np.float64) + y.astype(np.float64)) / 2).astype(x.dtype) if x.dtype.kind == "f" else x
    assert ckpt[n][2].tobytes() == want.tobytes(), n
print("the new checkpoint holds the new mean")
PY
