# Small TensorFlow checkpoints (tests/cli/tf_bundle.py): a header declaring 2^31 - 1 data shards, and an entry
# declaring 2^40 x 2^40 float32 values over 8 bytes: inspect refuses each in one line, exit 1, within 256 MiB and
# 20 s (tests/support/bounded.py).
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import tf_bundle as tb
data = b"\0" * 8
crc = tb.mask(tb.crc32c(data))
open("shards.data-00000-of-00001", "wb").write(data)
tb.write_table("shards.index", [(b"", tb.encode_header(shards=2**31 - 1)), (b"w", tb.encode_entry(1, [2], 0, 0, 8, crc))])
open("shape.data-00000-of-00001", "wb").write(data)
tb.write_table("shape.index", [(b"", tb.encode_header()), (b"w", tb.encode_entry(1, [1 << 40, 1 << 40], 0, 0, 8, crc))])
PY
for f in shards shape; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.index
done
