# With an input 1 that is not PyTorch (HDF5 made by h5py), a .pt output is a plain state_dict: torch.load with
# weights_only=True returns an OrderedDict whose tensors are torch's float64 means of the inputs rounded once
# (float32, float16, a 0-d tensor; int64 from input 1), provenance in archive/wavg.json, every entry 64-byte
# aligned. --format pytorch chooses it for any extension, and the .pt converts back to HDF5 unchanged.
/usr/bin/python3 -c 'import torch, h5py' 2>/dev/null || { echo "python3-torch or h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for i in (1, 2):
    with h5py.File(f"in{i}.h5", "w") as f:
        f["dense/kernel"] = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * i
        f["dense/bias"] = np.float16([0.1, 0.2, 0.3]) * i
        f["scale"] = np.float32(0.7 * i)
        f["step"] = np.int64(100 * i)
PY
"$WAVG" merge -q in1.h5 in2.h5 -o out.pt
"$WAVG" merge -q in1.h5 in2.h5 -o out.model --format pytorch
"$WAVG" convert -q out.pt -o back.h5
/usr/bin/python3 - <<'PY'
import collections, json, struct, zipfile
import h5py, numpy as np, torch
ins = [h5py.File(f"in{i}.h5", "r") for i in (1, 2)]
names = ["dense/bias", "dense/kernel", "scale", "step"]
for path in ("out.pt", "out.model"):
    out = torch.load(path, weights_only=True)
    assert isinstance(out, collections.OrderedDict) and sorted(out) == names, list(out)
    for n in names:
        t = [torch.from_numpy(np.asarray(f[n][()])) for f in ins]
        want = torch.stack([x.double() for x in t]).mean(0).to(t[0].dtype) if t[0].is_floating_point() else t[0]
        assert out[n].dtype == want.dtype and torch.equal(out[n], want), n
    z = zipfile.ZipFile(path)
    assert json.loads(z.read("archive/wavg.json"))["wavg_command"] == "merge"
    data = open(path, "rb").read()
    for i in z.infolist():
        l, e = struct.unpack("<HH", data[i.header_offset + 26:i.header_offset + 30])
        assert (i.header_offset + 30 + l + e) % 64 == 0, i.filename
    assert z.testzip() is None
out = torch.load("out.pt", weights_only=True)
with h5py.File("back.h5", "r") as b:
    for n in names:
        assert np.asarray(b[n][()]).tobytes() == out[n].numpy().tobytes(), n
print("ok")
PY
