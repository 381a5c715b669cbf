# inspect names an Orbax step's storage, its tensors by their PyTree key paths, and their roles from the tree
# (tests/orbax/train_1: OCDBT, written by orbax-checkpoint 0.12.8).
"$WAVG" inspect "$ROOT"/tests/orbax/train_1 | sed "s#$ROOT#ROOT#"
