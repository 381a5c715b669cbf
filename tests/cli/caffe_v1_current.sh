# A V1 snapshot and a current-layout snapshot of the same net merge: python3-protobuf rewrites the CIFAR-10
# iteration-20000 snapshot (C1, V1 layout) in the current layout, with BlobShape holding each blob's true shape
# (a bias (C,), an InnerProduct weight (O, I)); wavg merges it with the V1 iteration-10000 snapshot in both orders.
# Each output takes input 1's layout and every value equals numpy's mean.
C1=$SHARED/real-checkpoints/caffe-everpeace-cifar10-full
[ -d "$C1" ] || { echo "no $C1"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$C1" <<'PY'
import sys
import caffe_tools as ct
v1 = ct.load(f"{sys.argv[1]}/cifar10_full_iter_20000.caffemodel")
names = {4: "Convolution", 14: "InnerProduct", 5: "Data", 17: "Pooling", 18: "ReLU", 15: "LRN", 21: "SoftmaxWithLoss"}
net = ct.pb.NetParameter(name=v1.name)
for old in v1.layers:
    new = net.layer.add(name=old.name, type=names.get(old.type, str(old.type)), bottom=old.bottom, top=old.top)
    for i, b in enumerate(old.blobs):
        blob = new.blobs.add()
        blob.shape.dim.extend(ct.true_shape(b, old.type, i))
        blob.data.extend(b.data)
open("current.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" merge -q "$C1"/cifar10_full_iter_10000.caffemodel current.caffemodel -o v1_first.caffemodel
"$WAVG" merge -q current.caffemodel "$C1"/cifar10_full_iter_10000.caffemodel -o current_first.caffemodel
"$WAVG" inspect current.caffemodel | head -1
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$C1" <<'PY'
import sys
import numpy as np
import caffe_tools as ct
a = ct.tensors(ct.load(f"{sys.argv[1]}/cifar10_full_iter_10000.caffemodel"))
b = ct.tensors(ct.load(f"{sys.argv[1]}/cifar10_full_iter_20000.caffemodel"))
for out in ("v1_first.caffemodel", "current_first.caffemodel"):
    net = ct.load(out)
    got = ct.tensors(net)
    assert sorted(got) == sorted(a)
    for k in got:
        want = ((a[k].astype(np.float64) + b[k].astype(np.float64)) / 2).astype(np.float32)
        assert got[k].shape == want.shape and got[k].tobytes() == want.tobytes(), (out, k)
    print(out, "V1" if len(net.layers) else "current", "layout,", len(got), "blobs")
PY
