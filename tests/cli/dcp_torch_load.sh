# Optional: torch.distributed.checkpoint.load resumes from wavg's DCP outputs. Needs a Python with torch >= 2.4
# (PyPI), named by WAVG_TORCH2_PYTHON; skipped without one. The samples' three checkpoints merge into a DCP folder
# in input 1's layout, once with a one-process input 1 and once with the two-rank one; each loads (no_dist) into a
# fresh Net and Adam (samples/dcp/make_dcp.py), which then hold the closed forms at k = 2, input 1's step counters
# and learning rate, and take one optimizer step.
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch.distributed.checkpoint' 2>/dev/null ||
  { echo "no WAVG_TORCH2_PYTHON with torch >= 2.4"; exit 77; }
R="$SAMPLES"/dcp/run
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 "$R"/step-300 -o one/
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 "$R"/step-200 -o two/
ls -A one two
"$PY" - "$SAMPLES"/dcp <<'PYTHON' 2>/dev/null
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import torch, torch.distributed.checkpoint as dcp
from make_dcp import model_and_optimizer, state_dict, formula
for folder, k1 in (("one", 1), ("two", 3)):
    net, opt = model_and_optimizer(7)  # the structure only: every value is replaced by the load
    sd = state_dict(net, opt)
    dcp.load(sd, checkpoint_id=folder, no_dist=True)
    net.load_state_dict(sd["model"])
    opt.load_state_dict(sd["optim"])
    for p, (name, t) in enumerate(net.named_parameters()):
        assert torch.equal(t, formula(t.shape, 2, p, float, 1 / 16)), name
        st = opt.state[t]
        assert torch.equal(st["exp_avg"], formula(t.shape, 2, p, lambda k: -k / 2, 1 / 32)), name
        assert torch.equal(st["exp_avg_sq"], formula(t.shape, 2, p, lambda k: k / 4, 1 / 64)), name
        assert st["step"].item() == 100 * k1, (name, st["step"])
    assert torch.equal(net.scale, formula((5,), 2, 0, float, 1 / 8))
    assert opt.param_groups[0]["lr"] == 0.001 * k1
    net(torch.ones(2, 3)).sum().backward()
    opt.step()
    assert all(torch.isfinite(t).all() for t in net.parameters())
print("ok")
PYTHON
