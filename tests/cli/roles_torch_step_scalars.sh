# torch.optim state scalars that follow from the step count are counters in both PyTorch codecs (.pt and DCP):
# step, NAdam's mu_product, ASGD's eta and mu take input 1's value (averaging those of runs 2 and 5 steps in gives
# the value of no step); ASGD's ax (an average of the parameter) and NAdam's moments are averaged like the weights.
# .pt inputs written by torch 1.13 here; DCP inputs by torch 2.15 (samples/dcp/make_step_scalars.py, same recipe,
# step_scalars.json holding what torch held). Expected values: input 1's, or numpy's float64 mean rounded once.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "torch or numpy missing"; exit 77; }
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$SAMPLES/dcp /usr/bin/python3 - <<'PY'
import json
import torch
from make_step_scalars import flat, trained
values = {}
for name, steps in (("a", 2), ("b", 5)):
    state = trained(steps)
    torch.save(state, name + ".pt")
    values[name] = flat(state)
json.dump(values, open("pt_values.json", "w"))
PY
"$WAVG" merge a.pt b.pt -o pt.json -q
"$WAVG" merge "$SAMPLES/dcp/asgd_a" "$SAMPLES/dcp/asgd_b" -o dcp.json -q
/usr/bin/python3 - "$SAMPLES/dcp/step_scalars.json" <<'PY'
import json, sys
import numpy as np
counters = ("step", "mu_product", "eta", "mu")
for out_path, values_path in (("pt.json", "pt_values.json"), ("dcp.json", sys.argv[1])):
    values = json.load(open(values_path))
    out = {t["name"]: np.array(t["data"], np.float64).astype(np.float32) for t in json.load(open(out_path))["tensors"]}
    seen = set()
    for name in values["a"]:
        key = name.rsplit(".", 1)[1]
        a, b = (np.array(values[k][name], np.float32) for k in "ab")
        want = a if key in counters else ((a.astype(np.float64) + b) / 2).astype(np.float32)
        assert name in out, (out_path, name, sorted(out))
        assert np.array_equal(out[name].reshape(want.shape), want), (out_path, name, out[name], want)
        seen.add(key)
    print(out_path, "input 1's:", " ".join(k for k in counters if k in seen), "| averaged:",
          " ".join(sorted(seen.difference(counters))))
PY
