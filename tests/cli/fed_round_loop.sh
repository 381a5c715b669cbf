# Three FedAdam rounds in a shell loop, as in the README: the state is saved after each round and resumed by the
# next. Clients send x = global + d -/+ 1, so the pseudo-gradient is d = 1, -2, 0.5; the expected model is the
# rule of wavg-merge(1) worked out by numpy, independently of wavg.
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" global.h5 3
for d in 1 -2 0.5; do
  g=$($P "$ROOT/tests/cli/fed_read.py" global.h5)
  $P "$ROOT/tests/cli/fed_make.py" c1.h5 "$(awk "BEGIN { printf \"%.17g\", $g + $d - 1 }")"
  $P "$ROOT/tests/cli/fed_make.py" c2.h5 "$(awk "BEGIN { printf \"%.17g\", $g + $d + 1 }")"
  "$WAVG" merge -q c1.h5 c2.h5 --base global.h5 --server-opt adam --state server.h5 -o next.h5
  mv next.h5 global.h5
done
$P - <<'PY'
import h5py, numpy as np
m, v, x = 0.0, 1e-6, 3.0
for d in (1.0, -2.0, 0.5):
    m = 0.9 * m + 0.1 * d
    v = 0.99 * v + 0.01 * d * d
    x = x + 0.01 * m / (np.sqrt(v) + 1e-3)
with h5py.File("global.h5") as f: got = f["w"][0]
with h5py.File("server.h5") as f: rounds, mm, vv = f["round"][()], f["m/w"][0], f["v/w"][0]
assert abs(got - x) <= 1e-12 * abs(x), (got, x)
assert rounds == 3 and abs(mm - m) < 1e-15 and abs(vv - v) < 1e-15, (rounds, mm, vv)
print("ok")
PY
