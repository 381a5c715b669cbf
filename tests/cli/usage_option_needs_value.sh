# An option given without its value.
"$WAVG" barrier a.h5 b.h5 --data d.csv --steps
