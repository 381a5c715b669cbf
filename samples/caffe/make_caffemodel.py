#!/usr/bin/env python3
"""Writes lenet_a.caffemodel and lenet_b.caffemodel: two snapshots of a tiny LeNet-like net (a 3x3 convolution
with two outputs, then an inner product with three) as Caffe itself would save them, built with the official
caffe.proto (BVLC/caffe, src/caffe/proto/caffe.proto; BSD 2-Clause) compiled by protoc, not with wavg. The
blob values are those of lenet_a.json and lenet_b.json (make_caffe_json.py): k/8 + i/64 for snapshot k = 1 (a)
and 2 (b) and element index i, exact in float32, so the merged blobs are 3/16 + i/64.

The two files are bundled; to make them again (protobuf-compiler and python3-protobuf, which the README's set-up
installs), with a copy of Caffe's caffe.proto:

    python3 make_caffemodel.py path/to/caffe.proto
"""
import os
import subprocess
import sys
import tempfile

proto = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "caffe.proto")
with tempfile.TemporaryDirectory() as out:
    subprocess.run(["protoc", f"--proto_path={os.path.dirname(proto)}", f"--python_out={out}", proto], check=True)
    sys.path.insert(0, out)
    import caffe_pb2

    def blob(layer, shape, k):
        b = layer.blobs.add()
        b.shape.dim.extend(shape)
        n = 1
        for d in shape:
            n *= d
        b.data.extend(k / 8 + i / 64 for i in range(n))

    for k, name in ((1, "lenet_a.caffemodel"), (2, "lenet_b.caffemodel")):
        net = caffe_pb2.NetParameter(name="LeNet")
        data = net.layer.add(name="data", type="Input", top=["data"])
        data.input_param.shape.add(dim=[1, 1, 4, 4])
        conv = net.layer.add(name="conv1", type="Convolution", bottom=["data"], top=["conv1"])
        conv.convolution_param.num_output = 2
        conv.convolution_param.kernel_size.append(3)
        blob(conv, [2, 1, 3, 3], k)
        blob(conv, [2], k)
        ip = net.layer.add(name="ip1", type="InnerProduct", bottom=["conv1"], top=["ip1"])
        ip.inner_product_param.num_output = 3
        blob(ip, [3, 8], k)
        blob(ip, [3], k)
        with open(name, "wb") as f:
            f.write(net.SerializeToString())
