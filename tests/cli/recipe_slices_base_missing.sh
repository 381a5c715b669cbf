# A merged slice is merged against its base's layers: a base_model that is none of a slice's sources is refused
# before any model is opened, naming the slice.
printf 'slices:\n  - sources:\n      - model: a\n        layer_range: [0, 2]\n      - model: b\n        layer_range: [0, 2]\nmerge_method: ties\nbase_model: c\nparameters:\n  weight: 1\n  density: 0.5\n' > merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
