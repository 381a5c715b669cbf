# The same Keras 3 .weights.h5 given twice (as itself, as ./itself, and through a symlink; and a copy of it before
# two mentions of it): HDF5 shares one open file among the opens of one file, and a dataset the first reader had
# opened (with wavg's own access properties) could not be opened again with the default ones, so the second reader
# took every dataset for "not a dataset" and listed none: the merge reported every tensor missing and exited 3.
# The mean of a file with itself is the file: each output dataset equals the file's own values read by h5py, and
# no dataset is left out. The weights are Keras's own (samples/keras3/nested_a.keras's model.weights.h5).
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
/usr/bin/python3 - "$SAMPLES/keras3/nested_a.keras" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    open("w.weights.h5", "wb").write(z.read("model.weights.h5"))
PY
ln -s w.weights.h5 link.weights.h5
cp w.weights.h5 copy.weights.h5
"$WAVG" merge -q w.weights.h5 w.weights.h5 -o same.weights.h5
"$WAVG" merge -q ./w.weights.h5 w.weights.h5 -o dot.weights.h5
"$WAVG" merge -q link.weights.h5 w.weights.h5 -o link_out.weights.h5
"$WAVG" merge -q copy.weights.h5 w.weights.h5 w.weights.h5 -o three.weights.h5
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from h5_tools import datasets
want = datasets("w.weights.h5")
assert len(want) == 6, sorted(want)
for out in ("same", "dot", "link_out", "three"):
    got = datasets(f"{out}.weights.h5")
    assert sorted(got) == sorted(want), (out, sorted(got))
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].tobytes() == value.tobytes(), (out, name)
    print(out, len(got), "datasets equal the file's own")
PY
