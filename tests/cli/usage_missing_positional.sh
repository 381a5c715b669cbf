# A missing positional argument is named with what it is, not in CLI11's "inputs is required".
"$WAVG" diff
