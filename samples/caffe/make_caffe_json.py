#!/usr/bin/env python3
"""Writes lenet_a.json and lenet_b.json: two snapshots of a tiny LeNet-like net as wavg JSON, named as wavg
names Caffe blobs (LAYER/INDEX: conv1/0 the weights, conv1/1 the bias). `wavg convert lenet_a.json -o
a.caffemodel` makes the Caffe snapshot (current-layout layers holding a name and blobs), as the examples in
wavg-formats(7) do. Values are k/8 + i/64 for snapshot k = 1 (a) and 2 (b) and element index i: exact in float32.
Run from this folder: python3 make_caffe_json.py
"""
import json

SHAPES = [("conv1/0", [2, 1, 3, 3]), ("conv1/1", [2]), ("ip1/0", [3, 8]), ("ip1/1", [3])]
for k, name in ((1, "lenet_a.json"), (2, "lenet_b.json")):
    tensors = []
    for tensor, shape in SHAPES:
        n = 1
        for d in shape:
            n *= d
        tensors.append({"name": tensor, "dtype": "float32", "shape": shape,
                        "data": [k / 8 + i / 64 for i in range(n)]})
    with open(name, "w") as f:
        json.dump({"format": "wavg-json", "version": 1, "tensors": tensors}, f)
        f.write("\n")
