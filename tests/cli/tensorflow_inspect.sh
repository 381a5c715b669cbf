# inspect names the format and the TF1/TF2 layout of a real TF2 checkpoint given by prefix, and lists its
# variables; the DT_STRING object graph is no tensor of it.
R=$SHARED/real-checkpoints
[ -d "$R/tfserving-half-plus-two-tf2-cpu" ] || { echo "no shared checkpoints"; exit 77; }
cd "$R"
"$WAVG" inspect tfserving-half-plus-two-tf2-cpu/variables
"$WAVG" inspect --json tfserving-half-plus-two-gpu/variables.index | head -4
