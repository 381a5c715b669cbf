# check takes merge's --base and method options: with a matching base the ties merge checks out (one line); a
# method that needs a base is refused without one (exit 2); a base whose tensor has 4 values where the inputs have 3
# is named with both shapes (exit 3). Nothing is written.
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" a.h5 1,2,3
$P "$ROOT/tests/cli/fed_make.py" b.h5 3,2,1
$P "$ROOT/tests/cli/fed_make.py" base.h5 0,0,0
$P "$ROOT/tests/cli/fed_make.py" wide.h5 0,0,0,0
"$WAVG" check a.h5 b.h5 --base base.h5 --method ties --density 0.5
"$WAVG" check a.h5 b.h5 --method ties --density 0.5 || echo "exit $?"
"$WAVG" check a.h5 b.h5 --base wide.h5 --method ties --density 0.5 || echo "exit $?"
ls | paste -sd " "
