# --lora factorwise (FedIT) averages A and B each on its own, as asked, and -v says per module how far that is from
# the mean update: ||mean(s*B*A) - s*mean(B)*mean(A)|| / ||mean(s*B*A)||, equal to numpy's float64 value to 5
# digits; the factors are numpy's weighted means.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/client3" .
"$WAVG" merge -v client1 client2 client3 -w 1,1,2 --lora factorwise -o fedit/ 2>err.txt >/dev/null
/usr/bin/python3 - <<'PY'
import re, numpy as np
from lora_tools import mean_update, read_adapter
w = np.array([1, 1, 2]) / 4
clients = [read_adapter(c)[1] for c in ("client1", "client2", "client3")]
config, out, _ = read_adapter("fedit")
assert config["r"] == 2 and config["rank_pattern"] == {"v_proj": 1}, config
want, _ = mean_update(["client1", "client2", "client3"], [1, 1, 2])
noted = dict(re.findall(r"(\S+): relative error \|\|mean\(s\*B\*A\) - s\*mean\(B\)\*mean\(A\)\|\| / "
                        r"\|\|mean\(s\*B\*A\)\|\| = (\S+)", open("err.txt").read()))
for m, dw in want.items():
    a = sum(wi * c[m][0] for wi, c in zip(w, clients))
    b = sum(wi * c[m][1] for wi, c in zip(w, clients))
    s = clients[0][m][2]
    assert np.allclose(out[m][0], a, rtol=1e-6) and np.allclose(out[m][1], b, rtol=1e-6), m
    err = np.linalg.norm(dw - s * b @ a) / np.linalg.norm(dw)
    assert err > 1e-3 and abs(float(noted[m]) - err) <= 1e-5 * err, (m, noted[m], err)
print("factor-wise means; relative error as numpy's")
PY
