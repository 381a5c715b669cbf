# --align permutes whole models; with --base the inputs are updates to a global model, so the pair is refused
# before any file is opened (exit 2).
"$WAVG" merge client1.h5 client2.h5 --base global.h5 --align weights -o next.h5
