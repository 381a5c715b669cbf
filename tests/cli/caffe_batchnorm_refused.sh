# A BatchNorm layer without its 1-value moving-average factor (blob 2) has statistics of unknown scale: refused,
# naming the layer, before anything is written.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import caffe_tools as ct
net = ct.pb.NetParameter(name="bn")
bn = net.layer.add(name="bn1", type="BatchNorm")
for values in ([0.5, 1.0], [2.0, 3.0]):
    b = bn.blobs.add()
    b.shape.dim.extend([2])
    b.data.extend(values)
open("two.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" merge -q two.caffemodel two.caffemodel -o out.caffemodel || echo "exit $?"
ls out.caffemodel 2>/dev/null || echo "no out.caffemodel"
