# TensorFlow outputs: named by .ckpt-N, .ckpt from a TensorFlow input, or by any prefix with --format tensorflow;
# --tf-state; existing outputs
# (an existing data shard refuses the pair, leaving no temporary file).
# Mixed dtypes (samples/dtypes: float16, float32, float64, int8, int64) merged into a TensorFlow checkpoint and
# converted to HDF5, through safetensors and wavg JSON back to TensorFlow, and to bfloat16: tests/cli/tf_bundle.py
# reads the checkpoints, h5py the HDF5 files, and every float equals numpy's float64 mean rounded once; integers
# are input 1's.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
D=$SAMPLES/dtypes
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o plain.out && echo "plain: exit 0" || echo "plain: exit $?"
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o plain --format tensorflow
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o plain --format tensorflow && echo "again: exit 0" || echo "again: exit $?"
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o x.h5 --tf-state && echo "state: exit 0" || echo "state: exit $?"
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o model.ckpt-5 --tf-state
"$WAVG" convert -q model.ckpt-5 -o back.h5
"$WAVG" convert -q model.ckpt-5.index -o bf16.ckpt --out-dtype bfloat16
"$WAVG" convert -q model.ckpt-5 -o st.safetensors &&
  "$WAVG" convert -q st.safetensors -o from_st.ckpt --format tensorflow
"$WAVG" convert -q model.ckpt-5 -o w.json && "$WAVG" convert -q w.json -o from_json.ckpt --format tensorflow
# A data shard in the way: refused before anything is placed, and no temporary file is left (ls -A).
touch taken.ckpt.data-00000-of-00001
"$WAVG" merge -q "$D/a.h5" "$D/b.h5" -o taken.ckpt --format tensorflow && echo "taken: exit 0" || echo "taken: exit $?"
ls -A
cat checkpoint
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$D" <<'PY'
import sys
import h5py, numpy as np
import tf_bundle as tb

a, b = h5py.File(sys.argv[1] + "/a.h5", "r"), h5py.File(sys.argv[1] + "/b.h5", "r")
plain, ckpt, bf16 = tb.read_checkpoint("plain"), tb.read_checkpoint("model.ckpt-5"), tb.read_checkpoint("bf16.ckpt")
back = h5py.File("back.h5", "r")
from_st, from_json = tb.read_checkpoint("from_st.ckpt"), tb.read_checkpoint("from_json.ckpt")
for n in ("layer1/b", "layer1/w", "layer2/w", "quant/table", "step"):
    x, y = a[n][()], b[n][()]
    want = ((x.astype(np.float64) + y.astype(np.float64)) / 2).astype(x.dtype) if x.dtype.kind == "f" else x
    assert plain[n][2].dtype == want.dtype and plain[n][2].tobytes() == want.tobytes(), n
    assert ckpt[n][2].tobytes() == want.tobytes() == back[n][()].tobytes(), n
    assert from_st[n][:2] == from_json[n][:2] == ckpt[n][:2], n
    assert from_st[n][2].tobytes() == from_json[n][2].tobytes() == want.tobytes(), n
    if x.dtype.kind == "f":  # bfloat16 (8 significant bits) from the stored values, rounded once, ties to even
        m, e = np.frexp(want.astype(np.float64))
        r = np.ldexp(np.round(m * 256) / 256, e).astype(np.float32)
        assert bf16[n][0] == 14 and bf16[n][2].tobytes() == r.tobytes(), n
    print(n, ckpt[n][0], ckpt[n][1])
PY
