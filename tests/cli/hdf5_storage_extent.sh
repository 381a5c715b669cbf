# An h5py file of one float32 dataset (1, 2) whose dataspace was changed to (570425346, 2) over its 8 bytes of
# contiguous storage: h5py opens it (and reads its first row); wavg refuses it at open, naming the dataset, where
# inspect once listed 1.14e9 values and convert sized a 2.28 GB output before its first read failed.
/usr/bin/python3 - <<'PY'
import struct
import h5py
import numpy as np
with h5py.File("a.h5", "w") as f:
    f.create_dataset("w", data=np.array([[1, 2]], dtype=np.float32))
raw = bytearray(open("a.h5", "rb").read())
at = raw.find(struct.pack("<QQ", 1, 2))  # the dataspace's dimensions
raw[at:at + 16] = struct.pack("<QQ", 570425346, 2)
open("damaged.h5", "wb").write(bytes(raw))
with h5py.File("damaged.h5", "r") as f:
    print("h5py:", f["w"].shape, f["w"].id.get_storage_size(), "bytes")
PY
"$WAVG" inspect damaged.h5 >/dev/null || echo "inspect: exit $?"
"$WAVG" convert damaged.h5 -o out.safetensors || echo "convert: exit $?"
ls out.safetensors 2>/dev/null || echo "no output left"
