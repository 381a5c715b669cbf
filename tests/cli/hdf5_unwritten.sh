# HDF5 datasets declared but never written, made by h5py: a 1.4 KB file declaring an unwritten 1 TiB dataset is
# refused (one line naming the dataset, exit 1, no output), where a dense output of 1 TiB used to be written until
# the disk was full; a small unwritten dataset reads as its fill value, and merges to numpy's mean of that value
# and the partner's.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for name in ("huge1.h5", "huge2.h5"):
    with h5py.File(name, "w") as f:
        f.create_dataset("w", (1 << 38,), np.float32)  # 1 TiB, never written
with h5py.File("small.h5", "w") as f:
    f.create_dataset("w", (3,), np.float32, fillvalue=2.5)  # never written
    f["v"] = np.float32([1, 2])
with h5py.File("partner.h5", "w") as f:
    f["w"] = np.float32([1, 2, 3])
    f["v"] = np.float32([3, 4])
PY
set +e
"$WAVG" merge -q huge1.h5 huge2.h5 -o out.h5
echo "huge: exit $?"
set -e
[ ! -e out.h5 ] || { echo "an output was written"; exit 1; }
"$WAVG" merge -q small.h5 partner.h5 -o small_avg.h5
echo "small: exit $?"
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("small_avg.h5") as f:
    assert np.array_equal(f["w"][()], (np.float32([2.5] * 3) + np.float32([1, 2, 3])) / 2), f["w"][()]
    assert np.array_equal(f["v"][()], np.float32([2, 3])), f["v"][()]
PY
