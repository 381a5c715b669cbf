"""wavg merge --recipe against mergekit's own command line (mergekit-yaml) on the recipes mergekit_same_tensors.sh
does not run: sce, nearswap, arcee_fusion, model_stock with filter_wise, slerp extrapolating (t outside [0, 1]),
slices that merge several sources (a slerp gradient over a slice; two overlapping slices), passthrough slices, a
top-level int8_mask and the tokenizer (tokenizer_source: union and base, a tokenizer: block with tokens:). Models:
a tiny float64 Llama made with transformers (hidden 16, 3 layers); each recipe runs with dtype: float64 through
`mergekit-yaml` and through `wavg merge --recipe`, and every tensor is compared (TOLERANCE: bit for bit, or a few
units in the last place of the inputs' largest magnitude at that element where the two compute in another order),
config.json's layer count and vocab_size too, and both outputs load in transformers and give the same logits.
Tokenizer merges are compared token by token: mergekit numbers a union's new tokens in a Python set's order.
Usage: mergekit_yaml.py WAVG MERGEKIT_YAML [RECIPE...] (in an empty directory; run by mergekit_yaml.sh; the
recipes named, else all)."""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import transformers
from tokenizers import Tokenizer
from tokenizers import models as tok_models

from hf_tools import read_folder as tensors

WAVG, MERGEKIT_YAML = sys.argv[1], sys.argv[2]
H, F, L = 16, 24, 3


def llama(vocab):
    return transformers.LlamaConfig(hidden_size=H, intermediate_size=F, num_hidden_layers=L, num_attention_heads=2,
                                    num_key_value_heads=2, vocab_size=vocab, max_position_embeddings=32,
                                    tie_word_embeddings=False)


def save(folder, tensors, vocab, tokens=None):
    """A float64 Llama folder written by transformers (its tensors given), with a word-level tokenizer when
    `tokens` (a list: the token of each id) is given."""
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(llama(vocab)).to(torch.float64)
    m.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()})
    m.save_pretrained(folder, safe_serialization=True)
    if tokens:
        unk = tokens[0]
        tok = Tokenizer(tok_models.WordLevel({t: i for i, t in enumerate(tokens)}, unk))
        transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token=unk).save_pretrained(folder)


rng = np.random.default_rng(3)
V = 12
BASE_TOKENS = ["<unk>"] + [f"w{i}" for i in range(V - 1)]
torch.manual_seed(0)
shapes = {k: tuple(v.shape) for k, v in transformers.LlamaForCausalLM(llama(V)).state_dict().items()}
base = {k: rng.normal(scale=0.5, size=s) for k, s in shapes.items()}
shared = {k: rng.normal(scale=0.02, size=s) for k, s in shapes.items()}
tunes = [{k: base[k] + shared[k] + rng.normal(scale=0.05, size=s) for k, s in shapes.items()} for _ in range(3)]
save("base", base, V, BASE_TOKENS)
for i, t in enumerate(tunes):
    save(f"ft{i}", t, V, BASE_TOKENS)

# The tokenizer merge's models: tok0 adds x1 and x2 to the base's tokens, tok1 numbers the base's tokens in
# another order and adds x2 and y1 (so the union adds x1, x2, y1: x1 from tok0 alone, x2 from both).
EMBEDS = ("model.embed_tokens.weight", "lm_head.weight")
TOKENS = {"tok0": BASE_TOKENS + ["x1", "x2"], "tok1": BASE_TOKENS[:1] + BASE_TOKENS[1:][::-1] + ["x2", "y1"]}
for name, tokens in TOKENS.items():
    t = {k: v + rng.normal(scale=0.05, size=v.shape) for k, v in base.items()}
    for k in EMBEDS:
        t[k] = np.stack([base[k][BASE_TOKENS.index(w)] + rng.normal(scale=0.05, size=H) if w in BASE_TOKENS
                         else rng.normal(scale=0.5, size=H) for w in tokens])
    save(name, t, len(tokens), tokens)

TOLERANCE = {"model_stock_filter_wise": 16, "sce": 16, "sce_topk": 16, "slerp_extrapolate": 16, "slices_slerp": 16}

