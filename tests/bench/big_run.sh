#!/usr/bin/env bash
# The big-model checks that do not fit this project's 2-core, 24 GB development VM, for a lent machine with more
# memory and disk (the device tool's machines: 16 cores, 128 GiB, 64 GiB disk, no Debian packages, no network).
# It runs issue 29's row: 8 PyTorch Distributed Checkpoints of a 1 Gi-parameter float32 model, each written by 4
# ranks (tests/bench/dcp_bench.py 8 4 1024), averaged by wavg into a DCP folder and into safetensors beside the cat
# floor, and consolidate-then-average in torch. wavg and its libraries come from .gpu/ (tests/bench/gpu_pack.sh).
#
# Usage, from the repository root: bash tests/bench/big_run.sh [N R P REPEAT]   (figures under $OUT)
# Rehearsal here: OUT=/tmp/big BIG_WORK=/tmp/bigw bash tests/bench/big_run.sh 3 2 64 1
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/big_out}
WORK=${BIG_WORK:-/tmp/dcp_big}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=$ROOT/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
PY=${BIG_PYTHON:-python3}
{
  echo "== $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  free -g | sed -n 2p
  df -h "$WORK" | tail -1
  "$ROOT/.gpu/bin/wavg" --version
  "$PY" -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$OUT/machine.txt"
timeout ${BIG_TIMEOUT:-500} "$PY" tests/bench/dcp_bench.py "$ROOT/.gpu/bin/wavg" "$WORK" ${@:-8 4 1024 2} 2>&1 |
  tee "$OUT/dcp_bench.txt"
echo "exit ${PIPESTATUS[0]}" | tee -a "$OUT/dcp_bench.txt"
