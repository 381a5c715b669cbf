# wavg diff of two different architectures says where they differ, with the plan's exit code 3.
cd "$SAMPLES/mlp"
code=0
"$WAVG" diff node1.h5 incompatible.h5 2>"$OLDPWD/err.txt" || code=$?
head -2 "$OLDPWD/err.txt"
exit $code
