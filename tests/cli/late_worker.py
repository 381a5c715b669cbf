#!/usr/bin/env python3
"""A stand-in trainer for --round-timeout tests, on wavg JSON (json module only, so it starts fast): copies INIT to
OUT with every float value plus (rank + 1). Worker 2 of round 1 is late on purpose: it waits for the file `go`,
which worker 0 of round 2 creates, and then worker 0 waits for `late-done` (written by worker 2's command once it
finished) and 0.3 s more, so worker 2 comes back while round 2 is open."""
import json
import os
import sys
import time

init, out, rank, round_ = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def wait_for(path):
    for _ in range(3000):  # at most 30 s: a test that hangs is worse than one that fails
        if os.path.exists(path):
            return
        time.sleep(0.01)
    sys.exit("late_worker.py: gave up waiting for " + path)


if rank == 2 and round_ == 1:
    open("late.pid", "w").write(str(os.getpid()))
    wait_for("go")
if rank == 0 and round_ == 2:
    open("go", "w").close()
    wait_for("late-done")
    time.sleep(0.3)
doc = json.load(open(init))
for t in doc["tensors"]:
    if t["dtype"].startswith("float"):
        t["data"] = [v + rank + 1 for v in t["data"]]
json.dump(doc, open(out, "w"))
