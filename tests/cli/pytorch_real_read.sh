# Every real PyTorch file (zip and legacy, old zips without .format_version, views with offsets, shared storages,
# float16/bfloat16, a Fortran-order int64 tensor, a nested training checkpoint) converts to safetensors with the
# names and values torch itself reads.
R=$SHARED/real-checkpoints
export LC_ALL=C
[ -d "$R" ] || { echo "no $R"; exit 77; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
for f in "$R"/pt-*/*.pt* "$R"/burn-*/*.pt "$R"/pytorch-*/*.pt; do
  "$WAVG" convert -q "$f" -o "$(basename "$(dirname "$f")")-$(basename "$f").safetensors"
  echo "$f"
done >list.txt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import os, torch
import pytorch_tools as t
import safetensors_tools as st
for f in open("list.txt").read().split("\n")[:-1]:
    name = f"{os.path.basename(os.path.dirname(f))}/{os.path.basename(f)}"
    _, got = st.load(name.replace("/", "-") + ".safetensors")
    want = t.flatten(torch.load(f, map_location="cpu"))
    assert sorted(got) == sorted(want), (sorted(got), sorted(want))
    for key, w in want.items():
        w = w.contiguous()
        assert tuple(got[key].shape) == tuple(w.shape), key
        assert got[key].tobytes() == (w.view(torch.int16) if w.dtype == torch.bfloat16 else w).numpy().tobytes(), key
    print(f"{name}: ok")
PY
