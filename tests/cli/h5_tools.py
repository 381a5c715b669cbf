# Independent HDF5 reading for the CLI tests: h5py, no wavg code.
import h5py


def datasets(source):
    """Returns {path: array} of every dataset in an HDF5 file, given as a path or a file-like object."""
    out = {}
    with h5py.File(source, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def tensors(source):
    """Returns {dataset path: its bytes} for every dataset in the file."""
    return {name: value.tobytes() for name, value in datasets(source).items()}
