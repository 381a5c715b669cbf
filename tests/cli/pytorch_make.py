"""Makes training checkpoints with Debian's torch for the PyTorch CLI cases: python3 pytorch_make.py zip|legacy N
writes c1.pt .. cN.pt. Each nests a state_dict (with BatchNorm's int64 counter), Adam's state, plain values, and
the awkward tensors: float16, bfloat16, float64, a transposed (Fortran-order) view, a 0-d tensor, two overlapping
views of one storage, bool and int32 buffers, tensors inside a list."""
import sys
import torch


def make(seed, path, legacy):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s, dtype=torch.float32: torch.randn(*s, generator=g).to(dtype)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(r(*p.shape))
        model[1].running_mean.copy_(r(3))
        model[1].num_batches_tracked.fill_(seed)
    opt = torch.optim.Adam(model.parameters(), lr=0.01 * seed)
    model(r(5, 4)).sum().backward()
    opt.step()
    base = r(10)
    ck = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": 7 * seed, "best_acc": 0.9, "name": "run", "flag": True, "nothing": None, "betas": [0.9, 0.999],
        "extra": {"half": r(2, 3, dtype=torch.float16), "bf": r(5, dtype=torch.bfloat16),
                  "f64": r(3, 2, dtype=torch.float64), "fortran": r(3, 4).t(), "scalar": r(1)[0].clone(),
                  "view_a": base[1:5], "view_b": base[3:9].view(2, 3),
                  "mask": torch.tensor([True, False, seed % 2 == 0]), "ints": torch.arange(4, dtype=torch.int32) * seed,
                  "list": [r(2), r(1, 1)]},
    }
    torch.save(ck, path, _use_new_zipfile_serialization=not legacy)


if __name__ == "__main__":
    for i in range(1, int(sys.argv[2]) + 1):
        make(i, f"c{i}.pt", sys.argv[1] == "legacy")
