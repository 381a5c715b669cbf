# A tensor of 1 MiB or more has its checksum checked through pread() rather than the data shard's mapping (so the
# merge's reads fault its pages in once): a flipped byte in its second MiB is still a checksum mismatch. The
# checkpoint is written here by tests/cli/tf_bundle.py with TensorFlow's CRC-32C, so only the flipped byte is wrong.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import tf_bundle as tb
w = (np.arange(5 << 16, dtype=np.float32) % 1000).tobytes()  # 1.25 MiB
b = np.arange(4, dtype=np.float32).tobytes()
open("big.data-00000-of-00001", "wb").write(w + b)
tb.write_table("big.index", [(b"", tb.encode_header()),
                             (b"bias", tb.encode_entry(1, [4], 0, len(w), len(b), tb.mask(tb.crc32c(b)))),
                             (b"w", tb.encode_entry(1, [5 << 16], 0, 0, len(w), tb.mask(tb.crc32c(w))))])
PY
code=0
"$WAVG" inspect big > /dev/null || code=$?
echo "intact: exit $code"
/usr/bin/python3 -c "
b = bytearray(open('big.data-00000-of-00001', 'rb').read()); b[1200000] ^= 0xff
open('big.data-00000-of-00001', 'wb').write(b)"
code=0
"$WAVG" inspect big > /dev/null || code=$?
echo "flipped: exit $code"
