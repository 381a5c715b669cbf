# Q8_0 blocks are decoded and encoded on every thread (pieces of 1,024 blocks), each block alone: a merge of two
# 256 x 1024 Q8_0 tensors (8,192 blocks a tensor, 8 pieces) gives the same bytes with 1, 2 and 3 threads, and
# they are llama.cpp's reference quantization (quantize_row_q8_0_ref, written here in numpy) of the float64 mean
# of the two inputs' decoded values, rounded once to float32. The files are written byte by byte.
/usr/bin/python3 - <<'PY'
import struct
import numpy as np
ROWS, COLS = 256, 1024
def gguf(path, seed):
    rng = np.random.default_rng(seed)
    s = lambda t: struct.pack("<Q", len(t)) + t.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + s("w") + struct.pack("<IQQIQ", 2, COLS, ROWS, 8, 0)
    head += b"\0" * (-len(head) % 32)
    blocks = np.empty((ROWS * COLS // 32, 34), np.uint8)
    blocks[:, :2] = rng.uniform(1e-3, 1e-2, (len(blocks), 1)).astype(np.float16).view(np.uint8)
    blocks[:, 2:] = rng.integers(0, 256, (len(blocks), 32), dtype=np.uint8)
    open(path, "wb").write(head + blocks.tobytes())
    return blocks
def decode(b):
    return b[:, :2].copy().view(np.float16).astype(np.float32) * b[:, 2:].view(np.int8).astype(np.float32)
a, b = gguf("a.gguf", 1), gguf("b.gguf", 2)
x = ((decode(a).astype(np.float64) + decode(b)) / 2).astype(np.float32)
d = np.abs(x).max(axis=1, keepdims=True) / np.float32(127)
inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), np.float32(0)).astype(np.float32)
v = (x * inv).astype(np.float64)
q = np.trunc(v + np.copysign(0.5, v)).astype(np.int8)
want = np.concatenate([d.astype(np.float16).view(np.uint8), q.view(np.uint8)], axis=1)
open("want.bin", "wb").write(want.tobytes())
PY
for j in 1 2 3; do "$WAVG" merge -q -j $j a.gguf b.gguf -o j$j.gguf; done
cmp j1.gguf j2.gguf && cmp j1.gguf j3.gguf && echo "1, 2 and 3 threads: the same bytes"
tail -c "$(stat -c %s want.bin)" j1.gguf | cmp - want.bin && echo "the blocks are the reference's quantization of the mean"
