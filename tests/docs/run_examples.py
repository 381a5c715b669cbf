#!/usr/bin/env python3
"""Run every example of README.md and the man pages, and compare what they print.

An example is a transcript inside a literal block (``` in Markdown and in scdoc): a line starting with "$ " is
a command, lines starting with "> " continue it, and the lines after it, up to the next command or the end of
the block, are what it prints (stdout and stderr together). A line "..." in that output stands for any number
of lines. A command's exit status must be 0 unless the next command is "echo $?", which then prints it.

Each page's examples run in order, in one scratch folder holding a copy of samples/ (so every example is
written to run from the repository root), each command in a subshell of one bash, with wavg on PATH.

A command that cannot run here says so in the docs with a trailing comment "# needs: WHAT" (a host, a URL, a
GPU): it is skipped, and printed as skipped, never silently. A command using mpirun, in a wavg built without MPI or
on a machine without mpirun, is skipped with the rest of its block, also by name.

Blocks with no "$ " line are listings (a file's contents, a message), not commands; the script counts them.
Also checked: no man page source has an example outside a literal block (a tab-indented "wavg ..." line, which
man would fill into the paragraph around it).

Usage: run_examples.py --wavg BUILD/wavg --source DIR [FILE...]   (default: README.md and man/*.scd)
Exit 0 when every example ran as documented, 1 otherwise.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^\s*```")
NEEDS = re.compile(r"#\s*needs:\s*(.+?)\s*$")


class Command:
    def __init__(self, page, line, text):
        self.page, self.line, self.text = page, line, text
        self.expected = []

    def where(self):
        return f"{self.page}:{self.line}"


def scd_unescape(text):
    # scdoc literal blocks print their text as written, but a backslash still escapes the next character.
    return re.sub(r"\\(.)", r"\1", text)


def blocks(path):
    """Yields (first line number, [(line number, text)]) for each literal block."""
    lines = path.read_text(encoding="utf-8").split("\n")
    inside, start, body = False, 0, []
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            if inside:
                yield start, body
                inside, body = False, []
            else:
                inside, start = True, number
            continue
        if inside:
            if path.suffix == ".scd":
                line = scd_unescape(line)
            body.append((number, line))
    if inside:
        raise SystemExit(f"{path}:{start}: literal block not closed")


def commands(path, name):
    """Returns the transcript blocks of a page as lists of Commands, and the count of listings."""
    result, listings = [], 0
    for start, body in blocks(path):
        # Markdown renders a literal block inside a list item indented; take the block's indentation off.
        indent = min((len(t) - len(t.lstrip()) for _, t in body if t.strip()), default=0)
        body = [(n, t[indent:]) for n, t in body]
        if not any(t.startswith("$ ") for _, t in body):
            listings += 1
            continue
        block, current = [], None
        for number, text in body:
            if text.startswith("$ "):
                current = Command(name, number, text[2:])
                block.append(current)
            elif text.startswith("> ") and current is not None and not current.expected:
                current.text += "\n" + text[2:]
            elif current is None:
                raise SystemExit(f"{name}:{number}: output before the first command of the block")
            else:
                current.expected.append(text.rstrip())
        for c in block:
            while c.expected and not c.expected[-1]:
                c.expected.pop()
        result.append(block)
    return result, listings


def matches(expected, actual):
    """Line by line; an expected line "..." matches any number of actual lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def unfilled_examples(path, name):
    """A man page example outside a literal block: man fills it into the paragraph."""
    bad, inside = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if FENCE.match(line):
            inside = not inside
        elif not inside and re.match(r"^\t+(\$ )?((wavg|mpirun|python3?|ssh) |for \w+ in )", line):
            bad.append(f"{name}:{number}: an example outside a literal block (``` ... ```): {line.strip()}")
    return bad


def missing_options(wavg, env):
    """["mpirun"] when this wavg was built without MPI or mpirun is not on PATH (a build with -DWAVG_MPI=OFF runs
    every other example), else []."""
    version = subprocess.run([wavg, "--version"], capture_output=True, text=True, env=env).stdout
    if not re.search(r"^mpi: yes", version, re.M) or not shutil.which("mpirun"):
        return ["mpirun"]
    return []


