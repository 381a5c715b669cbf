"""Peer: the usual h5py + numpy script. Copies input 1, then reads each float dataset from every input, sums in
float64 and writes the mean back. Usage: h5py_numpy.py OUT IN..."""
import shutil
import sys

import h5py
import numpy as np

out, inputs = sys.argv[1], sys.argv[2:]
shutil.copyfile(inputs[0], out)
names = []
with h5py.File(inputs[0], "r") as f:
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and o.dtype.kind == "f" else None)
files = [h5py.File(p, "r") for p in inputs]
with h5py.File(out, "r+") as o:
    for n in names:
        acc = files[0][n][()].astype(np.float64)
        for f in files[1:]:
            acc += f[n][()]
        o[n][...] = (acc / len(files)).astype(o[n].dtype)
