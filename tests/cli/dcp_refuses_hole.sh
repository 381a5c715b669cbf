# A DCP checkpoint whose .metadata was edited (tests/dcp/dcp_edit.py hole) is refused naming the tensor, before
# anything is written.
cp -r "$SAMPLES"/dcp/run/step-300 step
/usr/bin/python3 "$ROOT"/tests/dcp/dcp_edit.py step hole
"$WAVG" merge -q step "$SAMPLES"/dcp/run/step-100 -o avg.safetensors
