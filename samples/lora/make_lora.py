#!/usr/bin/env python3
"""Writes the small PEFT adapter folders of samples/lora/ with numpy, json and struct only (no peft needed).

A tiny model (base.safetensors) has two 3x4 projections, layers.0.q_proj and layers.0.v_proj, and a 2x3 head.
Each adapter folder holds adapter_config.json and adapter_model.safetensors laid out as peft's save_pretrained
writes them (keys base_model.model.MODULE.lora_A.weight, ...). Every value is a small multiple of 1/4, so sums,
products and means of a few of them are exact in float32 and tests can state results in closed form.

  client1/ client2/ client3/  LoRA, r 2, lora_alpha 4 (scale 2); rank_pattern and alpha_pattern give v_proj
                              rank 1 and alpha 2 (scale 2); modules_to_save ["head"] saves the head whole
  rank4/                      LoRA, r 4, lora_alpha 8 (scale 2), the same modules and head: a client of another
                              rank
  rslora/                     LoRA, r 4, lora_alpha 8, use_rslora (scale 8 / sqrt(4) = 4), q_proj only
  dora/                       DoRA (use_dora), r 2, lora_alpha 4, q_proj with its lora_magnitude_vector
  dora2/                      another DoRA client of dora/'s shape, rank 1 (lora_alpha 2: scale 2), other magnitudes

Run from the repository root: /usr/bin/python3 samples/lora/make_lora.py samples/lora
"""
import json
import os
import struct
import sys

import numpy as np

PREFIX = "base_model.model."


def write_safetensors(path, tensors, metadata=None):
    header, blobs, at = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        blobs.append(a.tobytes())
        at += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def factor(shape, k, shift):
    """A matrix of quarters: (k + 2i - j + shift) / 4, different for every client k."""
    i, j = np.indices(shape)
    return ((k + 2 * i - j + shift) / 4).astype(np.float32)


def config(r, alpha, **extra):
    c = {"alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": "wavg/tiny", "bias": "none",
         "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True, "lora_alpha": alpha,
         "lora_dropout": 0.0, "modules_to_save": None, "peft_type": "LORA", "r": r, "rank_pattern": {},
         "revision": None, "target_modules": ["q_proj", "v_proj"], "task_type": None, "use_dora": False,
         "use_rslora": False}
    c.update(extra)
    return c


def adapter(folder, cfg, tensors):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), tensors, {"format": "pt"})


def lora(module, rank, k, out=3, inp=4):
    return {PREFIX + module + ".lora_A.weight": factor((rank, inp), k, 0),
            PREFIX + module + ".lora_B.weight": factor((out, rank), k, 1)}


def main(root):
    write_safetensors(os.path.join(root, "base.safetensors"),
                      {"layers.0.q_proj.weight": factor((3, 4), 0, 2), "layers.0.v_proj.weight": factor((3, 4), 0, 3),
                       "head.weight": factor((2, 3), 0, 0)})
    for k in (1, 2, 3):
        t = {**lora("layers.0.q_proj", 2, k), **lora("layers.0.v_proj", 1, k),
             PREFIX + "head.weight": factor((2, 3), k, 5)}
        adapter(os.path.join(root, f"client{k}"),
                config(2, 4, rank_pattern={"v_proj": 1}, alpha_pattern={"v_proj": 2}, modules_to_save=["head"]), t)
    adapter(os.path.join(root, "rank4"), config(4, 8, modules_to_save=["head"]),
            {**lora("layers.0.q_proj", 4, 4), **lora("layers.0.v_proj", 4, 5),
             PREFIX + "head.weight": factor((2, 3), 4, 5)})
    adapter(os.path.join(root, "rslora"), config(4, 8, use_rslora=True, target_modules=["q_proj"]),
            lora("layers.0.q_proj", 4, 6))
    adapter(os.path.join(root, "dora"), config(2, 4, use_dora=True, target_modules=["q_proj"]),
            {**lora("layers.0.q_proj", 2, 7),
             PREFIX + "layers.0.q_proj.lora_magnitude_vector": np.array([2, 3, 4], np.float32)})
    adapter(os.path.join(root, "dora2"), config(1, 2, use_dora=True, target_modules=["q_proj"]),
            {**lora("layers.0.q_proj", 1, 8),
             PREFIX + "layers.0.q_proj.lora_magnitude_vector": np.array([1, 5, 2], np.float32)})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
