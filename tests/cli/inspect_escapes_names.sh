# Names read from a file reach the terminal escaped as error lines are (issue 26): a tensor named with a line break
# and a terminal escape is one line in inspect's and diff's tables (\n, \x1b), and a Caffe layer whose name holds
# a control character is refused naming it, one line, not as bytes wavg does not know.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
for i in (1, 2):
    write_safetensors(f"n{i}.safetensors", {"a\nb": np.full(2, i, np.float32), "red\x1b[31m": np.zeros(1, np.int64)})
import caffe_tools as ct
net = ct.pb.NetParameter(name="n")
layer = net.layer.add(name="ip\x1b[2J", type="InnerProduct")
layer.blobs.add(data=[1, 2]).shape.dim.append(2)
open("ctl.caffemodel", "wb").write(net.SerializeToString())
PY
"$WAVG" inspect n1.safetensors
"$WAVG" diff n1.safetensors n2.safetensors
"$WAVG" inspect ctl.caffemodel || echo "caffe: exit $?"
