# The writer keeps input 1's bytes but the blob values, in their order: merging a real Caffe snapshot with a copy of
# itself gives back the file Caffe wrote, byte for byte, in the current layout (C2) and the V1 layout (C1).
C1=$SHARED/real-checkpoints/caffe-everpeace-cifar10-full
C2=$SHARED/real-checkpoints/caffe-yuvval-lenet
[ -d "$C1" ] && [ -d "$C2" ] || { echo "no Caffe files in $SHARED"; exit 77; }
for f in "$C2"/lenet_iter_5000.caffemodel "$C1"/cifar10_full_iter_10000.caffemodel; do
  cp "$f" copy.caffemodel
  "$WAVG" merge -q "$f" copy.caffemodel -o out.caffemodel
  cmp out.caffemodel "$f" && echo "$(basename "$f"): the same bytes"
  rm out.caffemodel
done
