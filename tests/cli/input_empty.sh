# An empty file is refused as not a checkpoint.
: > empty.h5
"$WAVG" inspect empty.h5
