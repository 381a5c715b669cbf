# --int-policy error refuses any non-float tensor.
cd "$SAMPLES/dtypes"
"$WAVG" check a.h5 b.h5 --int-policy error
