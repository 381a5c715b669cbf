# A Hugging Face folder whose index and shards disagree is refused in one line naming the file, exit 1, nothing written:
# an index naming a tensor its shard lacks, a shard file the index does not name, a tensor in two shards, a key twice in
# weight_map, shard paths that leave the folder (.., absolute, a symbolic link, a linked folder), shard names that
# disagree on their count, a FIFO for a shard, an index that is truncated, not UTF-8, larger than 64 MiB, without a
# weight_map object or with a shard name that is not a string, and a folder with no weights. An existing output folder
# is refused without --force (exit 2), and --force replaces only a model folder (not a folder of notes); a merge that
# fails leaves neither the output folder nor its temporary directory.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import json, os, shutil, numpy as np
from hf_tools import model, save_sharded, write_index, write_safetensors
groups = [["embed.weight", "layers.0.attn.weight", "layers.0.attn.bias"],
          ["layers.1.attn.weight", "layers.1.scale", "position_ids"]]
save_sharded("good", model(1), groups)
def variant(name, edit):
    shutil.copytree("good", name)
    idx = json.load(open(f"{name}/model.safetensors.index.json"))
    edit(name, idx["weight_map"])
    write_index(name, "model.safetensors.index.json", idx["weight_map"], 0)
variant("absent", lambda d, m: m.update({"lm_head.weight": "model-00001-of-00002.safetensors"}))
variant("unlisted", lambda d, m: shutil.copy(f"{d}/model-00002-of-00002.safetensors",
                                             f"{d}/model-00003-of-00003.safetensors"))
def twice(d, m):
    t = model(1)
    write_safetensors(f"{d}/model-00002-of-00002.safetensors", {k: t[k] for k in groups[1] + ["embed.weight"]})
variant("twice", twice)
def escape(d, m):
    shutil.copy(f"{d}/model-00002-of-00002.safetensors", "outside.safetensors")
    for k in groups[1]: m[k] = "../outside.safetensors"
variant("dotdot", escape)
def absolute(d, m):
    for k in groups[1]: m[k] = "/tmp/outside.safetensors"
variant("absolute", absolute)
def link(d, m):
    os.rename(f"{d}/model-00002-of-00002.safetensors", f"{d}/real.safetensors")
    os.symlink("real.safetensors", f"{d}/model-00002-of-00002.safetensors")
variant("symlink", link)
def linked_dir(d, m):
    os.makedirs("elsewhere", exist_ok=True)
    shutil.move(f"{d}/model-00002-of-00002.safetensors", "elsewhere/model-00002-of-00002.safetensors")
    os.symlink("../elsewhere", f"{d}/sub")
    for k in groups[1]: m[k] = "sub/model-00002-of-00002.safetensors"
variant("linkeddir", linked_dir)
def count(d, m):
    os.rename(f"{d}/model-00002-of-00002.safetensors", f"{d}/model-00002-of-00003.safetensors")
    for k in groups[1]: m[k] = "model-00002-of-00003.safetensors"
variant("count", count)
shutil.copytree("good", "dupkey")
text = open("dupkey/model.safetensors.index.json").read()
open("dupkey/model.safetensors.index.json", "w").write(
    text.replace('"weight_map": {', '"weight_map": {"position_ids": "model-00001-of-00002.safetensors", ', 1))
def index_text(name, text):
    shutil.copytree("good", name)
    open(f"{name}/model.safetensors.index.json", "wb").write(text)
good_index = open("good/model.safetensors.index.json", "rb").read()
index_text("truncated", good_index[:len(good_index) // 2])
index_text("notutf8", good_index.replace(b"embed", b"emb\xff"))
index_text("notobject", b'{"weight_map": ["model-00001-of-00002.safetensors"]}')
index_text("nonstring", good_index.replace(b'"model-00002-of-00002.safetensors"', b"7", 1))
index_text("huge", b"")
os.truncate("huge/model.safetensors.index.json", 65 << 20)
shutil.copytree("good", "fifo")
os.remove("fifo/model-00002-of-00002.safetensors")
os.mkfifo("fifo/model-00002-of-00002.safetensors")
os.makedirs("empty")
open("empty/config.json", "w").write("{}")
PY
for d in absent unlisted twice dupkey dotdot absolute symlink linkeddir count truncated notutf8 notobject nonstring \
         huge fifo empty; do
  code=0
  "$WAVG" merge good "$d" -o out/ || code=$?
  echo "$d: exit $code"
done
mkdir taken
code=0
"$WAVG" merge good good/model.safetensors.index.json -o taken/ || code=$?
echo "taken: exit $code"
mkdir notmodel && echo keep > notmodel/notes.txt
code=0
"$WAVG" merge good good -o notmodel/ --force || code=$?
echo "notmodel: exit $code, $(cat notmodel/notes.txt)"
# Neither an output folder nor a temporary one (.out.wavg-XXXXXX) is left.
ls -A | grep -e '^out$' -e 'wavg-' && exit 1
echo "nothing written"
