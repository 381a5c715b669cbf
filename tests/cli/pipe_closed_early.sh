# A reader that closes the pipe early (| head -c 10) gets its 10 bytes; wavg ends with one error line and exit 1
# instead of dying of SIGPIPE, and its temporary copy of the output is gone from $TMPDIR. The input (4 MiB of
# float32, written here with numpy) is far larger than a pipe's buffer.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
v = np.arange(1 << 20, dtype=np.float32)
h = json.dumps({"w": {"dtype": "F32", "shape": [v.size], "data_offsets": [0, v.nbytes]}}).encode()
open("big.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + v.tobytes())
PY
mkdir tmp
set +o pipefail
TMPDIR=$PWD/tmp "$WAVG" convert -q big.safetensors -o - --format safetensors | head -c 10 | wc -c
echo "exit ${PIPESTATUS[0]}, $(ls tmp | wc -l) files left in TMPDIR"
