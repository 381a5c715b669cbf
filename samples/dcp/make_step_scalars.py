"""Writes asgd_a/, asgd_b/: torch.distributed.checkpoint.save (no_dist=True) of {"model": Linear(2, 1) state_dict,
"optim": ASGD state_dict, "nadam": NAdam state_dict}, both optimizers over the same Linear, stepped 2 and 5 times
on the loss sum(model(ones(1, 2))), so their step-derived scalars (ASGD's step, eta, mu; NAdam's step, mu_product)
differ between the two. step_scalars.json holds every tensor as torch held it, for the tests.

    /work/venvs/torch/bin/python samples/dcp/make_step_scalars.py
"""
import json
import os
import shutil

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def trained(steps):
    """Returns the state after `steps` steps; tests/cli/roles_torch_step_scalars.sh imports it to write .pt inputs."""
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    asgd = torch.optim.ASGD(model.parameters(), lr=0.1, t0=1)
    nadam = torch.optim.NAdam(model.parameters(), lr=0.01)
    for _ in range(steps):
        asgd.zero_grad()
        model(torch.ones(1, 2)).sum().backward()
        asgd.step()
        nadam.step()
    return {"model": model.state_dict(), "optim": asgd.state_dict(), "nadam": nadam.state_dict()}


def flat(state):
    """Returns every optimizer state tensor of `state` as a list, by its dotted name."""
    out = {}
    for opt in ("optim", "nadam"):
        for index, per_param in state[opt]["state"].items():
            for key, v in per_param.items():
                out["%s.state.%d.%s" % (opt, index, key)] = v.tolist()
    return out


if __name__ == "__main__":
    import torch.distributed.checkpoint as dcp

    values = {}
    for name, steps in (("a", 2), ("b", 5)):
        state = trained(steps)
        folder = os.path.join(HERE, "asgd_" + name)
        shutil.rmtree(folder, ignore_errors=True)
        dcp.save(state, checkpoint_id=folder, no_dist=True)
        values[name] = flat(state)
    with open(os.path.join(HERE, "step_scalars.json"), "w") as f:
        json.dump(values, f, indent=1, sort_keys=True)
        f.write("\n")
