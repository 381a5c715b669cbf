# The last-resort rule speaks up: in a checkpoint whose codec gives roles to some tensors (a Lightning-style .ckpt
# written by torch 1.13: state_dict, optimizer_states with Adam's state, callbacks), a tensor outside that structure
# (the ModelCheckpoint callback's best_model_score, and the state_dict's tensors, which the pickle does not mark as
# a module's parameters) is taken for a weight by the rule, and -v names it, as inspect marks it "(by name)". A plain
# state dict (no role stated anywhere) is weights by what it is: nothing listed.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
for i in range(2):
    torch.manual_seed(i)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    torch.save({"epoch": 1, "global_step": 1, "state_dict": model.state_dict(), "optimizer_states": [opt.state_dict()],
                "callbacks": {"ModelCheckpoint{'monitor': 'val_acc'}": {"best_model_score": torch.tensor(0.5 + i)}}},
               "p%d.ckpt" % i)
    torch.save(model.state_dict(), "plain%d.pt" % i)
PY
"$WAVG" merge p0.ckpt p1.ckpt -o out.safetensors -v 2>&1 | grep "role by name"
"$WAVG" inspect p0.ckpt | grep -F "(by name)" | sed -E 's/ {2,}/|/g' | cut -d'|' -f1,4
"$WAVG" merge plain0.pt plain1.pt -o plain.safetensors -v 2>&1 | grep -c "role by name" || true
