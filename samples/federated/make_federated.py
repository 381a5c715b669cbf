#!/usr/bin/env python3
"""Writes the federated samples: global.h5 and the clients of two rounds, round-1/ and round-2/.

Each file is a copy of one of samples/mlp/node1.h5, node2.h5, node3.h5 (a Keras 2 MLP 4-8-3 with Adam state)
with two root attributes a federated merge reads as metadata: num_examples (for --weight-by num_examples) and
round (the round of the global model the client started from, for --staleness round).

  global.h5                  node1.h5, round 0
  round-1/client-{1,2,3}.h5  node1, node2, node3; num_examples 600, 200, 400; round 0
  round-2/client-{1,2,3}.h5  node2, node3, node1; num_examples 500, 300, 100; round 1

make_federated.sh does the same with `wavg convert --set-meta` instead of h5py. Run from the repository root:
/usr/bin/python3 samples/federated/make_federated.py
"""
import os
import shutil

import h5py

ROOT = "samples/federated"
FILES = [("global.h5", "node1", None, 0)] + \
    [(f"round-1/client-{k}.h5", f"node{n}", e, 0) for k, n, e in ((1, 1, 600), (2, 2, 200), (3, 3, 400))] + \
    [(f"round-2/client-{k}.h5", f"node{n}", e, 1) for k, n, e in ((1, 2, 500), (2, 3, 300), (3, 1, 100))]
for name, node, examples, round_ in FILES:
    path = os.path.join(ROOT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copyfile(f"samples/mlp/{node}.h5", path)
    with h5py.File(path, "r+") as f:
        if examples is not None:
            f.attrs["num_examples"] = examples
        f.attrs["round"] = round_
