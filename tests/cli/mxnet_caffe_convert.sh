# convert into and out of MXNet and Caffe. numpy writes a safetensors file with one tensor of each dtype wavg knows
# (edge values included); it goes to .params and back with every dtype, shape and byte kept, the .params read by
# the tests' own parser. The real files go to safetensors with their names unchanged (arg:fc1_weight, conv1/0) and
# back; a .caffemodel made from another format has the current layout, one layer per LAYER/ prefix.
C2=$SHARED/real-checkpoints/caffe-yuvval-lenet
X2=$SHARED/real-checkpoints/mxnet-jonggon-module-lotto
[ -d "$C2" ] && [ -d "$X2" ] || { echo "no MXNet or Caffe files in $SHARED"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
arrays = {
    "f16": np.arange(0, 65536, 97, dtype=np.uint16), "bf16": np.arange(0, 65536, 89, dtype=np.uint16),
    "f32": np.float32([0, -0.0, 1.5, np.inf, -np.inf, 1e-45, 3.4028235e38, -1.17549435e-38, np.nan]).reshape(3, 3),
    "f64": np.float64([0, -0.0, 5e-324, 1.7976931348623157e308, -np.inf, 0.1, 1 / 3]),
    "i8": np.int8([-128, 0, 127]), "i16": np.int16([-32768, 1, 32767]), "i32": np.int32([-2**31, 7, 2**31 - 1]),
    "i64": np.int64([-2**63, 2**63 - 1]), "u8": np.uint8([0, 255]), "u16": np.uint16([0, 65535]),
    "u32": np.uint32([0, 2**32 - 1]), "u64": np.uint64([0, 2**64 - 1]), "bool": np.array([True, False, True]),
}
header, blob = {}, b""
for k, a in arrays.items():
    b = a.tobytes()
    header[k] = {"dtype": k.upper(), "shape": list(a.shape), "data_offsets": [len(blob), len(blob) + len(b)]}
    blob += b
h = json.dumps(header).encode()
open("all.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + blob)
np.savez("want.npz", **arrays)
PY
"$WAVG" convert -q all.safetensors -o all.params
"$WAVG" convert -q all.params -o back.safetensors
"$WAVG" convert -q "$X2"/Lotto_Net-10000.params -o lotto.safetensors
"$WAVG" convert -q lotto.safetensors -o lotto.params
"$WAVG" convert -q "$C2"/lenet_iter_5000.caffemodel -o lenet.safetensors
"$WAVG" convert -q lenet.safetensors -o lenet.caffemodel
"$WAVG" convert -q lenet.caffemodel -o lenet.params
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$C2" "$X2" <<'PY'
import sys
import numpy as np
import caffe_tools as ct, mxnet_tools as mx, safetensors_tools as st
c2, x2 = sys.argv[1:]
want = dict(np.load("want.npz"))
names, arrays, encodings = mx.load("all.params")
assert names == list(want) and set(encodings) == {"V2"}, (names, encodings)
for k, a in zip(names, arrays):
    assert a.shape == want[k].shape and a.tobytes() == want[k].tobytes(), ("params", k)
_, back = st.load("back.safetensors")
for k in want:
    assert back[k].shape == want[k].shape and back[k].tobytes() == want[k].tobytes(), ("back", k)
print("13 dtypes through MXNet: bytes kept")
lotto = mx.load_dict(f"{x2}/Lotto_Net-10000.params")
for path, got in (("lotto.safetensors", st.load("lotto.safetensors")[1]),
                  ("lotto.params", mx.load_dict("lotto.params"))):
    assert sorted(got) == sorted(lotto), sorted(got)
    assert all(got[k].tobytes() == lotto[k].tobytes() and got[k].shape == lotto[k].shape for k in lotto), path
print("lotto: arg: names and values kept through safetensors and back")
lenet = ct.tensors(ct.load(f"{c2}/lenet_iter_5000.caffemodel"))
net = ct.load("lenet.caffemodel")
assert not net.layers and [l.name for l in net.layer] == ["conv1", "conv2", "ip1", "ip2"]
for path, got in (("lenet.safetensors", st.load("lenet.safetensors")[1]), ("lenet.caffemodel", ct.tensors(net)),
                  ("lenet.params", mx.load_dict("lenet.params"))):
    assert sorted(got) == sorted(lenet), (path, sorted(got))
    assert all(got[k].tobytes() == lenet[k].tobytes() and got[k].shape == lenet[k].shape for k in lenet), path
print("lenet: conv1/0 ... kept through safetensors, a new current-layout caffemodel and MXNet")
PY
# What Caffe cannot hold is refused before anything is written.
"$WAVG" convert -q all.safetensors -o all.caffemodel 2>&1 || echo "exit $?"
ls all.caffemodel 2>/dev/null || echo "no all.caffemodel"
