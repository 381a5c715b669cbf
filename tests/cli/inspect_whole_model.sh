# inspect of a whole-model pickle (torch.save(model)) counts the modules' plain attributes (training, in_features,
# _is_full_backward_hook, ...) in one line; -v lists them. The count is what torch's own modules hold, read here by
# python: every attribute but the parameters, buffers and submodules (named as tensors) and the hook dictionaries
# (empty, so they hold nothing to keep).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
torch.save(model, "model.pt")
plain = (bool, int, float, str, type(None), tuple, set)
n = 0
for m in model.modules():
    for k, v in vars(m).items():
        if k in ("_parameters", "_buffers", "_modules") or (isinstance(v, dict) and not v):
            continue
        n += isinstance(v, plain)
print("torch: %d plain attributes" % n)
PY
"$WAVG" inspect model.pt | tail -3
"$WAVG" inspect -v model.pt | grep -c 'not a tensor'
