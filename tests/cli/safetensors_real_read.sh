# Every real safetensors file (other writers: HF, burn, tinygrad, CoffeeVampir3) converts to HDF5 with the same
# names, shapes and values, as read back by h5py and compared with numpy's own parse of the original.
R=$SHARED/real-checkpoints
export LC_ALL=C
[ -d "$R" ] || { echo "no $R"; exit 77; }
for f in "$R"/*/*.safetensors; do
  out=$(basename "$f" .safetensors).h5
  "$WAVG" convert -q "$f" -o "$out"
  PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$f" "$out" <<'PY'
import sys
import h5py
import numpy as np
import safetensors_tools as st
_, want = st.load(sys.argv[1])
with h5py.File(sys.argv[2], "r") as h:
    for name, w in want.items():
        got = h[name][()]
        assert np.shape(got) == w.shape, (name, np.shape(got), w.shape)
        assert np.asarray(got).astype(w.dtype).tobytes() == w.tobytes(), name
PY
  echo "$(basename "$f"): ok"
done
