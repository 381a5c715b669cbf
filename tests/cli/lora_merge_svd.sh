# --lora svd:2 re-factors the mean update to rank 2: s*B*A equals numpy's best rank-2 approximation of the float64
# mean update (its truncated SVD), the config says r 2, and -v reports each module's discarded energy
# (sum of the dropped singular values squared over all of them), which matches numpy's to 5 digits.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/rank4" .
"$WAVG" merge -v client1 client2 rank4 -w 3,1,2 --lora svd:2 -o svd/ 2>err.txt >/dev/null
/usr/bin/python3 - <<'PY'
import re, numpy as np
from lora_tools import mean_update, read_adapter, update_of
config, _, _ = read_adapter("svd")
assert config["r"] == 2 and config["rank_pattern"] == {}, config
want, _ = mean_update(["client1", "client2", "rank4"], [3, 1, 2])
got = update_of("svd")
noted = dict(re.findall(r"(\S+): rank \d+ -> 2, discarded energy (\S+) of", open("err.txt").read()))
for m, dw in want.items():
    u, s, vt = np.linalg.svd(dw)
    best = (u[:, :2] * s[:2]) @ vt[:2]
    assert np.allclose(got[m], best, rtol=1e-5, atol=1e-5), (m, got[m], best)
    lost = (s[2:] ** 2).sum() / (s ** 2).sum()
    assert abs(float(noted[m]) - lost) <= 1e-5 * max(lost, 1e-300) + 1e-12, (m, noted[m], lost)
print("rank-2 truncation of the mean update; discarded energy as numpy's")
PY
