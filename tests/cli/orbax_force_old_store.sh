# --force over a checkpoint Orbax wrote retires its OCDBT store, which the new manifest no longer names (once its
# d/, ocdbt.process_0/ and array_metadatas/ stayed, stale, beside the new store): only tensorstore's data file
# names in those folders, the processes' manifests, and array_metadatas/process_N. A user's files stay, in the
# folder and in d/ alike, and a store folder that is a link is not followed. A CheckpointManager step, whose
# checkpoint lies in an item folder, is refused as the output: the step would still restore its old item.
O=$ROOT/tests/orbax
cp -r "$O"/train_1 out
echo "mine" > out/notes.txt
mkdir out/.git && echo "ref: refs/heads/main" > out/.git/HEAD
echo "mine" > out/d/notes.txt
mkdir elsewhere && echo "x" > elsewhere/0123456789abcdef0123456789abcdef
ln -s ../elsewhere out/ocdbt.process_1
"$WAVG" merge -q --force "$O"/train_1 "$O"/train_2 -o out/
find out | sort
ls elsewhere
"$WAVG" inspect out | tail -1
mkdir step && cp -r "$O"/train_1 step/default && mv step/default/_CHECKPOINT_METADATA step/
"$WAVG" merge -q --force "$O"/train_1 "$O"/train_2 -o step/ 2>&1 || echo "exit $?"
ls step/default
