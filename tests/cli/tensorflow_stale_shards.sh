# A new TensorFlow output whose prefix already has data shards (issue 39 C): avg.ckpt.data-00000-of-00002 and
# -00001-of-00002 with no .index beside them (an older checkpoint's, or a copy in progress). Without --force the
# merge is refused (exit 2, as an existing output is) naming the first, and every file stays; with --force the
# stale shards go and the new checkpoint reads back (tests/cli/tf_bundle.py, not wavg) as numpy's mean, while a
# second checkpoint avg.ckpt.old, whose names start like the prefix, and the user's notes stay byte for byte.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
D=$SAMPLES/dtypes
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o avg.ckpt.old --format tensorflow
echo stale0 >avg.ckpt.data-00000-of-00002
echo stale1 >avg.ckpt.data-00001-of-00002
echo notes >avg.ckpt.notes
sha256sum avg.ckpt.* >../before.$$
code=0
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o avg.ckpt --format tensorflow 2>&1 || code=$?
echo "without --force: exit $code"
sha256sum --quiet -c ../before.$$ && echo "every file is as before"
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o avg.ckpt --format tensorflow --force
ls -A | LC_ALL=C sort
grep -v data-0000.-of-00002 ../before.$$ | sha256sum --quiet -c - && echo "the second checkpoint and the notes are as before"
rm ../before.$$
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$D" <<'PY'
import sys
import h5py, numpy as np
import tf_bundle as tb
a, b = h5py.File(sys.argv[1] + "/a.h5", "r"), h5py.File(sys.argv[1] + "/b.h5", "r")
ckpt = tb.read_checkpoint("avg.ckpt")
for n in ("layer1/b", "layer1/w", "layer2/w"):
    x, y = a[n][()], b[n][()]
    assert ckpt[n][2].tobytes() == ((x.astype(np.float64) + y.astype(np.float64)) / 2).astype(x.dtype).tobytes(), n
print("the new checkpoint holds the mean")
PY
