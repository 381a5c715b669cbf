# --weight-by names every input whose metadata lacks the key, and writes nothing.
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" a.h5 0,1 num_examples=1
$P "$ROOT/tests/cli/fed_make.py" b.h5 4,1
$P "$ROOT/tests/cli/fed_make.py" c.h5 8,3 num_examples=-2
"$WAVG" merge a.h5 b.h5 c.h5 --weight-by num_examples -o avg.h5 || { code=$?; test ! -e avg.h5; exit $code; }
