# A mergekit method wavg does not run is refused by name (exit 2) before any model is opened (the models do not
# exist): ram and ramplus_tl (mergekit 0.1.5's Reinforced Agent Merging).
for m in ram ramplus_tl; do
  printf 'models:\n  - model: a\n  - model: b\nbase_model: c\nmerge_method: %s\n' $m > $m.yml
  code=0
  "$WAVG" merge --recipe $m.yml -o out/ || code=$?
  [ $code = 2 ] && [ ! -e out ] || exit 1
done
