# A mergekit method wavg does not run is refused by name before any model is opened (the models do not exist).
printf 'models:\n  - model: a\n  - model: b\nbase_model: c\nmerge_method: ram\n' > merge.yml
"$WAVG" merge --recipe merge.yml -o out/ || { code=$?; test ! -e out; exit $code; }
