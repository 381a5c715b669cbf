# Corrupt TF.js models: each is one line on stderr and exit 1, and a refused merge leaves no file behind. Every
# case starts from a copy of samples/tfjs/a (three shards of 40, 40 and 24 bytes) with one thing broken by Python.
T=$SAMPLES/tfjs
edit() {  # edit DIR SOURCE PYTHON: copy a sample to DIR, then run PYTHON with m = its model.json as a dict
  cp -r "$T/$2" "$1"
  /usr/bin/python3 -c "import json, sys; m = json.load(open('$1/model.json')); $3
json.dump(m, open('$1/model.json', 'w'))"
}
W='m["weightsManifest"][0]["weights"]'
P='m["weightsManifest"][0]["paths"]'
cp -r "$T/a" a
cp -r "$T/a" missing && rm missing/group1-shard2of3.bin
cp -r "$T/a" truncated && truncate -s 20 truncated/group1-shard3of3.bin
cp -r "$T/a" trailing && printf 'xxxx' >> trailing/group1-shard3of3.bin
edit not_array a 'm["weightsManifest"] = {}'
edit duplicate a "$W[1]['name'] = 'dense/kernel'"
edit overflow a "$W[0]['shape'] = [2**32, 2**32, 2**32]"
edit negative a "$W[0]['shape'] = [-3, 4]"
edit unknown a "$W[0]['dtype'] = 'float64'"
edit string a "$W[3]['dtype'] = 'string'"
edit dotdot a "$P[0] = '../a/group1-shard1of3.bin'"
edit absolute a "$P[0] = '/etc/passwd'"
edit scale q8 "$W[0]['quantization']['scale'] = 'NaN'"
edit huge q8 "$W[0]['quantization']['min'] = 12345.5" && sed -i 's/12345.5/1e400/' huge/model.json
mkdir invalid && printf '{"weightsManifest": [' > invalid/model.json
mkdir utf8 && printf '{"weightsManifest": [{"paths": [], "weights": [{"name": "\xff"}]}]}' > utf8/model.json
mkdir large && printf '{"weightsManifest": []}' > large/model.json && truncate -s 300M large/model.json
for d in missing truncated trailing not_array duplicate overflow negative unknown string dotdot absolute scale \
         huge invalid utf8 large; do
  "$WAVG" inspect $d/model.json > /dev/null && echo "$d: exit 0" || echo "$d: exit $?"
done
# An output shard named like an input's shard: refused before anything is written; the input stays whole.
edit col a "$P[:] = ['out-shard1of1.bin']"
cat a/group1-shard1of3.bin a/group1-shard2of3.bin a/group1-shard3of3.bin > col/out-shard1of1.bin
rm col/group1-shard*
cp col/out-shard1of1.bin before.bin
"$WAVG" merge -q col/model.json "$T/b/model.json" --format tfjs -f -o col/out.json && echo "col: exit 0" ||
  echo "col: exit $?"
ls -A col
cmp col/out-shard1of1.bin before.bin
