# The task-vector methods have no CUDA kernels: --device cuda or auto still merges, on the CPU, says so with -v,
# and gives the same bytes as --device cpu (also where wavg was built without CUDA, where --device cuda is
# otherwise an error).
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
M="$SAMPLES/mlp"
for device in cuda auto cpu; do
  "$WAVG" merge -v --hash none "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method ties --density 0.5 \
    --device $device -o $device.h5 2>&1 | grep "device:"
done
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from h5_tools import tensors
assert tensors("cuda.h5") == tensors("cpu.h5") == tensors("auto.h5")
print("same tensors")
PY
