#!/usr/bin/env python3
"""Checks wavg's switch to external data for an ONNX output over protobuf's 2 GiB (issue 45), which no CLI test can
reach without files of that size: two inline models of one float32 initializer each, written just under the limit
(2 GiB - 1 - SLACK bytes, so that the output with its provenance in metadata_props would pass it), as sparse files
(the values are zeros but for a few, so the inputs cost almost no disk; wavg still reads 2 x 2 GiB and holds them
parsed), then `wavg merge A B -o OUT.onnx`. The output must keep its graph inline and its initializer in OUT.onnx.data,
onnx (the Python package, from --python's environment) must load it with its external data and pass
onnx.checker.check_model on its path, and the initializer's values must be the mean of the inputs' (the nonzero
values placed at the first, a middle and the last element). Needs about 8 GiB of memory and 2 GiB of disk.

    tests/bench/onnx_2gib.py --wavg build/wavg --python /work/venvs/onnx/bin/python [--dir /tmp/onnx_2gib] [--keep]
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import time

LIMIT = 2**31 - 1  # protobuf's limit on one message (k_max_onnx_bytes)
SLACK = 64  # bytes under the limit: the inputs pass, the output with its metadata would not

CHECK = r'''
import sys
import numpy as np
import onnx
from onnx import numpy_helper
out, count, picks = sys.argv[1], int(sys.argv[2]), eval(sys.argv[3])
m = onnx.load(out, load_external_data=False)
t = m.graph.initializer[0]
assert t.data_location == onnx.TensorProto.EXTERNAL, "inline"
where = {e.key: e.value for e in t.external_data}
print("external data:", where)
onnx.checker.check_model(out, full_check=True)
m = onnx.load(out)
w = numpy_helper.to_array(m.graph.initializer[0])
assert w.shape == (count,) and w.dtype == np.float32, (w.shape, w.dtype)
want = np.zeros(count, np.float32)
for i, v in picks.items():
    want[i] = v
assert np.array_equal(w, want), [(i, w[i], want[i]) for i in picks]
print("onnx loads the output; its values are the mean")
'''


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def write_model(python, path, picks):
    """An inline ModelProto of LIMIT - SLACK bytes: Identity(W) -> y, W float32 of the count that fills it, zero but
    for picks(count) {element: value}; returns the count and the file's size. The small parts come from onnx.helper; the initializer is spliced in by hand (onnx
    cannot serialise a message this large) and its zeros left as a hole in the file."""
    small = subprocess.run([python, "-c", r'''
import sys, onnx
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Identity", ["W"], ["y"])], "g", [],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
graph = m.graph.SerializeToString()
m.ClearField("graph")
sys.stdout.buffer.write(len(graph).to_bytes(8, "little") + graph + m.SerializeToString())
'''], check=True, stdout=subprocess.PIPE).stdout
    n = int.from_bytes(small[:8], "little")
    graph, model = small[8:8 + n], small[8 + n:]

    def sizes(count):
        head = varint(1 << 3 | 0) + varint(count) + varint(2 << 3 | 0) + varint(1) + field(8, b"W")
        tensor_len = len(head) + len(varint(9 << 3 | 2)) + len(varint(4 * count)) + 4 * count
        init = varint(5 << 3 | 2) + varint(tensor_len)
        graph_len = len(graph) + len(init) + tensor_len
        total = len(model) + len(varint(7 << 3 | 2)) + len(varint(graph_len)) + graph_len
        return head, init, graph_len, total

    count = (LIMIT - SLACK) // 4
    while sizes(count)[3] > LIMIT - SLACK:
        count -= 1
    head, init, graph_len, total = sizes(count)
    with open(path, "wb") as f:
        f.write(model + varint(7 << 3 | 2) + varint(graph_len) + graph + init + head)
        f.write(varint(9 << 3 | 2) + varint(4 * count))
        start = f.tell()
        for i, v in sorted(picks(count).items()):
            f.seek(start + 4 * i)
            f.write(struct.pack("<f", v))
        f.truncate(start + 4 * count)
    assert os.path.getsize(path) == total, (os.path.getsize(path), total)
    return count, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wavg", required=True)
    ap.add_argument("--python", required=True, help="a Python with onnx")
    ap.add_argument("--dir", default="/tmp/onnx_2gib")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    a_path, b_path = os.path.join(a.dir, "a.onnx"), os.path.join(a.dir, "b.onnx")
    n, total = write_model(a.python, a_path, lambda n: {0: 1.0, n // 2: 4.0, n - 1: -2.0})
    write_model(a.python, b_path, lambda n: {0: 3.0, n // 2: 0.5, n - 1: 2.0})
    print("inputs: %d bytes each (%d under the limit), %d float32 values" % (total, LIMIT - total, n))
    out = os.path.join(a.dir, "out.onnx")
    start = time.perf_counter()
    p = subprocess.run([a.wavg, "merge", "-q", a_path, b_path, "-o", out], stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit("wavg merge failed (exit %d, %.1f s): %s" % (p.returncode, wall, p.stderr.decode(errors="replace")))
    print("wavg merge: %.1f s; %s %d bytes, %s %d bytes" % (wall, out, os.path.getsize(out), out + ".data",
                                                           os.path.getsize(out + ".data")))
    picks = {0: 2.0, n // 2: 2.25, n - 1: 0.0}
    subprocess.run([a.python, "-c", CHECK, out, str(n), repr(picks)], check=True)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    if not a.keep:
        shutil.rmtree(a.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
