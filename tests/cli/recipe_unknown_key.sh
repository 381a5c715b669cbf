# A recipe key wavg does not know is refused by name before any model is opened (the models do not exist).
printf 'models:\n  - model: a\n  - model: b\nmerge_method: linear\nmerge_dtype: float16\n' > merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
