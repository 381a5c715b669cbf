# --device auto keeps a small job on the CPU, GPU or not, and -v says so; --device cpu says so too.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o avg.h5 --device auto -v >/dev/null 2>err.txt
grep -o '^wavg: device: cpu (' err.txt
"$WAVG" convert "$SAMPLES/mlp/node1.h5" -o half.h5 --out-dtype float16 --device cpu -v >/dev/null 2>err.txt
grep -o '^wavg: device: cpu (--device cpu)' err.txt
