# merge --eval prints each input's score, then the merged model's.
. "$ROOT/tests/support/one_number.sh"
one_number 1 4
"$WAVG" merge c1.h5 c4.h5 -o mean.h5 --eval "$P score.py {model} 2>/dev/null"
