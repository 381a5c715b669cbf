# Krum returns one input, so it refuses per-input weights and says why.
P=/usr/bin/python3
for k in 1 2 3 4 5; do $P "$ROOT/tests/cli/fed_make.py" c$k.h5 $k; done
"$WAVG" merge c1.h5 c2.h5 c3.h5 c4.h5 c5.h5 --method krum --byzantine 1 -w 1,1,1,1,2 -o out.h5
