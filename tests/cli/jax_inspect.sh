# inspect on files flax and numpy wrote (samples/jax): key-path names in the file's order, dtypes (bfloat16, a
# numpy scalar as a 0-d tensor), the Python values kept aside, and the .npz layouts of savez and savez_compressed.
for f in train_a.msgpack dtypes_a.msgpack params_a.npz packed_a.npz; do
  cp "$SAMPLES/jax/$f" .
  "$WAVG" inspect "$f"
done
