"""Helpers for the Hugging Face folder cases: model folders written the way transformers' save_pretrained lays
them out, and an independent safetensors reader (the JSON header and numpy), so no check goes through wavg."""
import json
import os
import struct

import numpy as np

DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: numpy array} as safetensors: u64 header length, the JSON header, the data back to back."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, a in tensors.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def read_safetensors(path):
    """Returns ({name: numpy array}, metadata) of a safetensors file, checking that the data section is covered
    exactly; BF16 tensors come back as float32 arrays holding the same values."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", None)
    data = raw[8 + n:]
    out, covered = {}, 0
    for name, h in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, e = h["data_offsets"]
        assert b == covered, (path, name, "gap or overlap")
        covered = e
        if h["dtype"] == "BF16":  # numpy has no bfloat16: its values, exactly, as float32 (the top 16 bits)
            bits = np.frombuffer(data[b:e], dtype=np.uint16).astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(h["shape"])
            continue
        out[name] = np.frombuffer(data[b:e], dtype=DTYPES[h["dtype"]]).reshape(h["shape"])
    assert covered == len(data), (path, "trailing bytes")
    return out, meta


def read_folder(folder):
    """Returns {name: numpy array} of every .safetensors file of a folder (a sharded model's shards together)."""
    out = {}
    for f in sorted(os.listdir(folder)):
        if f.endswith(".safetensors"):
            out.update(read_safetensors(os.path.join(folder, f))[0])
    return out


def write_index(folder, name, weight_map, total_size):
    with open(os.path.join(folder, name), "w") as f:
        json.dump({"metadata": {"total_size": total_size}, "weight_map": weight_map}, f, indent=2)


def save_sharded(folder, tensors, groups, kind="safetensors"):
    """Saves {name: array} in len(groups) shards, groups being lists of names, with the index, as save_pretrained
    does (kind "safetensors" or "bin"; .bin shards are torch.save state_dicts)."""
    os.makedirs(folder, exist_ok=True)
    n = len(groups)
    stem, ext = ("model", "safetensors") if kind == "safetensors" else ("pytorch_model", "bin")
    weight_map, total = {}, 0
    for i, names in enumerate(groups):
        shard = f"{stem}-{i + 1:05d}-of-{n:05d}.{ext}"
        part = {k: tensors[k] for k in names}
        if kind == "safetensors":
            write_safetensors(os.path.join(folder, shard), part, {"format": "pt"})
        else:
            import torch
            torch.save({k: torch.from_numpy(np.array(v)) for k, v in part.items()}, os.path.join(folder, shard))
        for k in names:
            weight_map[k] = shard
            total += tensors[k].nbytes
    write_index(folder, f"{stem}.{ext}.index.json", weight_map, total)


def model(seed):
    """A small model's tensors: float32, float16 and float64 weights and an int64 buffer."""
    r = np.random.default_rng(seed)
    return {
        "embed.weight": r.standard_normal((8, 4)).astype(np.float32),
        "layers.0.attn.weight": r.standard_normal((4, 4)).astype(np.float32),
        "layers.0.attn.bias": r.standard_normal(4).astype(np.float16),
        "layers.1.attn.weight": r.standard_normal((4, 4)).astype(np.float32),
        "layers.1.scale": np.float64(r.standard_normal()).reshape(()),
        "position_ids": np.arange(6, dtype=np.int64) + seed,
    }


def llama_shapes(layers, hidden, intermediate, vocab):
    """The tensor shapes of a Llama-shaped model (embeddings, attention, MLP, input norm per layer, norm, head)."""
    shapes = {"model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,),
              "lm_head.weight": (vocab, hidden)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.self_attn.{m}_proj.weight": (hidden, hidden) for m in "qkvo"})
        shapes.update({f"model.layers.{i}.mlp.{m}_proj.weight": (intermediate, hidden) for m in ("gate", "up")})
        shapes[f"model.layers.{i}.mlp.down_proj.weight"] = (hidden, intermediate)
        shapes[f"model.layers.{i}.input_layernorm.weight"] = (hidden,)
    return shapes


def mean_rounded(arrays):
    """The float64 mean rounded once to the inputs' dtype; integers are input 1's."""
    if arrays[0].dtype.kind != "f":
        return arrays[0]
    return np.mean(np.stack([a.astype(np.float64) for a in arrays]), axis=0).astype(arrays[0].dtype)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
