# Corrupt NumPy .npz files: each is one line on stderr, exit 1, and a merge leaves no output behind. The archives
# are written by Python's zipfile with .npy members assembled by hand from numpy's format (formats/npz/npz.hpp),
# starting from {"w": float32 array of shape (2,)}.
/usr/bin/python3 - <<'PY'
import struct, warnings, zipfile
warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it is asked to write
def npy(header="{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data=struct.pack("<2f", 1, 2),
        version=b"\x01\x00", magic=b"\x93NUMPY"):
    h = header.encode() + b"\n"
    return magic + version + struct.pack("<H", len(h)) + h + data
def npz(name, members, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(f"{name}.npz", "w", method) as z:
        for member, data in members:
            z.writestr(member, data)
d = "{'descr': %r, 'fortran_order': False, 'shape': (2,), }"
npz("ok", [("w.npy", npy())])
npz("not_npy", [("w.npy", npy()), ("notes.txt", b"hello")])
npz("magic", [("w.npy", npy(magic=b"\x93NUMPX"))])
npz("version", [("w.npy", npy(version=b"\x09\x00"))])
npz("big_endian", [("w.npy", npy(d % ">f4"))])
npz("object", [("w.npy", npy(d % "|O"))])
npz("complex", [("w.npy", npy(d % "<c32", data=b"\0" * 64))])  # long double complex
npz("bfloat16", [("w.npy", npy(d % "<V2", data=b"\0" * 4))])
npz("structured", [("w.npy", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }"))])
npz("fortran", [("w.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }"))])
npz("no_shape", [("w.npy", npy("{'descr': '<f4', 'fortran_order': False, }"))])
npz("extra_key", [("w.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }"))])
npz("no_comma", [("w.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }"))])
npz("short_data", [("w.npy", npy(data=b"\0" * 4))])
npz("long_data", [("w.npy", npy(data=b"\0" * 12))])
npz("huge_shape", [("w.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }"))])
npz("long_header", [("w.npy", npy()[:8] + b"\xff\xff" + npy()[10:])])
npz("twice", [("w.npy", npy()), ("w.npy", npy())])
npz("deflated", [("w.npy", npy(data=b"\0" * 4096))], zipfile.ZIP_DEFLATED)
raw = bytearray(open("deflated.npz", "rb").read())
raw[30 + len("w.npy") + 8] ^= 0xff  # inside the compressed data
open("bad_deflate.npz", "wb").write(bytes(raw))
PY
for c in ok not_npy magic version big_endian object complex bfloat16 structured fortran no_shape extra_key \
         no_comma short_data long_data huge_shape long_header twice bad_deflate; do
  other=ok.npz
  [ $c = bad_deflate ] && other=deflated.npz
  "$WAVG" merge -q $c.npz $other -o out_$c.npz && echo "$c: exit 0" || echo "$c: exit $?"
done
rm out_ok.npz
ls out_* 2>/dev/null || echo "no output left"
