#!/usr/bin/env bash
# Makes the README's two tables from real runs of wavg local-sgd on digits. Usage: experiments.sh WAVG OUT_DIR
set -euo pipefail
wavg=${1:-build/wavg}; out=${2:-/tmp/wavg-experiments}
data=$(dirname "$0")/digits.csv.gz
mkdir -p "$out"
last() { tail -1 "$1/log.csv"; }

echo "## H sweep: 4 workers, batch 16, lr 0.1, 512 steps per worker, hidden 64,32"
echo "| H | init | test accuracy | test loss | train loss | max rel. diff. from sync |"
"$wavg" local-sgd -q -f --data "$data" --workers 4 --batch 16 --period 1 --rounds 512 --mode sync --out-dir "$out/sync"
for init in shared independent; do
  for h in 1 4 16 512; do
    d="$out/h$h-$init"
    "$wavg" local-sgd -q -f --data "$data" --workers 4 --batch 16 --period $h --rounds $((512 / h)) \
      --init-mode $init --out-dir "$d"
    diff=$(/usr/bin/python3 -c "
import h5py, numpy as np
a, b = h5py.File('$d/final.h5', 'r'), h5py.File('$out/sync/final.h5', 'r')
n = ['dense/kernel', 'dense/bias', 'dense_1/kernel', 'dense_1/bias', 'dense_2/kernel', 'dense_2/bias']
print('%.2g' % (max(np.abs(a[k][()] - b[k][()]).max() for k in n) / max(np.abs(b[k][()]).max() for k in n)))")
    IFS=, read -r _ _ tr te acc _ <<<"$(last "$d")"
    echo "| $([ $h = 512 ] && echo '∞ (512)' || echo $h) | $init | $acc | $te | $tr | $diff |"
  done
done
IFS=, read -r _ _ tr te acc _ <<<"$(last "$out/sync")"
echo "| sync | shared | $acc | $te | $tr | 0 |"

echo
echo "## Rounds to 95% test accuracy: 10 workers, lr 0.1, hidden 64,32 (cap: 3000 rounds FedSGD, 300 FedAvg)"
echo "| shards | method | E | B | local steps per round | rounds to 95% | final accuracy |"
for shard in iid label-sorted; do
  runs=("FedSGD 1 0 3000")
  for e in 1 5 20; do for b in 10 50 0; do runs+=("FedAvg $e $b 300"); done; done
  for r in "${runs[@]}"; do
    read -r name e b cap <<<"$r"
    d="$out/$shard-$name-e$e-b$b"
    line=$("$wavg" local-sgd -f --data "$data" --workers 10 --shard $shard --batch $b --local-epochs $e \
      --rounds $cap --target-accuracy 0.95 --out-dir "$d")
    rounds=$(sed -n 's/.*reached 0.9500 in round \([0-9]*\).*/\1/p' <<<"$line"); rounds=${rounds:-"> $cap"}
    IFS=, read -r _ step _ _ acc _ <<<"$(last "$d")"
    lr=$(head -2 "$d/log.csv" | tail -1 | cut -d, -f2)
    echo "| $shard | $name | $([ $name = FedSGD ] && echo - || echo $e) | $([ $b = 0 ] && echo ∞ || echo $b) | $lr | $rounds | $acc |"
  done
done
