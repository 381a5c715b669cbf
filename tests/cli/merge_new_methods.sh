# nuslerp, multislerp and karcher against numpy implementations of mergekit 0.1.5's formulas
# (tests/cli/merge_new_methods.py).
/usr/bin/python3 "$ROOT/tests/cli/merge_new_methods.py" "$WAVG"
