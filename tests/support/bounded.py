"""Runs a command and says whether it stayed within a memory and time bound (tests/cli/*_hostile_*.sh): a reader's
work must follow its input's size, so a small hostile file is refused (or read) well within bounds far above what
the reader needs on a loaded 2-core machine and far below what a reader doing work out of proportion reached.

    bounded.py MAX_MIB MAX_SECONDS COMMAND...

Prints "exit N, within MAX_MIB MiB and MAX_SECONDS s", or what was over (peak resident memory and CPU seconds, user
and system, from the kernel's accounting of the child); the command's own stdout and stderr pass through. CPU time,
not wall time: on a loaded machine a bounded reader waits for a core (a cold-cache run of the suite beside eight
builds, load 17-30, took one case to 22.2 s of wall time under the sanitizers). A command still running after five
times MAX_SECONDS of wall time is killed (so a quadratic reader fails the test, not the suite's timeout), and it runs under an
address-space limit of 4 GiB, so a reader that believes a hostile file's counts fails (its stderr then says so:
the case's .stderr pins the one line it must print) without taking the shared machine's memory first.

With WAVG_BOUNDS_LOG=FILE in the environment, appends "PEAK_KIB SECONDS COMMAND ARGS" to FILE: the figures of each
reader's bound (issue 39's closing note), e.g. WAVG_BOUNDS_LOG=/tmp/b ctest -R hostile."""
import os
import resource
import subprocess
import sys

k_address_space = 4 << 30


# Under the sanitize leg (its ctest sets LSAN_OPTIONS) AddressSanitizer reserves terabytes of shadow address space
# at start, so no address-space limit can hold, and its shadow memory and 256 MiB quarantine of freed blocks raise
# the resident peak: measured up to 2.8x the release build's on these cases (a 1,000,000-deep TF.js topology, 723
# MiB), so the memory bound is four times the release one there; a reader doing work its input does not justify
# still goes far past it. Its checks also make every run slower (2-3x on these cases), so the time bound is four
# times the release one there too.
k_sanitized = "LSAN_OPTIONS" in os.environ or "ASAN_OPTIONS" in os.environ


def limit():
    if not k_sanitized:
        resource.setrlimit(resource.RLIMIT_AS, (k_address_space, k_address_space))


max_mib, max_s, command = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
factor = 4 if k_sanitized else 1
limit_mib, limit_s = max_mib * factor, max_s * factor  # what the run is held to; the line names the bounds given
try:
    code = subprocess.run(command, timeout=5 * limit_s, preexec_fn=limit).returncode
except subprocess.TimeoutExpired:
    code = "killed"
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
elapsed = usage.ru_utime + usage.ru_stime
peak_mib = usage.ru_maxrss / 1024  # KiB on Linux
if os.environ.get("WAVG_BOUNDS_LOG"):
    with open(os.environ["WAVG_BOUNDS_LOG"], "a") as log:
        log.write(f"{peak_mib * 1024:.0f} {elapsed:.3f} {' '.join([os.path.basename(command[0])] + command[1:])}\n")
over = []
if peak_mib > limit_mib:
    over.append(f"{peak_mib:.0f} MiB")
if code == "killed" or elapsed > limit_s:
    over.append(f"{elapsed:.1f} CPU s" if code != "killed" else f"still running after {5 * limit_s:g} s")
print(f"exit {code}, " + (f"within {max_mib:g} MiB and {max_s:g} s" if not over else "over: " + ", ".join(over)))
