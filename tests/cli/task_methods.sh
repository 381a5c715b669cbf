# Every task-vector method against numpy implementations of mergekit's formulas (tests/cli/task_methods.py).
/usr/bin/python3 "$ROOT/tests/cli/task_methods.py" "$WAVG"
