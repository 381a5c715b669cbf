#!/usr/bin/env bash
# Runs one fuzz target (tests/fuzz/README.md) for SECONDS over its corpus: the regression inputs in
# tests/fuzz/regressions/TARGET/, its seeds (seeds.py, collected once into the build) and what earlier runs found
# (build-fuzz/tests/fuzz/corpus/TARGET/, grown by this run). A crashing input is saved under tests/fuzz/findings/
# (not committed) and the script exits non-zero with the report.
#
#   tests/fuzz/run.sh TARGET SECONDS [options...]
#
# With the fuzz build (build-fuzz/, clang) it runs libFuzzer, and the options are libFuzzer's (-jobs=2, -seed=N, ...).
# Without one it runs the release build's replay driver (replay.cpp: the seeds, then random mutants of them, no
# coverage guidance), whose options are -seed=N. Environment: WAVG_FUZZ_BUILD (default: build-fuzz/ of this
# checkout), WAVG_BUILD (default build/), WAVG (a release wavg that converts samples into seeds for formats samples/
# has no file of; default: build/wavg), WAVG_SHARED (the folder holding real-checkpoints/; default ../shared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [[ $# -lt 2 ]]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
build=${WAVG_FUZZ_BUILD:-$root/build-fuzz}
release=${WAVG_BUILD:-$root/build}
exe=$build/tests/fuzz/fuzz_$target
libfuzzer=1
if [[ ! -x $exe ]]; then
  exe=$release/tests/fuzz/fuzz_$target build=$release libfuzzer=0
  if [[ ! -x $exe ]]; then
    echo "fuzz_$target is built neither by the fuzz preset (cmake --preset fuzz && cmake --build --preset fuzz," \
      "needs clang) nor in $release" >&2
    exit 2
  fi
  echo "run.sh: no libFuzzer build of $target; replaying random mutants of its seeds with $exe" >&2
fi
wavg=${WAVG:-$release/wavg}
seeds=$build/tests/fuzz/seeds
if [[ ! -d $seeds/$target ]]; then
  options=(--shared "${WAVG_SHARED:-$root/../shared}")
  if [[ -x $wavg ]]; then options+=(--wavg "$wavg"); fi
  python3 "$here/seeds.py" "${options[@]}" "$seeds" "$target"
fi
inputs=("$seeds/$target")
if [[ -d $here/regressions/$target ]]; then inputs+=("$here/regressions/$target"); fi
findings=$here/findings
mkdir -p "$findings"
# HDF5 and Open MPI keep allocations until exit (tests/lsan.supp); the probe's children are this executable too.
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
if [[ $libfuzzer == 0 ]]; then
  exec "$exe" -seconds="$seconds" -artifact_prefix="$findings/$target-" "$@" "${inputs[@]}"
fi
corpus=$build/tests/fuzz/corpus/$target
mkdir -p "$corpus"
# Leaks are not looked for after each input (-detect_leaks=0): most inputs end with more allocated than freed
# (libraries' caches), so LeakSanitizer ran after each and cost 100 ms; the sanitize suite checks leaks at exit.
# libFuzzer's own exit code for a finding is 77, which a caller could take for a skip: 1 instead.
exec "$exe" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -detect_leaks=0 -error_exitcode=1 \
  -print_final_stats=1 -artifact_prefix="$findings/$target-" "$@" "$corpus" "${inputs[@]}"
