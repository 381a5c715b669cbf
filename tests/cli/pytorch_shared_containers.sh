# A pickle that reaches one dict by two paths (Python's memo shares it) names each container once: a dict of
# tensors reached again is refused in one line naming both paths (59 levels of dicts that each hold the dict below
# twice named 2^59 paths, millions of tensors before the old visit limit), while a dict without tensors reached
# again (a config saved under two keys) is kept once more as an entry, and the file still merges. Written by
# torch.save (python3-torch).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
d = {"w": torch.zeros(2)}
for _ in range(3):
    d = {"a": d, "b": d}
torch.save(d, "dag.pt")
cfg = {"lr": 0.1}
torch.save({"w": torch.ones(2), "cfg": cfg, "again": cfg}, "cfg.pt")
PY
code=0
"$WAVG" merge -q dag.pt dag.pt -o out.safetensors || code=$?
echo "dag: exit $code"
"$WAVG" merge -q cfg.pt cfg.pt -o cfg.safetensors && echo "cfg: exit 0"
ls out.safetensors 2>/dev/null || echo "nothing written"