def run_page(page_blocks, source, wavg_dir, missing, report):
    """Runs one page's commands in one scratch copy of samples/; returns the count of failures."""
    runnable = []
    for block in page_blocks:
        skip_rest = None
        for c in block:
            need = NEEDS.search(c.text.split("\n")[-1])
            option = next((o for o in missing if re.search(r"(^|\s)" + re.escape(o) + r"\b", c.text)), None)
            if skip_rest:
                report.append(f"skipped {c.where()} (it needs the file of {skip_rest}): {c.text.splitlines()[0]}")
            elif need:
                report.append(f"skipped {c.where()} (needs: {need.group(1)}): {c.text.splitlines()[0]}")
            elif option:
                skip_rest = c.where()
                report.append(f"skipped {c.where()} (no {option} in this wavg or on this machine; nor the rest of its block): "
                              f"{c.text.splitlines()[0]}")
            else:
                runnable.append(c)
    if not runnable:
        return 0
    failures = 0
    with tempfile.TemporaryDirectory(prefix="wavg-docs-") as scratch:
        shutil.copytree(source / "samples", Path(scratch) / "samples", symlinks=True)
        script = ["s=0"]
        for i, c in enumerate(runnable):
            # The previous command's status is $? for this one (so "echo $?" works); each runs in a subshell,
            # so an example's `set -e`, `exit` or `cd` ends or moves only itself. Under mpirun in a sanitized
            # build, LeakSanitizer is off, as in the CLI tests that run mpirun: Open MPI unloads the plugins it
            # dlopen'ed, so what they keep until exit is reported as leaks of no module, and every rank exits 23.
            # Leak checks stay on for every other example.
            quiet = 'export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; ' \
                if re.search(r"(^|\s)mpirun\s", c.text) else ""
            script.append(f"( (exit $s); {quiet}{c.text}\n) </dev/null >.out{i} 2>&1; s=$?; echo $s >.status{i}")
        # python3 in an example is the interpreter running this script (Debian's, with numpy and h5py).
        path = f"{wavg_dir}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
        # HOME is the scratch folder too, so an example that writes under ~ (a completion script) stays there.
        env = dict(os.environ, PATH=path, HOME=scratch, LC_ALL="C.UTF-8",
                   COLUMNS="80", TERM="dumb")
        env.pop("WAVG_COLOR", None)
        subprocess.run(["bash", "-c", "\n".join(script)], cwd=scratch, env=env, timeout=1500)
        for i, c in enumerate(runnable):
            out_path, status_path = Path(scratch, f".out{i}"), Path(scratch, f".status{i}")
            if not status_path.exists():
                report.append(f"FAIL {c.where()}: did not run: {c.text}")
                failures += 1
                continue
            status = int(status_path.read_text())
            actual = out_path.read_text(errors="replace").rstrip("\n").split("\n")
            actual = [line.rstrip() for line in actual] if actual != [""] else []
            next_is_echo = i + 1 < len(runnable) and runnable[i + 1].text.strip() == "echo $?" \
                and runnable[i + 1].page == c.page
            problems = []
            if status != 0 and not next_is_echo:
                problems.append(f"exit status {status}")
            if c.expected and not matches(c.expected, actual):
                problems.append("printed something else")
            if problems:
                failures += 1
                report.append(f"FAIL {c.where()}: {', '.join(problems)}: $ {c.text}\n"
                              + "  expected:\n" + "".join(f"    {l}\n" for l in c.expected)
                              + "  printed:\n" + "".join(f"    {l}\n" for l in actual))
            else:
                report.append(f"ok   {c.where()}: {c.text.splitlines()[0]}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wavg", required=True, help="the wavg binary to put on PATH")
    ap.add_argument("--source", required=True, help="the repository root")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command, not only failures")
    ap.add_argument("files", nargs="*", help="pages to run (default: README.md and man/*.scd)")
    args = ap.parse_args()
    source = Path(args.source).resolve()
    wavg = Path(args.wavg).resolve()
    files = [Path(f) for f in args.files] or [source / "README.md"] + sorted((source / "man").glob("*.scd"))
    env = dict(os.environ)
    missing = missing_options(str(wavg), env)
    failures, total, skipped, listings = 0, 0, 0, 0
    for path in files:
        path = path if path.is_absolute() else source / path
        name = str(path.relative_to(source))
        bad = unfilled_examples(path, name) if path.suffix == ".scd" else []
        for line in bad:
            print(f"FAIL {line}")
        failures += len(bad)
        page_blocks, page_listings = commands(path, name)
        listings += page_listings
        report = []
        failures += run_page(page_blocks, source, str(wavg.parent), missing, report)
        for line in report:
            if line.startswith("skipped"):
                skipped += 1
            else:
                total += 1
            if args.verbose or not line.startswith("ok"):
                print(line)
    print(f"{total} examples run, {failures} failed, {skipped} skipped (named above), "
          f"{listings} listings without commands, in {len(files)} pages")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
