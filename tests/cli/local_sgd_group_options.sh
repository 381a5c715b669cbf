# Hierarchical local SGD's options are refused, one line each with exit 2 and nothing written, when they do not
# make groups (G must divide K into two or more groups, as PyTorch's subgroups require) or a global period that is
# a whole number of local phases longer than one.
data="--data $SAMPLES/digits/digits.csv.gz --workers 4 --period 2 --out-dir run"
for bad in "--group-size 2" "--group-period 4" "--group-size 3 --group-period 4" "--group-size 4 --group-period 4" \
           "--group-size 2 --group-period 5" "--group-size 2 --group-period 2" \
           "--group-size 2 --group-period 4 --mode sync" "--group-size 2 --group-period 4 --local-epochs 1"; do
  code=0
  "$WAVG" local-sgd $data $bad 2>&1 || code=$?
  echo "exit $code"
  [ ! -e run ]
done
