# Under an address-space limit that leaves no room for 15 more threads' 8 MiB stacks, merge -j 16 runs its loops
# on one thread and writes the right mean (issue 26), where libgomp printed "Thread creation failed" and exited 1
# with no wavg line. Two safetensors of 4 Mi float32 (1.0 and 2.0); the mean is checked by numpy. Skipped under
# AddressSanitizer, whose shadow memory needs far more address space.
if ldd "$WAVG" 2>/dev/null | grep -q libasan; then echo "AddressSanitizer build"; exit 77; fi
/usr/bin/python3 - <<'PY'
import json, struct
import numpy as np
n = 4 << 20
for k in (1, 2):
    t = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    t += b" " * ((8 - len(t) % 8) % 8)
    with open(f"b{k}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(t)) + t + np.full(n, k, np.float32).tobytes())
PY
set +e
(ulimit -s 8192; ulimit -v 250000; exec "$WAVG" merge -q -v -j 16 b1.safetensors b2.safetensors -o m.safetensors) \
  2>err
echo "exit $?"
set -e
grep -o '^wavg: one thread: .*too little for 15 more threads. stacks of 8 MiB each' err |
  sed 's/leaves [0-9]* MiB/leaves N MiB/'
/usr/bin/python3 - <<'PY'
import json, struct
import numpy as np
b = open("m.safetensors", "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
lo, hi = h["w"]["data_offsets"]
w = np.frombuffer(b[8 + n + lo:8 + n + hi], np.float32)
print(w.size, "elements, all 1.5:", bool((w == 1.5).all()))
PY
