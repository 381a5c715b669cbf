#!/usr/bin/env bash
# The one script a lent GPU machine runs (issue: run the CUDA backend on a real GPU), in under 8 minutes, writing
# every figure under $OUT. It needs the binaries and the shared libraries they link, built here and carried in
# .gpu/ (tests/bench/gpu_pack.sh makes it), because the GPU machine has no Debian packages and no network:
#
#   1. gpu.cuda_backend (wavg_gpu_tests): every CUDA kernel against the CPU backend on the device;
#   2. every CLI case twice, through a wrapper that adds --device cuda (then --device cpu) to merge and convert
#      where a case names no device: a case that fails only with cuda is a GPU fault, one that fails both ways is
#      the machine (no Debian torch, other Python packages);
#   3. gpu_bench: copy and kernel throughput, host-to-device rates, the backend's slot sweep;
#   4. end to end: 4 x 124M float32 safetensors from the page cache, --device cuda against --device cpu at 1 to 16
#      threads, for the mean, the median, the trimmed mean, Krum, FedAdam and TIES.
#
# Usage (on the GPU machine, from the repository root): bash tests/bench/gpu_run.sh
# Rehearsal on a machine without a GPU: GPU_RUN_CASES='task_*' GPU_RUN_LAYERS=1 bash tests/bench/gpu_run.sh (a few
# CLI cases, a one-layer model; the GPU steps then fail with their messages).
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
G=$ROOT/.gpu
export LD_LIBRARY_PATH=$G/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_WAIT_POLICY=passive
summary=$OUT/summary.txt
log=$OUT/log.txt
: >"$summary"
: >"$log"
say() { echo "$*" | tee -a "$summary"; }
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }

say "== machine ($(date -u +%FT%TZ))"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv \
  2>&1 | tee -a "$summary"
nvidia-smi 2>&1 | sed -n 3p | tee -a "$summary"
say "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$G/bin/wavg" --version 2>&1 | tee -a "$summary"

# The CLI cases call Debian's /usr/bin/python3 (numpy, h5py, torch): point it at the image's Python, which has them.
# A venv's Python finds its packages only when started by its own path, so /usr/bin/python3 becomes a script that
# starts the real interpreter with the venv's site-packages.
if ! /usr/bin/python3 -c "import numpy, h5py" 2>/dev/null; then
  for py in /opt/torch/.venv/bin/python3 /opt/*/bin/python3 /opt/*/.venv/bin/python3 $(type -P python3); do
    if [ "$py" != /usr/bin/python3 ] && "$py" -c "import numpy, h5py" 2>/dev/null; then
      real=$(readlink -f "$py")
      site=$("$py" -c "import site; print(':'.join(site.getsitepackages()))")
      rm -f /usr/bin/python3
      printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec %s "$@"\n' "$site" "$real" >/usr/bin/python3
      chmod +x /usr/bin/python3
      say "python: /usr/bin/python3 runs $real with $site ($(/usr/bin/python3 -c 'import numpy, h5py, torch
print("numpy", numpy.__version__, "h5py", h5py.__version__, "torch", torch.__version__)' 2>&1 | tail -1))"
      break
    fi
  done
fi

say "== 1. gpu.cuda_backend ($(elapsed) s)"
timeout 180 "$G/bin/wavg_gpu_tests" >"$OUT/gpu_tests.txt" 2>&1
say "exit $? ($(elapsed) s); $(grep -c '^ok' "$OUT/gpu_tests.txt") ok, $(grep -c 'FAILED' "$OUT/gpu_tests.txt") failed"
grep -E "FAILED|not bit-identical|failure" "$OUT/gpu_tests.txt" | head -40 | tee -a "$summary"

