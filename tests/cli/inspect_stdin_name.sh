# inspect - names standard input "-", as given, in the table's first line and in --json's "file", not the path of
# wavg's private copy of it.
"$WAVG" inspect - < "$SAMPLES/mlp/node1.h5" | head -n 1
"$WAVG" inspect --json - < "$SAMPLES/mlp/node1.h5" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["file"])'
