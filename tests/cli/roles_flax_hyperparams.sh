# optax.inject_hyperparams keeps the learning rate in the optimizer state (opt_state/hyperparams/learning_rate beside
# opt_state/inner_state): a hyper-parameter, input 1's 0.1 and not the mean 0.2 of 0.1 and 0.3, refused by
# --int-policy error like PyTorch's lrs; Adam's moments stay optimizer state, the weights are averaged.
# Inputs written by flax 0.12.8 / optax 0.2.8 (samples/jax/make_inject.py); expected values in closed form.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
J=$SAMPLES/jax
"$WAVG" merge "$J/inject_a.msgpack" "$J/inject_b.msgpack" -o out.json -q
/usr/bin/python3 - <<'PY'
import json
import numpy as np
out = {t["name"]: np.array(t["data"]) for t in json.load(open("out.json"))["tensors"]}
assert out["opt_state/hyperparams/learning_rate"].astype(np.float32) == np.float32(0.1), out
assert np.array_equal(out["params/dense/kernel"].astype(np.float32), np.float32([1.5, 1.5]))
assert out["opt_state/inner_state/0/count"] == 0
print("learning_rate input 1's 0.1; kernel the mean 1.5")
PY
set +e
"$WAVG" merge "$J/inject_a.msgpack" "$J/inject_b.msgpack" -o refused.json --int-policy error 2>&1 |
  grep learning_rate | sed "s|$J/||"
echo "exit ${PIPESTATUS[0]}"
