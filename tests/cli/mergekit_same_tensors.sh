# Optional: every method wavg runs from a recipe gives mergekit's tensors. Needs a Python with mergekit named by
# WAVG_MERGEKIT_PYTHON, mergekit-yaml beside it (a venv outside the repository: python3 -m venv V && V/bin/pip
# install mergekit; or, to reuse a venv's torch rather than download another, /usr/bin/python3 -m venv
# --system-site-packages V, a .pth file in V's site-packages naming that venv's site-packages, then V/bin/pip
# install mergekit --no-deps click immutables pydantic 'transformers>=5,<6'); skipped without one. A tiny Llama
# (hidden 16, 3 layers, float64) and three fine-tunes are made here with transformers; each recipe runs through
# mergekit's command line (mergekit-yaml; the masked della cases below through its Python API, which they patch)
# with dtype float64 and through wavg merge --recipe, and every tensor is compared: task arithmetic, TIES, breadcrumbs (and its TIES variant), DARE, della and della_linear (the
# last three at density 1, where no mask is drawn) must be equal bit for bit
# (no two magnitudes tie at a cut in these random tensors, where mergekit's unstable sort would choose); the
# others within a few ulp of the inputs' magnitude at that element (TOLERANCE; the counts and the largest
# difference are printed).
# mergekit 0.1.5's linear accumulates with torch's addcmul_, which fuses multiply and add (FMA) on the CPU; wavg
# never fuses (-ffp-contract=off: the same bits on every machine). SLERP's and model stock's coefficients come
# from whole-tensor norms and dot products, which torch sums in another order than wavg's fixed chunks, and
# model stock's mean is t·mean(x) + (1 - t)·base in mergekit, one weighted sum in wavg (and nuslerp with a base,
# base + c0 v0 + c1 v1). DARE draws its mask
# from torch's generator in mergekit and from Philox in wavg, so it is compared at density 1 only. Last, a recipe's
# chat_template (auto and a Jinja text) on folders given a tokenizer by transformers: transformers must load the
# same template from both outputs.
PY=${WAVG_MERGEKIT_PYTHON:-}
export HF_HUB_OFFLINE=1  # the models are local folders; mergekit must not ask the hub about them
[ -n "$PY" ] && "$PY" -c 'import mergekit, transformers, torch' 2>/dev/null && [ -x "$(dirname "$PY")/mergekit-yaml" ] ||
  { echo "no WAVG_MERGEKIT_PYTHON with mergekit-yaml beside it"; exit 77; }
"$PY" - "$WAVG" "$ROOT/tests/cli" "$(dirname "$PY")/mergekit-yaml" <<'PYTHON'
import json, os, struct, subprocess, sys
import numpy as np, torch, transformers, yaml
from safetensors.numpy import load_file
from mergekit.config import MergeConfiguration
from mergekit.merge import MergeOptions, run_merge

WAVG, MERGEKIT_YAML = sys.argv[1], sys.argv[3]
sys.path.insert(0, sys.argv[2])
from hf_tools import read_folder as tensors
cfg = transformers.LlamaConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=2,
                               num_key_value_heads=2, vocab_size=32, max_position_embeddings=32)
torch.manual_seed(0)
base = transformers.LlamaForCausalLM(cfg).to(torch.float64)
base.save_pretrained("base", safe_serialization=True)
g = torch.Generator().manual_seed(1)
shared = {k: 0.02 * torch.randn(v.shape, generator=g, dtype=torch.float64) for k, v in base.state_dict().items()}
for i in range(3):
    m = transformers.LlamaForCausalLM(cfg).to(torch.float64)
    m.load_state_dict({k: v + shared[k] + 0.05 * torch.randn(v.shape, generator=g, dtype=torch.float64)
                       for k, v in base.state_dict().items()})
    m.save_pretrained(f"ft{i}", safe_serialization=True)

