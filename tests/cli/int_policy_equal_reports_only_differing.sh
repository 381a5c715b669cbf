# --int-policy equal accepts identical integer tensors (quant/table) and reports only those that differ (step: 10, 11).
cd "$SAMPLES/dtypes"
"$WAVG" check a.h5 b.h5 --int-policy equal
