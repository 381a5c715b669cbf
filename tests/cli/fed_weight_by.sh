# FedAvg: --weight-by num_examples weights 1, 1, 2 give (0 + 4 + 2*8) / 4 = 5 and (1 + 1 + 2*3) / 4 = 2.
P=/usr/bin/python3; D=$(dirname "$0")
$P "$ROOT/tests/cli/fed_make.py" a.h5 0,1 num_examples=1
$P "$ROOT/tests/cli/fed_make.py" b.h5 4,1 num_examples=1
$P "$ROOT/tests/cli/fed_make.py" c.h5 8,3 num_examples=2
"$WAVG" merge a.h5 b.h5 c.h5 --weight-by num_examples -o avg.h5
$P "$ROOT/tests/cli/fed_read.py" avg.h5
