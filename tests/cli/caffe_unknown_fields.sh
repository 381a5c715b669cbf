# Fields wavg's .proto does not declare survive a merge byte for byte, at every level: a field 999 in the net, in a
# layer and in a blob (declared by nobody), and the layer's convolution_param (declared as bytes by the tests'
# caffe_test.proto). Only the blob values change, to numpy's mean.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import caffe_tools as ct
def odd(text):  # an unknown length-delimited field 999
    return b"\xba\x3e" + bytes([len(text)]) + text
for k, values in ((1, [1.0, 2.0, 3.0]), (2, [4.0, 8.0, -1.0])):
    net = ct.pb.NetParameter(name="n")
    layer = net.layer.add(name="conv", type="Convolution", bottom=["data"], top=["conv"])
    layer.convolution_param = b"\x18\x03\x20\x01"  # num_output 3, bias_term... as raw bytes
    b = layer.blobs.add()
    b.shape.dim.extend([3])
    b.data.extend(values)
    raw = bytearray(net.SerializeToString())
    # Append the unknown fields: a blob's, a layer's and the net's (each message's length grows accordingly).
    blob = b.SerializeToString() + odd(b"blob-extra")
    layer_bytes = layer.SerializeToString()
    layer_bytes = layer_bytes.replace(b"\x3a" + bytes([len(b.SerializeToString())]) + b.SerializeToString(),
                                      b"\x3a" + bytes([len(blob)]) + blob) + odd(b"layer-extra")
    out = b"\x0a\x01n" + b"\xa2\x06" + bytes([len(layer_bytes)]) + layer_bytes + odd(b"net-extra")
    open(f"in{k}.caffemodel", "wb").write(out)
PY
"$WAVG" merge -q in1.caffemodel in2.caffemodel -o out.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import caffe_tools as ct
raw = open("out.caffemodel", "rb").read()
for text in (b"blob-extra", b"layer-extra", b"net-extra"):
    assert (b"\xba\x3e" + bytes([len(text)]) + text) in raw, text
net = ct.load("out.caffemodel")
assert net.layer[0].convolution_param == b"\x18\x03\x20\x01"
assert list(net.layer[0].bottom) == ["data"] and list(net.layer[0].top) == ["conv"]
assert list(net.layer[0].blobs[0].data) == [2.5, 5.0, 1.0], list(net.layer[0].blobs[0].data)
print("unknown fields kept at three levels; values averaged")
PY