PLAIN = "base_model: base\nmerge_method: {}\n"
RECIPES = {
    "sce": "models:\n  - model: ft0\n  - model: ft1\n  - model: ft2\nbase_model: base\nmerge_method: sce\n",
    "sce_topk": "models:\n  - model: ft0\n  - model: ft1\n  - model: ft2\nbase_model: base\nmerge_method: sce\n"
                "parameters: {select_topk: 0.3}\n",
    "nearswap": "models:\n  - model: ft0\nbase_model: base\nmerge_method: nearswap\nparameters: {t: 0.04}\n",
    "arcee_fusion": "models:\n  - model: base\n  - model: ft0\nbase_model: base\nmerge_method: arcee_fusion\n",
    "model_stock_filter_wise": "models:\n  - model: ft0\n  - model: ft1\n  - model: ft2\nbase_model: base\n"
                               "merge_method: model_stock\nparameters: {filter_wise: true}\n",
    "slerp_extrapolate": "models:\n  - model: ft0\n  - model: ft1\nbase_model: ft0\nmerge_method: slerp\n"
                         "parameters:\n  t: [-0.3, 0.5, 1.4]\n",
    "int8_mask": "models:\n  - model: ft0\n    parameters: {weight: 1}\n  - model: ft1\n    parameters: {weight: 0.5}\n"
                 "base_model: base\nmerge_method: task_arithmetic\nint8_mask: true\n",
    "slices_slerp": "slices:\n  - sources:\n      - model: ft0\n        layer_range: [0, 3]\n      - model: ft1\n"
                    "        layer_range: [0, 3]\nmerge_method: slerp\nbase_model: ft0\nparameters:\n  t:\n"
                    "    - filter: self_attn\n      value: [0, 0.5, 1]\n    - filter: mlp\n      value: [1, 0.2]\n"
                    "    - value: 0.4\n",
    "slices_overlap": "slices:\n  - sources:\n      - model: base\n        layer_range: [0, 2]\n      - model: ft0\n"
                      "        layer_range: [0, 2]\n        parameters: {weight: [1, 0.5]}\n      - model: ft1\n"
                      "        layer_range: [0, 2]\n        parameters: {weight: 0.5}\n  - sources:\n"
                      "      - model: base\n        layer_range: [1, 3]\n      - model: ft0\n"
                      "        layer_range: [1, 3]\n        parameters: {weight: 0.3}\n      - model: ft1\n"
                      "        layer_range: [1, 3]\n        parameters: {weight: -0.4}\n"
                      "base_model: base\nmerge_method: task_arithmetic\n",
    "slices_passthrough": "slices:\n  - sources:\n      - model: ft0\n        layer_range: [0, 2]\n  - sources:\n"
                          "      - model: ft1\n        layer_range: [1, 3]\nmerge_method: passthrough\n",
    "tokenizer_union": "models:\n  - model: tok0\n    parameters: {weight: 1}\n  - model: tok1\n"
                       "    parameters: {weight: 0.5}\nbase_model: base\nmerge_method: task_arithmetic\n"
                       "tokenizer_source: union\n",
    "tokenizer_base": "models:\n  - model: tok0\n    parameters: {weight: 1}\n  - model: tok1\n"
                      "    parameters: {weight: 0.5}\nbase_model: base\nmerge_method: task_arithmetic\n"
                      "tokenizer_source: base\n",
    "tokenizer_block": "models:\n  - model: tok0\n    parameters: {weight: 0.7}\n  - model: tok1\n"
                       "    parameters: {weight: 0.3}\nbase_model: base\nmerge_method: task_arithmetic\n"
                       "tokenizer:\n  source: union\n  tokens:\n    x2:\n      source: tok1\n"
                       "    w3:\n      source:\n        kind: model_token\n        model: tok0\n        token: x2\n"
                       "      force: true\n    z9:\n      source: {kind: zero}\n",
}


def vocab(folder):
    return transformers.AutoTokenizer.from_pretrained(folder).get_vocab()


INPUTS = [tensors(m) for m in ("base", "ft0", "ft1", "ft2")]
for name, text in RECIPES.items():
    if sys.argv[3:] and name not in sys.argv[3:]:
        continue
    text += "dtype: float64\n"
    open(f"{name}.yml", "w").write(text)
    tokenized = name.startswith("tokenizer")
    subprocess.run([MERGEKIT_YAML, f"{name}.yml", f"mk-{name}", "--quiet", "--no-write-model-card"] +
                   ([] if tokenized else ["--no-copy-tokenizer"]), check=True, stdout=subprocess.DEVNULL)
    subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "-o", f"wavg-{name}/"], check=True)
    mk, wv = tensors(f"mk-{name}"), tensors(f"wavg-{name}")
    assert sorted(mk) == sorted(wv), (name, sorted(set(mk) ^ set(wv)))
    mk_config, wv_config = (json.load(open(f"{p}-{name}/config.json")) for p in ("mk", "wavg"))
    for key in ("num_hidden_layers", "vocab_size"):
        assert mk_config[key] == wv_config[key], (name, key, mk_config[key], wv_config[key])
    if tokenized:  # row by token: the union's new tokens are numbered in another order
        mk_vocab, wv_vocab = vocab(f"mk-{name}"), vocab(f"wavg-{name}")
        assert sorted(mk_vocab) == sorted(wv_vocab), (name, sorted(set(mk_vocab) ^ set(wv_vocab)))
        order = sorted(mk_vocab, key=mk_vocab.get)
        for k in EMBEDS:
            rows = len(order)
            assert mk[k].shape[0] == wv[k].shape[0] == rows, (name, k, mk[k].shape, wv[k].shape, rows)
            wv[k] = wv[k][[wv_vocab[w] for w in order]]
            mk[k] = mk[k][[mk_vocab[w] for w in order]]
    equal = close = 0
    worst = 0.0
    for k in mk:
        a, b = mk[k], wv[k]
        if np.array_equal(a, b):
            equal += 1
            continue
        same_shape = [m[k] for m in INPUTS if k in m and m[k].shape == a.shape]
        scale = np.max(np.abs(np.stack(same_shape)), axis=0) if same_shape else np.max(np.abs(a))
        d = np.max(np.abs(a - b) / np.spacing(np.maximum(scale, np.abs(a))))
        assert d <= TOLERANCE.get(name, 0), (name, k, d)
        worst = max(worst, d)
        close += 1
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    logits = [transformers.AutoModelForCausalLM.from_pretrained(f"{p}-{name}", dtype=torch.float64)(ids).logits
              for p in ("mk", "wavg")]
    if not tokenized:
        assert torch.allclose(logits[0], logits[1], rtol=1e-9, atol=1e-12), name
    print(f"{name}: {equal} tensors equal, {close} within {worst:g} ulp of the inputs; "
          f"{mk_config['num_hidden_layers']} layers, vocabulary {mk_config['vocab_size']}; both load in transformers")
