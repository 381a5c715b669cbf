# Every long option that `wavg --help` and `wavg SUB --help` print appears in the matching man page source, and
# every subcommand has a page.
status=0
check() {
  local page=$1; shift
  [ -f "$MAN/$page.1.scd" ] || { echo "missing man/$page.1.scd"; status=1; return; }
  [ -f "$MAN/$page.1" ] || { echo "missing man/$page.1"; status=1; }
  for opt in $("$WAVG" "$@" --help | sed "/^Examples:/,\$d" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -qF -- "$opt" "$MAN/$page.1.scd" || { echo "man/$page.1.scd does not document $opt"; status=1; }
  done
}
check wavg
for sub in $("$WAVG" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/ {print $1}'); do
  check "wavg-$sub" "$sub"
done
exit $status
