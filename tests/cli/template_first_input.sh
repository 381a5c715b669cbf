# A .keras output takes its config.json from the first .keras input, not only from input 1 (-v says which): a
# Keras 3 .weights.h5 (the weights of einsum_a.keras, taken out with Python's zipfile) merged with einsum_b.keras
# into a .keras archive keeps einsum_b's config.json byte for byte, and its weights are numpy's mean of both.
# Without a .keras input the output is refused as before.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
K=$SAMPLES/keras3
/usr/bin/python3 -c "import zipfile, sys
open('a.weights.h5', 'wb').write(zipfile.ZipFile(sys.argv[1]).read('model.weights.h5'))" "$K/einsum_a.keras"
"$WAVG" merge -v a.weights.h5 "$K/einsum_b.keras" -o c.keras 2>&1 | grep -v 'device:' | sed "s|$K|K|g"
/usr/bin/python3 - "$K" "$ROOT/tests/cli" <<'PY'
import io, sys, zipfile
import h5py, numpy as np
k = sys.argv[1]
out, b = zipfile.ZipFile("c.keras"), zipfile.ZipFile(f"{k}/einsum_b.keras")
print("config.json as einsum_b's:", out.read("config.json") == b.read("config.json"))
sys.path.insert(0, sys.argv[2])
from h5_tools import datasets
weights = lambda data: datasets(io.BytesIO(data))  # noqa: E731
c, wa = weights(out.read("model.weights.h5")), weights(open("a.weights.h5", "rb").read())
wb = weights(b.read("model.weights.h5"))
print(sorted(c), all(np.allclose(c[n], (wa[n].astype(np.float64) + wb[n]) / 2, rtol=1e-7, atol=0) for n in c))
PY
cp a.weights.h5 b.weights.h5
"$WAVG" merge a.weights.h5 b.weights.h5 -o d.keras || echo "exit $?"
