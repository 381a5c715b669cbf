#!/usr/bin/env bash
# Runs one CLI case: tests/cli/NAME.sh runs in a fresh temporary directory with $WAVG (the binary), $ROOT (the
# source tree), $SAMPLES and $SHARED set. Its stdout, stderr and exit code are compared with NAME.stdout,
# NAME.stderr and NAME.exit when those files exist (exit 0 is expected otherwise). A case exits 77 to skip.
set -u
case_file=$1
export WAVG=$2 ROOT=$3 MAN=$4
export SAMPLES=$ROOT/samples SHARED=$ROOT/../shared
base=${case_file%.sh}
work=$(mktemp -d)
cap=$(mktemp -d)
trap 'rm -rf "$work" "$cap"' EXIT
cd "$work"
bash -eu "$case_file" >"$cap/stdout" 2>"$cap/stderr"
code=$?
[ "$code" = 77 ] && { echo "skipped: $(cat "$cap/stdout")"; exit 77; }
want_code=0
[ -f "$base.exit" ] && want_code=$(cat "$base.exit")
status=0
if [ "$code" != "$want_code" ]; then
  echo "exit code: expected $want_code, got $code"
  status=1
fi
for stream in stdout stderr; do
  if [ -f "$base.$stream" ] && ! diff -u "$base.$stream" "$cap/$stream"; then
    echo "$stream differs (expected $base.$stream)"
    status=1
  fi
done
if [ $status != 0 ]; then
  echo "--- stdout"; cat "$cap/stdout"; echo "--- stderr"; cat "$cap/stderr"
fi
exit $status
