# A training checkpoint's plain values (epoch, param_groups, ...) have no place in a safetensors file: convert
# says so on stderr, and -v names each; the tensors all arrive.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/cli/pytorch_make.py" zip 1
"$WAVG" convert c1.pt -o c1.safetensors
"$WAVG" convert -v c1.pt -o c1b.safetensors 2>err.txt >/dev/null
grep '^wavg: left out: ' err.txt
