# check takes merge's --align: permuting whole models does not go with --base (the inputs are updates), refused
# before any file opens (exit 2), as merge refuses it; without an architecture to infer the permutation spec from,
# the first input is named (exit 2).
cd "$SAMPLES"
"$WAVG" check mlp/node1.h5 mlp/node2.h5 --base mlp/node3.h5 --align weights || echo "exit $?"
"$WAVG" check dtypes/a.h5 dtypes/b.h5 --align weights || echo "exit $?"
