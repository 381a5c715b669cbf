# A Keras 2 model and a plain HDF5 file share no tensor names: one line says they are different models (with each
# one's format and layout), then every difference is listed.
cd "$SAMPLES"
"$WAVG" check dtypes/a.h5 mlp/node1.h5
