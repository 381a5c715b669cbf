# nuslerp's angle per row or column (nuslerp_flatten: false) is refused by name before any model is opened.
printf 'models:\n  - model: a\n    parameters: {weight: 1}\n  - model: b\n    parameters: {weight: 1}\n' > merge.yml
printf 'merge_method: nuslerp\nparameters: {nuslerp_flatten: false}\n' >> merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
