#!/usr/bin/env python3
"""Measures how fast wavg parses wavg JSON, in MB of JSON text per second.

Makes a float32 checkpoint of --values random normal values with numpy (as safetensors), has wavg convert it to
wavg JSON (one shortest decimal per value, the text form), then times `wavg inspect` on the JSON, which parses the
whole document and decodes every value. Reports the best of --repeat runs, and the same for the base64 encoding.

    /usr/bin/python3 tests/bench/json_parse.py --wavg build/wavg [--values 16000000] [--dir /tmp/x]
"""
import argparse, json, os, struct, subprocess, sys, tempfile, time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", default="build/wavg")
    ap.add_argument("--values", type=int, default=16_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        st = os.path.join(d, "in.safetensors")
        x = np.random.default_rng(1).standard_normal(a.values).astype(np.float32)
        h = json.dumps({"w": {"dtype": "F32", "shape": [a.values], "data_offsets": [0, x.nbytes]}}).encode()
        with open(st, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + x.tobytes())
        print(f"| encoding | JSON size (MB) | parse time (s) | MB/s |")
        print(f"|---|---|---|---|")
        for fmt in ("json", "json-base64"):
            js = os.path.join(d, fmt + ".json")
            subprocess.run([a.wavg, "convert", "-q", st, "-o", js, "--format", fmt], check=True)
            size = os.path.getsize(js)
            best = float("inf")
            for _ in range(a.repeat):
                t = time.perf_counter()
                subprocess.run([a.wavg, "inspect", js], check=True, stdout=subprocess.DEVNULL)
                best = min(best, time.perf_counter() - t)
            print(f"| {fmt} | {size / 1e6:.1f} | {best:.3f} | {size / 1e6 / best:.0f} |")
            os.remove(js)
    return 0


if __name__ == "__main__":
    sys.exit(main())
