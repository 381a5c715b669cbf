# A fairseq folder holds checkpoint_EPOCH_UPDATE.pt beside checkpointEPOCH.pt: --last would mix the two numbering
# schemes, so it asks for --pattern; with one, it takes the epoch checkpoints only.
mkdir run
for f in checkpoint1.pt checkpoint2.pt checkpoint_2_5000.pt checkpoint3.pt; do cp "$SAMPLES/mlp/node1.h5" "run/$f"; done
"$WAVG" merge --last 2 run -o out.h5 2>err.txt && exit 1
test ! -e out.h5
cat err.txt
"$WAVG" merge -v --last 2 run --pattern 'checkpoint(\d+)\.pt' -o out.h5 2>&1 | grep "sequence:"
