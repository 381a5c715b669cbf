# Checkpoints written by TensorFlow 2.21 (samples/tensorflow: TF1 Saver with Adam slots, float16/bfloat16/float64
# and int64 global_step; TF2 tf.train.Checkpoint of a Keras model with Adam): each pair merged, and the output read
# by tests/cli/tf_bundle.py (independent of wavg): floats equal numpy's float64 mean rounded once to their dtype
# (bfloat16 by hand: 8 significant bits, ties to even), integers, counters (beta1_power, beta2_power), the learning
# rate and the object graph are input 1's byte for byte.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
S=$SAMPLES/tensorflow
"$WAVG" merge -v "$S/tf1_a/model.ckpt-3" "$S/tf1_b/model.ckpt-6" -o tf1.ckpt 2>&1 | grep -v 'device:'
"$WAVG" merge -q "$S/tf2_a/ckpt-1" "$S/tf2_b/ckpt-2.index" -o tf2.ckpt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$S" <<'PY'
import sys
import numpy as np
import tf_bundle as tb

s = sys.argv[1]
for a, b, out in ((s + "/tf1_a/model.ckpt-3", s + "/tf1_b/model.ckpt-6", "tf1.ckpt"),
                  (s + "/tf2_a/ckpt-1", s + "/tf2_b/ckpt-2", "tf2.ckpt")):
    a, b, out = tb.read_checkpoint(a), tb.read_checkpoint(b), tb.read_checkpoint(out)
    assert set(out) == set(a) | {"_WAVG_PROVENANCE"}, set(out) ^ set(a)
    kinds = {}
    for n, (dtype, shape, x) in a.items():
        assert out[n][:2] == (dtype, shape), n
        got = out[n][2]
        # Counters and hyper-parameters are input 1's (issue 25): TF1 Adam's beta^t powers, Keras 3's learning rate.
        if n in ("beta1_power", "beta2_power") or n.startswith("optimizer/_learning_rate/"):
            want = x
        elif dtype in (1, 2, 19):
            want = ((x.astype(np.float64) + b[n][2].astype(np.float64)) / 2).astype(x.dtype)
        elif dtype == 14:
            m, e = np.frexp((x.astype(np.float64) + b[n][2].astype(np.float64)) / 2)
            want = np.ldexp(np.round(m * 256) / 256, e).astype(np.float32)
        else:
            want = x
        assert bytes(got.tobytes() if dtype != 7 else got) == bytes(want.tobytes() if dtype != 7 else want), n
        kinds[dtype] = kinds.get(dtype, 0) + 1
    print(sorted(kinds.items()), "global_step" in out and int(out["global_step"][2]))
PY
