# DeepSpeed folders copied from samples/deepspeed/run (ZeRO stage 2, two ranks) whose model states declare a
# data-parallel world of 2^40 ranks (read: wavg counts the rank files it finds, and keeps the number as an entry),
# and a parameter of 2^40 x 2^40 values (refused in one line, exit 1), each within 256 MiB and 20 s
# (tests/support/bounded.py).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
for f in ranks shape; do
  mkdir $f && cp -r "$SAMPLES"/deepspeed/run/global_step1000 $f/ && echo global_step1000 >$f/latest
done
/usr/bin/python3 - <<'PY'
import torch
for folder, edit in (("ranks", lambda s: s.__setitem__("dp_world_size", 1 << 40)),
                     ("shape", lambda s: s["param_shapes"][0].__setitem__("fc1.weight", torch.Size([1 << 40, 1 << 40])))):
    path = f"{folder}/global_step1000/mp_rank_00_model_states.pt"
    state = torch.load(path, map_location="cpu")
    edit(state)
    torch.save(state, path)
PY
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect ranks | tail -2
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect shape
