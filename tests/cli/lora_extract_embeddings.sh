# merge --lora-extract writes a module as PEFT's lora_embedding_A/B where PEFT would find an nn.Embedding, as the
# model's structure says: with a config.json, a table of vocab_size or max_position_embeddings rows by hidden_size
# outside the layers (whatever its name: model.tok, model.pos), not the untied head (lm_head) nor a layer's weight
# of a table's shape; without one, the known architectures' names (GPT-NeoX's embed_in is the embedding, its
# embed_out the head, a Linear). Each module's s*B*A (transposed for an embedding) is numpy's truncated SVD of the
# difference.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import write_safetensors
rng = np.random.default_rng(11)
cases = {"neox": {"gpt_neox.embed_in.weight": (9, 4), "gpt_neox.layers.0.attention.dense.weight": (4, 4),
                  "embed_out.weight": (9, 4)},
         "hf": {"model.tok.weight": (9, 4), "model.pos.weight": (5, 4), "model.layers.0.proj.weight": (4, 4),
                "model.layers.0.wide.weight": (5, 4), "lm_head.weight": (9, 4)}}
for case, shapes in cases.items():
    base = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    tuned = {n: (v + 0.1 * rng.standard_normal(v.shape)).astype(np.float32) for n, v in base.items()}
    for which, tensors in (("base", base), ("tuned", tuned)):
        if case == "neox":
            write_safetensors("%s_%s.safetensors" % (case, which), tensors)
            continue
        os.makedirs("%s_%s" % (case, which))
        write_safetensors("%s_%s/model.safetensors" % (case, which), tensors, {"format": "pt"})
        json.dump({"model_type": "llama", "vocab_size": 9, "hidden_size": 4, "max_position_embeddings": 5,
                   "tie_word_embeddings": False}, open("%s_%s/config.json" % (case, which), "w"))
PY
"$WAVG" merge -q --lora-extract 2 neox_base.safetensors neox_tuned.safetensors -o neox/
"$WAVG" merge -q --lora-extract 2 hf_base hf_tuned -o hf/
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
def best(d, k):
    u, s, vt = np.linalg.svd(d)
    return (u[:, :k] * s[:k]) @ vt[:k]
for case, base, tuned, embeddings in (
        ("neox", "neox_base.safetensors", "neox_tuned.safetensors", {"gpt_neox.embed_in"}),
        ("hf", "hf_base/model.safetensors", "hf_tuned/model.safetensors", {"model.tok", "model.pos"})):
    b, t = read_safetensors(base)[0], read_safetensors(tuned)[0]
    out = read_safetensors(case + "/adapter_model.safetensors")[0]
    found = set()
    for name in t:
        m = name[:-len(".weight")]
        p = "base_model.model." + m
        d = t[name].astype(np.float64) - b[name]
        if p + ".lora_embedding_A" in out:
            found.add(m)
            got = (out[p + ".lora_embedding_B"].astype(np.float64) @ out[p + ".lora_embedding_A"]).T
        else:
            got = out[p + ".lora_B.weight"].astype(np.float64) @ out[p + ".lora_A.weight"]
        assert np.allclose(got, best(d, 2), rtol=1e-5, atol=1e-6), (case, name)
    assert found == embeddings, (case, found, embeddings)
print("embedding tables by the model's structure")
PY
