# A tokenizer union that adds a whole vocabulary (a base of 16 tokens, a model of 100,000) runs in seconds and in
# bounded memory: parsing tokenizer.json took n^2 / 2 string comparisons (76 s here) and every default row was
# kept in double to the end (their cache is now dropped past 16 MiB). The output's embeddings are the model's
# rows, bit for bit (task arithmetic with weight 1: base + (x - base) in double is x), for all 100,000 tokens.
/usr/bin/python3 - <<'PY'
import json, os, struct
import numpy as np
rng = np.random.default_rng(1)
def save(name, tokens):
    os.makedirs(name)
    n = len(tokens)
    tensors = {"model.embed_tokens.weight": rng.normal(size=(n, 8)).astype(np.float32),
               "model.layers.0.mlp.w": rng.normal(size=(8, 8)).astype(np.float32),
               "lm_head.weight": rng.normal(size=(n, 8)).astype(np.float32)}
    header, data = {}, b""
    for k, v in tensors.items():
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [len(data), len(data) + v.nbytes]}
        data += v.tobytes()
    text = json.dumps(header).encode()
    open(f"{name}/model.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
    json.dump({"vocab_size": n, "num_hidden_layers": 1}, open(f"{name}/config.json", "w"))
    json.dump({"version": "1.0", "added_tokens": [],
               "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)}, "merges": []}},
              open(f"{name}/tokenizer.json", "w"))
save("base", [f"t{i}" for i in range(16)])
save("big", [f"t{i}" for i in range(100000)])
PY
printf 'models:\n  - model: big\n    parameters: {weight: 1}\nbase_model: base\nmerge_method: task_arithmetic\ntokenizer_source: union\n' > u.yml
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 512 40 "$WAVG" merge -q --recipe u.yml -o out/
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json
import numpy as np
from hf_tools import read_safetensors
got, big = read_safetensors("out/model.safetensors")[0], read_safetensors("big/model.safetensors")[0]
tokenizer = json.load(open("out/tokenizer.json"))
vocab = dict(tokenizer["model"]["vocab"], **{e["content"]: e["id"] for e in tokenizer["added_tokens"]})
order = [vocab[f"t{i}"] for i in range(100000)]
for k in ("model.embed_tokens.weight", "lm_head.weight"):
    assert np.array_equal(got[k][order], big[k]), k
print(json.load(open("out/config.json"))["vocab_size"], "rows, the model's own")
PY
