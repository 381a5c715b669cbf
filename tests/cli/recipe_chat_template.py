#!/usr/bin/python3
"""A recipe's chat_template on tiny Hugging Face folders made here: a Jinja text lands as it is in the output's
chat_template.jinja and in tokenizer_config.json (the tokenizer source's keys kept, in order); auto takes the
template most models carry (tokenizer_config.json's, or chat_template.jinja's, which transformers reads first),
stripped, the earlier model on equal counts, and leaves the tokenizer alone when no model has one; mergekit's
template names, a text that is not a template, a tokenizer source without tokenizer_config.json and a file output
are refused before anything is written. Usage: recipe_chat_template.py WAVG (in an empty directory)."""
import json
import os
import subprocess
import sys

import numpy as np

from hf_tools import write_safetensors

WAVG = sys.argv[1]
rng = np.random.default_rng(3)
SHAPES = {"model.layers.0.mlp.up_proj.weight": (4, 3), "model.norm.weight": (3,)}
base = {k: rng.normal(size=s) for k, s in SHAPES.items()}
A = "{% for m in messages %}A {{ m['content'] }}{% endfor %}"
B = "{% for m in messages %}B {{ m['content'] }}{% endfor %}"
CONFIG = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 32, "bos_token": "<s>"}


def model(folder, config=None, jinja=None):
    os.makedirs(folder)
    write_safetensors(f"{folder}/model.safetensors", {k: v + rng.normal(size=v.shape) for k, v in base.items()},
                      {"format": "pt"})
    json.dump({"architectures": ["LlamaForCausalLM"]}, open(f"{folder}/config.json", "w"))
    json.dump({"model": folder}, open(f"{folder}/tokenizer.json", "w"))
    if config is not None:
        json.dump(config, open(f"{folder}/tokenizer_config.json", "w"))
    if jinja is not None:
        open(f"{folder}/chat_template.jinja", "w").write(jinja)


model("base", dict(CONFIG, chat_template=A))
model("ft0", dict(CONFIG), jinja=B + "\n")  # the file wins over the config's key, which it lacks here
model("ft1", dict(CONFIG, chat_template=[{"name": "default", "template": "  " + B}, {"name": "x", "template": A}]))
model("ft2", dict(CONFIG, chat_template=A))
model("plain", dict(CONFIG))
model("bare")


def run(name, head, template, models=("ft0", "ft1"), base_model="base", out=None):
    text = head + "".join(f"  - model: {m}\n    parameters: {{weight: 1}}\n" for m in models)
    if base_model:
        text += f"base_model: {base_model}\n"
    text += "merge_method: task_arithmetic\n" if base_model else "merge_method: linear\n"
    if template is not None:
        text += "chat_template: " + template + "\n"
    open(f"{name}.yml", "w").write(text)
    return subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "-o", out or f"{name}/"],
                          capture_output=True, text=True)


def files(folder):
    config = json.load(open(f"{folder}/tokenizer_config.json"))
    jinja = open(f"{folder}/chat_template.jinja").read() if os.path.exists(f"{folder}/chat_template.jinja") else None
    return config, jinja


# A Jinja text (a YAML block, its newlines kept) goes into both files; the base's other keys stay, in order.
literal = "{%- for m in messages %}\n<|{{ m['role'] }}|>{{ m['content'] }}\n{%- endfor %}\n"
r = run("literal", "models:\n", "|\n  " + literal.replace("\n", "\n  ").rstrip(" "))
assert r.returncode == 0, r.stderr
config, jinja = files("literal")
assert jinja == literal, repr(jinja)
assert config["chat_template"] == literal and list(config)[:3] == list(CONFIG), config
assert json.load(open("literal/tokenizer.json")) == {"model": "base"}
print("literal template in chat_template.jinja and tokenizer_config.json ok")

# auto: B is carried by ft0 (its .jinja) and ft1 (the default of its list), A by the base alone.
r = run("auto", "models:\n", "auto")
assert r.returncode == 0, r.stderr
config, jinja = files("auto")
assert jinja == B and config["chat_template"] == B, (jinja, config)
print("auto takes the template most models carry, stripped ok")

# auto, one each (base A, ft0 B, without a base: ft2 A, ft0 B): the earlier model's.
r = run("tie", "models:\n", "auto", models=("ft2", "ft0"), base_model=None)
assert r.returncode == 0, r.stderr
assert files("tie") == (dict(CONFIG, chat_template=A), A), files("tie")
print("auto on equal counts takes the earlier model's ok")

# auto with no template anywhere: the tokenizer source's files are copied as they are.
r = run("none", "models:\n", "auto", models=("plain", "bare"), base_model=None)
assert r.returncode == 0, r.stderr
assert files("none") == (CONFIG, None), files("none")
print("auto without templates leaves the tokenizer alone ok")

# Refusals, before anything is written.
for name, template, models, base_model, out, words in [
        ("named", "chatml", ("ft0",), "base", None, "names one of mergekit's template files"),
        ("short", "hello", ("ft0",), "base", None, "is neither auto nor a Jinja template"),
        ("no-config", "auto", ("ft0",), "bare", None, "has no tokenizer_config.json"),
        ("file", "auto", ("ft0",), "base", "file.safetensors", "give -o DIR/")]:
    r = run(name, "models:\n", template, models=models, base_model=base_model, out=out)
    assert r.returncode == 2 and words in r.stderr, (name, r.returncode, r.stderr)
    assert not os.path.exists(out or name), name
print("refusals ok")
