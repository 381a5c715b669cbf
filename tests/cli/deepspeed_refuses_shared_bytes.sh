# ZeRO 2 checkpoints saved by torch.save (2 ranks, one param group of w1 and w2, 4 values each) whose rank 1 holds
# partitions that share a storage, which DeepSpeed never saves: Adam's exp_avg the fp32 partition itself, or two
# groups' partitions overlapping views of one tensor. Each is refused naming both, exit 1, nothing written: read,
# one partition's mean would be written over the other's. The same layout with every partition apart merges.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import collections, os
import torch

def save(folder, share):
    os.makedirs(folder)
    groups = 2 if share == "views" else 1
    for r in range(2):
        parts = [torch.arange(4.) + 4 * r + 8 * g for g in range(groups)]
        if share == "views" and r == 1:
            flat = torch.arange(12.)
            parts = [flat[0:4], flat[2:6]]
        state = {g: {"step": torch.tensor(3.), "exp_avg": torch.full((4,), 0.5)} for g in range(groups)}
        if share == "same" and r == 1:
            state[0]["exp_avg"] = parts[0]
        optim = {"zero_stage": 2, "partition_count": [2] * groups, "single_partition_of_fp32_groups": parts,
                 "param_alignment_paddings": [[0, 0]] * groups,
                 "base_optimizer_state": {"state": state, "param_groups": [{"lr": 0.1}] * groups}}
        torch.save({"optimizer_state_dict": optim}, f"{folder}/zero_pp_rank_{r}_mp_rank_00_optim_states.pt")
    shapes = [collections.OrderedDict([(f"w{2 * g + 1}", torch.Size([4])), (f"w{2 * g + 2}", torch.Size([4]))])
              for g in range(groups)]
    torch.save({"module": collections.OrderedDict(), "buffer_names": [], "param_shapes": shapes,
                "shared_params": {}, "frozen_param_shapes": None}, f"{folder}/mp_rank_00_model_states.pt")

for share in ("apart", "same", "views"):
    save(share, share)
PY
"$WAVG" merge -q apart apart -o apart.safetensors && echo "apart: exit 0"
for f in same views; do
  "$WAVG" merge -q $f apart -o $f.safetensors || echo "$f: exit $?"
  test ! -e $f.safetensors
done
