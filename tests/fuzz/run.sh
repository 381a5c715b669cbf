#!/usr/bin/env bash
# Runs one fuzz target (tests/fuzz/README.md) for SECONDS over its corpus: the regression inputs in
# tests/fuzz/regressions/TARGET/, its seeds from samples/ (seeds.py, collected once into the fuzz build) and what
# earlier runs found (build-fuzz/tests/fuzz/corpus/TARGET/, grown by this run). A crashing input is saved under
# tests/fuzz/findings/ (not committed) and the script exits non-zero with libFuzzer's report.
#
#   tests/fuzz/run.sh [--brief] TARGET SECONDS [libFuzzer options...]
#
# --brief (the suite's fuzz.TARGET tests): the corpus grows in a temporary folder, so every run starts from the same
# inputs, and a crashing input lands in the build folder. Exits 77 (skipped) when the fuzz build has no such target.
# Environment: WAVG_FUZZ_BUILD (default: build-fuzz/ of this checkout), WAVG (a release wavg that converts samples
# into seeds for formats samples/ has no file of; default: build/wavg when there is one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
brief=0
if [[ ${1:-} == --brief ]]; then brief=1; shift; fi
if [[ $# -lt 2 ]]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
build=${WAVG_FUZZ_BUILD:-$root/build-fuzz}
exe=$build/tests/fuzz/fuzz_$target
if [[ ! -x $exe ]]; then
  echo "fuzz_$target is not built: cmake --preset fuzz && cmake --build --preset fuzz (needs clang)" >&2
  exit 77
fi
wavg=${WAVG:-$root/build/wavg}
seeds=$build/tests/fuzz/seeds/$target
if [[ ! -d $seeds ]]; then
  converter=()
  if [[ -x $wavg ]]; then converter=(--wavg "$wavg"); fi
  python3 "$here/seeds.py" "$target" "$seeds" "${converter[@]}"
fi
inputs=("$seeds")
if [[ -d $here/regressions/$target ]]; then inputs+=("$here/regressions/$target"); fi
if [[ $brief == 1 ]]; then
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
  findings=$build/tests/fuzz/findings
else
  corpus=$build/tests/fuzz/corpus/$target
  findings=$here/findings
fi
mkdir -p "$corpus" "$findings"
# HDF5 and Open MPI keep allocations until exit (tests/lsan.supp); the probe's children are this executable too.
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}
exec "$exe" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$findings/$target-" "$@" "$corpus" "${inputs[@]}"
