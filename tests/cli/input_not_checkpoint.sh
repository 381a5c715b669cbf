# A file of an unknown kind is refused with what it looked like.
printf "hello, world\n" > notes.txt
"$WAVG" merge "$SAMPLES/mlp/node1.h5" notes.txt -o out.h5
