# What a state_dict's names and shapes cannot pin down is refused even with --assume-sequential (exit 2, the
# tensor named, --perm-spec pointed to), never guessed: blocks (ResNet's layer1.0.conv1: skip connections are not
# in the file), a one-dimensional weight without running statistics (LayerNorm or GroupNorm?), safetensors names
# that do not give the order (sorted conv1, bn1, fc1), modules registered out of their order, a grouped Conv, and
# optimizer state. Without --assume-sequential a .pt is refused before its names are read. Nothing is written.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct
import torch
from torch import nn
torch.manual_seed(0)

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4)
class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.layer1 = nn.Sequential(Block())
        self.fc = nn.Linear(4, 2)
class Reversed(nn.Module):  # registered fc2 first, although forward runs fc1 first
    def __init__(self):
        super().__init__()
        self.fc2, self.fc1 = nn.Linear(7, 6), nn.Linear(5, 7)
class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1, self.conv2, self.fc1 = (nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.Conv2d(4, 4, 3),
                                                      nn.Linear(16, 3))

torch.save(ResNetLike().state_dict(), "resnet.pt")
torch.save(nn.Sequential(nn.Linear(4, 5), nn.LayerNorm(5), nn.Linear(5, 2)).state_dict(), "layernorm.pt")
torch.save(Reversed().state_dict(), "reversed.pt")
torch.save(nn.Sequential(nn.Conv2d(2, 4, 3), nn.Conv2d(4, 4, 3, groups=4), nn.Flatten(),
                         nn.Linear(4, 2)).state_dict(), "grouped.pt")
mlp = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
opt = torch.optim.Adam(mlp.parameters())
mlp(torch.randn(3, 4)).sum().backward()
opt.step()
torch.save({"model": mlp.state_dict(), "optimizer": opt.state_dict()}, "checkpoint.pt")

header, blobs, offset = {}, [], 0
sd = Cnn().state_dict()
for k in sorted(sd):
    if sd[k].dim() == 0:
        continue
    b = sd[k].numpy().astype("<f4").tobytes()
    header[k] = {"dtype": "F32", "shape": list(sd[k].shape), "data_offsets": [offset, offset + len(b)]}
    blobs.append(b)
    offset += len(b)
h = json.dumps(header).encode()
with open("cnn.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
PY
for f in resnet.pt layernorm.pt reversed.pt grouped.pt checkpoint.pt cnn.safetensors; do
  code=0
  "$WAVG" align "$f" --to "$f" -o "out_$f" --assume-sequential 2>&1 || code=$?
  echo "exit $code"
done
code=0
"$WAVG" align reversed.pt --to reversed.pt -o out_plain.pt 2>&1 || code=$?
echo "exit $code"
ls out_* 2>/dev/null || echo "nothing written"
