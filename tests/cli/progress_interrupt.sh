# Ctrl-C (SIGINT) during a merge whose progress line stands on the terminal (a pseudo-terminal from python3's pty
# module) erases the line before the process dies of the signal: the last bytes on the terminal are "\r" and
# "erase to the end of the line", so the shell's prompt starts on a clean line. The inputs (two safetensors files
# of 64 MB written by numpy, merged on one thread) are sized so that the merge is still running when the first
# progress line appears; a run that ends first is retried with inputs twice as large.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import json, os, pty, select, signal, struct, subprocess, sys, time
import numpy as np
wavg = sys.argv[1]

def write(path, n):
    a = np.ones(n, np.float32)
    h = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, a.nbytes]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.write(a.tobytes())

def read_all(master, out, until=None, deadline=60):
    end = time.time() + deadline
    while time.time() < end:
        if until is not None and until in out:
            return out, True
        r, _, _ = select.select([master], [], [], 0.05)
        if not r:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child's side is closed
            return out, False
        if not chunk:
            return out, False
        out += chunk
    return out, False

n = 16 << 20
for attempt in range(3):
    write("a.safetensors", n)
    write("b.safetensors", n)
    master, slave = pty.openpty()
    p = subprocess.Popen([wavg, "merge", "--threads", "1", "--force", "a.safetensors", "b.safetensors",
                          "-o", "avg.safetensors"], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out, seen = read_all(master, b"", until=b"% of ")
    if seen:
        p.send_signal(signal.SIGINT)
    out, _ = read_all(master, out)
    os.close(master)
    code = p.wait()
    if seen and code == -signal.SIGINT:
        tail = out[out.rfind(b"% of "):]
        print("ends with the erase:", out.endswith(b"\r\x1b[K"), "| after the last progress text:",
              repr(tail[tail.find(b"\x1b[K") + 3:]))
        print("died of SIGINT:", code == -signal.SIGINT, "| output left:", os.path.exists("avg.safetensors"))
        break
    n *= 2
else:
    print("the merge always ended before it could be interrupted")
PY
