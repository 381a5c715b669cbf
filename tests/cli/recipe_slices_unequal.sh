# The sources of a merged slice pair layer by layer: ranges of different lengths are refused before any model is
# opened (the models do not exist), naming the source and both lengths.
printf 'slices:\n  - sources:\n      - model: a\n        layer_range: [0, 3]\n      - model: b\n        layer_range: [1, 3]\nmerge_method: slerp\nbase_model: a\nparameters:\n  t: 0.5\n' > merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
