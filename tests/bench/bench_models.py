"""Deterministic GPT-2-like checkpoints for the benchmark, in Keras 2 HDF5 and safetensors (and PyTorch when torch
is importable). Input k of a model is seeded with k, so every run writes the same bytes.

A model of width d, L blocks and vocabulary V has 2 + 8 L tensors: the token and position embeddings (V x d and
1024 x d), then per block the attention in-projection (d x 3d, 3d), out-projection (d x d, d) and the MLP (d x 4d,
4d, 4d x d, d). GPT-2 small is d=768, L=12, V=50257: 98 tensors, 124M values, from 768 to 38.6M each.
"""

import json
import os
import struct
import sys

import numpy as np

# name -> (width, blocks, vocabulary)
MODELS = {
    "tiny": (32, 2, 1000),
    "10M": (256, 6, 16384),
    "124M": (768, 12, 50257),
    "1B": (2048, 18, 50257),
}


def layout(model):
    """Returns [(layer, weight, shape)] in file order."""
    d, blocks, vocab = MODELS[model]
    out = [("wte", "embeddings:0", (vocab, d)), ("wpe", "embeddings:0", (1024, d))]
    for b in range(blocks):
        h = f"h{b}"
        out += [(f"{h}_attn", "kernel:0", (d, 3 * d)), (f"{h}_attn", "bias:0", (3 * d,)),
                (f"{h}_proj", "kernel:0", (d, d)), (f"{h}_proj", "bias:0", (d,)),
                (f"{h}_fc", "kernel:0", (d, 4 * d)), (f"{h}_fc", "bias:0", (4 * d,)),
                (f"{h}_mlp_out", "kernel:0", (4 * d, d)), (f"{h}_mlp_out", "bias:0", (d,))]
    return out


def parameters(model):
    return sum(int(np.prod(s)) for _, _, s in layout(model))


def tensors(model, seed):
    """Yields (name, float32 array) one tensor at a time, so generating a 4 GB file needs one tensor of memory."""
    rng = np.random.default_rng(seed)
    for layer, weight, shape in layout(model):
        yield f"{layer}/{weight}", rng.standard_normal(shape, dtype=np.float32)


def write_hdf5(path, model, seed):
    import h5py
    with h5py.File(path, "w") as f:
        f.attrs["backend"] = "tensorflow"
        f.attrs["keras_version"] = "2.13.1"
        f.attrs["num_examples"] = 100 * seed  # what a federated client records, for --weight-by
        mw = f.create_group("model_weights")
        layers = []
        for layer, _, _ in layout(model):
            if layer not in layers:
                layers.append(layer)
        mw.attrs["layer_names"] = [n.encode() for n in layers]
        names = {}
        for layer, weight, _ in layout(model):
            names.setdefault(layer, []).append(f"{layer}/{weight}")
        for layer in layers:
            mw.create_group(layer).attrs["weight_names"] = [n.encode() for n in names[layer]]
        for name, array in tensors(model, seed):
            mw[name.split("/")[0]].create_dataset(name, data=array)


def write_safetensors(path, model, seed):
    header, at = {}, 0
    for layer, weight, shape in layout(model):
        size = int(np.prod(shape)) * 4
        header[f"{layer}/{weight}"] = {"dtype": "F32", "shape": list(shape), "data_offsets": [at, at + size]}
        at += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned, as the safetensors writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, array in tensors(model, seed):
            f.write(array.tobytes())


def write_npz(path, model, seed):
    """numpy.savez's archive; ':' in names becomes '_' (wavg reads an entry name with a colon as hostile)."""
    with open(path, "wb") as f:  # a file object: savez appends .npz to a path without it
        np.savez(f, **{name.replace(":", "_"): a for name, a in tensors(model, seed)})


def write_torch(path, model, seed, legacy=False):
    """torch.save's zip format, or with `legacy` the pre-1.6 one (magic number, pickles, raw storages)."""
    import torch
    torch.save({name: torch.from_numpy(a) for name, a in tensors(model, seed)}, path,
               _use_new_zipfile_serialization=not legacy)


def write_legacy_torch(path, model, seed):
    write_torch(path, model, seed, legacy=True)


def write_dcp(path, model, seed):
    """A torch.distributed.checkpoint folder written by one process (no process group), the state dict {"model":
    ...} as a training loop saves it. Needs torch >= 2.2."""
    import torch
    import torch.distributed.checkpoint as dcp
    dcp.save({"model": {name: torch.from_numpy(a) for name, a in tensors(model, seed)}}, checkpoint_id=path)


def write_deepspeed(path, model, seed):
    """A DeepSpeed ZeRO stage 2 checkpoint folder of two ranks (path/global_step1 and path/latest), laid out by
    samples/deepspeed/make_deepspeed.py with DeepSpeed's own key constants. Needs the deepspeed package."""
    from collections import OrderedDict
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "deepspeed"))
    import make_deepspeed as md
    params = OrderedDict((name, torch.from_numpy(a)) for name, a in tensors(model, seed))
    md.SHAPES = OrderedDict((name, tuple(t.shape)) for name, t in params.items())  # what model_states records
    os.makedirs(os.path.join(path, "global_step1"))
    md.save_stage2(os.path.join(path, "global_step1"), params, torch.zeros(5), seed)
    with open(os.path.join(path, "latest"), "w") as f:
        f.write("global_step1")


def generate(directory, model, n, kinds, torch_python=None, dcp_python=None):
    """Writes inputs 1..n of `model` in every kind asked for (h5, safetensors, npz, pt, legacy.pt, dcp,
    deepspeed), skipping files already there; returns their paths. PyTorch files are written by `torch_python`, DCP
    and DeepSpeed folders by `dcp_python`, which may be other interpreters (a venv with torch)."""
    import subprocess
    os.makedirs(directory, exist_ok=True)

    def via(python, writer):
        def write(path, model, seed):
            code = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                    f"import bench_models; bench_models.{writer}({path!r}, {model!r}, {seed})")
            subprocess.run([python or sys.executable, "-c", code], check=True, stdout=sys.stderr)  # not the table
        return write

    writers = {"h5": write_hdf5, "safetensors": write_safetensors, "npz": write_npz,
               "pt": via(torch_python, "write_torch"), "legacy.pt": via(torch_python, "write_legacy_torch"),
               "dcp": via(dcp_python, "write_dcp"), "deepspeed": via(dcp_python, "write_deepspeed")}
    paths = {}
    for kind in kinds:
        paths[kind] = []
        for k in range(1, n + 1):
            p = os.path.join(directory, f"{model}-{k}.{kind}")
            if not os.path.exists(p):
                writers[kind](p + ".part", model, k)
                os.replace(p + ".part", p)
            paths[kind].append(p)
    return paths
