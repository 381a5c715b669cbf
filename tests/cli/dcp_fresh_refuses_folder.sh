# --force replaces only a DCP checkpoint (or an empty folder): a DCP output from a non-DCP input over a folder of
# other things is refused in one line (exit 2) and the folder is left as it was; an empty one is written into.
/usr/bin/python3 "$ROOT"/tests/dcp/fresh_values.py in.safetensors
mkdir notes empty
echo x >notes/a.txt
status=0
"$WAVG" convert in.safetensors -o notes/ --format dcp --force || status=$?
ls -A notes
"$WAVG" convert -q in.safetensors -o empty/ --format dcp --force
ls -A empty
exit $status
