# A recipe's tokenizer merge, as mergekit's (tokenizer/build.py, embed.py): the output tokenizer (union, or the
# base's with tokens: added and padded to a multiple), and every model's embedding and LM-head rows rebuilt to it
# before the merge: a model's own row for a token it has (unless force), else mergekit's default: the token's own
# source (zero, a model's row for another token), else the only model that has it, else the base's row, else the
# mean of the rows of the models that have it. Padding rows are the mean of the model's rebuilt rows. Small float64
# folders with hand-made BPE tokenizers; the expected rows are numpy's, from that rule written out here.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import write_safetensors
rng = np.random.default_rng(7)
vocabs = {"base": ({"<s>": 0, "t1": 1, "t2": 2, "t3": 3, "t4": 4}, [], 5, 6),
          "a": ({"<s>": 0, "t1": 1, "t2": 2, "x": 3, "t4": 4, "y": 5}, [("<extra>", 6)], 7, 7),
          "b": ({"<s>": 0, "t2": 1, "t1": 2, "t3": 3, "t4": 4, "y": 5, "z": 6}, [], 7, 7)}
for name, (vocab, added, size, rows) in vocabs.items():
    os.makedirs(f"models/{name}")
    write_safetensors(f"models/{name}/model.safetensors", {
        "model.embed_tokens.weight": rng.normal(size=(rows, 3)), "model.layers.0.mlp.w": rng.normal(size=(3, 3)),
        "model.norm.weight": rng.normal(size=3), "lm_head.weight": rng.normal(size=(rows, 3))}, {"format": "pt"})
    json.dump({"vocab_size": size, "num_hidden_layers": 1, "torch_dtype": "float64"},
              open(f"models/{name}/config.json", "w"))
    entries = [{"id": 0, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                "special": True}]
    entries += [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                 "special": True} for t, i in added]
    json.dump({"version": "1.0", "added_tokens": entries, "model": {"type": "BPE", "vocab": vocab, "merges": []}},
              open(f"models/{name}/tokenizer.json", "w"))
    json.dump({"added_tokens_decoder": {str(e["id"]): {k: v for k, v in e.items() if k != "id"} for e in entries}},
              open(f"models/{name}/tokenizer_config.json", "w"))
PY
cat > merge.yml <<'YML'
models:
  - model: models/a
    parameters:
      weight: 0.5
  - model: models/b
    parameters:
      weight: 0.5
base_model: models/base
merge_method: task_arithmetic
dtype: float64
YML
{ cat merge.yml; echo "tokenizer_source: union"; } > union.yml
{ cat merge.yml; cat <<'YML'; } > block.yml
tokenizer:
  source: base
  tokens:
    <new>:
      source:
        kind: model_token
        model: models/a
        token: x
    t1:
      source:
        kind: zero
      force: true
  pad_to_multiple_of: 4
YML
printf 'models:\n  - model: models/a\n    parameters:\n      weight: 1\n  - model: models/b\n    parameters:\n      weight: 1\nmerge_method: linear\ntokenizer_source: models/b\ndtype: float64\n' > from_b.yml
"$WAVG" merge -q --recipe union.yml -o union/
"$WAVG" merge -q --recipe block.yml -o block/
"$WAVG" merge -q --recipe from_b.yml -o from_b/
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json
import numpy as np
from hf_tools import read_safetensors
names = ("models/base", "models/a", "models/b")

def vocab(m):
    t = json.load(open(f"{m}/tokenizer.json"))
    v = dict(t["model"]["vocab"])
    v.update({e["content"]: e["id"] for e in t["added_tokens"]})
    return v

models = {m: read_safetensors(f"{m}/model.safetensors")[0] for m in names}
vocabs = {m: vocab(m) for m in names}

def rebuilt(tensor, out_tokens, settings, rows):
    """embed.py: every model's rows over the output tokens (the rule at the top of this test)."""
    have = {m: [vocabs[m].get(t, -1) for t in out_tokens] for m in names}
    res = {}
    for m in names:
        e = np.zeros((rows, 3))
        for i, t in enumerate(out_tokens):
            s = settings.get(t, {})
            if have[m][i] >= 0 and not s.get("force"):
                e[i] = models[m][tensor][have[m][i]]
            elif "zero" in s:
                pass
            elif "model_token" in s:
                src, tok = s["model_token"]
                e[i] = models[src][tensor][vocabs[src][tok]]
            else:
                present = [n for n in names if have[n][i] >= 0]
                if len(present) == 1:
                    e[i] = models[present[0]][tensor][have[present[0]][i]]
                elif "models/base" in present:
                    e[i] = models["models/base"][tensor][have["models/base"][i]]
                elif present:
                    e[i] = np.mean([models[n][tensor][have[n][i]] for n in present], axis=0)
        e[len(out_tokens):] = e[:len(out_tokens)].mean(axis=0)
        res[m] = e
    return res

def check(out, out_tokens, settings, rows):
    got = read_safetensors(f"{out}/model.safetensors")[0]
    for tensor in ("model.embed_tokens.weight", "lm_head.weight"):
        r = rebuilt(tensor, out_tokens, settings, rows)
        b = r["models/base"]
        want = b + 0.5 * (r["models/a"] - b) + 0.5 * (r["models/b"] - b)
        assert got[tensor].shape == want.shape and np.allclose(got[tensor], want, rtol=0, atol=1e-14), (out, tensor)
    assert json.load(open(f"{out}/config.json"))["vocab_size"] == rows
    v = vocab(out)
    assert [t for t, _ in sorted(v.items(), key=lambda kv: kv[1])] == out_tokens, (out, v)
    decoder = json.load(open(f"{out}/tokenizer_config.json"))["added_tokens_decoder"]
    assert sorted(int(i) for i in decoder) == sorted(i for t, i in v.items() if t not in vocabs["models/base"] or t == "<s>")
    print(out, "ok:", " ".join(out_tokens), rows, "rows")

# union: the base's tokens, then a's plain ones it lacks (x, y), b's (z), then the added ones (<extra>).
check("union", ["<s>", "t1", "t2", "t3", "t4", "x", "y", "z", "<extra>"], {}, 9)
check("block", ["<s>", "t1", "t2", "t3", "t4", "<new>"], {"<new>": {"model_token": ("models/a", "x")},
                                                          "t1": {"zero": True, "force": True}}, 8)
got = read_safetensors("from_b/model.safetensors")[0]
assert got["model.embed_tokens.weight"].shape == (7, 3)
assert json.load(open("from_b/config.json"))["vocab_size"] == 7
assert open("from_b/tokenizer.json", "rb").read() == open("models/b/tokenizer.json", "rb").read()
print("from_b ok: b's tokenizer as it is, 7 rows")
PY
