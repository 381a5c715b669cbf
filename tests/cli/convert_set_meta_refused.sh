# convert --set-meta is refused, before anything is written, for a format with no metadata wavg reads back (the
# registry row says why), for a key of the provenance (wavg_*), and for an item without '='.
code=0; "$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.npz --set-meta num_examples=600 || code=$?
echo "npz: exit $code"
code=0; "$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.h5 --set-meta wavg_method=mine || code=$?
echo "wavg_*: exit $code"
code=0; "$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.h5 --set-meta num_examples || code=$?
echo "no '=': exit $code"
echo "$(ls | wc -l) files"
