# An alias (a second name for a tied tensor) is its target: it takes the target's action and values, never a
# computation of its own. torch 1.13 writes the inputs: SGD param groups sharing one lr tensor (a hyper-parameter:
# input 1's 0.1 under both names, in .pt and .safetensors outputs, not the alias's own copy written last into the
# shared storage); tied weights under DARE (emb.weight and head.weight get one mask: equal values); a momentum buffer
# shared by two parameters under --optimizer-state first (input 1's under both names, not an average for the alias).
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "torch or numpy missing"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$WAVG" <<'PY'
import subprocess, sys
import numpy as np
import torch
import hf_tools

wavg = sys.argv[1]

def merge(*args):
    p = subprocess.run([wavg, "merge", *args, "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.returncode

def read_safetensors(path):
    return hf_tools.read_safetensors(path)[0]

def checkpoint(lr, moment):
    lr, m = torch.tensor(lr), torch.full((2,), moment)
    return {"model": {"a.weight": torch.full((2,), moment), "b.weight": torch.full((2,), -moment)},
            "optimizer": {"state": {0: {"momentum_buffer": m}, 1: {"momentum_buffer": m}},
                          "param_groups": [{"lr": lr, "momentum": 0.9, "params": [0]},
                                           {"lr": lr, "momentum": 0.9, "params": [1]}]}}

torch.save(checkpoint(0.1, 1.0), "in0.pt")
torch.save(checkpoint(0.3, 3.0), "in1.pt")
lr0 = np.float32(0.1)
merge("in0.pt", "in1.pt", "-o", "out.pt")
out = torch.load("out.pt")
groups = out["optimizer"]["param_groups"]
assert groups[0]["lr"].item() == lr0 and groups[1]["lr"].item() == lr0, (groups[0]["lr"], groups[1]["lr"])
assert groups[0]["lr"].data_ptr() == groups[1]["lr"].data_ptr()
merge("in0.pt", "in1.pt", "-o", "out.safetensors")
out = read_safetensors("out.safetensors")
lrs = {k: float(v) for k, v in out.items() if k.endswith(".lr")}
assert sorted(lrs.values()) == [lr0, lr0], lrs
print("shared lr: input 1's under both names (.pt, .safetensors)")

merge("in0.pt", "in1.pt", "-o", "first.pt", "--optimizer-state", "first")
state = torch.load("first.pt")["optimizer"]["state"]
assert state[0]["momentum_buffer"].tolist() == [1.0, 1.0] and state[1]["momentum_buffer"].tolist() == [1.0, 1.0]
merge("in0.pt", "in1.pt", "-o", "first.safetensors", "--optimizer-state", "first")
out = read_safetensors("first.safetensors")
moments = {k: v.tolist() for k, v in out.items() if "momentum_buffer" in k}
assert list(moments.values()) == [[1.0, 1.0], [1.0, 1.0]], moments
assert out["model.a.weight"].tolist() == [2.0, 2.0]
print("shared momentum buffer, --optimizer-state first: input 1's under both names")

torch.manual_seed(0)
for i in range(3):
    e = torch.randn(8, 4)
    torch.save({"emb.weight": e, "head.weight": e}, "t%d.pt" % i)
merge("t1.pt", "t2.pt", "--base", "t0.pt", "--method", "dare-linear", "--density", "0.5", "--seed", "1", "-o",
      "dare.safetensors")
out = read_safetensors("dare.safetensors")
assert np.array_equal(out["emb.weight"], out["head.weight"])
merge("t1.pt", "t2.pt", "--base", "t0.pt", "--method", "dare-linear", "--density", "0.5", "--seed", "1",
      "-o", "dare.pt")
out = torch.load("dare.pt")
assert out["emb.weight"].data_ptr() == out["head.weight"].data_ptr()
assert np.array_equal(out["emb.weight"].numpy(), read_safetensors("dare.safetensors")["emb.weight"])
print("tied weights under DARE: one mask, equal values")
PY
