# --device cuda without a usable GPU (or in a build without CUDA) is a runtime error that says why, and writes
# nothing. Skipped where a GPU is present.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then echo "a GPU is present"; exit 77; fi
code=0
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o avg.h5 --device cuda 2>err.txt || code=$?
echo "exit $code"
sed -n 's/^\(wavg: error: --device cuda: \).*/\1.../p' err.txt
[ ! -e avg.h5 ] && echo "no output"
