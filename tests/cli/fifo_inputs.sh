# Inputs that are FIFOs (named like each format's files) and a TF.js model whose shard is a FIFO: each is refused
# at once, one line naming it, exit 1 (open() of a FIFO with no writer used to block for ever). `timeout` turns a
# hang into exit 124.
mkfifo a.h5 b.safetensors c.keras d.json
mkdir model
mkfifo model/shard.bin
cat >model/model.json <<'JSON'
{"format": "layers-model", "weightsManifest": [{"paths": ["shard.bin"],
 "weights": [{"name": "w", "shape": [2], "dtype": "float32"}]}]}
JSON
for f in a.h5 b.safetensors c.keras d.json model/model.json; do
  set +e
  timeout 10 "$WAVG" inspect "$f" >/dev/null
  echo "$f: inspect exit $?"
  timeout 10 "$WAVG" merge -q "$f" "$f" -o out.h5 2>/dev/null
  echo "$f: merge exit $?"
  set -e
done
[ ! -e out.h5 ] || { echo "an output was written"; exit 1; }
