# diff --exit-code exits 1 when A and B differ beyond --tolerance and 0 when not (git diff --exit-code, cmp and
# h5diff's convention), so "did the replicas drift?" is an `if`. numpy says here how far node1's and node2's float
# values lie apart at most; a tolerance just above that passes and one just below does not; their integer
# iteration counters differ too, which no tolerance forgives; a file against itself differs by nothing; without
# --exit-code diff exits 0.
a=$SAMPLES/mlp/node1.h5 b=$SAMPLES/mlp/node2.h5
most=$(PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$a" "$b" <<'PY'
import sys, numpy as np
from h5_tools import datasets
a, b = datasets(sys.argv[1]), datasets(sys.argv[2])
print(max(float(np.max(np.abs(a[n].astype(np.float64) - b[n].astype(np.float64)))) for n in a if a[n].dtype.kind == "f"))
PY
)
above=$(/usr/bin/python3 -c "print($most * 1.01)") below=$(/usr/bin/python3 -c "print($most * 0.99)")
"$WAVG" diff "$a" "$b" > /dev/null && echo "no --exit-code: 0"
if "$WAVG" diff --exit-code "$a" "$a" > /dev/null; then echo "same file: 0"; fi
"$WAVG" diff --exit-code "$a" "$b" > /dev/null || echo "different: $?"
"$WAVG" diff --exit-code --tolerance 1e9 "$a" "$b" > /dev/null || echo "counters differ, whatever the tolerance: $?"
floats=(--exclude '*/iter:0')
"$WAVG" diff --exit-code --tolerance "$above" "${floats[@]}" "$a" "$b" > /dev/null &&
  echo "within a tolerance above the largest difference: 0"
"$WAVG" diff --exit-code --tolerance "$below" "${floats[@]}" "$a" "$b" > /dev/null || echo "beyond a tolerance below it: $?"
code=0; "$WAVG" diff --tolerance 1 "$a" "$b" > /dev/null 2>&1 || code=$?
echo "--tolerance without --exit-code: $code"
