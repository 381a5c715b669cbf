# check reports every mismatch of the incompatible sample, one line each, and exits 3.
cd "$SAMPLES/mlp"
"$WAVG" check node1.h5 incompatible.h5
