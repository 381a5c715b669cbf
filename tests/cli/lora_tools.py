"""Helpers for the LoRA adapter cases: an independent reading of PEFT adapter folders (the config as peft reads
it, the tensors through hf_tools' safetensors reader) and the mean update in float64 numpy, so no check goes
through wavg."""
import json
import math
import os
import re

import numpy as np

from hf_tools import read_safetensors, write_safetensors

PREFIX = "base_model.model."


def pattern(patterns, module, default):
    """peft's get_pattern_key: the first key K with re.match(r"(.*\\.)?(K)$", module), else the default."""
    target = module[len(PREFIX):] if module.startswith(PREFIX) else module
    for key, value in patterns.items():
        if re.match(rf"(.*\.)?({key})$", target):
            return value
    return default


def read_adapter(folder):
    """Returns (config, {module: (A, B, s)} in float64, {other tensor: float64 array})."""
    config = json.load(open(os.path.join(folder, "adapter_config.json")))
    tensors, _ = read_safetensors(os.path.join(folder, "adapter_model.safetensors"))
    modules, other = {}, {}
    for name, a in tensors.items():
        if name.endswith(".lora_A.weight"):
            m = name[: -len(".lora_A.weight")]
            r = pattern(config.get("rank_pattern") or {}, m, config["r"])
            alpha = pattern(config.get("alpha_pattern") or {}, m, config["lora_alpha"])
            assert a.shape[0] == r, (name, a.shape, r)
            s = alpha / math.sqrt(r) if config.get("use_rslora") else alpha / r
            modules[m] = (a.astype(np.float64), tensors[m + ".lora_B.weight"].astype(np.float64), s)
        elif not name.endswith(".lora_B.weight"):
            other[name] = a.astype(np.float64)
    return config, modules, other


def mean_update(folders, weights):
    """{module: sum_i w_i s_i B_i A_i} with the weights normalised, and {other: weighted mean}."""
    w = np.array(weights, np.float64) / sum(weights)
    updates, others = {}, {}
    for wi, f in zip(w, folders):
        _, modules, other = read_adapter(f)
        for m, (a, b, s) in modules.items():
            updates[m] = updates.get(m, 0) + wi * s * (b @ a)
        for n, v in other.items():
            others[n] = others.get(n, 0) + wi * v
    return updates, others


def update_of(folder):
    """{module: s B A} of one adapter folder."""
    _, modules, _ = read_adapter(folder)
    return {m: s * (b @ a) for m, (a, b, s) in modules.items()}


def set_examples(counts):
    """Adds num_examples (FedAvg's weight) to each adapter's __metadata__: {folder: count}."""
    for folder, n in counts.items():
        path = os.path.join(folder, "adapter_model.safetensors")
        tensors, meta = read_safetensors(path)
        write_safetensors(path, tensors, {**meta, "num_examples": str(n)})
