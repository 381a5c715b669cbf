# --staleness names every client whose round is later than the base's or missing, exit 1, and writes nothing.
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" base.h5 0 round=3
$P "$ROOT/tests/cli/fed_make.py" a.h5 1 round=4
$P "$ROOT/tests/cli/fed_make.py" b.h5 1
"$WAVG" merge a.h5 b.h5 --base base.h5 --staleness round -o next.h5 || { code=$?; test ! -e next.h5; exit $code; }
