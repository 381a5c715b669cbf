# A top-level int8_mask (mergekit ignores it there; in a method's parameters it saves memory for its masks) is
# accepted, and -v says it changes nothing; the result is the recipe's without it, byte for byte.
M="$SAMPLES/mlp"
printf 'models:\n  - model: %s\n    parameters: {weight: 1}\n  - model: %s\n    parameters: {weight: 3}\nmerge_method: linear\n' \
  "$M/node1.h5" "$M/node2.h5" > plain.yml
{ cat plain.yml; printf 'int8_mask: true\n'; } > hint.yml
"$WAVG" merge -v --recipe hint.yml -o hint.h5 2>&1 >/dev/null | grep int8_mask
"$WAVG" merge -q --recipe plain.yml -o plain.h5
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 -c '
from h5_tools import tensors
assert tensors("hint.h5") == tensors("plain.h5")
print("same tensors")'