say "== 2. CLI cases with --device cuda, then the failures again with --device cpu ($(elapsed) s)"
cat >"$G/bin/wavg-device" <<'SH'
#!/usr/bin/env bash
# wavg with --device $WAVG_TEST_DEVICE added to merge and convert when the command names no device.
real=$(dirname "$0")/wavg
case "${1:-}" in merge | convert) ;; *) exec "$real" "$@" ;; esac
for a in "$@"; do case "$a" in --device | --device=*) exec "$real" "$@" ;; esac; done
sub=$1
shift
exec "$real" "$sub" --device "$WAVG_TEST_DEVICE" "$@"
SH
chmod +x "$G/bin/wavg-device"
run_cases() {  # device, list file, result folder
  mkdir -p "$3"
  WAVG_TEST_DEVICE=$1 xargs -a "$2" -P "$(nproc)" -I{} bash -c \
    'n=$(basename {} .sh); timeout 120 bash tests/cli/run_case.sh "$PWD/tests/cli/$n.sh" "$0" "$PWD" "$PWD/man" \
       >"$1/$n.log" 2>&1; echo $? >"$1/$n.rc"' "$G/bin/wavg-device" "$3"
}
ls tests/cli/${GPU_RUN_CASES:-*}.sh | grep -v run_case.sh >"$OUT/.cases"
run_cases cuda "$OUT/.cases" /tmp/cli_cuda
failed_cuda=$(cd /tmp/cli_cuda && grep -lv '^\(0\|77\)$' *.rc | sed 's/\.rc$//')
for n in $failed_cuda; do echo "tests/cli/$n.sh"; done >"$OUT/.failed"
run_cases cpu "$OUT/.failed" /tmp/cli_cpu
{
  for n in $failed_cuda; do
    if [ "$(cat /tmp/cli_cpu/$n.rc)" = 0 ]; then echo "=== $n: fails only with --device cuda"; else
      echo "=== $n: fails with cpu too (the machine)"; fi
    head -c 6000 "/tmp/cli_cuda/$n.log"
  done
} >"$OUT/cli.txt"
total=$(wc -l <"$OUT/.cases")
skipped=$(cat /tmp/cli_cuda/*.rc | grep -c '^77$')
only_cuda=$(grep -c 'fails only with --device cuda' "$OUT/cli.txt")
say "$total cases: $(cat /tmp/cli_cuda/*.rc | grep -c '^0$') passed with cuda, $skipped skipped," \
  "$(echo "$failed_cuda" | grep -c .) failed, of which $only_cuda only with cuda ($(elapsed) s)"
grep 'fails only with --device cuda' "$OUT/cli.txt" | tee -a "$summary"

say "== 3. gpu_bench ($(elapsed) s)"
timeout 150 "$G/bin/wavg_gpu_bench" >"$OUT/bench.jsonl" 2>>"$log"
say "exit $?"
cat "$OUT/bench.jsonl" >>"$summary"

say "== 4. end to end, 4 x 124M float32 safetensors ($(elapsed) s)"
E=/tmp/e2e
mkdir -p $E
py=$(for p in python3 /usr/bin/python3; do $p -c "import numpy" 2>/dev/null && echo $p && break; done)
$py - "$E" "${GPU_RUN_LAYERS:-12}" <<'PY' >>"$log" 2>&1
import json, struct, sys
import numpy as np
folder = sys.argv[1]
# GPT-2 small's shapes: 124M parameters.
shapes = [("wte", (50257, 768)), ("wpe", (1024, 768))]
for i in range(int(sys.argv[2])):
    shapes += [(f"h{i}.attn.w", (768, 2304)), (f"h{i}.attn.b", (2304,)), (f"h{i}.proj.w", (768, 768)),
               (f"h{i}.fc.w", (768, 3072)), (f"h{i}.fc.b", (3072,)), (f"h{i}.fc_proj.w", (3072, 768))]
rng = np.random.default_rng(0)
base = {n: rng.standard_normal(s, dtype=np.float32) for n, s in shapes}
def write(path, tensors):
    header, offset = {}, 0
    for n, a in tensors.items():
        header[n] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for a in tensors.values():
            f.write(a.tobytes())
write(f"{folder}/base.safetensors", base)
for k in range(4):
    write(f"{folder}/in{k}.safetensors",
          {n: a + 0.01 * rng.standard_normal(a.shape, dtype=np.float32) for n, a in base.items()})
print("params", sum(a.size for a in base.values()))
PY
cat $E/*.safetensors >/dev/null
grep params "$log" | tee -a "$summary"
timed() {  # label, then the wavg arguments: the best of three wall times
  local label=$1 best=""
  shift
  for r in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$G/bin/wavg" merge --hash none --force "$@" -o $E/out.safetensors >/dev/null 2>>"$log" ||
      { echo "FAILED: $*"; return; }
    t1=$(date +%s.%N)
    best=$(echo "$t0 $t1 $best" | awk '{d=$2-$1; if ($3 == "" || d < $3) print d; else print $3}')
  done
  printf '%s %.3f\n' "$label" "$best"
}
IN="$E/in0.safetensors $E/in1.safetensors $E/in2.safetensors $E/in3.safetensors"
{
  # What starting the GPU costs: a merge of two 12-tensor files.
  timed "tiny merge cpu" "$ROOT/samples/mlp/node1.h5" "$ROOT/samples/mlp/node2.h5" --device cpu
  timed "tiny merge cuda" "$ROOT/samples/mlp/node1.h5" "$ROOT/samples/mlp/node2.h5" --device cuda
  for j in 1 2 4 8 16; do timed "mean cpu -j$j" $IN --device cpu -j$j; done
  timed "mean cuda" $IN --device cuda
  timed "median cpu -j16" $IN --method median --device cpu -j16
  timed "median cuda" $IN --method median --device cuda
  timed "trimmed-mean cpu -j16" $IN --method trimmed-mean --trim 0.25 --device cpu -j16
  timed "trimmed-mean cuda" $IN --method trimmed-mean --trim 0.25 --device cuda
  timed "krum cpu -j16" $IN --method krum --byzantine 0 --device cpu -j16
  timed "krum cuda" $IN --method krum --byzantine 0 --device cuda
  timed "fedadam cpu -j16" $IN --base $E/base.safetensors --server-opt adam --device cpu -j16
  timed "fedadam cuda" $IN --base $E/base.safetensors --server-opt adam --device cuda
  timed "ties cpu -j16" $IN --base $E/base.safetensors --method ties --density 0.2 --device cpu -j16
  timed "ties cuda" $IN --base $E/base.safetensors --method ties --density 0.2 --device cuda
  timed "dare-ties cpu -j16" $IN --base $E/base.safetensors --method dare-ties --density 0.2 --device cpu -j16
  timed "dare-ties cuda" $IN --base $E/base.safetensors --method dare-ties --density 0.2 --device cuda
} 2>&1 | tee "$OUT/e2e.txt" | tee -a "$summary"
# The end-to-end outputs must be the same bytes on both devices where the kernels are exact.
for m in "" "--method ties --density 0.2 --base $E/base.safetensors" "--method median"; do
  "$G/bin/wavg" merge --hash none --force $IN $m --device cpu -o $E/c.safetensors >/dev/null 2>>"$log"
  "$G/bin/wavg" merge --hash none --force $IN $m --device cuda -o $E/g.safetensors >/dev/null 2>>"$log"
  cmp -s $E/c.safetensors $E/g.safetensors && say "same bytes cpu/cuda: ${m:-mean}" || say "DIFFER cpu/cuda: ${m:-mean}"
done
say "== done in $(elapsed) s"
