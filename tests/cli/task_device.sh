# The task-vector methods run where --device says, like the other methods: auto keeps this small job on the CPU
# and -v says so; with a GPU, --device cuda gives the same tensors as --device cpu; without one (or in a build
# without CUDA) it is an error (exit 1) that writes nothing.
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
M="$SAMPLES/mlp"
merge() {
  "$WAVG" merge -v --hash none "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method ties --density 0.5 "$@"
}
merge --device auto -o auto.h5 2>&1 | grep -o '^wavg: device: cpu ('
merge --device cpu -o cpu.h5 2>&1 | grep '^wavg: device:'
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  merge --device cuda -o cuda.h5 >/dev/null 2>&1
else
  code=0
  merge --device cuda -o cuda.h5 2>/dev/null || code=$?
  [ "$code" = 1 ] && [ ! -e cuda.h5 ] || { echo "--device cuda without a GPU: exit $code"; exit 1; }
  cp cpu.h5 cuda.h5
fi
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from h5_tools import tensors
assert tensors("cuda.h5") == tensors("cpu.h5") == tensors("auto.h5")
print("same tensors")
PY
