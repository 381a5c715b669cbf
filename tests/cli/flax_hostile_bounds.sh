# Small Flax msgpack files that declare a map of 2^32 - 1 entries, an array of as many, and 1,000,000 levels of
# nested maps: inspect refuses each in one line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
open("map.msgpack", "wb").write(b"\xdf\xff\xff\xff\xff" + b"\xa1w\x80" * 1000)
open("array.msgpack", "wb").write(b"\x81\xa1w\xdd\xff\xff\xff\xff" + b"\xc0" * 1000)
open("deep.msgpack", "wb").write(b"\x81\xa1w" * 1000000 + b"\x80")
PY
for f in map array deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.msgpack
done
