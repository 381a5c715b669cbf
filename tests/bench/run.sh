#!/usr/bin/env bash
# Runs the benchmark: tests/bench/run.sh [--quick] [--dir DIR] ... (see bench.py --help).
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$@"
