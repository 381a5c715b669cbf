# mergekit's wrappers pass a seed with every recipe: every method takes --seed, and -v says where it is unused
# (nothing drawn at random); DARE uses it, silently. The mean with --seed stays the plain mean (no federated run).
M="$SAMPLES/mlp"
"$WAVG" merge -v "$M/node1.h5" "$M/node2.h5" --seed 7 -o mean.h5 2>&1 >/dev/null | grep -- '--seed'
"$WAVG" merge -v "$M/node1.h5" "$M/node2.h5" --no-normalize --seed 7 -o linear.h5 2>&1 >/dev/null | grep -- '--seed'
"$WAVG" merge -v "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method ties --density 0.5 --seed 7 -o ties.h5 \
  2>&1 >/dev/null | grep -- '--seed'
"$WAVG" merge -v "$M/node1.h5" "$M/node2.h5" --base "$M/node3.h5" --method dare-ties --density 0.5 --seed 7 \
  -o dare.h5 2>&1 >/dev/null | { grep -- '--seed' || echo "dare-ties uses the seed: no note"; }
"$WAVG" merge -q "$M/node1.h5" "$M/node2.h5" -o plain.h5
cmp mean.h5 plain.h5 && echo "mean with --seed is the mean"
