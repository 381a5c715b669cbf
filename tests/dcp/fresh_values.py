"""The tensors of tests/cli/dcp_from_safetensors.sh, as closed forms in numpy (every value exact in its dtype and
in float16), and a writer of them as a .safetensors file (8-byte header length, JSON header, the tensors' bytes).

    fresh_values.py OUT.safetensors
    fresh_values.py --passthrough     writes a.safetensors, b.safetensors and slices.yml (passthrough_output())
"""
import json
import sys

import numpy as np


def values():
    """{name: (safetensors dtype, numpy array of the dtype's bits)}; bf16 as the high halves of float32 values."""
    i = np.arange(15, dtype=np.float64).reshape(3, 5)
    bf16 = ((np.arange(7, dtype=np.float32) * 0.5 - 1.5).view(np.uint32) >> 16).astype(np.uint16)
    return {
        "embed.weight": ("F32", (i / 4 - 1).astype("<f4")),
        "layers.0.norm": ("BF16", bf16.astype("<u2")),
        "layers.0.proj": ("F16", (np.arange(4).reshape(2, 2) / 8 + 2).astype("<f2")),
        "position_ids": ("I64", np.arange(6, dtype="<i8").reshape(2, 3) - 2),
        "scale": ("F32", np.array(0.75, dtype="<f4")),
        "mask": ("BOOL", np.array([True, False, True])),
    }


def model(k):
    """A 3-layer model whose every value names its model k and layer: 100 k + 10 layer (+ 1 embed, + 2 head)."""
    out = {"model.embed_tokens.weight": ("F32", np.full((4, 2), 100 * k + 1, dtype="<f4"))}
    for layer in range(3):
        out[f"model.layers.{layer}.mlp.weight"] = ("F32", np.full((2, 2), 100 * k + 10 * layer, dtype="<f4"))
    out["lm_head.weight"] = ("F32", np.full((4, 2), 100 * k + 2, dtype="<f4"))
    return out


def passthrough_output():
    """Layers 0-1 of model 0, then 1-2 of model 1 (slices.yml): the embeddings from the first, the head from the
    last."""
    a, b = model(0), model(1)
    out = {"model.embed_tokens.weight": a["model.embed_tokens.weight"]}
    for i, (m, layer) in enumerate([(a, 0), (a, 1), (b, 1), (b, 2)]):
        out[f"model.layers.{i}.mlp.weight"] = m[f"model.layers.{layer}.mlp.weight"]
    out["lm_head.weight"] = b["lm_head.weight"]
    return out


SLICES = """slices:
  - sources:
      - model: a.safetensors
        layer_range: [0, 2]
  - sources:
      - model: b.safetensors
        layer_range: [1, 3]
merge_method: passthrough
"""


def write(path, tensors=None):
    header, blobs, at = {}, [], 0
    for name, (dtype, a) in (tensors or values()).items():
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


if __name__ == "__main__":
    if sys.argv[1] == "--passthrough":
        write("a.safetensors", model(0))
        write("b.safetensors", model(1))
        with open("slices.yml", "w") as f:
            f.write(SLICES)
    else:
        write(sys.argv[1])
