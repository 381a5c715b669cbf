# Without an architecture to infer the permutation spec from, alignment refuses (exit 2) and writes nothing.
cp "$SAMPLES/dtypes/a.h5" "$SAMPLES/dtypes/b.h5" .
"$WAVG" merge a.h5 b.h5 --align weights -o out.h5 || { code=$?; ls -A; exit $code; }
