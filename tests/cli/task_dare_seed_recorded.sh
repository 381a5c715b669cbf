# DARE without --seed draws a seed, names it in the summary and in the provenance's method, and that seed given
# back with --seed reproduces the merge to the byte; a given seed and the other parameters are recorded too.
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
M="$SAMPLES/mlp"
"$WAVG" merge "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method dare-ties --density 0.5 -o drawn.h5 \
  >summary.txt
seed=$(/usr/bin/python3 -c "
import h5py, re
method = h5py.File('drawn.h5', 'r').attrs['wavg_method']
print(re.fullmatch(r'dare-ties, density 0\.5, seed (\d+), rescale l1, lambda 1, on task vectors', method).group(1))")
grep -q "seed $seed," summary.txt
"$WAVG" merge -q "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method dare-ties --density 0.5 \
  --seed "$seed" -o again.h5
"$WAVG" merge -q "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method ties --density 0.25 --lambda 0.5 \
  -w 1,3 -o ties.h5
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import h5py
from h5_tools import tensors
assert tensors("drawn.h5") == tensors("again.h5")
print("same tensors with the recorded seed")
print(h5py.File("ties.h5", "r").attrs["wavg_method"])
PY
