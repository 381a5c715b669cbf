#!/usr/bin/env python3
"""Collects the seed corpus of fuzz targets from samples/ and real checkpoints (tests/fuzz/README.md).

    seeds.py [--wavg PATH] [--shared DIR] OUTDIR TARGET...

writes the seeds of each TARGET into OUTDIR/TARGET/.

Each seed is a sample as the target reads it: a file as it is, or a folder (a TF.js model, a DCP or DeepSpeed
checkpoint, a TensorFlow prefix) packed into one input the way fuzz_input.hpp unpacks it: the main file's bytes,
then "\\n--wavg-fuzz-file:NAME\\n" and the bytes of each other file. Formats samples/ holds no file of (safetensors,
Caffe, MXNet, wavg JSON) are seeded with samples converted by the wavg given (--wavg), when one is. Files real
frameworks wrote (SHARED/real-checkpoints, default ../shared beside the checkout; PROVENANCE.md there) seed the
readers of their formats when that folder is present: they are read where they lie, never copied into the source
tree (several carry no license). OUTDIR is a build folder, written whole and then renamed into place.
"""

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SAMPLES = os.path.join(ROOT, "samples")
SEPARATOR = b"\n--wavg-fuzz-file:"
# A seed larger than this is left out: libFuzzer's inputs grow to the largest seed, and a mutation of a large file
# mostly lands in tensor values, which no reader interprets.
MAX_SEED_BYTES = 512 << 10


def found(root, *patterns):
    """The files under `root` matching `patterns`, sorted; none when `root` is absent."""
    return sorted(f for p in patterns for f in glob.glob(os.path.join(root, p), recursive=True))


def samples(*patterns):
    return found(SAMPLES, *patterns)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def pack(main, others):
    """One input: `main`'s bytes, then each (name, path) of `others`."""
    out = read(main)
    for name, path in others:
        out += SEPARATOR + name.encode() + b"\n" + read(path)
    return out


def pack_folder(folder, main_name):
    """A folder as one input: `main_name` first, every other file under it named by its relative path."""
    others = []
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), folder)
            if rel != main_name:
                others.append((rel, os.path.join(root, f)))
    return pack(os.path.join(folder, main_name), sorted(others))


def pack_tensorflow(index):
    """A TensorFlow checkpoint as one input: PREFIX.index as ckpt.index, its data shards renamed to match."""
    prefix = index[: -len(".index")]
    shards = sorted(glob.glob(glob.escape(prefix) + ".data-*"))
    return pack(index, [("ckpt" + s[len(prefix):], s) for s in shards])


def keras_weights(archives):
    """The model.weights.h5 inside each .keras archive: HDF5 files of Keras 3's layout."""
    out = []
    for path in archives:
        with zipfile.ZipFile(path) as z:
            if "model.weights.h5" in z.namelist():
                out.append((os.path.basename(path) + ".weights.h5", z.read("model.weights.h5")))
    return out


def safetensors_layers():
    """A two-layer model in safetensors, its tensors named LAYER/INDEX as Caffe's blobs are (conv1/0), written here:
    what the Caffe and MXNet seeds are converted from."""
    import json
    import struct

    tensors = {"ip1/0": ("F32", [3, 4]), "ip1/1": ("F32", [3]), "ip2/0": ("F64", [2, 3]), "ip2/1": ("F64", [2])}
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, (dtype, shape) in tensors.items():
        count = 1
        for d in shape:
            count *= d
        values = struct.pack("<%d%s" % (count, "f" if dtype == "F32" else "d"), *[i / 8 - 0.5 for i in range(count)])
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(values)]}
        data += values
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@functools.lru_cache(maxsize=None)
def converted(wavg, extension, fmt=None):
    """Samples converted by `wavg` into another format, as (name, bytes); none without a wavg."""
    if not wavg:
        return ()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        layers = os.path.join(tmp, "layers.safetensors")
        with open(layers, "wb") as f:
            f.write(safetensors_layers())
        for src in samples("mlp/node1.h5", "dtypes/a.h5", "jax/dtypes_a.msgpack", "torch_uint/a.pt") + [layers]:
            # Without the optimizer's state too: Caffe and MXNet hold no integer counter.
            for suffix, leave_out in (("", []), (".weights", ["--exclude", "optimizer_weights/*"])):
                dst = os.path.join(tmp, os.path.basename(src) + suffix + extension)
                cmd = [wavg, "convert", src, "-o", dst, "-q"] + (["--format", fmt] if fmt else []) + leave_out
                if subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                    out.append((os.path.basename(dst), read(dst)))
    return tuple(out)


def legacy_pickle():
    """A state dict in torch.save's legacy format (a pickle, no zip), which samples/ has none of; none without torch."""
    try:
        import io

        import torch
    except ImportError:
        return []
    out = io.BytesIO()
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    torch.save({"w": w, "b": torch.ones(3, dtype=torch.float16), "view": w[1]}, out,
               _use_new_zipfile_serialization=False)
    return [("legacy.pt", out.getvalue())]


