# An .npy member whose header claims 20,000 dimensions (numpy reads at most 64): refused in one short line, within
# 256 MiB and 10 s, where the message once carried the whole shape (60 KB).
/usr/bin/python3 - <<'PY'
import struct, zipfile
header = ("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 20000 + "), }").encode()
header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
with zipfile.ZipFile("dims.npz", "w") as z:
    z.writestr("w.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + b"\0\0\0\0")
PY
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 10 "$WAVG" inspect dims.npz
