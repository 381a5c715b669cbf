# inspect names MXNet, the array encodings and the naming style of each real file.
X1=$SHARED/real-checkpoints/mxnet-jonggon-gluon-logreg
X2=$SHARED/real-checkpoints/mxnet-jonggon-module-lotto
[ -d "$X1" ] && [ -d "$X2" ] || { echo "no MXNet files in $SHARED"; exit 77; }
cd "$X1" && "$WAVG" inspect MNIST-100.params
cd "$X2" && "$WAVG" inspect Lotto_Net-10000.params | head -4
