# A mergekit recipe given as an input, as mergekit-yaml takes it, is pointed at --recipe.
printf 'models:\n  - model: a\nmerge_method: linear\n' > merge.yml
"$WAVG" merge merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
