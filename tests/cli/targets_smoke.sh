# The issue-30 benchmark driver runs end to end on a tiny model (the sections that need no venv) and prints one
# table row per target with a verdict.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/bench/targets.py" --quick --sections codecs,hash,robust,task,threads,align \
  --codecs safetensors,hdf5,caffe,npz,tensorflow --align-widths 32 --dir "$PWD/data" --wavg "$WAVG" \
  >table.md 2>log.txt
for row in 'merge safetensors' 'merge HDF5 (Keras 2)' 'merge Caffe .caffemodel' 'merge NumPy .npz' \
  'merge TensorFlow checkpoint' 'mean, default fingerprint' '--method median, N = 4' '--method dare-ties, N = 4' \
  'mean, default threads' 'align W = 32'; do
  grep -q "^| $row.* | \(met\|\*\*missed\*\*\)" table.md || { echo "no verdict: $row"; cat table.md log.txt; exit 1; }
done
[ ! -e data ] || { echo "the inputs were left behind"; exit 1; }
