# Corrupt Flax msgpack files: each is one line on stderr, exit 1, and a merge leaves no output behind. The files
# are assembled byte by byte in Python from the msgpack spec and flax's encoding (formats/flax/flax.hpp), starting
# from {"w": float32 array of shape (2,)}.
/usr/bin/python3 - <<'PY'
import struct
def s(t):
    b = t.encode()
    return bytes([0xa0 | len(b)]) + b if len(b) < 32 else b"\xd9" + bytes([len(b)]) + b
def arr_payload(shape=(2,), dtype="float32", data=struct.pack("<2f", 1, 2), extra=b""):
    dims = b"".join(bytes([d]) if 0 <= d < 128 else (b"\xd0" + struct.pack("b", d) if d < 0 else
                    b"\xcf" + struct.pack(">Q", d)) for d in shape)
    return b"\x93" + bytes([0x90 | len(shape)]) + dims + s(dtype) + b"\xc4" + bytes([len(data)]) + data + extra
def ext(payload, code=1):
    return b"\xc7" + bytes([len(payload), code]) + payload
def m(*pairs):
    return bytes([0x80 | len(pairs)]) + b"".join(k + v for k, v in pairs)
ok = m((s("w"), ext(arr_payload())))
chunked = lambda shape, chunks: m((s("w"), m((s("__msgpack_chunked_array__"), b"\xc3"),
                                             (s("shape"), m(*[(s(str(i)), bytes([d])) for i, d in enumerate(shape)])),
                                             (s("chunks"), m(*[(s(str(i)), ext(c)) for i, c in enumerate(chunks)])))))
one = arr_payload(shape=(1,), data=struct.pack("<f", 1))
cases = {
    "ok": ok,
    "truncated": ok[:-3],
    "trailing": ok + b"\xc0",
    "huge_string": b"\x81\xdb\xff\xff\xff\xff" + b"w",
    "huge_map": b"\xdf\xff\xff\xff\xff" + s("w") + ext(arr_payload()),
    "deep": b"\x81\xa1w" * 100 + b"\x80",
    "int_key": m((s("w"), ext(arr_payload())), (b"\x01", ext(arr_payload()))),
    "slash_key": m((s("a/b"), ext(arr_payload()))),
    "twice": m((s("w"), ext(arr_payload())), (s("w"), ext(arr_payload()))),
    "complex": m((s("w"), ext(arr_payload(dtype="complex64")))),
    "dtype": m((s("w"), ext(arr_payload(dtype="float8_e4m3fn")))),
    "short_data": m((s("w"), ext(arr_payload(data=b"\0" * 4)))),
    "negative_dim": m((s("w"), ext(arr_payload(shape=(-1,), data=b"")))),
    "huge_dims": m((s("w"), ext(arr_payload(shape=(2**62, 2**62), data=b"")))),
    "not_triple": m((s("w"), ext(b"\x92\x90" + s("float32")))),
    "payload_tail": m((s("w"), ext(arr_payload(extra=b"\xc0")))),
    "ext_4gib": b"\x81\xa1w\xc9\xff\xff\xff\xff\x01",
    "chunk_count": chunked((3,), [one, one]),
    "chunk_keys": m((s("w"), m((s("__msgpack_chunked_array__"), b"\xc3"), (s("shape"), m((s("0"), b"\x01"))),
                               (s("chunks"), m((s("1"), ext(one))))))),
    "empty": b"",
}
for name, data in cases.items():
    open(f"{name}.msgpack", "wb").write(data)
PY
for c in ok truncated trailing huge_string huge_map deep int_key slash_key twice complex dtype short_data \
         negative_dim huge_dims not_triple payload_tail ext_4gib chunk_count chunk_keys empty; do
  "$WAVG" merge -q $c.msgpack ok.msgpack -o out_$c.msgpack && echo "$c: exit 0" || echo "$c: exit $?"
done
rm out_ok.msgpack
ls out_* 2>/dev/null || echo "no output left"
