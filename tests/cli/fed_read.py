#!/usr/bin/python3
"""Prints dataset /w of an HDF5 file, one value per line with 17 significant digits: fed_read.py FILE [DATASET]."""
import sys

import h5py

with h5py.File(sys.argv[1], "r") as f:
    for v in f[sys.argv[2] if len(sys.argv) > 2 else "w"][()].reshape(-1):
        print("%.17g" % v)
