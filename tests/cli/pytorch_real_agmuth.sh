# Three real training runs of one CNN (saved from cuda:0): the merged .pt loads with torch.load(weights_only=True)
# as an OrderedDict with input 1's _metadata, values equal to torch's float64 mean rounded once, provenance in
# mnist_cnn/wavg.json (an entry torch ignores), every entry's data 64-byte aligned.
R=$SHARED/real-checkpoints/pytorch-agmuth-mnist-cnn
[ -d "$R" ] || { echo "no $R"; exit 77; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
"$WAVG" merge "$R"/mnist_cnn_349909f.pt "$R"/mnist_cnn_9926f74.pt "$R"/mnist_cnn_e12963b.pt -o avg.pt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$R" <<'PY'
import json, os, struct, sys, zipfile
import pytorch_tools as t
ins = [f"{sys.argv[1]}/mnist_cnn_{h}.pt" for h in ("349909f", "9926f74", "e12963b")]
t.check_merge("avg.pt", ins, weights_only=True)
z = zipfile.ZipFile("avg.pt")
meta = json.loads(z.read("mnist_cnn/wavg.json"))
assert [os.path.basename(i["file"]) for i in json.loads(meta["wavg_inputs"])] == [
    "mnist_cnn_349909f.pt", "mnist_cnn_9926f74.pt", "mnist_cnn_e12963b.pt"]
data = open("avg.pt", "rb").read()
for i in z.infolist():
    n, e = struct.unpack("<HH", data[i.header_offset + 26:i.header_offset + 30])
    assert (i.header_offset + 30 + n + e) % 64 == 0, i.filename
assert z.testzip() is None
print("torch loads it: ok")
PY
