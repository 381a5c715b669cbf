# --round-timeout: 3 workers add 1, 2, 3 to a weight that starts at 0. Worker 2 of round 1 does not finish in time,
# so round 1 closes with workers 0 and 1: 1.5. Round 2 starts workers 0 and 1 from 1.5 (worker 2 is still busy)
# and worker 2's round-1 result (3, started from round 0's model, so tau = 1) comes back while it is open, so
# round 2 is FedAsync's rule with s = (1 + 1)^-0.5: 1.5 + (1/3)((2.5 - 1.5) + (3.5 - 1.5) + s (3 - 1.5)).
# Round 3 is every worker again, plain mean: + 2. numpy computes the expected values. Then a run of one round whose
# late worker never comes back: the run ends, and the worker (a grandchild of wavg, under sh) is stopped.
P=/usr/bin/python3
$P -c 'import json; json.dump({"format": "wavg-json", "version": 1,
  "tensors": [{"name": "w", "dtype": "float64", "shape": [1], "data": [0.0]}]}, open("init.json", "w"))'
cmd="$P $ROOT/tests/cli/late_worker.py {init} {out} {rank} {round}"
cmd="$cmd && if [ {rank}{round} = 21 ]; then touch late-done; fi"
"$WAVG" local-sgd --train-cmd "$cmd" --init init.json --format json --workers 3 --rounds 3 --round-timeout 3 \
  --out-dir run -q
$P - <<'PY'
import json, numpy as np
w = lambda r: json.load(open("run/round-%04d.json" % r))["tensors"][0]["data"][0]
s = (1.0 + 1) ** -0.5
r1 = (1.0 + 2.0) / 2
r2 = r1 + ((r1 + 1 - r1) + (r1 + 2 - r1) + s * (3.0 - r1)) / 3
r3 = r2 + 2
for got, want in ((w(1), r1), (w(2), r2), (w(3), r3)):
    assert np.isclose(got, want, rtol=1e-14, atol=0), (got, want)
print("rounds: %.6f %.6f %.6f" % (w(1), w(2), w(3)))
PY
ls run | grep -c work || true
mkdir two && cd two
"$WAVG" local-sgd --train-cmd "$cmd" --init ../init.json --format json --workers 3 --rounds 1 --round-timeout 1 \
  --out-dir run -q
# SIGTERM reached it when wavg ended; it is gone (or a zombie waiting for its new parent) within moments.
pid=$(cat late.pid)
for _ in $(seq 300); do
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = Z ] && { echo "late worker stopped"; break; }
  sleep 0.01
done
ls run
