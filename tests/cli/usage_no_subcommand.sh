# No subcommand at all.
"$WAVG"
