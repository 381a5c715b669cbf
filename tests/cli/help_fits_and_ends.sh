# Every subcommand's --help (and wavg --help): each line at most 100 columns wide, and a subcommand's help ends
# with two or three examples, then the exit codes and "See wavg-SUB(1).", its own manual page, which exists in man/.
bad=0
subs=$("$WAVG" --help | awk '/^Subcommands:/{s=1;next} s && /^  [a-z]/{print $1}')
[ "$(echo "$subs" | wc -w)" -ge 12 ] || { echo "found only: $subs"; exit 1; }
"$WAVG" --help > top.txt
for s in $subs; do
  "$WAVG" "$s" --help > "$s.txt"
done
for f in top.txt $(for s in $subs; do echo "$s.txt"; done); do
  awk -v f="$f" 'length($0) > 100 {print f ": line " NR " is " length($0) " columns: " $0; bad=1} END {exit bad}' "$f" || bad=1
done
for s in $subs; do
  last=$(tail -n 2 "$s.txt" | tr '\n' '|')
  [ "$last" = "Exit codes: 0 success, 1 runtime error, 2 usage error, 3 incompatible inputs.|See wavg-$s(1).|" ] ||
    { echo "$s: last lines: $last"; bad=1; }
  examples=$(awk '/^Examples:$/{e=1;next} /^$/{e=0} e && /wavg /' "$s.txt" | wc -l)
  { [ "$examples" -ge 2 ] && [ "$examples" -le 3 ]; } || { echo "$s: $examples examples"; bad=1; }
  [ -f "$MAN/wavg-$s.1.scd" ] || { echo "$s: no man/wavg-$s.1.scd"; bad=1; }
done
tail -n 1 top.txt
exit $bad
