# inspect --json prints the same as JSON.
cd "$SAMPLES/dtypes"
"$WAVG" inspect --json a.h5
