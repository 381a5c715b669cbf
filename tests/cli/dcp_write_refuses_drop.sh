# A DCP folder output is input 1's files with every tensor rewritten: a tensor left out (here Adam's moments,
# --optimizer-state drop) would keep input 1's values there, so it is refused (exit 2) and nothing is written.
D="$SAMPLES"/dcp/run
"$WAVG" merge -q "$D"/step-100 "$D"/step-200 --optimizer-state drop -o avg/
