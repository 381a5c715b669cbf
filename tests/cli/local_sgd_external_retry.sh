# A worker that always fails is retried once, then left out: the mean of ranks 0 and 2 (adding 1 and 3) moves
# every value by 2 per round; a second run needing all 3 workers stops with the last completed round intact.
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
cmd="/usr/bin/python3 $SAMPLES/train/add_rank.py --init {init} --out {out} --rank {rank} --round {round} --fail-rank 1"
"$WAVG" local-sgd -q --train-cmd "$cmd" --init "$SAMPLES/mlp/node1.h5" --workers 3 --jobs 1 --rounds 1 --out-dir run
/usr/bin/python3 -c "
import h5py, numpy as np
a, b = h5py.File('$SAMPLES/mlp/node1.h5', 'r'), h5py.File('run/final.h5', 'r')
x = a['model_weights/dense/dense/kernel:0'][()]
assert np.array_equal(b['model_weights/dense/dense/kernel:0'][()], (x + 2).astype(x.dtype))
"
status=0
"$WAVG" local-sgd -q --train-cmd "$cmd" --init "$SAMPLES/mlp/node1.h5" --workers 3 --jobs 1 --rounds 2 \
  --min-workers 3 --retries 0 --resume --out-dir run || status=$?
echo "exit $status"
ls run
