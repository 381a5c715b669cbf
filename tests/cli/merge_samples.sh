# The bundled samples merge, and merge prints a one-line summary on stdout.
"$WAVG" merge "$SAMPLES"/mlp/node1.h5 "$SAMPLES"/mlp/node2.h5 "$SAMPLES"/mlp/node3.h5 -o avg.h5
