# Memory running out while a reader parses a file's structure is one line naming the file (issue 26), exit 1,
# not a bare "out of memory": a 31 MB safetensors header of 400,000 entries read under a 400 MB address-space
# limit (ulimit -v). Skipped under AddressSanitizer, whose shadow memory needs far more address space.
if ldd "$WAVG" 2>/dev/null | grep -q libasan; then echo "AddressSanitizer build"; exit 77; fi
/usr/bin/python3 - <<'PY'
import json, struct
n = 400000
h = {f"t{i}": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i in range(n)}
t = json.dumps(h).encode()
open("big.safetensors", "wb").write(struct.pack("<Q", len(t)) + t + b"\0" * (4 * n))
PY
(ulimit -v 400000; "$WAVG" inspect big.safetensors > /dev/null) || echo "exit $?"
