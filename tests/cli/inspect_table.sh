# inspect prints the layout, the metadata, one row per tensor and the totals.
cd "$SAMPLES/mlp"
"$WAVG" inspect node1.h5
