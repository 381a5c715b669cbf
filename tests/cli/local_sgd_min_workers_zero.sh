# --min-workers 0 would let a round with no successful worker through to a merge of nothing: refused (usage error,
# exit 2), nothing written.
code=0
"$WAVG" local-sgd --train-cmd true --init "$SAMPLES/mlp/node1.h5" --min-workers 0 --out-dir run || code=$?
[ ! -e run ]
exit $code
