# An output may not be any file an input consists of: a TF.js input's shard is protected like its model.json, even
# with --force, and stays byte for byte.
cp -r "$SAMPLES/tfjs/a" a
sum=$(cksum < a/group1-shard1of3.bin)
"$WAVG" convert a/model.json -o a/group1-shard1of3.bin --format safetensors --force || {
  code=$?
  [ "$(cksum < a/group1-shard1of3.bin)" = "$sum" ] || echo "input shard modified"
  [ -z "$(ls -A a | grep -v '^model.json$\|^group1-shard[123]of3.bin$')" ] || echo "left behind: $(ls -A a)"
  exit $code
}
