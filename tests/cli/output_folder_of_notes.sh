# -o DIR naming a folder of other files (notes, no checkpoint): said once, with or without --force, that wavg
# replaces only a checkpoint's folder (not "use --force", then with --force "replaces only a model folder").
mkdir notes
echo "keep me" > notes/todo.txt
code=0; "$WAVG" merge -q "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o notes || code=$?
echo "without --force: exit $code"
code=0; "$WAVG" merge -q "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o notes/ --force || code=$?
echo "with --force: exit $code"
ls notes
