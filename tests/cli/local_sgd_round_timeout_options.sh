# --round-timeout and --staleness-fn are refused, one line each with exit 2 and nothing written, where they cannot
# apply: the built-in trainer, a timeout that is not a positive number, a function without a timeout, a malformed
# function.
train="--train-cmd true --init $SAMPLES/mlp/node1.h5 --out-dir run"
for bad in "--data $SAMPLES/digits/digits.csv.gz --out-dir run --round-timeout 5" "$train --round-timeout 0" \
           "$train --round-timeout -1" "$train --staleness-fn constant" \
           "$train --round-timeout 5 --staleness-fn hinge:a=1"; do
  code=0
  "$WAVG" local-sgd $bad 2>&1 || code=$?
  echo "exit $code"
  [ ! -e run ]
done
