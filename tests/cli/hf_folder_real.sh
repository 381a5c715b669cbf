# A real model folder (safetensors-coffeevampir3-mlp: model.safetensors written by safetensors.torch.save_model,
# with string __metadata__) is read as a Hugging Face folder: converted to a folder of 1 KB shards, every tensor
# equals the original's bytes as an independent reader (JSON header and numpy) sees them, in the shard the index
# names, and the original's __metadata__ entries are kept beside "format": "pt" and the provenance.
D=$SHARED/real-checkpoints/safetensors-coffeevampir3-mlp
[ -f "$D/model.safetensors" ] || { echo "real checkpoints absent"; exit 77; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
"$WAVG" inspect "$D" | head -1 | sed "s|$D|REAL|"
"$WAVG" convert -q "$D/" -o out/ --shard-size 1KB
/usr/bin/python3 - "$D/model.safetensors" <<'PY'
import json, sys
from hf_tools import read_safetensors, same
want, meta = read_safetensors(sys.argv[1])
index = json.load(open("out/model.safetensors.index.json"))
assert sorted(index["weight_map"]) == sorted(want)
for s in sorted(set(index["weight_map"].values())):
    got, m = read_safetensors(f"out/{s}")
    assert m["format"] == "pt" and m["wavg_command"] == "convert" and all(m[k] == v for k, v in meta.items()), m
    for k, a in got.items():
        assert index["weight_map"][k] == s and same(a, want[k]), k
print(len(set(index["weight_map"].values())), "shards ok")
PY
