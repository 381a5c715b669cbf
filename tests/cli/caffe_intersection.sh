# --tensors intersection cannot drop blobs from a Caffe input 1 (Caffe's CopyTrainedLayersFrom wants every blob of a
# layer it loads): refused before anything is written. With input 1 the smaller net, the merge goes through.
C2=$SHARED/real-checkpoints/caffe-yuvval-lenet
[ -d "$C2" ] || { echo "no $C2"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$C2" <<'PY'
import sys
import caffe_tools as ct
net = ct.load(f"{sys.argv[1]}/lenet_iter_5000.caffemodel")
for layer in net.layer:
    if layer.name == "ip2":
        del layer.blobs[:]
open("no_ip2.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" merge -q "$C2"/lenet_iter_5000.caffemodel no_ip2.caffemodel --tensors intersection -o x.caffemodel ||
  echo "exit $?"
ls x.caffemodel 2>/dev/null || echo "no x.caffemodel"
"$WAVG" merge -q no_ip2.caffemodel "$C2"/lenet_iter_10000.caffemodel --tensors intersection -o y.caffemodel
"$WAVG" inspect y.caffemodel | tail -1
