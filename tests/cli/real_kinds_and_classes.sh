# Real files: the hls4ml jet tagger as a Keras 2.3 model (Dense layers) and as a QKeras .keras archive (QDense
# layers, same shapes) are refused by --match order, one line per pair of layers of different classes; a Keras
# model.to_json() file is named for what it is. (The legacy PyTorch whole-model pickle here, once refused, is read:
# pytorch_whole_model.)
R=$SHARED/real-checkpoints
[ -d "$R" ] || { echo "no $R"; exit 77; }
cd "$R"
set +e
"$WAVG" check --match order hls4ml-keras3layer-full/keras_3layer.h5 hls4ml-qkeras-v3-keras/qkeras-v3_3layer.keras
echo "exit $?"
for f in ebot64-pima-epochs/model.json; do
  "$WAVG" inspect "$f"
  echo "exit $?"
done
