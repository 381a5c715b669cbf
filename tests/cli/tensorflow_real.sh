# Real TensorFlow Serving checkpoints (../shared/real-checkpoints/tfserving-*). The TF1 pair is merged by prefix
# and by .index path; the TF2 one (object graph, a Snappy-compressed index block) is merged with itself and
# converted to HDF5 and back. tests/cli/tf_bundle.py, a reader independent of wavg (its own CRC-32C, Snappy and
# table code), checks every output: keys sorted, every checksum right, floats equal numpy's float64 mean rounded
# once, the object graph byte for byte input 1's; h5py reads the HDF5.
R=$SHARED/real-checkpoints
[ -d "$R/tfserving-half-plus-two-gpu" ] || { echo "no shared checkpoints"; exit 77; }
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
T1=$R/tfserving-half-plus-two-gpu/variables T3=$R/tfserving-half-plus-three/variables
T2=$R/tfserving-half-plus-two-tf2-cpu/variables
"$WAVG" merge "$T1" "$T3.index" -o avg.ckpt
"$WAVG" merge -q "$T2" "$T2" -o tf2.ckpt-7
"$WAVG" convert -q "$T2" -o tf2.h5
"$WAVG" convert -q tf2.h5 -o back --format tensorflow
ls
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$T1" "$T3" "$T2" <<'PY'
import sys
import h5py, numpy as np
import tf_bundle as tb

t1, t3, t2 = (tb.read_checkpoint(p) for p in sys.argv[1:])
avg = tb.read_checkpoint("avg.ckpt")
assert sorted(avg) == ["_WAVG_PROVENANCE", "a", "b", "c"], sorted(avg)
for n in "abc":
    want = ((t1[n][2].astype(np.float64) + t3[n][2].astype(np.float64)) / 2).astype(np.float32)
    assert avg[n][:2] == (1, []) and avg[n][2].tobytes() == want.tobytes(), n
    print("avg.ckpt", n, avg[n][2])
tf2 = tb.read_checkpoint("tf2.ckpt-7")
assert set(tf2) == set(t2) | {"_WAVG_PROVENANCE"}
for n, (dtype, shape, v) in t2.items():
    assert tf2[n][:2] == (dtype, shape) and bytes(tf2[n][2]) == bytes(v), n
print("tf2.ckpt-7: %d entries equal the input's, the object graph byte for byte" % len(t2))
h5 = h5py.File("tf2.h5", "r")
back = tb.read_checkpoint("back")
for n, (dtype, shape, v) in t2.items():
    if dtype == 7:
        assert n not in back
        continue
    assert h5[n][()].tobytes() == v.tobytes() == back[n][2].tobytes() and back[n][:2] == (dtype, shape), n
print("tf2.h5 and back: every float equals the input's")
PY
