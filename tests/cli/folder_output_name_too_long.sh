# An output folder whose name the system refuses (a component over NAME_MAX) is named as too long, not as holding
# the input: two names that have no canonical form must not compare equal. Nothing is left behind.
long=$(printf 'a%.0s' $(seq 300))
code=0
"$WAVG" convert "$SAMPLES/mlp/node1.h5" -o "$long/" --format hf 2>err || code=$?
sed "s/$long/LONG/g" err >&2
echo "exit $code"
test -z "$(ls -A | grep -v '^err$')"
