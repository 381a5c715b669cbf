#!/bin/bash
# Each man/*.1 and man/*.7 is what scdoc makes of its .scd source (the generated page was regenerated after
# the source changed), and man reads it without a warning at 80 columns. Skips (77) without scdoc or man.
# Usage: man_pages.sh MAN_DIR
set -u
dir=$1
command -v scdoc >/dev/null && command -v man >/dev/null || { echo "scdoc or man missing"; exit 77; }
status=0
for src in "$dir"/*.scd; do
  page=${src%.scd}
  # scdoc stamps the date it ran: compare everything else.
  if ! diff <(scdoc < "$src" | grep -v '^\.TH') <(grep -v '^\.TH' "$page") >/dev/null; then
    echo "$page: not what scdoc makes of $src (run: scdoc < $src > $page)"; status=1
  fi
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  if [ -n "$warnings" ]; then
    echo "$page: man warns:"; echo "$warnings"; status=1
  fi
done
exit $status
