# A passthrough slice whose source is a plain string, not {model, layer_range}, is refused by name (found by the
# recipe fuzz target: yaml-cpp's "operator[] call on a scalar" escaped as an error naming no file, exit 1).
printf 'slices:\n  - sources:\n      - models/llama-math\nmerge_method: passthrough\n' > merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
