# A path the system refuses as too long (ENAMETOOLONG: over PATH_MAX, 4096 bytes) is one line naming it, in the
# form of every error (issue 26), where the C++ library's own "filesystem error: status: ... [PATH]" came out: a
# local-sgd run folder of 4,090 characters (20 nested folders made here), whose state.json is 4,101.
part=$(printf 'd%.0s' $(seq 200))
deep=""
for _ in $(seq 20); do deep="$deep$part/"; done
deep="${deep}$(printf 'e%.0s' $(seq 70))"
mkdir -p "$deep"
set +e
"$WAVG" local-sgd --out-dir "$deep" --data "$SAMPLES/digits/digits.csv.gz" --rounds 1 --workers 2 2>&1 >/dev/null |
  sed "s|$part|D|g"
echo "exit ${PIPESTATUS[0]}"
