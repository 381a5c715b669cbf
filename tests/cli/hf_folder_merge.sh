# Hugging Face model folders in and out. Three runs saved as save_pretrained lays them out (three safetensors
# shards with model.safetensors.index.json, config.json, tokenizer and generation files, a README, a hidden file
# and a stale pytorch_model.bin) merge into a folder of shards of at most --shard-size: an independent reader (the
# JSON header and numpy) finds every tensor once, in the shard the index names, equal to numpy's float64 mean
# rounded once (integers from input 1); metadata.total_size is the tensors' bytes; each shard's __metadata__ has
# transformers' "format": "pt" and the provenance; input 1's other plain files are copied byte for byte, weights
# and hidden files are not. An index file names its folder too, and one shard is model.safetensors without an
# index. Folders of torch.save shards (pytorch_model.bin.index.json) merge into --format hf-bin shards that
# torch.load(weights_only=True) opens, and a folder converts to a .pt file torch loads.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "python3-torch or numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import json, os, numpy as np, torch
from hf_tools import model, save_sharded
groups = [["embed.weight"], ["layers.0.attn.weight", "layers.0.attn.bias"],
          ["layers.1.attn.weight", "layers.1.scale", "position_ids"]]
for i in (1, 2, 3):
    save_sharded(f"run{i}", model(i), groups)
    save_sharded(f"bin{i}", model(i), groups, kind="bin")
    json.dump({"model_type": "tiny", "run": i}, open(f"run{i}/config.json", "w"))
    json.dump({"max_length": 20}, open(f"run{i}/generation_config.json", "w"))
    open(f"run{i}/tokenizer.json", "w").write('{"version": "1.0", "run": %d}' % i)
    open(f"run{i}/README.md", "w").write("# tiny\n")
    open(f"run{i}/.gitattributes", "w").write("*.safetensors filter=lfs\n")
    torch.save({"stale": torch.ones(1)}, f"run{i}/pytorch_model.bin")
PY
"$WAVG" merge -q run1/ run2/ run3/ -o avg/ --shard-size 100B
"$WAVG" merge -q run1/model.safetensors.index.json run2 run3/ -o one/
"$WAVG" merge -q bin1 bin2 bin3 -o avgbin/ --format hf-bin --shard-size 100B
"$WAVG" convert -q bin1/ -o bin1.pt
ls -A avg one avgbin
/usr/bin/python3 - <<'PY'
import json, os, numpy as np, torch
from hf_tools import model, mean_rounded, read_safetensors, same
ins = [model(i) for i in (1, 2, 3)]
want = {k: mean_rounded([m[k] for m in ins]) for k in ins[0]}

index = json.load(open("avg/model.safetensors.index.json"))
shards = sorted(set(index["weight_map"].values()))
assert shards == [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)], shards
assert index["metadata"]["total_size"] == sum(a.nbytes for a in want.values())
assert index["metadata"]["wavg_command"] == "merge"
seen = {}
for s in shards:
    got, meta = read_safetensors(f"avg/{s}")
    assert meta["format"] == "pt" and meta["wavg_command"] == "merge", meta
    assert len(got) == 1 or sum(a.nbytes for a in got.values()) <= 100, s
    for k, a in got.items():
        assert k not in seen and index["weight_map"][k] == s, k
        seen[k] = a
assert sorted(seen) == sorted(want)
for k in want:
    assert same(seen[k], want[k]), k
for f in ("config.json", "generation_config.json", "tokenizer.json", "README.md"):
    assert open(f"avg/{f}", "rb").read() == open(f"run1/{f}", "rb").read(), f

got, meta = read_safetensors("one/model.safetensors")
assert meta["format"] == "pt" and sorted(got) == sorted(want)
assert all(same(got[k], want[k]) for k in want)

index = json.load(open("avgbin/pytorch_model.bin.index.json"))
assert index["metadata"]["total_size"] == sum(a.nbytes for a in want.values())
seen = {}
for s in sorted(set(index["weight_map"].values())):
    sd = torch.load(f"avgbin/{s}", weights_only=True)
    for k, t in sd.items():
        assert k not in seen and index["weight_map"][k] == s, k
        seen[k] = t.numpy()
assert sorted(seen) == sorted(want) and all(same(seen[k], want[k]) for k in want)

sd = torch.load("bin1.pt", weights_only=True)
assert sorted(sd) == sorted(ins[0]) and all(same(sd[k].numpy(), ins[0][k]) for k in ins[0])
print("ok")
PY
