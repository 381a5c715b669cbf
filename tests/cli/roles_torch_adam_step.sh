# Issue 25: a torch 1.13 checkpoint {model, optimizer} after 2 and after 5 Adam steps. Since torch 1.12 Adam keeps
# state[i]['step'] as a float32 0-d tensor; wavg must take it for the counter it is (input 1's by default), not
# average it to 3.5, while the moments, weights and batch-norm statistics are averaged; num_batches_tracked is a
# counter too, and param_groups' lr (a float, not a tensor) stays input 1's. Checked against numpy means, and by
# loading the result in torch and stepping the optimizer.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "torch or numpy missing"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import subprocess, sys
import numpy as np
import torch

wavg = sys.argv[1]

def run(seed, steps):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01 * seed)
    x = torch.randn(8, 3)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": steps}, f"run{seed}.pt")
    return model.state_dict(), opt.state_dict()

m1, o1 = run(1, 2)
m2, o2 = run(2, 5)
assert o1["state"][0]["step"].dtype == torch.float32 and o1["state"][0]["step"].dim() == 0
p = subprocess.run([wavg, "merge", "run1.pt", "run2.pt", "-o", "avg.pt", "-v"], capture_output=True, text=True)
assert p.returncode == 0, p.stderr
out = torch.load("avg.pt")
mean = lambda a, b: ((a.numpy().astype(np.float64) + b.numpy()) / 2).astype(np.float32)
for k in ("0.weight", "0.bias", "1.weight", "1.running_mean", "1.running_var"):
    assert np.array_equal(out["model"][k].numpy(), mean(m1[k], m2[k])), k
assert out["model"]["1.num_batches_tracked"].item() == 2
for i in (0, 1, 2, 3):
    assert out["optimizer"]["state"][i]["step"].item() == 2.0, out["optimizer"]["state"][i]["step"]
    for k in ("exp_avg", "exp_avg_sq"):
        assert np.array_equal(out["optimizer"]["state"][i][k].numpy(),
                              mean(o1["state"][i][k], o2["state"][i][k])), (i, k)
assert out["optimizer"]["param_groups"][0]["lr"] == 0.01
print([l for l in p.stderr.splitlines() if l.startswith("wavg: averaged:")][0])

# --int-policy equal refuses the differing counters.
p = subprocess.run([wavg, "merge", "run1.pt", "run2.pt", "-o", "eq.pt", "--int-policy", "equal"],
                   capture_output=True, text=True)
print(p.returncode, p.stderr.strip().splitlines()[0])

# The result resumes training in torch.
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
model.load_state_dict(out["model"])
opt.load_state_dict(out["optimizer"])
opt.zero_grad()
model(torch.randn(8, 3)).pow(2).mean().backward()
opt.step()
print("resumed at step", opt.state_dict()["state"][0]["step"].item())

# inspect names the roles.
import json
j = json.loads(subprocess.run([wavg, "inspect", "--json", "run1.pt"], capture_output=True, text=True).stdout)
print(" ".join(f'{t["name"]}={t["role"]}' for t in j["tensors"] if "state.0" in t["name"] or "num_batches" in t["name"]))
PY
