#!/usr/bin/python3
"""A TensorFlow checkpoint (TensorBundle) reader and writer for the tests, written from TensorFlow's format
(tensor_bundle.proto, tensor_bundle.cc, core/lib/io/table_builder.cc, format.cc) and independent of wavg: pure
Python with numpy, its own CRC-32C, Snappy decoder, LevelDB table walk and protobuf wire parsing.

    read_checkpoint(prefix) -> {name: (dtype_number, shape, value)}, value a numpy array or, for DT_STRING, the
                               stored bytes; every block and tensor checksum verified
    table_entries(path)     -> [(key, value)] of a .index file
    write_table(path, entries), encode_entry(fields), encode_header(...) build (corrupt) files for the tests
"""
import struct

import numpy as np

MAGIC = 0xDB4775248B80FB57
DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8, 9: np.int64,
          10: np.bool_, 17: np.uint16, 19: np.float16, 22: np.uint32, 23: np.uint64}

_TABLE = []
for _b in range(256):
    _c = _b
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def mask(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def unmask(m):
    rot = (m - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def put_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def snappy_uncompress(buf):
    n, pos = varint(buf, 0)
    out = bytearray()
    while pos < len(buf):
        tag = buf[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:  # literal
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(buf[pos:pos + extra], "little")
                pos += extra
            length += 1
            out += buf[pos:pos + length]
            pos += length
            continue
        if kind == 1:
            length = ((tag >> 2) & 7) + 4
            offset = ((tag >> 5) << 8) | buf[pos]
            pos += 1
        elif kind == 2:
            length = (tag >> 2) + 1
            offset = int.from_bytes(buf[pos:pos + 2], "little")
            pos += 2
        else:
            length = (tag >> 2) + 1
            offset = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        for _ in range(length):
            out.append(out[-offset])
    assert len(out) == n
    return bytes(out)


def read_block(data, offset, size):
    block = data[offset:offset + size]
    kind = data[offset + size]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    assert unmask(stored) == crc32c(bytes([kind]), crc32c(block)), "block checksum"
    return snappy_uncompress(block) if kind == 1 else block


def block_entries(block):
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 - 4 * restarts
    pos, key, out = 0, b"", []
    while pos < end:
        shared, pos = varint(block, pos)
        unshared, pos = varint(block, pos)
        length, pos = varint(block, pos)
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((bytes(key), bytes(block[pos:pos + length])))
        pos += length
    return out


def table_entries(path):
    data = open(path, "rb").read()
    assert struct.unpack_from("<Q", data, len(data) - 8)[0] == MAGIC
    pos = len(data) - 48
    _, pos = varint(data, pos)
    _, pos = varint(data, pos)
    index_offset, pos = varint(data, pos)
    index_size, pos = varint(data, pos)
    out = []
    for _, handle in block_entries(read_block(data, index_offset, index_size)):
        off, p = varint(handle, 0)
        size, _ = varint(handle, p)
        out += block_entries(read_block(data, off, size))
    return out


def proto_fields(buf):
    """Parses protobuf wire format into {field number: [values]} (varints and fixed32 as ints, the rest bytes)."""
    fields, pos = {}, 0
    while pos < len(buf):
        tag, pos = varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            v, pos = varint(buf, pos)
        elif wire == 2:
            n, pos = varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            (v,) = struct.unpack_from("<I", buf, pos)
            pos += 4
        elif wire == 1:
            (v,) = struct.unpack_from("<Q", buf, pos)
            pos += 8
        else:
            raise ValueError("wire type %d" % wire)
        fields.setdefault(number, []).append(v)
    return fields


def entry_fields(value):
    f = proto_fields(value)
    shape = [proto_fields(d).get(1, [0])[0] for d in proto_fields(f[2][0]).get(2, [])] if 2 in f else []
    return {"dtype": f.get(1, [0])[0], "shape": shape, "shard": f.get(3, [0])[0], "offset": f.get(4, [0])[0],
            "size": f.get(5, [0])[0], "crc": f.get(6, [0])[0], "slices": len(f.get(7, []))}


def string_crc(stored, count):
    pos, crc, lengths = 0, 0, []
    for _ in range(count):
        n, pos = varint(stored, pos)
        lengths.append(n)
        crc = crc32c(struct.pack("<I" if n <= 0xFFFFFFFF else "<Q", n), crc)
    assert unmask(struct.unpack_from("<I", stored, pos)[0]) == crc, "string length checksum"
    crc = crc32c(stored[pos:pos + 4], crc)
    crc = crc32c(stored[pos + 4:], crc)
    assert len(stored) - pos - 4 == sum(lengths)
    return crc


def read_checkpoint(prefix):
    entries = table_entries(prefix + ".index")
    assert entries[0][0] == b"", "header first"
    header = proto_fields(entries[0][1])
    shards = header.get(1, [0])[0]
    assert header.get(2, [0])[0] == 0, "little-endian"
    keys = [k for k, _ in entries]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), "keys sorted and unique"
    out = {}
    for key, value in entries[1:]:
        e = entry_fields(value)
        data = open("%s.data-%05d-of-%05d" % (prefix, e["shard"], shards), "rb").read()
        stored = data[e["offset"]:e["offset"] + e["size"]]
        assert len(stored) == e["size"]
        count = int(np.prod(e["shape"], dtype=np.int64))
        if e["dtype"] == 7:
            assert string_crc(stored, count) == unmask(e["crc"]), key
            out[key.decode()] = (7, e["shape"], stored)
            continue
        assert crc32c(stored) == unmask(e["crc"]), key
        if e["dtype"] == 14:
            v = (np.frombuffer(stored, np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            v = np.frombuffer(stored, DTYPES[e["dtype"]])
        out[key.decode()] = (e["dtype"], e["shape"], v.reshape(e["shape"]))
    return out


def encode_entry(dtype, shape, shard, offset, size, crc, raw_extra=b""):
    shape_msg = b"".join(b"\x12" + put_varint(len(d)) + d for d in (b"\x08" + put_varint(x) for x in shape))
    out = b"\x08" + put_varint(dtype) + b"\x12" + put_varint(len(shape_msg)) + shape_msg
    out += b"\x18" + put_varint(shard) + b"\x20" + put_varint(offset) + b"\x28" + put_varint(size)
    return out + b"\x35" + struct.pack("<I", crc) + raw_extra


def encode_header(shards=1, endianness=0):
    return b"\x08" + put_varint(shards) + b"\x10" + put_varint(endianness) + b"\x1a\x02\x08\x01"


def _block(entries, restart=0):
    body = b"".join(put_varint(0) + put_varint(len(k)) + put_varint(len(v)) + k + v for k, v in entries)
    return body + struct.pack("<II", restart, 1)


def write_table(path, entries, index_restart=0):
    """Writes a LevelDB table: one uncompressed data block holding `entries`, an empty metaindex, the index (whose
    one restart point is `index_restart`)."""
    out = bytearray()

    def put(block):
        offset = len(out)
        out.extend(block + b"\x00" + struct.pack("<I", mask(crc32c(b"\x00", crc32c(block)))))
        return put_varint(offset) + put_varint(len(block))

    data = put(_block(entries))
    meta = put(_block([]))
    index = put(_block([(entries[-1][0] + b"\xff", data)], index_restart))
    footer = meta + index
    out += footer + b"\x00" * (40 - len(footer)) + struct.pack("<Q", MAGIC)
    open(path, "wb").write(out)
