# inspect names Caffe and the layout (current or V1) of each real snapshot; V1's legacy 4-D shapes are shown as
# the true shapes (ip1/0 is stored as (1, 1, 10, 1024), ip1/1 as (1, 1, 1, 10)).
C1=$SHARED/real-checkpoints/caffe-everpeace-cifar10-full
C2=$SHARED/real-checkpoints/caffe-yuvval-lenet
[ -d "$C1" ] && [ -d "$C2" ] || { echo "no Caffe files in $SHARED"; exit 77; }
cd "$C2" && "$WAVG" inspect lenet_iter_5000.caffemodel | head -4
cd "$C1" && "$WAVG" inspect cifar10_full_iter_10000.caffemodel | grep -v conv
