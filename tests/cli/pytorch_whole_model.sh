# torch.save(model) pickles the module classes themselves. wavg reads such a file without importing or running
# anything: each class is only a name, each object's attributes data, and a tensor is named by its attribute path
# as model.state_dict() names it (conv1.weight, lstm.weight_ih_l0; an LSTM's _flat_weights, which list the same
# parameters again, are not named twice), with a non-persistent buffer and a plain tensor attribute named too, so
# every tensor of the file is accounted for. Three models made here (zip and legacy format) merge into a .pt that
# torch.load opens as the model, its state_dict torch's float64 mean of the inputs' rounded once (integers from
# input 1), the non-state tensors as well; a real legacy whole model converts with the values torch loads. A
# whole model holding an object whose __reduce__ calls os.system is refused naming the global, and runs nothing.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "python3-torch or numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/pytorch_tools.py" .
cat > net.py <<'PY'
import os, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 2, 3)
        self.bn = torch.nn.BatchNorm2d(2)
        self.seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.GELU())
        self.lstm = torch.nn.LSTM(2, 2)
        self.register_buffer("scale", torch.ones(1))
        self.register_buffer("tmp", torch.zeros(2), persistent=False)
        self.foo = torch.arange(3.0)
class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))
PY
/usr/bin/python3 - <<'PY'
import torch
from net import Net, Evil
for i in (1, 2, 3):
    torch.manual_seed(i)
    m = Net()
    m.bn.running_mean += i
    m.bn.num_batches_tracked += i
    m.tmp += i
    m.foo *= i
    torch.save(m, f"m{i}.pt")
    torch.save(m, f"legacy{i}.pt", _use_new_zipfile_serialization=False)
m.evil = Evil()
torch.save(m, "evil.pt")
PY
"$WAVG" merge -q m1.pt m2.pt m3.pt -o avg.pt
"$WAVG" merge -q legacy1.pt legacy2.pt legacy3.pt -o avg.safetensors
"$WAVG" inspect m1.pt | head -1
code=0
"$WAVG" merge evil.pt m1.pt -o bad.pt || code=$?
echo "evil.pt: exit $code"
[ ! -e pwned ] && [ ! -e bad.pt ] || { echo "the payload ran or an output was written"; exit 1; }
# A real whole model saved by torch 0.4 (legacy format, classes with their source, Parameter(...) calls).
R=$SHARED/real-checkpoints/hls4ml-pytorch/two_layer_model.pt
[ ! -f "$R" ] || "$WAVG" convert -q "$R" -o real.safetensors
/usr/bin/python3 -W ignore - "$R" <<'PY'
import os, sys, torch
from net import Net
from hf_tools import read_safetensors
from pytorch_tools import mean_rounded, same
ins = [torch.load(f"m{i}.pt") for i in (1, 2, 3)]
flat = [dict(m.state_dict(), tmp=m.tmp, foo=m.foo) for m in ins]
out = torch.load("avg.pt")
assert type(out) is Net
got = dict(out.state_dict(), tmp=out.tmp, foo=out.foo)
assert sorted(got) == sorted(flat[0])
for k, t in got.items():
    want = mean_rounded([f[k] for f in flat]) if t.is_floating_point() else flat[0][k]
    assert same(t, want), k
st, _ = read_safetensors("avg.safetensors")
assert sorted(st) == sorted(flat[0]), sorted(st)
for k, a in st.items():
    t = torch.from_numpy(a.copy())
    want = mean_rounded([f[k] for f in flat]) if t.is_floating_point() else flat[0][k]
    assert same(t, want), k
print("ok")
if os.path.exists(sys.argv[1]):
    sd = torch.load(sys.argv[1], map_location="cpu").state_dict()
    st, _ = read_safetensors("real.safetensors")
    assert sorted(st) == sorted(sd), (sorted(st), sorted(sd))
    assert all(torch.equal(torch.from_numpy(st[k].copy()), sd[k]) for k in sd)
print("real ok")
PY
