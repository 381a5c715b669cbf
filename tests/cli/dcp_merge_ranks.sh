# Three DCP checkpoints of one run written by torch.distributed.checkpoint (samples/dcp): two by one process, one
# by two ranks with a row-wise (uneven 3 + 2 rows) and a column-wise (3 + 2 columns) sharded weight. Their mean,
# every tensor assembled from its chunks, equals the samples' closed forms at k = 2 (numpy reads the output);
# Adam's step counters and the param_groups values are no tensors of the output.
"$WAVG" merge -q "$SAMPLES"/dcp/run/step-100 "$SAMPLES"/dcp/run/step-200 "$SAMPLES"/dcp/run/step-300 -o avg.safetensors
/usr/bin/python3 "$ROOT"/tests/dcp/check_means.py avg.safetensors 2
