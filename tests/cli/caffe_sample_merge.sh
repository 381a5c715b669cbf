# The bundled Caffe snapshots (samples/caffe, written with Caffe's own caffe.proto by make_caffemodel.py) merge to
# the closed form: blob values k/8 + i/64 for snapshots k = 1 and 2 average to 3/16 + i/64, read back through the
# tests' own caffe_test.proto, with every layer (the blobless Input layer, types, bottoms, tops, parameters) input 1's.
"$WAVG" merge -q "$ROOT"/samples/caffe/lenet_a.caffemodel "$ROOT"/samples/caffe/lenet_b.caffemodel -o avg.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$ROOT"/samples/caffe/lenet_a.caffemodel <<'PY'
import sys
import numpy as np
import caffe_tools as ct
got_net = ct.load("avg.caffemodel")
got = ct.tensors(got_net)
assert list(got) == ["conv1/0", "conv1/1", "ip1/0", "ip1/1"], list(got)
for name, value in got.items():
    want = (3 / 16 + np.arange(value.size) / 64).astype(np.float32).reshape(value.shape)
    assert value.dtype == np.float32 and value.tobytes() == want.tobytes(), name
assert ct.without_blob_values(got_net) == ct.without_blob_values(ct.load(sys.argv[1]))
print(len(got), "blobs at 3/16 + i/64, all else as input 1")
PY
