# --force replaces a file, nothing else: a FIFO or a device named as the output is refused (exit 2) and stays what
# it was; nothing is left beside it.
mkfifo pipe.h5
for out in pipe.h5 /dev/null; do
  "$WAVG" merge -q "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o $out --format hdf5 --force || echo "exit $?"
done
[ -p pipe.h5 ] || echo "pipe.h5 is no longer a FIFO"
[ -c /dev/null ] || echo "/dev/null is no longer a device"
ls -A
