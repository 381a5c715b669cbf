# A model_config that is not JSON, or nests a layer's inbound nodes 100,000 deep, is one error line each (exit 1
# and 2), never a crash, and nothing is written.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
deep = "[" * 100000 + "]" * 100000
configs = {"garbled.h5": '{"class_name": "Sequential", "config": {',
           "deep.h5": '{"class_name": "Functional", "config": {"layers": [{"class_name": "Dense", "name": "d", '
                      '"config": {"units": 2}, "inbound_nodes": [' + deep + ']}]}}'}
for path, config in configs.items():
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = config
        f["d/kernel"] = np.ones((2, 2))
PY
for f in garbled deep; do
  "$WAVG" align $f.h5 --to $f.h5 -o out.h5 2>&1 || echo "exit $?"
done
test ! -e out.h5
