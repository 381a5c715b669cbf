# A Keras 3 weights file whose layer group holds a hard link back to itself (a cycle the Keras walk would follow
# forever) is one error line and exit 1, nothing written.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("cycle.weights.h5", "w") as f:
    f.create_dataset("layers/dense/vars/0", data=np.ones(2, np.float32))
    f.create_group("vars")
    f["layers/dense/loop"] = f["layers/dense"]
PY
set +e
"$WAVG" merge cycle.weights.h5 cycle.weights.h5 -o out.h5
echo "exit $?"
ls out.h5 2>/dev/null
exit 0
