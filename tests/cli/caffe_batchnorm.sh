# A BatchNorm layer's statistics are merged as Caffe uses them: blob0 and blob1 times (s == 0 ? 0 : 1 / s) with s
# the layer's blob 2, averaged; the output's blob 2 is 1. Inputs with s = 2 and s = 5 (float32), s = 4 and s = 0
# (float64: statistics 0); numpy computes the effective statistics in the blobs' dtype as Caffe does, protobuf
# reads the output back. The convolution's blobs are weights, averaged as stored; inspect shows the roles.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import caffe_tools as ct
def blob(layer, values, double=False):
    b = layer.blobs.add()
    b.shape.dim.extend([len(values)])
    (b.double_data if double else b.data).extend(values)
for k, s, s64 in ((1, 2.0, 4.0), (2, 5.0, 0.0)):
    net = ct.pb.NetParameter(name="bn")
    conv = net.layer.add(name="conv", type="Convolution")
    blob(conv, [1.0 * k, -2.0, 0.5])
    bn = net.layer.add(name="bn", type="BatchNorm", bottom=["conv"], top=["conv"])
    blob(bn, [0.3 * k, -1.7, 10.0 / k])
    blob(bn, [2.0 * k, 0.7, 3.3])
    blob(bn, [s])
    bn64 = net.layer.add(name="bn64", type="BatchNorm")
    blob(bn64, [1.5 * k, -0.1], double=True)
    blob(bn64, [0.9, 7.0 * k], double=True)
    blob(bn64, [s64], double=True)
    open(f"in{k}.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" inspect in1.caffemodel
"$WAVG" merge -q in1.caffemodel in2.caffemodel -o out.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import caffe_tools as ct
def effective(t, layer, i):  # Caffe's BatchNormLayer<Dtype>: blob * (s == 0 ? 0 : 1 / s), factor and product in Dtype
    blob, s = t[f"{layer}/{i}"], t[f"{layer}/2"][0]
    return blob * (blob.dtype.type(0) if s == 0 else blob.dtype.type(1) / s)
ins = [ct.tensors(ct.load(f"in{k}.caffemodel")) for k in (1, 2)]
out = ct.tensors(ct.load("out.caffemodel"))
assert np.array_equal(out["conv/0"], (ins[0]["conv/0"] + ins[1]["conv/0"]) / 2), out["conv/0"]
for layer, dtype in (("bn", np.float32), ("bn64", np.float64)):
    assert out[f"{layer}/2"].dtype == dtype and out[f"{layer}/2"].tolist() == [1.0], out[f"{layer}/2"]
    for i in (0, 1):
        want = ((effective(ins[0], layer, i).astype(np.float64) + effective(ins[1], layer, i)) / 2).astype(dtype)
        got = out[f"{layer}/{i}"]
        assert got.dtype == dtype and np.array_equal(got, want), (layer, i, got, want)
        raw = (ins[0][f"{layer}/{i}"] + ins[1][f"{layer}/{i}"]) / 2
        assert not np.allclose(got, raw), "the raw blobs' mean"
print("BatchNorm statistics averaged as Caffe's effective statistics; blob 2 is 1")
PY
