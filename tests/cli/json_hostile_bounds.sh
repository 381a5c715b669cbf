# Small wavg JSON files: a tensor declaring 2^40 x 2^40 values with two listed, and one nested in 1,000,000 arrays:
# inspect refuses each in one line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
head = '{"format": "wavg-json", "version": 1, "tensors": ['
open("shape.json", "w").write(head + '{"name": "w", "dtype": "float32", "shape": [1099511627776, 1099511627776], "data": [1, 2]}]}')
open("deep.json", "w").write(head + '{"name": "w", "dtype": "float32", "shape": [2], "data": ' + "[" * 1000000 + "]" * 1000000 + "}]}")
PY
for f in shape deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.json
done
