# --force over a TF.js model.json removes only TF.js shards in the output's own folder that no other model there
# uses (issue 39 B): web/model.json, hand-edited (or hostile), lists .git/HEAD, notes.txt, src/train.py, the shard
# of the model web/v1.json and its own shard old-shard1of1.bin. After the merge each of the user's files and v1.json
# with its shard are byte for byte what they were; only old-shard1of1.bin, the replaced model's own, is gone.
mkdir -p web/.git web/src
echo "ref: refs/heads/main" >web/.git/HEAD
echo "my notes" >web/notes.txt
echo "print('train')" >web/src/train.py
printf '\0\0\200\77' >web/v1-shard1of1.bin
echo '{"weightsManifest": [{"paths": ["v1-shard1of1.bin"], "weights": [{"name": "w", "shape": [1], "dtype": "float32"}]}]}' >web/v1.json
printf '\0\0\0\100' >web/old-shard1of1.bin
echo '{"weightsManifest": [{"paths": [".git/HEAD", "notes.txt", "src/train.py", "v1-shard1of1.bin",
  "old-shard1of1.bin"], "weights": []}]}' >web/model.json
sha256sum web/.git/HEAD web/notes.txt web/src/train.py web/v1-shard1of1.bin web/v1.json >before
"$WAVG" merge -q "$SAMPLES/tfjs/a/model.json" "$SAMPLES/tfjs/b/model.json" -o web/model.json --force
sha256sum --quiet -c before && echo "the user's files and v1.json with its shard are byte for byte as before"
(cd web && find . -type f | LC_ALL=C sort)
