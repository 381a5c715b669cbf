# A float32 BatchNorm layer's effective statistics are Caffe's BatchNormLayer<float>'s: scale_factor = 1 / s in
# float, each value times it in float (caffe_cpu_scale), so each one rounded as Caffe rounds it (a double product
# rounded once differs by one ulp in about a third of these); a float64 layer's in double. numpy computes both in the
# blobs' dtype; 4096 random values per blob, s = 3 and 7 (float32), 3 and 0.7 (float64); the merge's mean of two
# snapshots is the float64 mean of their effective statistics, rounded to the blob's dtype.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import caffe_tools as ct
rng = np.random.default_rng(7)
for k, s, s64 in ((1, 3.0, 3.0), (2, 7.0, 0.7)):
    net = ct.pb.NetParameter(name="bn")
    for name, double, scale in (("bn", False, s), ("bn64", True, s64)):
        layer = net.layer.add(name=name, type="BatchNorm")
        for values in (rng.standard_normal(4096) * 10, rng.random(4096) * 5, [scale]):
            b = layer.blobs.add()
            b.shape.dim.extend([len(values)])
            (b.double_data if double else b.data).extend(np.asarray(values, np.float64 if double else np.float32))
    open(f"in{k}.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" merge -q in1.caffemodel in2.caffemodel -o out.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import caffe_tools as ct
def effective(t, layer, i):  # Caffe's BatchNormLayer<Dtype>: factor and product in Dtype
    blob, s = t[f"{layer}/{i}"], t[f"{layer}/2"][0]
    factor = blob.dtype.type(0) if s == 0 else blob.dtype.type(1) / s
    return blob * factor
ins = [ct.tensors(ct.load(f"in{k}.caffemodel")) for k in (1, 2)]
out = ct.tensors(ct.load("out.caffemodel"))
for layer, dtype in (("bn", np.float32), ("bn64", np.float64)):
    for i in (0, 1):
        e = [effective(t, layer, i) for t in ins]
        assert e[0].dtype == dtype
        want = ((e[0].astype(np.float64) + e[1].astype(np.float64)) / 2).astype(dtype)
        got = out[f"{layer}/{i}"]
        assert got.dtype == dtype and np.array_equal(got, want), (layer, i, np.count_nonzero(got != want))
print("Caffe's float and double effective statistics, exactly")
PY
