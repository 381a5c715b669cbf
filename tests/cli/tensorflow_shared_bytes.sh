# A TensorFlow checkpoint whose index entries share bytes is refused in one line before any merge: three tensors
# naming one region of the data shard (each would have its checksum and its merge read the region again; 60,000
# such entries over 4 MiB were 240 GiB of checksum work), and an index block whose two entries name one data block
# (LevelDB would inflate and walk it once per entry). Both files are written here by tests/cli/tf_bundle.py, with
# correct checksums, so only the sharing is wrong.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import struct
import numpy as np
import tf_bundle as tb
data = np.arange(16, dtype=np.float32).tobytes()
open("shared.data-00000-of-00001", "wb").write(data)
crc = tb.mask(tb.crc32c(data))
entries = [(b"", tb.encode_header())]
for name in (b"a", b"b", b"c"):
    entries.append((name, tb.encode_entry(1, [16], 0, 0, len(data), crc)))
tb.write_table("shared.index", entries)
# Two index entries naming the one data block.
open("twice.data-00000-of-00001", "wb").write(data)
out = bytearray()
def put(block):
    offset = len(out)
    out.extend(block + b"\x00" + struct.pack("<I", tb.mask(tb.crc32c(b"\x00", tb.crc32c(block)))))
    return tb.put_varint(offset) + tb.put_varint(len(block))
body = tb._block([(b"", tb.encode_header()), (b"a", tb.encode_entry(1, [16], 0, 0, len(data), crc))])
handle = put(body)
meta = put(tb._block([]))
index = put(tb._block([(b"a", handle), (b"b", handle)]))
footer = meta + index
out += footer + b"\x00" * (40 - len(footer)) + struct.pack("<Q", tb.MAGIC)
open("twice.index", "wb").write(out)
PY
for f in shared twice; do
  code=0
  "$WAVG" merge -q $f $f -o out.safetensors || code=$?
  echo "$f: exit $code"
done
ls out.safetensors* 2>/dev/null || echo "nothing written"
