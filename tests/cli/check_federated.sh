# check takes merge's federated options: --staleness reads each client's round from its metadata against the
# base's, so a client later than the base (round 4 > 3) and one without the entry are named (exit 1), as merge
# names them; the robust methods' counts are checked (krum: 3 inputs, not more than 2F + 2 = 4, exit 2).
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" base.h5 0 round=3
$P "$ROOT/tests/cli/fed_make.py" a.h5 1 round=4
$P "$ROOT/tests/cli/fed_make.py" b.h5 1
$P "$ROOT/tests/cli/fed_make.py" c.h5 2 round=3
"$WAVG" check a.h5 b.h5 --base base.h5 --staleness round || echo "exit $?"
"$WAVG" check a.h5 b.h5 c.h5 --method krum --byzantine 1 || echo "exit $?"
"$WAVG" check a.h5 b.h5 c.h5 --method median