def files(paths, root=SAMPLES):
    """Each file as it is, named by its path under `root`; one larger than MAX_SEED_BYTES is left out."""
    return [(os.path.relpath(p, root).replace("/", "_"), read(p)) for p in paths
            if os.path.getsize(p) <= MAX_SEED_BYTES]


def folders(main_files):
    """The folder of each main file, packed with it first, named by the folder."""
    return [(os.path.relpath(os.path.dirname(m), SAMPLES).replace("/", "_"),
             pack_folder(os.path.dirname(m), os.path.basename(m))) for m in main_files]


class Real:
    """The files real frameworks wrote, under SHARED/real-checkpoints (none when that folder is absent)."""

    def __init__(self, shared):
        self.root = os.path.join(shared, "real-checkpoints")

    def files(self, *patterns):
        """The files matching `patterns`, one of each size in a folder: a folder's files of one size are one
        model's checkpoints at several steps (PROVENANCE.md's groups), the same structure with other values."""
        seen, out = set(), []
        for path in found(self.root, *patterns):
            key = (os.path.dirname(path), os.path.getsize(path))
            if key not in seen:
                seen.add(key)
                out.append(path)
        return files(out, self.root)

    def h5(self):
        return self.files("*/*.h5", "*/*.hdf5")

    def keras(self):
        return found(self.root, "*/*.keras")

    def tensorflow(self):
        return [(os.path.relpath(i, self.root).replace("/", "_"), pack_tensorflow(i))
                for i in found(self.root, "*/*.index")]


def seeds(target, wavg, real):
    """The seeds of `target`, as (name, bytes)."""
    h5 = files(samples("**/*.h5")) + real.h5()
    archives = samples("keras3/*.keras", "roles/*.keras") + real.keras()
    if target in ("hdf5_native", "hdf5_diff"):
        return h5 + keras_weights(archives)
    if target == "keras":
        return files(samples("keras3/*.keras", "roles/*.keras")) + real.files("*/*.keras") + h5 + keras_weights(archives)
    if target == "pytorch":
        # The real files hold legacy pickles (two_layer_model.pt, legacy_*.pt): torch writes one only without them.
        real_pt = real.files("*/*.pt", "*/*.pth")
        return (files(samples("torch_uint/*.pt", "deepspeed/aligned/**/*.pt")) + real_pt
                + list(converted(wavg, ".pt")) + (legacy_pickle() if not real_pt else []))
    if target == "tf_index":
        return [(os.path.relpath(i, SAMPLES).replace("/", "_"), pack_tensorflow(i))
                for i in samples("tensorflow/*/*.index", "roles/*/*.index")] + real.tensorflow()
    if target == "dcp":
        return folders(samples("dcp/**/.metadata"))
    if target == "deepspeed":
        return folders(samples("deepspeed/**/latest"))
    if target == "tfjs":
        return folders(samples("tfjs/*/model.json"))
    if target == "flax":
        return files(samples("jax/*.msgpack"))
    if target == "npz":
        return files(samples("**/*.npz"))
    if target == "orbax":
        # The checkpoints orbax-checkpoint wrote for the suite (tests/orbax), each folder packed behind _METADATA.
        steps = found(os.path.join(ROOT, "tests", "orbax"), "*/_METADATA")
        return [(os.path.basename(os.path.dirname(m)), pack_folder(os.path.dirname(m), "_METADATA")) for m in steps]
    if target == "recipe":
        return files(samples("recipes/*.yml"))
    if target == "safetensors":
        return ([("layers.safetensors", safetensors_layers())] + real.files("*/*.safetensors")
                + list(converted(wavg, ".safetensors")))
    if target == "caffe":
        return real.files("*/*.caffemodel") + list(converted(wavg, ".caffemodel"))
    if target == "mxnet":
        return real.files("*/*.params") + list(converted(wavg, ".params"))
    if target == "onnx":
        return files(samples("onnx/*.onnx")) + folders(samples("onnx/ext/model.onnx"))
    if target == "gguf":
        return files(samples("gguf/*.gguf")) + list(converted(wavg, ".gguf"))
    if target == "json":
        return list(converted(wavg, ".json")) + list(converted(wavg, ".b64.json", "json-base64"))
    sys.exit(f"seeds.py: no fuzz target {target}")


def write(outdir, named):
    """Writes `named` (name, bytes) into `outdir`, whole, then renamed into place."""
    parent = os.path.dirname(os.path.abspath(outdir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".seeds-")
    for name, data in named:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    shutil.rmtree(outdir, ignore_errors=True)
    os.rename(tmp, outdir)


def main():
    args = sys.argv[1:]
    options = {"--wavg": None, "--shared": os.path.join(ROOT, "..", "shared")}
    for option in options:
        if option in args:
            at = args.index(option)
            options[option] = args[at + 1]
            del args[at : at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    outdir, targets = args[0], args[1:]
    real = Real(options["--shared"])
    for target in targets:
        named = seeds(target, options["--wavg"], real)
        write(os.path.join(outdir, target), named)
        print(f"{target}: {len(named)} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
