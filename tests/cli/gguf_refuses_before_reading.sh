# A K-quant input 1 without --out-dtype is refused before the inputs are read: here their I32 tensors differ,
# which the read pass of --int-policy equal would report (exit 3) were the output not refused first (exit 1).
# The two files are written byte by byte: one Q4_K tensor of 256 zeros (a block of 144 bytes) and an I32 vector.
/usr/bin/python3 - <<'PY'
import struct
def gguf(path, ints):
    s = lambda t: struct.pack("<Q", len(t)) + t.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, 2, 0)
    head += s("w") + struct.pack("<IQQIQ", 2, 256, 1, 12, 0)   # ne (256, 1), Q4_K, offset 0
    head += s("ids") + struct.pack("<IQIQ", 1, 4, 26, 160)     # ne (4,), I32, after w's 144 bytes padded to 160
    head += b"\0" * (-len(head) % 32)
    open(path, "wb").write(head + b"\0" * 160 + struct.pack("<4i", *ints))
gguf("x.gguf", [1, 2, 3, 4])
gguf("y.gguf", [1, 2, 3, 5])
PY
"$WAVG" merge -q --int-policy equal x.gguf y.gguf -o out.gguf --out-dtype float32 || echo "exit $?"
"$WAVG" merge -q --int-policy equal x.gguf y.gguf -o out.gguf || echo "exit $?"
ls
