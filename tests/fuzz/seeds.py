#!/usr/bin/env python3
"""Collects the seed corpus of one fuzz target from samples/ (tests/fuzz/README.md).

    seeds.py TARGET OUTDIR [--wavg PATH]

Each seed is a sample as the target reads it: a file as it is, or a folder (a TF.js model, a DCP or DeepSpeed
checkpoint, a TensorFlow prefix) packed into one input the way fuzz_input.hpp unpacks it: the main file's bytes,
then "\\n--wavg-fuzz-file:NAME\\n" and the bytes of each other file. Formats samples/ holds no file of (safetensors,
Caffe, MXNet, wavg JSON) are seeded with samples converted by the wavg given (--wavg), when one is. Nothing is
copied into the source tree: OUTDIR is a build folder, written whole and then renamed into place.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")
SEPARATOR = b"\n--wavg-fuzz-file:"


def samples(*patterns):
    return sorted(f for p in patterns for f in glob.glob(os.path.join(SAMPLES, p), recursive=True))


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


def keras_weights():
    """The model.weights.h5 inside each .keras archive: HDF5 files of Keras 3's layout."""
    out = []
    for path in samples("keras3/*.keras", "roles/*.keras"):
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


def converted(wavg, extension, fmt=None):
    """Samples converted by `wavg` into another format, as (name, bytes); none without a wavg."""
    if not wavg:
        return []
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
    return out


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


def files(paths):
    return [(os.path.relpath(p, SAMPLES).replace("/", "_"), read(p)) for p in paths]


def folders(main_files):
    """The folder of each main file, packed with it first, named by the folder."""
    return [(os.path.relpath(os.path.dirname(m), SAMPLES).replace("/", "_"),
             pack_folder(os.path.dirname(m), os.path.basename(m))) for m in main_files]


def seeds(target, wavg):
    """The seeds of `target`, as (name, bytes)."""
    h5 = samples("**/*.h5")
    if target in ("hdf5_native", "hdf5_diff"):
        return files(h5) + keras_weights()
    if target == "keras":
        return files(samples("keras3/*.keras", "roles/*.keras") + h5) + keras_weights()
    if target == "pytorch":
        return files(samples("torch_uint/*.pt", "deepspeed/aligned/**/*.pt")) + converted(wavg, ".pt") + legacy_pickle()
    if target == "tf_index":
        return [(os.path.relpath(i, SAMPLES).replace("/", "_"), pack_tensorflow(i))
                for i in samples("tensorflow/*/*.index", "roles/*/*.index")]
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
    if target == "recipe":
        return files(samples("recipes/*.yml"))
    if target == "safetensors":
        return [("layers.safetensors", safetensors_layers())] + converted(wavg, ".safetensors")
    if target == "caffe":
        return converted(wavg, ".caffemodel")
    if target == "mxnet":
        return converted(wavg, ".params")
    if target == "json":
        return converted(wavg, ".json") + converted(wavg, ".b64.json", "json-base64")
    sys.exit(f"seeds.py: no fuzz target {target}")


def main():
    args = sys.argv[1:]
    wavg = None
    if "--wavg" in args:
        at = args.index("--wavg")
        wavg = args[at + 1]
        del args[at : at + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    target, outdir = args
    parent = os.path.dirname(os.path.abspath(outdir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".seeds-")
    for name, data in seeds(target, wavg):
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    shutil.rmtree(outdir, ignore_errors=True)
    os.rename(tmp, outdir)
    print(f"{target}: {len(os.listdir(outdir))} seeds in {outdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
