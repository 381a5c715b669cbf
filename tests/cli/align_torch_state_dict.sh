# Permutation specs inferred from PyTorch state_dicts (with --assume-sequential: all three are chains), checked by torch
# itself: a CNN (nn.Sequential of Conv2d, BatchNorm2d, pooling, Flatten and Linear) and an MLP with named layers (fc1,
# fc2, fc3) saved with torch.save, and an 11-child nn.Sequential MLP in a safetensors file written here (names sorted,
# as the safetensors library writes them: layers.10 before layers.2). For each, wavg align of an independently
# initialised model B to A must write a B_aligned that torch loads and whose outputs equal B's (alignment preserves the
# function) while its units moved; and aligning A with its hidden units shuffled (by the test) must return A exactly.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "torch or numpy missing"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import json, struct, subprocess, sys
import numpy as np
import torch
from torch import nn

wavg = sys.argv[1]
torch.manual_seed(0)

def cnn():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1),
                         nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 3 * 3, 8),
                         nn.ReLU(), nn.Linear(8, 3))

class Named(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(5, 7), nn.Linear(7, 6), nn.Linear(6, 2)
    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

def deep():
    mods = [nn.Linear(4, 5)]
    for _ in range(5):
        mods += [nn.Tanh(), nn.Linear(5, 5)]
    return nn.Sequential(*mods)  # children 0 .. 10

def randomised(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):  # statistics as after training, so they matter
            m.running_mean.normal_()
            m.running_var.uniform_(0.5, 2)
            m.weight.data.normal_()
            m.bias.data.normal_()
    return model.eval()

def shuffled(sd, layers):
    # Permutes each hidden layer's output units (and what follows them) with a random permutation.
    sd = {k: v.clone() for k, v in sd.items()}
    for i, (name, following, inner) in enumerate(layers):
        n = sd[name + ".weight"].shape[0]
        p = torch.randperm(n, generator=torch.Generator().manual_seed(i + 10))
        for k in list(sd):
            if k.startswith(name + ".") or k.rsplit(".", 1)[0] in following[:-1]:
                if sd[k].dim() > 0:
                    sd[k] = sd[k][p]
        nxt = following[-1] + ".weight"
        w = sd[nxt]
        if inner > 1:  # a Linear after Flatten: channel c's positions c*inner .. c*inner+inner-1
            idx = (p[:, None] * inner + torch.arange(inner)[None, :]).reshape(-1)
            sd[nxt] = w[:, idx]
        else:
            sd[nxt] = w[:, p]
    return sd

def write_safetensors(path, sd):
    header, blobs, offset = {}, [], 0
    for k in sorted(sd):
        b = sd[k].detach().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(sd[k].shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f4").reshape(v["shape"]).copy())
    return out

def save(path, sd):
    if path.endswith(".safetensors"):
        write_safetensors(path, sd)
    else:
        torch.save(sd, path)

def load(path):
    return read_safetensors(path) if path.endswith(".safetensors") else torch.load(path)

def align(b, a, out):
    subprocess.run([wavg, "align", b, "--to", a, "-o", out, "--assume-sequential", "--no-hash", "-q"], check=True)

cases = [
    ("cnn.pt", cnn, torch.randn(5, 2, 6, 6), [("0", ["1", "3"], 1), ("3", ["4", "8"], 9), ("8", ["10"], 1)]),
    ("named.pt", Named, torch.randn(5, 5), [("fc1", ["fc2"], 1), ("fc2", ["fc3"], 1)]),
    ("deep.safetensors", deep, torch.randn(5, 4),
     [(str(i), [str(i + 2)], 1) for i in range(0, 10, 2)]),
]
for name, make, x, layers in cases:
    a, b = randomised(make()), randomised(make())
    pa, pb, pbal, pshuf, prec = ("a_" + name, "b_" + name, "b_aligned_" + name, "a_shuffled_" + name,
                                 "a_recovered_" + name)
    save(pa, a.state_dict())
    save(pb, b.state_dict())
    align(pb, pa, pbal)
    aligned = load(pbal)
    moved = sum(not torch.equal(aligned[k], v) for k, v in b.state_dict().items())
    assert moved > 0, name + ": nothing moved"
    b2 = make().eval()
    b2.load_state_dict(aligned)
    with torch.no_grad():
        assert torch.allclose(b(x), b2(x), atol=1e-5), name + ": B_aligned computes something else"
    sd = shuffled(a.state_dict(), layers)
    a2 = make().eval()
    a2.load_state_dict(sd)
    with torch.no_grad():
        assert torch.allclose(a(x), a2(x), atol=1e-5), name + ": the test's shuffle is not a symmetry"
    save(pshuf, sd)
    align(pshuf, pa, prec)
    rec = load(prec)
    for k, v in a.state_dict().items():
        assert torch.equal(rec[k], v), name + ": " + k + " not recovered"
    print(name + ": function preserved, shuffle recovered")
PY
