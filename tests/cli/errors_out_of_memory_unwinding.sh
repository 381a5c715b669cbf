# Memory running out is one line and exit 1 however the stack unwinds (issue 26): a safetensors of 100,000 tensors
# read under tight address-space limits (ulimit -v), where the JSON header's destructor, allocating while the
# bad_alloc unwound it, ended wavg in "terminate called after throwing an instance of 'std::bad_alloc'" and an
# abort. Which step runs out depends on the limit; every outcome must be one "wavg: error:" line, exit 1.
# Skipped under AddressSanitizer, whose shadow memory needs far more address space.
if ldd "$WAVG" 2>/dev/null | grep -q libasan; then echo "AddressSanitizer build"; exit 77; fi
/usr/bin/python3 - <<'PY'
import json, struct
n = 100000
h = {f"t{i}": {"dtype": "F32", "shape": [2], "data_offsets": [8 * i, 8 * i + 8]} for i in range(n)}
t = json.dumps(h).encode()
t += b" " * ((8 - len(t) % 8) % 8)
open("many.safetensors", "wb").write(struct.pack("<Q", len(t)) + t + b"\0" * (8 * n))
PY
for limit in 64000 80000 100000 120000; do
  set +e
  (ulimit -v $limit; exec "$WAVG" inspect many.safetensors >/dev/null 2>err)
  code=$?
  set -e
  lines=$(wc -l <err)
  if [ "$code" = 1 ] && [ "$lines" = 1 ] && grep -q '^wavg: error: [^ ]' err; then
    echo "$limit KiB: exit 1, one line"
  else
    echo "$limit KiB: exit $code, $lines lines:"
    cat err
  fi
done
