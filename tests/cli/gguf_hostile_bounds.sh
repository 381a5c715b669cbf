# Small hostile GGUF files (v3, written byte by byte): a header claiming 2^60 tensors, one claiming 2^60 metadata
# entries, a metadata array of 2^60 uint8 values, and a float32 tensor whose dims claim 2^80 values over 32 bytes:
# inspect ends each in one error line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
import struct
def s(text):
    return struct.pack("<Q", len(text)) + text.encode()
def gguf(n_tensors, n_kv, body=b""):
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + body
open("tensors.gguf", "wb").write(gguf(1 << 60, 0))
open("entries.gguf", "wb").write(gguf(0, 1 << 60))
array = s("general.blob") + struct.pack("<IIQ", 9, 0, 1 << 60)  # ARRAY of UINT8
open("array.gguf", "wb").write(gguf(0, 1, array) + b"\0" * 32)
info = s("w") + struct.pack("<I", 2) + struct.pack("<QQ", 1 << 40, 1 << 40) + struct.pack("<IQ", 0, 0)  # F32
head = gguf(1, 0, info)
open("dims.gguf", "wb").write(head + b"\0" * ((32 - len(head) % 32) % 32) + b"\0" * 32)
PY
for f in tensors entries array dims; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.gguf
done
