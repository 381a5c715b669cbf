# `-w 1 2 a.h5 b.h5`: the shell split the weights and `2` became an input. Said as such, with the spelling that
# works, and that spelling merges.
code=0; "$WAVG" merge -w 1 2 "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o avg.h5 || code=$?
echo "exit $code"
"$WAVG" merge -q -w 1,2 "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o avg.h5
ls