# in ulp of the inputs' largest magnitude
TOLERANCE = {"linear": 4, "slerp": 16, "model_stock": 16, "nuslerp": 16, "nuslerp_base": 16, "multislerp": 16,
             "multislerp_base": 16, "karcher": 16}
INPUTS = [load_file(f"{m}/model.safetensors") for m in ("base", "ft0", "ft1", "ft2")]
RECIPES = {
    "linear": "models:\n  - model: ft0\n    parameters: {weight: 0.7}\n  - model: ft1\n    parameters: {weight: [0.3, 1]}\nmerge_method: linear\n",
    "task_arithmetic": "models:\n  - model: ft0\n    parameters: {weight: 1.0}\n  - model: ft1\n    parameters: {weight: -0.5}\nbase_model: base\nmerge_method: task_arithmetic\nparameters: {lambda: 0.9}\n",
    "ties": "models:\n  - model: ft0\n    parameters: {weight: 1.0, density: [1, 0.5, 0.2]}\n  - model: ft1\n    parameters: {weight: 0.5, density: 0.5}\n  - model: ft2\n    parameters:\n      weight:\n        - filter: mlp\n          value: 0.5\n        - value: 1\n      density: 0.3\nbase_model: base\nmerge_method: ties\n",
    "dare_linear": "models:\n  - model: ft0\n    parameters: {weight: 0.6, density: 1.0}\n  - model: ft1\n    parameters: {weight: 0.4, density: 1.0}\nbase_model: base\nmerge_method: dare_linear\nparameters: {rescale: false}\n",
    "breadcrumbs": "models:\n  - model: ft0\n    parameters: {weight: 1.0, density: [0.9, 0.5], gamma: 0.05}\n  - model: ft1\n    parameters: {weight: 0.5, density: 0.6}\nbase_model: base\nmerge_method: breadcrumbs\nparameters: {gamma: 0.1, lambda: 1.1}\n",
    "breadcrumbs_ties": "models:\n  - model: ft0\n    parameters: {weight: 1.0, density: 0.7}\n  - model: ft1\n    parameters: {weight: 0.5, density: 0.5, gamma: 0.2}\n  - model: ft2\n    parameters: {weight: 0.8, density: 0.97}\nbase_model: base\nmerge_method: breadcrumbs_ties\nparameters: {normalize: true}\n",
    "della": "models:\n  - model: ft0\n    parameters: {weight: 1.0, density: 1, epsilon: 0.2}\n  - model: ft1\n    parameters: {weight: -0.5, density: 1}\nbase_model: base\nmerge_method: della\nparameters: {lambda: 0.8}\n",
    "della_linear": "models:\n  - model: ft0\n    parameters: {weight: 0.6, density: 1}\n  - model: ft1\n    parameters: {weight: 0.4, density: 1}\n  - model: ft2\n    parameters: {weight: 0.3, density: 1}\nbase_model: base\nmerge_method: della_linear\n",
    "slerp": "models:\n  - model: ft0\n  - model: ft1\nbase_model: ft0\nmerge_method: slerp\nparameters:\n  t:\n    - filter: self_attn\n      value: [0, 0.5, 1]\n    - value: 0.3\n",
    "model_stock": "models:\n  - model: ft0\n  - model: ft1\n  - model: ft2\nbase_model: base\nmerge_method: model_stock\n",
    "nuslerp": "models:\n  - model: ft0\n    parameters: {weight: 0.3}\n  - model: ft1\n    parameters: {weight: [1, 0.5]}\nmerge_method: nuslerp\n",
    "nuslerp_base": "models:\n  - model: ft0\n    parameters: {weight: 1}\n  - model: ft1\n    parameters: {weight: 2}\nbase_model: base\nmerge_method: nuslerp\nparameters: {nuslerp_flatten: true}\n",
    "multislerp": "models:\n  - model: ft0\n    parameters: {weight: 1}\n  - model: ft1\n    parameters: {weight: 2}\n  - model: ft2\n    parameters: {weight: 0.5}\nmerge_method: multislerp\n",
    "multislerp_base": "models:\n  - model: ft0\n    parameters: {weight: 0.3}\n  - model: ft1\n    parameters: {weight: 0.7}\nbase_model: base\nmerge_method: multislerp\nparameters: {normalize_weights: false}\n",
    "karcher": "models:\n  - model: ft0\n  - model: ft1\n  - model: ft2\nmerge_method: karcher\nparameters: {max_iter: 20, tol: 1e-9}\n",
}
for name, text in RECIPES.items():
    text += "dtype: float64\n"
    open(f"{name}.yml", "w").write(text)
    subprocess.run([MERGEKIT_YAML, f"{name}.yml", f"mk-{name}", "--quiet", "--no-copy-tokenizer",
                    "--no-write-model-card"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "-o", f"wavg-{name}/"], check=True)
    mk, wv = tensors(f"mk-{name}"), tensors(f"wavg-{name}")
    assert sorted(mk) == sorted(wv), (name, sorted(set(mk) ^ set(wv)))
    equal = close = 0
    worst = 0.0
    for k in mk:
        a, b = mk[k].astype(np.float64), wv[k].astype(np.float64)
        if np.array_equal(a, b):
            equal += 1
            continue
        scale = np.max(np.abs(np.stack([m[k] for m in INPUTS])), axis=0)
        d = np.max(np.abs(a - b) / np.spacing(scale))
        assert d <= TOLERANCE.get(name, 0), (name, k, d)
        worst = max(worst, d)
        close += 1
    print(f"{name}: {equal} tensors equal, {close} within {worst:g} ulp of the inputs")

