# A seeded, bounded mutation run over every reader: small valid files of each format (HDF5, safetensors, wavg
# JSON, TF.js, PyTorch zip and legacy, a Hugging Face folder, TensorFlow, MXNet, Caffe, .keras) are changed a few
# bytes at a time (bits flipped, bytes set to 0/0xff/0x7f/0x80, runs of them, truncated, cut, grown, a part
# repeated; near the start and the end of the file more often, where headers and footers are) and converted.
# Each mutant must end with exit 0 (a harmless change: then the output is there and nothing else) or exit 1 with
# exactly one line `wavg: error: ...` and nothing at all in the output folder; no crash, no hang (a timeout), no
# other exit code. The seed is fixed, so a failure names a mutant that can be made again (MUTATION_SEED,
# MUTATION_COUNT override; the sanitizer leg runs fewer).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
r = np.random.default_rng(1)
write_safetensors("seed.safetensors", {"conv1/0": r.standard_normal((4, 3)).astype(np.float32),
                                       "conv1/1": r.standard_normal(4).astype(np.float32),
                                       "ip1/0": r.standard_normal((2, 4)).astype(np.float32)})
PY
mkdir seeds
cp seed.safetensors seeds/
cp "$SAMPLES/mlp/node1.h5" seeds/seed.h5
cp "$SAMPLES/keras3/einsum_a.keras" seeds/seed.keras
"$WAVG" convert -q seed.safetensors -o seeds/seed.json
"$WAVG" convert -q seed.safetensors -o seeds/seed.pt
"$WAVG" convert -q seed.safetensors -o seeds/seed.params
"$WAVG" convert -q seed.safetensors -o seeds/seed.caffemodel
mkdir seeds/tfjs seeds/tf
"$WAVG" convert -q seed.safetensors -o seeds/tfjs/model.json --format tfjs
"$WAVG" convert -q seed.safetensors -o seeds/tf/seed.ckpt --format tensorflow
"$WAVG" convert -q seed.safetensors -o seeds/hf/ --shard-size 60B
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 -c '
import torch
torch.manual_seed(0)
torch.save({"a": torch.randn(3, 2), "b": torch.arange(4)}, "seeds/legacy.pt", _use_new_zipfile_serialization=False)'
fi
asan=0
ldd "$WAVG" 2>/dev/null | grep -q libasan && asan=1
WAVG_ASAN=$asan /usr/bin/python3 - <<'PY'
import concurrent.futures, os, random, shutil, subprocess, sys, time
wavg = os.environ["WAVG"]
seed = int(os.environ.get("MUTATION_SEED", "26"))
count = int(os.environ.get("MUTATION_COUNT", "25" if os.environ["WAVG_ASAN"] == "1" else "100"))
# name -> (files or folder under seeds/, what to give wavg)
seeds = {"hdf5": ("seed.h5", "seed.h5"), "safetensors": ("seed.safetensors", "seed.safetensors"),
         "json": ("seed.json", "seed.json"), "pytorch-zip": ("seed.pt", "seed.pt"),
         "mxnet": ("seed.params", "seed.params"), "caffe": ("seed.caffemodel", "seed.caffemodel"),
         "keras": ("seed.keras", "seed.keras"), "tfjs": ("tfjs", "tfjs/model.json"),
         "tensorflow": ("tf", "tf/seed.ckpt"), "hf": ("hf", "hf")}
if os.path.exists("seeds/legacy.pt"):
    seeds["pytorch-legacy"] = ("legacy.pt", "legacy.pt")
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff" * 4, b"\x7f\xff\xff\xff", b"\x00" * 4, b"\xff" * 8,
               b"\x00\x00\x00\x80", b"\xff\xff\xff\x7f"]

def position(rng, n):
    """Near the start or the end (headers, footers, zip directories) half the time."""
    if n == 0:
        return 0
    pick = rng.random()
    if pick < 0.3:
        return rng.randrange(min(n, 256))
    if pick < 0.5:
        return max(0, n - 1 - rng.randrange(min(n, 128)))
    return rng.randrange(n)

def mutate(rng, data):
    b = bytearray(data)
    n = len(b)
    op = rng.randrange(7)
    at = position(rng, n)
    if op == 0 and n:
        b[min(at, n - 1)] ^= 1 << rng.randrange(8)
    elif op == 1 and n:
        v = rng.choice(INTERESTING)
        b[at:at + len(v)] = v
    elif op == 2:
        del b[at:]
    elif op == 3:
        del b[at:at + rng.randrange(1, 64)]
    elif op == 4:
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    elif op == 5 and n:
        k = rng.randrange(1, 64)
        b[at:at] = b[at:at + k]
    else:
        for _ in range(rng.randrange(2, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)

def one(name, source, arg, i):
    """Makes mutant i of `name` in its own folders and checks what wavg does with it; returns (exit, problems)."""
    rng = random.Random(f"{seed}-{name}-{i}")
    m, o = f"m{name}-{i}", f"o{name}-{i}"
    os.makedirs(m)
    os.makedirs(o)
    src = os.path.join("seeds", source)
    if os.path.isdir(src):
        shutil.copytree(src, os.path.join(m, source))
        files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(m, source)) for f in fs)
    else:
        shutil.copy(src, os.path.join(m, source))
        files = [os.path.join(m, source)]
    target = rng.choice(files)
    data = open(target, "rb").read()
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        data = mutate(rng, data)
    open(target, "wb").write(data)
    what = f"{name} mutant {i} (seed {seed}, {os.path.relpath(target, m)})"
    try:
        p = subprocess.run([wavg, "convert", "-q", os.path.join(m, arg), "-o", f"{o}/out.safetensors"],
                           capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, [f"{what}: no answer in 60 s"]
    err = p.stderr.decode("utf-8", "replace")
    left = sorted(os.listdir(o))
    problems = []
    if p.returncode == 0:
        if left != ["out.safetensors"] or err:
            problems.append(f"{what}: exit 0 but left {left}, stderr {err!r}")
    elif p.returncode == 1:
        lines = err.split("\n")
        if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("wavg: error: "):
            problems.append(f"{what}: exit 1 with stderr {err!r}")
        if left:
            problems.append(f"{what}: exit 1 but left {left}")
    else:
        problems.append(f"{what}: exit {p.returncode}, stderr {err[-300:]!r}")
    if not problems:
        shutil.rmtree(m)
        shutil.rmtree(o)
    return p.returncode, problems

failures, runs, start = [], 0, time.time()
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for name, (source, arg) in sorted(seeds.items()):
        jobs = [pool.submit(one, name, source, arg, i) for i in range(count)]
        outcomes = {}
        for job in jobs:
            code, problems = job.result()
            runs += 1
            outcomes[code] = outcomes.get(code, 0) + 1
            failures += problems
        print(f"{name}: {count} mutants, exit codes {dict(sorted(outcomes.items(), key=str))}", file=sys.stderr)
print(f"{runs} runs in {time.time() - start:.1f} s", file=sys.stderr)
for f in failures[:40]:
    print(f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
PY
