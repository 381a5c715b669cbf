#!/usr/bin/env python3
"""A stand-in external trainer for tests: copies every float dataset of --init to --out plus (rank + 1), so the
mean over K workers moves every value by (K + 1) / 2 per round. --fail-rank R makes worker R exit 1."""
import argparse
import shutil
import sys

import h5py
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--init", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--rank", type=int, required=True)
ap.add_argument("--round", type=int, required=True)
ap.add_argument("--fail-rank", type=int, default=-1)
a = ap.parse_args()
if a.rank == a.fail_rank:
    sys.exit(1)
# A byte copy keeps every group and attribute (Keras layout included); then the float datasets are rewritten.
shutil.copyfile(a.init, a.out)
with h5py.File(a.out, "r+") as f:
    def shift(name, obj):
        if isinstance(obj, h5py.Dataset) and np.issubdtype(obj.dtype, np.floating):
            obj[...] = (obj[()] + (a.rank + 1)).astype(obj.dtype)
    f.visititems(shift)
