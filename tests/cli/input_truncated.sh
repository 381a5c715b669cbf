# A truncated HDF5 file gives one line (no HDF5 error stack) and exit 1; no output appears.
head -c 3000 "$SAMPLES/mlp/node2.h5" > cut.h5
"$WAVG" merge "$SAMPLES/mlp/node1.h5" cut.h5 -o out.h5 || { code=$?; ls -A; exit $code; }
