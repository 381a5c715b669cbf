# Hand-made ZeRO 2 checkpoints (4 ranks; w1: 3 values, 5 zeros of alignment padding, w2: 8 values) that DeepSpeed
# would not write: param_alignment_paddings with the wrong number of groups or of parameters, a negative padding,
# one reaching past the partitions, ranks that disagree; a name given twice (a parameter in two groups, a buffer
# that is also a parameter, a shared_params alias that is also a parameter). Each is one error line, exit 1, and
# nothing is written (zero_to_fp32 would index past a list, or let one tensor's values overwrite another's).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import collections, os
import torch

S = torch.Size
def save(folder, shapes, paddings, rank1_paddings=None, shared=None, buffers=()):
    os.makedirs(folder)
    flat = torch.cat([torch.tensor([1., 2., 3.]), torch.zeros(5), torch.arange(10., 18.)])
    groups = [flat] * len(shapes)
    for r in range(4):
        optim = {"zero_stage": 2, "partition_count": [4] * len(shapes),
                 "single_partition_of_fp32_groups": [g[4 * r:4 * r + 4].clone() for g in groups],
                 "param_alignment_paddings": rank1_paddings if r == 1 and rank1_paddings else paddings}
        torch.save({"optimizer_state_dict": optim}, f"{folder}/zero_pp_rank_{r}_mp_rank_00_optim_states.pt")
    module = collections.OrderedDict((b, torch.ones(2)) for b in buffers)
    torch.save({"module": module, "buffer_names": list(buffers),
                "param_shapes": [collections.OrderedDict(g) for g in shapes], "shared_params": shared or {},
                "frozen_param_shapes": None}, f"{folder}/mp_rank_00_model_states.pt")

one = [[("w1", S([3])), ("w2", S([8]))]]
save("groups", one, [[5, 0], [0, 0]])
save("params", one, [[5]])
save("negative", one, [[-5, 0]])
save("past_end", one, [[100, 0]])
save("ranks", one, [[5, 0]], rank1_paddings=[[4, 1]])
save("two_groups", [[("w1", S([3])), ("w2", S([8]))], [("w1", S([3])), ("w3", S([8]))]], [[5, 0], [5, 0]])
save("buffer", one, [[5, 0]], buffers=["w2"])
save("alias", one, [[5, 0]], shared={"w1": "w2"})
PY
for f in groups params negative past_end ranks two_groups buffer alias; do
  "$WAVG" convert -q $f -o $f.safetensors 2>&1 || echo "exit $?"
  test ! -e $f.safetensors
done
