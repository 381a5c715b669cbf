# The warning for values an output has no place for names the format with its article: "an npz", "an hdf5" (said
# as letters), "a safetensors". An Orbax TrainState's optax EmptyState (a None leaf) is such a value.
for out in t.npz t.h5 t.safetensors; do
  "$WAVG" convert "$ROOT/tests/orbax/train_1" -o $out 2>&1 >/dev/null | sed "s|$ROOT/||"
done
