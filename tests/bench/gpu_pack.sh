#!/usr/bin/env bash
# Packs what tests/bench/gpu_run.sh needs on a GPU machine that has no Debian packages into .gpu/ (ignored by git;
# carried by the device tool): wavg, the GPU test and benchmark, and every shared library they link except the C
# runtime, the C++ runtime and the CUDA driver, which that machine has in newer versions.
# Usage: bash tests/bench/gpu_pack.sh BUILD_DIR
set -eu
build=${1:-build}
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib
cp "$build/wavg" "$build/tests/wavg_gpu_tests" "$build/tests/wavg_gpu_bench" .gpu/bin/
for exe in .gpu/bin/*; do ldd "$exe"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
strip .gpu/bin/* .gpu/lib/* 2>/dev/null || true
du -sh .gpu
