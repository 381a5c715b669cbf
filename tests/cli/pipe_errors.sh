# Pipes refused with one clear line each, nothing written: -o - without --format, a format of several files to
# stdout, stdin given twice, empty stdin, and a TF.js model.json on stdin (its shards are beside it, not in the pipe).
# (Every writing subcommand streams -o - since the pipeline conducts them all: align_output_targets.)
M=$SAMPLES/mlp
"$WAVG" merge "$M/node1.h5" "$M/node2.h5" -o - > out.bin || echo "exit $?"
"$WAVG" convert "$M/node1.h5" -o - --format tfjs > out.bin || echo "exit $?"
"$WAVG" merge - - -o avg.h5 < "$M/node1.h5" || echo "exit $?"
"$WAVG" merge - "$M/node2.h5" -o avg.h5 < /dev/null || echo "exit $?"
"$WAVG" inspect - < "$SAMPLES/tfjs/a/model.json" || echo "exit $?"
ls
wc -c < out.bin
