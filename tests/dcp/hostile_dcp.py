"""Writes small hostile DCP folders (tests/cli/dcp_hostile_*.sh): one float32 tensor "w" of 4 columns whose chunks'
archives are real torch.save archives (torch writes one; the folder lays copies of it out as FileSystemWriter
does), its .metadata pickled through the stubs of tests/dcp/dcp_stubs.py from the sample's own objects.

    hostile_dcp.py FOLDER rows N     N one-row chunks, each its own archive: a legal folder, slow only to a reader
                                     quadratic in the chunks
    hostile_dcp.py FOLDER shared N   N one-row chunks whose storages all name the one archive (shared bytes)
    hostile_dcp.py FOLDER memo N     one chunk object listed N times through the pickle memo (a few bytes each)
"""
import copy
import os
import pickle
import subprocess
import sys

folder, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
archive = subprocess.run([sys.executable, "-c", "import io, sys, torch\nb = io.BytesIO()\n"
                          "torch.save(torch.arange(4, dtype=torch.float32).reshape(1, 4), b)\n"
                          "sys.stdout.buffer.write(b.getvalue())"], check=True, capture_output=True).stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dcp_stubs import Size  # noqa: E402  (stubs torch's DCP classes before pickle.load)

samples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "dcp", "run", "step-100")
with open(os.path.join(samples, ".metadata"), "rb") as f:
    meta = pickle.load(f)
tensor = copy.copy(meta.state_dict_metadata["model.fc1.weight"])  # float32: its properties serve "w"
chunk_cls = type(tensor.chunks[0])
key = next(k for k in meta.storage_data if k.fqn == "model.fc1.weight")
key_cls, info_cls = type(key), type(meta.storage_data[key])


def obj(cls, **fields):
    o = cls.__new__(cls)
    o.__dict__.update(fields)
    return o


rows = n if mode != "memo" else 1
tensor.size = Size((n, 4))
chunks = [obj(chunk_cls, offsets=Size((i, 0)), sizes=Size((1, 4))) for i in range(rows)]
tensor.chunks = chunks * n if mode == "memo" else chunks
meta.state_dict_metadata = {"w": tensor}
meta.planner_data = {"w": ("w",)}
meta.storage_data = {obj(key_cls, fqn="w", offset=c.offsets, index=i):
                     obj(info_cls, relative_path="__0_0.distcp", offset=0 if mode == "shared" else i * len(archive),
                         length=len(archive)) for i, c in enumerate(chunks)}
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, ".metadata"), "wb") as f:
    pickle.dump(meta, f, protocol=4)
with open(os.path.join(folder, "__0_0.distcp"), "wb") as f:
    f.write(archive * (1 if mode != "rows" else n))
