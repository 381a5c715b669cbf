# -v lists the tensors that were not averaged.
"$WAVG" merge "$SAMPLES/dtypes/a.h5" "$SAMPLES/dtypes/b.h5" -o out.h5 -v
