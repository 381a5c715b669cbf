# No output holds a NaN or an infinity that finite inputs did not. -w 1e308,1 passes the weights' check (their sum
# is finite), but 1e308 * 2 overflows the mean's double sum, so every value would be infinity: refused, exit 1,
# nothing written. An input's own infinity still reaches the output (it is the input's, not the merge's): the mean
# of [inf, 2] and [1, 1] is [inf, 1.5].
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
write_safetensors("a.safetensors", {"w": np.full((2,), 2.0, dtype=np.float32)})
write_safetensors("b.safetensors", {"w": np.full((2,), 1.0, dtype=np.float32)})
write_safetensors("c.safetensors", {"w": np.array([np.inf, 2.0], dtype=np.float32)})
PYTHON
"$WAVG" merge a.safetensors b.safetensors -w 1e308,1 -o out.safetensors || echo "exit $?"
test ! -e out.safetensors
"$WAVG" merge -q c.safetensors b.safetensors -o out.safetensors
/usr/bin/python3 -c '
from hf_tools import read_safetensors
print(read_safetensors("out.safetensors")[0]["w"].tolist())'
