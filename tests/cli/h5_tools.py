# HDF5 helpers for the CLI tests: h5py only, no wavg code.
import h5py


def tensors(path):
    """Returns {dataset path: its bytes} for every dataset in the file."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()].tobytes()) if isinstance(o, h5py.Dataset) else None)
    return out
