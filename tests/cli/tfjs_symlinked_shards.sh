# TF.js shards may not lead out of the model's directory: a shard that is a symbolic link (to a file outside, or even
# beside it) and a shard in a subdirectory that is a symbolic link to another directory are refused, one line naming the
# model and the shard, exit 1 (the work directory shows as WORK). The same model with a real shard in a real
# subdirectory reads.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
mkdir outside model
/usr/bin/python3 -c 'import numpy as np; open("outside/secret.bin", "wb").write(np.float32([1, 2]).tobytes())'
cp outside/secret.bin model/real.bin
write_model() {
  printf '{"format": "layers-model", "weightsManifest": [{"paths": ["%s"], ' "$2" >"$1"
  printf '"weights": [{"name": "w", "shape": [2], "dtype": "float32"}]}]}\n' >>"$1"
}
ln -s ../outside/secret.bin model/link_out.bin
ln -s real.bin model/link_beside.bin
ln -s ../outside model/subdir_link
mkdir model/sub
cp outside/secret.bin model/sub/ok.bin
write_model model/a.json link_out.bin
write_model model/b.json link_beside.bin
write_model model/c.json subdir_link/secret.bin
write_model model/d.json sub/ok.bin
for f in a b c d; do
  set +e
  "$WAVG" inspect model/$f.json >/dev/null 2>err
  echo "$f: exit $?"
  set -e
  sed "s|$PWD|WORK|g" err >&2  # the resolved paths are absolute
done
