# Progress: with stderr on a terminal (a pseudo-terminal from python3's pty module, as script(1) gives), merge and
# convert draw one line ("\r" + text + erase to the end of the line) and erase it before the result line; with -q
# nothing at all reaches the terminal; with stderr on a pipe, no progress and no control codes reach it.
/usr/bin/python3 - "$WAVG" "$SAMPLES" <<'PY'
import os, pty, re, subprocess, sys
wavg, samples = sys.argv[1:]
inputs = [f"{samples}/mlp/node{i}.h5" for i in (1, 2, 3)]

def on_terminal(args):
    master, slave = pty.openpty()
    p = subprocess.Popen([wavg] + args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child's side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode()

line = r"\rwavg: (merge|convert) \d+% of [\d.]+ [kMGT]?B(, [\d.]+ [kMGT]?B/s, \d+ s left)?\x1b\[K"
def shown(text):  # each redraw as <progress>, several in a row as one
    return re.sub("(<progress>)+", "<progress>", re.sub(line, "<progress>", text)).replace(samples, "/SAMPLES")

code, text = on_terminal(["merge"] + inputs + ["-o", "avg.h5"])
print(code, repr(shown(text)))
code, text = on_terminal(["convert", inputs[0], "-o", "one.safetensors"])
print(code, repr(shown(text)))
code, text = on_terminal(["merge", "-q", "--force"] + inputs + ["-o", "avg.h5"])
print(code, repr(text))
p = subprocess.run([wavg, "merge", "--force"] + inputs + ["-o", "avg.h5"], capture_output=True)
print(p.returncode, repr(p.stdout.decode()), repr(p.stderr.decode()))
PY
