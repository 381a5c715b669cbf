# Corrupt TensorFlow checkpoints: each is one line on stderr and exit 1, and a refused merge leaves no file behind.
# Every case starts from a copy of a real TF1 checkpoint (tfserving-half-plus-two-gpu: float32 scalars a, b, c in
# a 12-byte shard) with one thing broken, by byte edits or by tests/cli/tf_bundle.py writing a new .index.
R=$SHARED/real-checkpoints
[ -d "$R/tfserving-half-plus-two-gpu" ] || { echo "no shared checkpoints"; exit 77; }
T=$R/tfserving-half-plus-two-gpu
copy() { mkdir "$1" && cp "$T"/variables.* "$1"/ && chmod u+w "$1"/*; }
poke() {  # poke FILE OFFSET: flips the bits of one byte (a negative offset counts from the end)
  /usr/bin/python3 -c "import sys; p, o = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, 'rb').read())
b[o] ^= 0xff; open(p, 'wb').write(b)" "$1" "$2"
}
index() {  # index DIR PYTHON: rewrites DIR/variables.index from e, the real entries [(key, value)], after PYTHON
  copy "$1"
  PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 -c "
import tf_bundle as tb
e = tb.table_entries('$T/variables.index')
h, a = e[0][1], tb.entry_fields(e[1][1])
def entry(**kw):
    f = dict(a)
    f.update(kw)
    return (b'a', tb.encode_entry(f['dtype'], f['shape'], f['shard'], f['offset'], f['size'], f['crc'],
                                  f.get('extra', b'')))
kw = {}
$2
tb.write_table('$1/variables.index', e, **kw)"
}
copy magic && poke magic/variables.index -1
copy short && truncate -s 40 short/variables.index
copy blockcrc && poke blockcrc/variables.index 3
copy handle && /usr/bin/python3 -c "
import struct, sys
sys.path.insert(0, '$ROOT/tests/cli')
import tf_bundle as tb
b = bytearray(open('handle/variables.index', 'rb').read())
f = len(b) - 48
_, p = tb.varint(b, f); _, p = tb.varint(b, p)
handle = b[f:p] + tb.put_varint(0) + tb.put_varint(2**62)
b[f:f + 40] = handle + bytes(40 - len(handle))
open('handle/variables.index', 'wb').write(b)"
copy datacrc && poke datacrc/variables.data-00000-of-00001 5
copy noshard && rm noshard/variables.data-00000-of-00001
index entry "e[1] = (b'a', b'\x0a\xff')"
index past "e[1] = entry(offset=100)"
index size "e[1] = entry(size=8)"
index negative "e[1] = entry(shape=[2**64 - 1])"
index variant "e[1] = entry(dtype=21)"
index sliced "e[1] = entry(extra=b'\x3a\x00')"
index order "e[1], e[2] = e[2], e[1]"
index restart "kw['index_restart'] = 2"
index noheader "e = e[1:]"
index bigendian "e[0] = (b'', tb.encode_header(endianness=1))"
index shards "e[0] = (b'', tb.encode_header(shards=0))"
index shard2 "e[1] = entry(shard=3)"
mkdir strcrc && cp "$R"/tfserving-half-plus-two-tf2-cpu/variables.* strcrc/ && chmod u+w strcrc/* &&
  poke strcrc/variables.data-00000-of-00001 40
for d in magic short blockcrc handle restart datacrc noshard entry past size negative variant sliced order noheader \
         bigendian shards shard2 strcrc; do
  "$WAVG" inspect $d/variables > /dev/null && echo "$d: exit 0" || echo "$d: exit $?"
done
# A refused merge writes nothing; an output named like an input's files is refused and the input stays whole.
"$WAVG" merge -q "$T/variables" datacrc/variables -o out.ckpt && echo "merge: exit 0" || echo "merge: exit $?"
copy col && cp col/variables.index before.index
"$WAVG" merge -q col/variables "$T/variables" -f --format tensorflow -o col/variables && echo "col: exit 0" ||
  echo "col: exit $?"
ls out.ckpt* 2>/dev/null || echo "no out.ckpt files"
ls -A col
cmp col/variables.index before.index
