# Issue 25: --optimizer-state. From the TF1 Adam checkpoints of samples/roles (made by TensorFlow 2.21), drop leaves
# every slot (dense/kernel/Adam, .../Adam_1) out of the output and keeps the counters; first copies input 1's
# moments (checked against the framework-written values in expected.json: the averaged moments differ from them);
# a .pt output, whose pickle is input 1's, refuses drop.
/usr/bin/python3 -c 'import numpy, torch' 2>/dev/null || { echo "numpy or torch missing"; exit 77; }
R=$SAMPLES/roles
"$WAVG" merge "$R/tf1_a/model.ckpt-2" "$R/tf1_b/model.ckpt-5" -o drop.json --optimizer-state drop -v 2>&1 |
  grep "^wavg: averaged:"
"$WAVG" merge "$R/tf1_a/model.ckpt-2" "$R/tf1_b/model.ckpt-5" -o first.json --optimizer-state first -q
/usr/bin/python3 - "$R/expected.json" <<'PY'
import json, sys
import numpy as np
expected = json.load(open(sys.argv[1]))["tf1"]
drop = [t["name"] for t in json.load(open("drop.json"))["tensors"]]
print("drop:", " ".join(drop))
first = {t["name"]: np.array(t["data"], np.float32) for t in json.load(open("first.json"))["tensors"]}
for name in ("dense/kernel/Adam", "temp/t/Adam_1"):
    assert not np.array_equal(first[name], np.array(expected[name]["value"], np.float32)), name
for name in ("dense/kernel", "temp/t"):
    assert np.array_equal(first[name], np.array(expected[name]["value"], np.float32)), name
print("first: moments not averaged, weights averaged")
PY
/usr/bin/python3 - <<'PY'
import torch
m = torch.nn.Linear(2, 1)
o = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
m(torch.ones(1, 2)).sum().backward()
o.step()
torch.save({"model": m.state_dict(), "optimizer": o.state_dict()}, "a.pt")
torch.save({"model": m.state_dict(), "optimizer": o.state_dict()}, "b.pt")
PY
set +e
"$WAVG" merge a.pt b.pt -o out.pt --optimizer-state drop 2>&1 | sed "s|$PWD/||"
echo "exit ${PIPESTATUS[0]}"
