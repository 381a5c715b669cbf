# A small .npz whose .npy header declares an array of 2^80 float32 values over 8 bytes, and one whose archive
# lists 60,000 members of a 2^40-element shape each: inspect refuses each in one line, exit 1, within 256 MiB
# and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
import zipfile
def npy(shape):
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{s}, " for s in shape)
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode() + b"\0" * 8
with zipfile.ZipFile("shape.npz", "w") as z:
    z.writestr("w.npy", npy([1 << 40, 1 << 40]))
with zipfile.ZipFile("many.npz", "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(60000):
        z.writestr(f"w{i}.npy", npy([1 << 40]))
PY
for f in shape many; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.npz
done
