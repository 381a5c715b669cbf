# Files written by Keras 3.15 itself (samples/keras3, made by make_keras3.py): an LSTM + Bidirectional(GRU) model, a
# Transformer block (MultiHeadAttention), a nested Sequential and an EinsumDense model. Merging a and b averages
# every dataset of model.weights.h5: read here with zipfile and h5py, each equal to numpy's float64 mean rounded to
# float32, and none left out.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
for m in lstm_bigru transformer nested einsum; do
  "$WAVG" merge -q "$SAMPLES/keras3/${m}_a.keras" "$SAMPLES/keras3/${m}_b.keras" -o "$m.keras"
done
/usr/bin/python3 - "$SAMPLES/keras3" "$ROOT/tests/cli" <<'PY'
import io, sys, zipfile
import numpy as np
sys.path.insert(0, sys.argv[2])
import h5_tools
def datasets(path):
    with zipfile.ZipFile(path) as z:
        return h5_tools.datasets(io.BytesIO(z.read("model.weights.h5")))
for m in ("lstm_bigru", "transformer", "nested", "einsum"):
    a, b = datasets(f"{sys.argv[1]}/{m}_a.keras"), datasets(f"{sys.argv[1]}/{m}_b.keras")
    got = datasets(f"{m}.keras")
    assert sorted(got) == sorted(a), m
    for n in a:
        want = ((a[n].astype(np.float64) + b[n].astype(np.float64)) / 2).astype(np.float32)
        assert got[n].tobytes() == want.tobytes(), (m, n)
    print(m, len(a), "weights averaged")
PY
