# Keras itself loads wavg's merges of the Keras-made samples (samples/keras3: LSTM + Bidirectional(GRU), a
# Transformer block, a nested Sequential, EinsumDense), and every variable equals numpy's mean of the inputs' as
# Keras reads them; the EinsumDense model merged from its .keras and its legacy .h5 with --match order too. Keras 3
# is not a Debian package: set WAVG_KERAS_PYTHON to a python with keras and a backend (KERAS_BACKEND defaults to
# torch here); without it the test is skipped.
PY=${WAVG_KERAS_PYTHON:-}
export KERAS_BACKEND=${KERAS_BACKEND:-torch}
[ -n "$PY" ] && "$PY" -c 'import keras' 2>/dev/null || { echo "no WAVG_KERAS_PYTHON with keras"; exit 77; }
K=$SAMPLES/keras3
for m in lstm_bigru transformer nested einsum; do
  "$WAVG" merge -q "$K/${m}_a.keras" "$K/${m}_b.keras" -o "$m.keras"
done
"$WAVG" merge -q "$K/einsum_a.keras" "$K/einsum_b.h5" --match order -o mixed.keras
"$PY" - "$K" <<'PY' 2>/dev/null
import sys
import keras, numpy as np
k = sys.argv[1]
def check(out, a, b):
    a, b, got = (keras.saving.load_model(p) for p in (a, b, out))
    assert len(got.weights) == len(a.weights)
    for wa, wb, wg in zip(a.weights, b.weights, got.weights):
        want = ((wa.numpy().astype(np.float64) + wb.numpy().astype(np.float64)) / 2).astype(np.float32)
        assert np.array_equal(want, wg.numpy()), (out, wa.path)
    return len(got.weights)
for m in ("lstm_bigru", "transformer", "nested", "einsum"):
    print(m, check(f"{m}.keras", f"{k}/{m}_a.keras", f"{k}/{m}_b.keras"), "variables")
print("mixed", check("mixed.keras", f"{k}/einsum_a.keras", f"{k}/einsum_b.h5"), "variables")
PY
