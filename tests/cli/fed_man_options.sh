# Every long option of `wavg merge --help` is documented in wavg-merge(1).
for opt in $("$WAVG" merge --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
  grep -q -- "\*$opt\*" "$MAN/wavg-merge.1.scd" || echo "undocumented: $opt"
done
