# mergekit YAML recipes on tiny Llama folders against numpy implementations of mergekit (recipe_methods.py).
/usr/bin/python3 "$ROOT/tests/cli/recipe_methods.py" "$WAVG"
