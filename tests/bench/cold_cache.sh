#!/bin/sh
# Merges checkpoints from disk with a cold page cache, beside dd reading the same files: what a user averaging last
# night's checkpoints meets, where every other benchmark here is page-cache-hot (issue 43). Needs root (it drops the
# page cache: sync; echo 3 > /proc/sys/vm/drop_caches), and drops it for every machine's user, so run it once.
#
#   [PYTHON=python3-with-numpy] [BASELINE=OLD_WAVG] [TENSORS=16] \
#     tests/bench/cold_cache.sh WAVG [DIR [MIB [INPUTS [ROUNDS]]]]
#
# In DIR (default /var/tmp/wavg-cold, on the disk under test, not a tmpfs) it writes INPUTS (4) safetensors files of
# MIB (256) MiB of float32 each, in TENSORS (16) tensors (as a model's layers, most of which fit in one block),
# then for ROUNDS (3) rounds, each after dropping the cache:
#   read    dd of the inputs one after another (bs=4M) to /dev/null: the device's sequential read of them
#   write   dd of one input's size from /dev/zero to a file, conv=fsync: the device's write of the output
#   merge   WAVG merge -f INPUTS -o DIR/out.safetensors, then sync (the output on the device, as dd's)
#   base    with BASELINE set, the same merge by OLD_WAVG after dropping the cache again (a paired before/after)
# and prints each round's seconds, the medians, and merge / (read + write): the target is 1.1 or less. It prints
# the load beside it: on a shared machine another user's I/O changes the disk's rate as much as the CPU's.
set -eu
wavg=$(realpath "$1")
dir=${2:-/var/tmp/wavg-cold}
mib=${3:-256}
inputs=${4:-4}
rounds=${5:-3}
python=${PYTHON:-/usr/bin/python3}  # with numpy (Debian's)
[ "$(id -u)" = 0 ] || { echo "cold_cache.sh: run as root (it drops the page cache)" >&2; exit 77; }
mkdir -p "$dir"
cd "$dir"
"$python" - "$mib" "$inputs" "${TENSORS:-16}" <<'EOF'
import json, os, struct, sys
import numpy as np
mib, n, tensors = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rows = mib * 2**20 // 4 // 1024 // tensors
for k in range(n):
    path = f"in{k}.safetensors"
    if os.path.exists(path):
        continue
    rng = np.random.default_rng(k)
    header, at, arrays = {}, 0, []
    for t in range(tensors):
        a = rng.standard_normal((rows, 1024), dtype=np.float32)
        header[f"layer{t}.weight"] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        at += a.nbytes
        arrays.append(a)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for a in arrays:
            f.write(a.tobytes())
EOF
files=$(ls in*.safetensors | head -n "$inputs")
one=$(stat -c %s in0.safetensors)
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
secs() { python3 -c 'import sys,time; print(f"{time.time() - float(sys.argv[1]):.2f}")' "$1"; }
now() { python3 -c 'import time; print(time.time())'; }
echo "$(uname -n): $inputs inputs of $mib MiB (${TENSORS:-16} tensors) in $dir ($(df -P "$dir" | awk 'NR==2 {print $1}')); load $(cut -d' ' -f1-3 /proc/loadavg)"
baseline=${BASELINE:+$(realpath "$BASELINE")}
cold_merge() {  # cold_merge WAVG: the seconds of a merge from a dropped cache, its output synced
  drop
  t=$(now)
  # shellcheck disable=SC2086
  "$1" merge -q -f $files -o out.safetensors
  sync
  secs "$t"
  rm -f out.safetensors
}
echo "round  read  write  merge  merge/(read+write)${baseline:+  base}"
reads= writes= merges= bases=
for r in $(seq "$rounds"); do
  drop
  t=$(now)
  for f in $files; do dd if="$f" of=/dev/null bs=4M status=none; done
  read_s=$(secs "$t")
  drop
  t=$(now)
  dd if=/dev/zero of=dd.out bs=1M count=$((one / 1048576)) conv=fsync status=none
  write_s=$(secs "$t")
  rm -f dd.out
  merge_s=$(cold_merge "$wavg")
  base_s=
  [ -z "$baseline" ] || base_s=$(cold_merge "$baseline")
  echo "$r  $read_s  $write_s  $merge_s  $(python3 -c "print(f'{$merge_s / ($read_s + $write_s):.2f}')")  $base_s"
  reads="$reads $read_s" writes="$writes $write_s" merges="$merges $merge_s" bases="$bases $base_s"
done
python3 - "$reads" "$writes" "$merges" "$bases" <<'EOF'
import statistics, sys
r, w, m, b = ([float(x) for x in a.split()] for a in sys.argv[1:5])
f = lambda v: f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
print(f"median (min-max): read {f(r)}  write {f(w)}  merge {f(m)}  "
      f"merge/(read+write) {statistics.median(m) / (statistics.median(r) + statistics.median(w)):.2f}"
      + (f"  base {f(b)}" if b else ""))
EOF
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
