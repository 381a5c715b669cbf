# The real Caffe snapshots merge: two of LeNet in the current layout (C2) and two of CIFAR-10 in the V1 layout (C1).
# Read by python3-protobuf through the tests' own caffe_test.proto: every merged value equals numpy's float64 mean
# rounded to float32, the output keeps input 1's layout, and everything but the blob values is input 1's (layer
# definitions, bottoms and tops, learning rates, layer parameters wavg does not declare).
C1=$SHARED/real-checkpoints/caffe-everpeace-cifar10-full
C2=$SHARED/real-checkpoints/caffe-yuvval-lenet
[ -d "$C1" ] && [ -d "$C2" ] || { echo "no Caffe files in $SHARED"; exit 77; }
"$WAVG" merge -q "$C2"/lenet_iter_5000.caffemodel "$C2"/lenet_iter_10000.caffemodel -o lenet.caffemodel
"$WAVG" merge -q "$C1"/cifar10_full_iter_10000.caffemodel "$C1"/cifar10_full_iter_20000.caffemodel -o cifar.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$C1" "$C2" <<'PY'
import sys
import numpy as np
import caffe_tools as ct
c1, c2 = sys.argv[1:]
for out, ins in (("lenet.caffemodel", [f"{c2}/lenet_iter_5000.caffemodel", f"{c2}/lenet_iter_10000.caffemodel"]),
                 ("cifar.caffemodel", [f"{c1}/cifar10_full_iter_{i}.caffemodel" for i in (10000, 20000)])):
    got_net, first = ct.load(out), ct.load(ins[0])
    got = ct.tensors(got_net)
    loaded = [ct.tensors(ct.load(p)) for p in ins]
    assert list(got) == list(loaded[0]), (list(got), list(loaded[0]))
    for name, value in got.items():
        want = np.mean(np.stack([d[name] for d in loaded]).astype(np.float64), axis=0).astype(np.float32)
        assert value.dtype == np.float32 and value.shape == want.shape, name
        assert value.tobytes() == want.tobytes(), name
    assert ct.without_blob_values(got_net) == ct.without_blob_values(first), out
    layout = "V1 (layers)" if len(got_net.layers) else "current (layer)"
    print(out, len(got), "blobs,", layout, "layout, all else as input 1")
PY
