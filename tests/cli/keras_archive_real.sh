# A real .keras file (hls4ml QKeras model saved by Keras 3.14): merged with itself, the output keeps its
# config.json byte for byte and every weight equals the input's (h5py reads both); convert to .weights.h5 too.
K=$SHARED/real-checkpoints/hls4ml-qkeras-v3-keras/qkeras-v3_3layer.keras
[ -f "$K" ] || { echo "no shared checkpoints"; exit 77; }
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
"$WAVG" merge -q "$K" "$K" -o out.keras
"$WAVG" convert -q "$K" -o out.weights.h5
/usr/bin/python3 - "$K" <<'PY'
import io, sys, zipfile, h5py, numpy as np
src, out = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile("out.keras")
assert out.read("config.json") == src.read("config.json")
a = h5py.File(io.BytesIO(src.read("model.weights.h5")), "r")
b = h5py.File(io.BytesIO(out.read("model.weights.h5")), "r")
c = h5py.File("out.weights.h5", "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
assert names
for n in names:
    assert a[n][()].tobytes() == b[n][()].tobytes() == c[n][()].tobytes(), n
print(len(names), "datasets equal")
PY
