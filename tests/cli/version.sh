# --version prints the version.
"$WAVG" --version