# della and della_linear below density 1: mergekit draws its mask with torch.bernoulli from torch's global generator,
# one draw per entry in the order its scheduler runs the tensors, which wavg cannot reproduce; so torch.bernoulli is
# replaced here, for these merges only, by wavg's documented mask (tests/cli/mergekit_ref.py: Philox keyed by the
# seed, the tensor's plan index (input 1's file order) and the input), given mergekit's own keep probabilities.
# Everything else is mergekit's code: the ranks along dimension 1, the probabilities, the L1 rescale, the sign
# election. mergekit runs della_magprune in float32 on the CPU (its task vectors rounded to float32), wavg in double,
# so every tensor must agree to a few float32 ulps of its task vectors' largest magnitude (a mask that differed
# anywhere would be off by a whole task vector entry, 2^24 such ulps).
import mergekit_ref as ref
import mergekit.merge_methods.generalized_task_arithmetic as gta
SEED = 1234
with open("ft0/model.safetensors", "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
header.pop("__metadata__", None)
ORDER = sorted(header, key=lambda k: header[k]["data_offsets"][0])
current = {}
plain_merge_group, plain_sparsify, plain_bernoulli = gta.GeneralizedTaskArithmeticMerge.merge_group, gta.sparsify, torch.bernoulli


def merge_group(self, group, /, **parameters):
    assert [str(e.id) for e in group.non_base] == [f"ft{k}" for k in range(len(group.non_base))], group.non_base
    current.update(tensor=ORDER.index(group.metadata.name), k=-1)
    return plain_merge_group(self, group, **parameters)


def sparsify(*args, **kwargs):  # called once per model, in the recipe's order
    current["k"] += 1
    return plain_sparsify(*args, **kwargs)


def bernoulli(probs, *args, **kwargs):
    k = current["k"]
    u = ref.philox_word(SEED, current["tensor"] + ((k // 4) << 32), np.arange(probs.numel(), dtype=np.uint64), k % 4)
    return torch.from_numpy((u < probs.double().numpy().reshape(-1)).reshape(tuple(probs.shape))).to(probs.dtype)


MASKED = {  # recipe, largest difference allowed in float32 ulps of the task vectors' largest magnitude
    "della_mask": ("models:\n  - model: ft0\n    parameters: {weight: 1.0, density: [0.5, 0.3], epsilon: 0.2}\n"
                   "  - model: ft1\n    parameters: {weight: 0.5, density: 0.6}\n  - model: ft2\n"
                   "    parameters: {weight: 0.8, density: 0.4, epsilon: 0.05}\nbase_model: base\nmerge_method: della\n"
                   "parameters: {lambda: 1.1}\n", 16),
    "della_linear_mask": ("models:\n  - model: ft0\n    parameters: {weight: 0.6, density: 0.7}\n  - model: ft1\n"
                          "    parameters: {weight: 0.4, density: 0.5, epsilon: 0.3}\nbase_model: base\n"
                          "merge_method: della_linear\nparameters: {rescale: false, epsilon: 0.1}\n", 1),
}
gta.GeneralizedTaskArithmeticMerge.merge_group, gta.sparsify, torch.bernoulli = merge_group, sparsify, bernoulli
try:
    for name, (text, allowed) in MASKED.items():
        text += "dtype: float64\n"
        open(f"{name}.yml", "w").write(text)
        run_merge(MergeConfiguration.model_validate(yaml.safe_load(text)), f"mk-{name}",
                  options=MergeOptions(copy_tokenizer=False, write_model_card=False))
        subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "--seed", str(SEED), "-o", f"wavg-{name}/"],
                       check=True)
        mk, wv = tensors(f"mk-{name}"), tensors(f"wavg-{name}")
        assert sorted(mk) == sorted(wv), (name, sorted(set(mk) ^ set(wv)))
        worst = 0.0
        for k in mk:
            tau = np.max(np.abs(np.stack([m[k] - INPUTS[0][k] for m in INPUTS[1:]])), axis=0)
            d = np.max(np.abs(mk[k] - wv[k]) / (tau * 2.0 ** -24))
            assert d <= allowed, (name, k, d)
            worst = max(worst, d)
        print(f"{name}: all {len(mk)} tensors within {worst:.2g} float32 ulps of the task vectors (mergekit's mask "
              "replaced by wavg's)")
finally:
    gta.GeneralizedTaskArithmeticMerge.merge_group, gta.sparsify, torch.bernoulli = plain_merge_group, plain_sparsify, plain_bernoulli

# chat_template: a word-level tokenizer saved by transformers into every folder (base and ft1 with template B, ft0
# with A); transformers loads the same template from mergekit's output and from wavg's.
from tokenizers import Tokenizer, models as tok_models
A = "{% for m in messages %}A: {{ m['content'] }}{% endfor %}"
B = "{% for m in messages %}B: {{ m['content'] }}{% endfor %}"
for folder, template in (("base", B), ("ft0", A), ("ft1", B)):
    vocab = tok_models.WordLevel({"<unk>": 0}, "<unk>")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=Tokenizer(vocab), unk_token="<unk>")
    tok.chat_template = template
    tok.save_pretrained(folder)
LITERAL = "{%- for m in messages %}\n<|{{ m['role'] }}|>{{ m['content'] }}\n{%- endfor %}\n"
for name, setting in (("chat_auto", "auto"), ("chat_literal", "|\n  " + LITERAL.replace("\n", "\n  ").rstrip(" "))):
    text = ("models:\n  - model: ft0\n    parameters: {weight: 1}\n  - model: ft1\n    parameters: {weight: 1}\n"
            f"base_model: base\nmerge_method: task_arithmetic\ndtype: float64\nchat_template: {setting}\n")
    open(f"{name}.yml", "w").write(text)
    subprocess.run([MERGEKIT_YAML, f"{name}.yml", f"mk-{name}", "--quiet", "--no-write-model-card"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "-o", f"wavg-{name}/"], check=True)
    mk = transformers.AutoTokenizer.from_pretrained(f"mk-{name}").chat_template
    wv = transformers.AutoTokenizer.from_pretrained(f"wavg-{name}").chat_template
    assert mk == wv == (B if setting == "auto" else LITERAL), (name, mk, wv)
    print(f"{name}: transformers loads the same chat template from both outputs")
PYTHON
