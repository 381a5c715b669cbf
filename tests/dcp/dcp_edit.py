"""Edits a DCP folder's .metadata without torch (tests/cli/dcp_*.sh): the classes the pickle names are stubbed
under their own module names, so the edited pickle names exactly the globals torch.distributed.checkpoint writes.

    dcp_edit.py FOLDER overlap|hole|past_end   (on tensor model.fc1.weight, chunked over 2 ranks)
    dcp_edit.py FOLDER drop                     (leaves model.fc2.bias out)
"""
import os
import pickle
import sys

from dcp_stubs import Size  # noqa: E402  (stubs torch's DCP classes before pickle.load)

folder, edit = sys.argv[1], sys.argv[2]
path = os.path.join(folder, ".metadata")
with open(path, "rb") as f:
    meta = pickle.load(f)
name = "model.fc1.weight"
tensor = meta.state_dict_metadata[name]
if edit != "drop":
    second = tensor.chunks[1]
    key = next(k for k in meta.storage_data if k.fqn == name and tuple(k.offset) == tuple(second.offsets))
if edit == "overlap":  # the second rank's rows start one row early
    second.offsets = Size((second.offsets[0] - 1,) + tuple(second.offsets[1:]))
    key.offset = second.offsets
    meta.storage_data = {k: v for k, v in meta.storage_data.items()}
elif edit == "hole":  # the metadata forgets the second rank's chunk
    del tensor.chunks[1]
elif edit == "past_end":  # its storage moved past the end of its file
    info = meta.storage_data[key]
    info.offset = os.path.getsize(os.path.join(folder, info.relative_path)) + 10
elif edit == "drop":  # model.fc2.bias was never saved (its bytes stay in the data file, named by nothing)
    del meta.state_dict_metadata["model.fc2.bias"], meta.planner_data["model.fc2.bias"]
    meta.storage_data = {k: v for k, v in meta.storage_data.items() if k.fqn != "model.fc2.bias"}
else:
    sys.exit("unknown edit " + edit)
with open(path, "wb") as f:
    pickle.dump(meta, f, protocol=4)
