# --force over an existing DCP folder replaces only what wavg writes: the two-rank output is replaced by a
# one-process one leaving Adam's state out, so its rank 1 file (__1_0.distcp) goes, and a user's files (notes, .git/,
# a link, a .distcp file of another name, a link named like a rank file) and a second checkpoint in old/ stay byte
# for byte (removal.hpp). The new folder is checked as dcp_write_subset checks (tests/dcp/check_subset.py, no torch).
R="$SAMPLES"/dcp/run
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 -o out/
mkdir out/.git
echo "[core]" >out/.git/config
echo "my notes" >out/notes.txt
ln -s notes.txt out/link
echo "mine" >out/mine.distcp
ln -s notes.txt out/__7_0.distcp
cp -r "$R"/step-200 out/old
(cd out && sha256sum old/.metadata old/__0_0.distcp) >old.sums
ls -A out
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o out/ --force --exclude 'optim.*'
/usr/bin/python3 "$ROOT"/tests/dcp/check_subset.py --also=.git,__7_0.distcp,link,mine.distcp,notes.txt,old out "$R"/step-100 1.5 100 \
  model.{scale,fc1.weight,fc1.bias,fc2.weight,fc2.bias}
cat out/.git/config out/link out/mine.distcp
readlink out/__7_0.distcp
(cd out && sha256sum --quiet -c ../old.sums) && echo "old/ is byte for byte as before"
