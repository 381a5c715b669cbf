#!/bin/sh
# Makes the README's pictures (samples/plots/*.svg) from the bundled digits data with wavg's own commands:
#   samples/plots/make_plots.sh build/wavg
# Two MLPs trained apart (seeds 1 and 2, 640 steps, as in samples/digits/README.md), the line between them
# (barrier) and their tensors' distances (diff); local SGD on label-sorted shards with H = 8 and H = 32 (8 workers,
# 640 steps each, as in the hierarchical table of tests/bench/README.md); a greedy soup of the H = 8 run's checkpoints at rounds 50, 55,
# ..., 80, scored by wavg eval's test accuracy. About 20 s on two cores.
set -eu
WAVG=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$HERE/../digits/digits.csv.gz" "$work/"
cd "$work"
for s in 1 2; do
  "$WAVG" local-sgd --data digits.csv.gz --workers 1 --period 640 --rounds 1 --seed $s --out-dir seed$s -q
done
"$WAVG" barrier seed1/final.h5 seed2/final.h5 --data digits.csv.gz --plot "$HERE/barrier.svg" -f
"$WAVG" diff seed1/final.h5 seed2/final.h5 --plot "$HERE/diff.svg" -f >/dev/null
for h in 8 32; do
  "$WAVG" local-sgd --data digits.csv.gz --workers 8 --shard label-sorted --period $h --rounds $((640 / h)) \
      --out-dir h$h -q
done
"$WAVG" local-sgd h8 h32 --plot "$HERE/local-sgd.svg" -f
"$WAVG" soup h8/round-00[5678][05].h5 -o soup.h5 -q \
    --eval "'$WAVG' eval {model} --data digits.csv.gz | sed 's/.*accuracy \([0-9.]*\).*/\1/'" \
    --plot "$HERE/soup.svg" -f
