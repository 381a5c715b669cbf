# --exclude with an HDF5 output copied from a Keras 2 model: a tensor the layout lists (weight_names) cannot be
# left out of the copy, which would not load; the merge is refused before anything is written, naming it. The same
# filter into safetensors works. With --match order the patterns name input 1's tensors and their partners leave
# with them: a Keras 2 .h5 and a Keras 3 .keras, all of einsum_dense left out.
M=$SAMPLES/mlp K=$SAMPLES/keras3
"$WAVG" merge "$M/node1.h5" "$M/node2.h5" --exclude '*bias*' -o out.h5 || echo "exit $?"
ls
"$WAVG" merge "$M/node1.h5" "$M/node2.h5" --exclude '*bias*' -o out.safetensors
"$WAVG" merge -v --match order "$K/einsum_a.h5" "$K/einsum_b.keras" --exclude '*einsum*' -o order.safetensors 2>&1 |
  grep -v '^wavg: pair\|device:' | sed "s|$K|K|g"
"$WAVG" inspect order.safetensors | sed "s|$K|K|g" | grep -c dense_12
