# When no hashing thread can start (each thread's stack the 4 GB of ulimit -s, under a 2 GB address-space limit:
# pthread_create fails with EAGAIN), merge still writes the mean and the provenance's SHA-256 of each input, hashed
# on the main thread after the merge (issue 26), where it printed only "wavg: error: Resource temporarily
# unavailable". Digests from Python's hashlib, the mean from numpy. Skipped under AddressSanitizer, whose shadow
# memory needs far more address space.
if ldd "$WAVG" 2>/dev/null | grep -q libasan; then echo "AddressSanitizer build"; exit 77; fi
/usr/bin/python3 - <<'PY'
import json, struct
import numpy as np
for k, v in (("a", [1, 2, 3]), ("b", [3, 4, 7])):
    t = json.dumps({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}).encode()
    t += b" " * ((8 - len(t) % 8) % 8)
    with open(f"{k}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(t)) + t + np.array(v, np.float32).tobytes())
PY
set +e
(ulimit -s 4000000; ulimit -v 2000000; exec "$WAVG" merge -q --hash sha256 a.safetensors b.safetensors -o m.safetensors)
echo "exit $?"
set -e
/usr/bin/python3 - <<'PY'
import hashlib, json, struct
import numpy as np
b = open("m.safetensors", "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
lo, hi = h["w"]["data_offsets"]
print("mean:", np.frombuffer(b[8 + n + lo:8 + n + hi], np.float32).tolist())
for item in json.loads(h["__metadata__"]["wavg_inputs"]):
    want = hashlib.sha256(open(item["file"], "rb").read()).hexdigest()
    print(item["file"], "sha256 matches hashlib:", item["sha256"] == want)
PY
