# check takes merge's --weights and refuses what merge refuses: a negative weight for the mean, and a count that is
# not one per input (exit 2 each); three weights for three inputs check out.
cd "$SAMPLES/mlp"
"$WAVG" check node1.h5 node2.h5 node3.h5 -w 1,2,3
"$WAVG" check node1.h5 node2.h5 node3.h5 -w 1,-1,1 || echo "exit $?"
"$WAVG" check node1.h5 node2.h5 node3.h5 -w 1,2 || echo "exit $?"
