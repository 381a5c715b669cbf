# --help prints usage on stdout and exits 0.
"$WAVG" --help > help.txt
head -2 help.txt
