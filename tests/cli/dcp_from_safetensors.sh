# A DCP folder output from an input 1 that is not DCP: one rank file __0_0.distcp of whole tensors (each a torch.save
# archive, as torch's FileSystemWriter writes them) and a fresh .metadata. tests/dcp/check_fresh.py checks each folder
# without torch or wavg (numpy, zipfile, pickle with stubs) against fresh_values.py's closed forms: float32, bfloat16,
# float16, int64, bool, a scalar. convert; --out-dtype f16; a merge (of one file twice: the mean is its values);
# --force over the first folder, from the float16 one (a DCP input 1: its layout, copied), leaves float16 values;
# a passthrough recipe's slices (layers of two models stacked) into a DCP folder.
check() { /usr/bin/python3 "$ROOT"/tests/dcp/check_fresh.py "$@"; }
/usr/bin/python3 "$ROOT"/tests/dcp/fresh_values.py in.safetensors
"$WAVG" convert -q in.safetensors -o ck/ --format dcp
check ck
"$WAVG" convert -q in.safetensors -o half/ --format dcp --out-dtype f16
check half --f16
"$WAVG" merge -q in.safetensors in.safetensors -o merged/ --format dcp
check merged
"$WAVG" convert -q half/ -o ck/ --force
check ck --f16
ls -A ck
/usr/bin/python3 "$ROOT"/tests/dcp/fresh_values.py --passthrough
"$WAVG" merge -q --recipe slices.yml -o stacked/ --format dcp
check stacked --passthrough
