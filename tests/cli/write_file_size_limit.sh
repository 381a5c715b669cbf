# Under a file-size limit (ulimit -f) a write past it fails with EFBIG (wavg catches SIGXFSZ, whose default action
# ended the process with no message), and wavg says so in one line, exits 1 as for any failed write, and removes
# its temporary output (issue 39, item 14): for .h5, .safetensors, a TF.js model.json with its shards, and a Hugging
# Face folder. Inputs: two safetensors of one 1 MiB tensor; the limit is 256 KiB.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
write_safetensors("a.safetensors", {"w": np.full(1 << 18, 1, np.float32)})
write_safetensors("b.safetensors", {"w": np.full(1 << 18, 2, np.float32)})
PY
mkdir web
for case in m.h5:hdf5 m.safetensors:safetensors web/model.json:tfjs hf/:hf; do
  out=${case%:*}
  code=0
  (ulimit -f 256; exec "$WAVG" merge -q a.safetensors b.safetensors -o $out --format ${case#*:}) 2>err || code=$?
  echo "$out: exit $code: $(grep -c '^wavg: error: ' err) wavg line(s), $(wc -l <err) in all"
  sed -n 's/^\(wavg: error: [^:]*\):.*\(File too large\).*/\1: ... \2/p' err
done
ls -A . web
