# Optional: transformers' from_pretrained loads wavg's folders. Needs a Python with transformers and torch, named
# by WAVG_TRANSFORMERS_PYTHON (a venv outside the repository, e.g. python3 -m venv --system-site-packages V &&
# V/bin/pip install transformers==4.40.2, which works with Debian's torch 1.13); skipped without one. Two tiny GPT-2
# models saved by save_pretrained in 1 KB shards merge into a sharded safetensors folder and a .bin folder; each
# loads with from_pretrained (which checks the index, the shards and their "format" metadata), its state_dict
# equal to torch's float64 mean of the two rounded once, and config.json copied.
PY=${WAVG_TRANSFORMERS_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import transformers, torch' 2>/dev/null ||
  { echo "no WAVG_TRANSFORMERS_PYTHON with transformers"; exit 77; }
"$PY" - <<'PYTHON'
import torch, transformers
cfg = transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=8)
for i in (1, 2):
    torch.manual_seed(i)
    transformers.GPT2Model(cfg).save_pretrained(f"run{i}", safe_serialization=True, max_shard_size="1KB")
PYTHON
"$WAVG" merge -q run1/ run2/ -o avg/ --shard-size 1KB
"$WAVG" merge -q run1/ run2/ -o avgbin/ --format hf-bin --shard-size 1KB
"$PY" - <<'PYTHON'
import torch, transformers
ins = [transformers.GPT2Model.from_pretrained(f"run{i}").state_dict() for i in (1, 2)]
for folder, st in (("avg", True), ("avgbin", False)):
    out = transformers.GPT2Model.from_pretrained(folder, use_safetensors=st).state_dict()
    assert sorted(out) == sorted(ins[0])
    for k, t in out.items():
        want = torch.stack([x[k].double() for x in ins]).mean(0).to(t.dtype) if t.is_floating_point() else ins[0][k]
        assert torch.equal(t, want), (folder, k)
assert open("avg/config.json").read() == open("run1/config.json").read()
print("ok")
PYTHON
