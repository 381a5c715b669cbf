# --force over a Hugging Face folder whose old index (hand-edited or hostile) lists the user's files: train.py,
# .git/HEAD, a second model's checkpoint-1/model.safetensors, and model-00002-of-00002.safetensors, which is a
# symbolic link to the user's keep.safetensors. The output removes only weights files of the folder itself that are
# plain files (removal.hpp): each of those stays byte for byte (the link stays a link), the old shard listed beside
# them goes, and the new model reads back (hf_tools.py, not wavg) as the mean.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import json, os, numpy as np
from hf_tools import write_safetensors, write_index
write_safetensors("a.safetensors", {"w": np.full(4, 1, np.float32)})
write_safetensors("b.safetensors", {"w": np.full(4, 2, np.float32)})
os.makedirs("out/.git")
os.makedirs("out/checkpoint-1")
open("out/.git/HEAD", "w").write("ref: refs/heads/main\n")
open("out/train.py", "w").write("print('train')\n")
write_safetensors("out/checkpoint-1/model.safetensors", {"w": np.zeros(4, np.float32)})
write_safetensors("keep.safetensors", {"w": np.ones(4, np.float32)})
os.symlink("../keep.safetensors", "out/model-00002-of-00002.safetensors")
write_safetensors("out/model-00001-of-00002.safetensors", {"w": np.zeros(4, np.float32)})
write_index("out", "model.safetensors.index.json", {"w": "model-00001-of-00002.safetensors",
    "a": "train.py", "b": ".git/HEAD", "c": "checkpoint-1/model.safetensors",
    "d": "model-00002-of-00002.safetensors"}, 16)
json.dump({"model_type": "test"}, open("out/config.json", "w"))
PY
sha256sum out/.git/HEAD out/train.py out/checkpoint-1/model.safetensors keep.safetensors >before
"$WAVG" merge -q a.safetensors b.safetensors -o out/ --format hf --force
sha256sum --quiet -c before && echo "the user's files and the second model are byte for byte as before"
echo "the link: $(readlink out/model-00002-of-00002.safetensors)"
(cd out && find . \( -type f -o -type l \) | LC_ALL=C sort)
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
assert (read_safetensors("out/model.safetensors")[0]["w"] == 1.5).all()
print("the new model holds the mean")
PY
