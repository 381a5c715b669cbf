# Small mergekit recipes: a billion laughs (models: nine levels of YAML aliases, each listing the one before ten
# times: 10^9 models once expanded, in 700 bytes) and 100,000 levels of nested lists: merge --recipe refuses each in
# one line, exit 2 (a usage error, as every recipe's), within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
def laugh(i):
    return "&l0 {model: a.h5}" if i == 0 else f"&l{i} [" + laugh(i - 1) + f", *l{i - 1}" * 9 + "]"
open("laughs.yml", "w").write("merge_method: linear\nmodels: " + laugh(9) + "\n")
open("deep.yml", "w").write("merge_method: linear\nmodels: " + "[" * 100000 + "]" * 100000 + "\n")
PY
for f in laughs deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" merge --recipe $f.yml -o out.h5
done
