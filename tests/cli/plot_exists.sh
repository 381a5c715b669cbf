# An existing --plot file is not replaced without --force, and nothing is computed first.
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" .
echo old >d.svg
set +e
"$WAVG" diff node1.h5 node2.h5 --plot d.svg
echo "exit $?"
cat d.svg
"$WAVG" diff node1.h5 node2.h5 --plot d.svg -f | tail -1
head -c 5 d.svg
echo
