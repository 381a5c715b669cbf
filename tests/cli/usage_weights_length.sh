# A weight list of the wrong length is a usage error (exit 2), and nothing is written.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 node3.h5 -w 1,2 -o "$OLDPWD/out.h5" || { code=$?; ls "$OLDPWD"; exit $code; }
