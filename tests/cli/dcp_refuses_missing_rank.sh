# A DCP checkpoint missing a rank's data file is refused naming the file and what the metadata puts in it.
cp -r "$SAMPLES"/dcp/run/step-300 step
rm step/__1_0.distcp
"$WAVG" merge -q step "$SAMPLES"/dcp/run/step-100 -o avg.safetensors
