#!/usr/bin/python3
"""Writes tiny plain-HDF5 checkpoints for the fed_*.sh cases: fed_make.py NAME VALUES [KEY=NUMBER...].
NAME gets one float64 dataset /w holding VALUES (comma-separated) and one root attribute per KEY=NUMBER."""
import sys

import h5py
import numpy as np

name, values = sys.argv[1], [float(v) for v in sys.argv[2].split(",")]
with h5py.File(name, "w") as f:
    f["w"] = np.array(values, dtype=np.float64)
    for item in sys.argv[3:]:
        key, number = item.split("=")
        f.attrs[key] = np.int64(number)
