# One damaged byte in model_weights's attributes (a random-damage run found it: byte 1928 of the sample, a
# dataspace's rank) made HDF5 fail looking for layer_names; that failure passed for "absent", so the Keras 2 model
# was read as plain HDF5 and merged, exit 0, its optimizer's moments and iteration counter given roles by name.
# A failed lookup is an error naming the file: exit 1, nothing written.
cp "$SAMPLES/mlp/node1.h5" bad.h5
chmod u+w bad.h5
/usr/bin/python3 - <<'PY'
b = bytearray(open("bad.h5", "rb").read())
assert b[1928] == 2, b[1928]
b[1928] = 0x2B
open("bad.h5", "wb").write(b)
PY
set +e
"$WAVG" merge -q bad.h5 "$SAMPLES/mlp/node2.h5" -o out.h5
echo "merge: exit $?"
"$WAVG" inspect bad.h5 > /dev/null 2>&1
echo "inspect: exit $?"
set -e
[ ! -e out.h5 ] || { echo "an output was written"; exit 1; }
