# A plain file of input 1's folder is copied into a folder output only up to 1 GiB: a sparse README.md of 2 GiB
# (a few bytes on disk, copied densely it filled the disk) is refused in one line naming it, and nothing is
# written (no output folder, no temporary one).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import save_sharded
save_sharded("run", {"w": np.ones(4, np.float32)}, [["w"]])
PY
truncate -s 2G run/README.md
code=0
"$WAVG" merge -q run run -o out/ || code=$?
echo "exit $code"
ls -A | grep -e '^out$' -e wavg- || echo "nothing written"
