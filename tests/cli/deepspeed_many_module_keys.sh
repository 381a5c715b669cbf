# A model states file whose module holds 200,000 entries that are no tensors and whose buffer_names lists 200,000
# names of none (the engine sample's ZeRO 2 checkpoint, padded by torch) is read in time linear in its keys: the
# buffer names and each model file's module keys are looked up in hash tables built once (matching every key
# against every name took 1.4 s at 20,000 of each, and grows with the square). The generous timeout only stops a
# quadratic reader (minutes here); the read itself takes a fraction of a second.
cp -r "$SAMPLES"/deepspeed/engine/zero2/global_step1 in
/usr/bin/python3 - <<'PYTHON'
import torch
p = "in/mp_rank_00_model_states.pt"
sd = torch.load(p, map_location="cpu")
for i in range(200000):
    sd["module"][f"junk_module_key_{i:08d}"] = i
sd["buffer_names"] = list(sd["buffer_names"]) + [f"junk_buffer_name_{i:08d}" for i in range(200000)]
torch.save(sd, p)
PYTHON
timeout 60 "$WAVG" convert -q in -o out.safetensors
/usr/bin/python3 - <<'PYTHON'
import json, struct, torch
with open("out.safetensors", "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
header.pop("__metadata__")
sd = torch.load("in/mp_rank_00_model_states.pt", map_location="cpu")
buffers = set(sd["buffer_names"])
want = [n for g in sd["param_shapes"] for n in g] + [n for n in sd["module"] if n in buffers]
assert sorted(n for n in header if not n.startswith("optimizer/")) == sorted(want), sorted(header)
print("read: the buffer and parameters, no junk")
PYTHON
