# -v lists the tensors that were not averaged. (It also names the device, which depends on the machine: left out.)
"$WAVG" merge "$SAMPLES/dtypes/a.h5" "$SAMPLES/dtypes/b.h5" -o out.h5 -v 2>err.txt
grep -v '^wavg: device: ' err.txt >&2
