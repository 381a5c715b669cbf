# A stored (numpy.savez) member changed after it was written (3.0 -> 1000.0, its CRC-32 left as it was): numpy.load
# refuses it ("Bad CRC-32"), and so does wavg, exit 1, no output; the undamaged file merges.
/usr/bin/python3 - <<'PY'
import numpy as np, zipfile
np.savez("a.npz", w=np.array([1, 2, 3], dtype=np.float32))
np.savez("b.npz", w=np.array([3, 4, 5], dtype=np.float32))
raw = bytearray(open("a.npz", "rb").read())
at = raw.find(np.float32(3).tobytes(), raw.find(b"NUMPY"))
raw[at:at + 4] = np.float32(1000).tobytes()
open("damaged.npz", "wb").write(bytes(raw))
try:
    np.load("damaged.npz")["w"]
    print("numpy: read")
except zipfile.BadZipFile as e:
    print("numpy:", e)
PY
"$WAVG" merge -q a.npz b.npz -o ok.npz && echo "undamaged: exit 0"
"$WAVG" merge -q damaged.npz b.npz -o out.npz || echo "damaged: exit $?"
ls out.npz 2>/dev/null || echo "no output left"
