# A value that is not a number where the option takes one says so, with the subcommand's help.
"$WAVG" barrier a.h5 b.h5 --data d.csv --steps many
