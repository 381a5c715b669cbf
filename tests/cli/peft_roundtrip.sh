# Optional: wavg's adapters and folded models as PEFT and transformers load them. Needs a Python with peft and
# transformers, named by WAVG_PEFT_PYTHON; skipped without one. A tiny Llama is made and three LoRA clients of ranks
# 4, 8 and 16 (q_proj and v_proj, lora_alpha 16) are trained a few steps with PEFT. wavg's exact aggregate (-w 1,2,1)
# loads with PeftModel.from_pretrained and gives the logits of the base plus torch's float64 mean update
# sum_i w_i s_i B_i A_i; folded into the base (--lora-apply, an HF folder) it loads with from_pretrained and equals
# merge_and_unload()'s weights; two rank-8 clients merged with --lora factorwise hold torch's float64 means of A and
# of B rounded once to float32, bit for bit.
PY=${WAVG_PEFT_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import peft, transformers' 2>/dev/null || { echo "no WAVG_PEFT_PYTHON with peft"; exit 77; }
"$PY" - <<'PYTHON' 2>/dev/null
import torch, warnings
warnings.simplefilter("ignore")
from transformers import LlamaConfig, LlamaForCausalLM
from peft import LoraConfig, get_peft_model
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=2, max_position_embeddings=32)
LlamaForCausalLM(cfg).save_pretrained("base")
tokens = torch.randint(0, 64, (4, 12))
for name, r in (("c1", 4), ("c2", 8), ("c3", 16), ("c4", 8)):
    model = get_peft_model(LlamaForCausalLM.from_pretrained("base"),
                           LoraConfig(r=r, lora_alpha=16, target_modules=["q_proj", "v_proj"]))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        model(input_ids=tokens, labels=tokens).loss.backward()
        opt.step()
    model.save_pretrained(name)
PYTHON
"$WAVG" merge -q c1 c2 c3 -w 1,2,1 -o agg/
"$WAVG" merge -q --lora-apply base agg -o folded/
"$WAVG" merge -q c2 c4 --lora factorwise -o fedit/
"$PY" - <<'PYTHON' 2>/dev/null
import json, torch, warnings
warnings.simplefilter("ignore")
from safetensors.torch import load_file
from transformers import LlamaForCausalLM
from peft import PeftModel
torch.manual_seed(1)
tokens = torch.randint(0, 64, (2, 10))
clients, weights = ("c1", "c2", "c3"), torch.tensor([1.0, 2.0, 1.0], dtype=torch.float64) / 4
mean = LlamaForCausalLM.from_pretrained("base").double()
params = dict(mean.named_parameters())
for c, w in zip(clients, weights):
    config = json.load(open(c + "/adapter_config.json"))
    s = config["lora_alpha"] / config["r"]
    for k, a in load_file(c + "/adapter_model.safetensors").items():
        if k.endswith(".lora_A.weight"):
            module = k[len("base_model.model."):-len(".lora_A.weight")]
            b = load_file(c + "/adapter_model.safetensors")[k.replace("lora_A", "lora_B")]
            params[module + ".weight"].data += w * s * (b.double() @ a.double())
want = mean(input_ids=tokens).logits
agg = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained("base"), "agg").double()
got = agg(input_ids=tokens).logits
assert torch.allclose(got, want, rtol=0, atol=1e-5), (got - want).abs().max()
print("aggregate: rank", json.load(open("agg/adapter_config.json"))["r"], "logits as torch's mean update")
merged = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained("base"), "agg").merge_and_unload().state_dict()
folded = LlamaForCausalLM.from_pretrained("folded").state_dict()
assert sorted(folded) == sorted(merged)
for k in merged:
    assert torch.allclose(folded[k], merged[k], rtol=1e-6, atol=1e-6), k
print("folded: merge_and_unload's weights")
c2, c4, out = (load_file(f + "/adapter_model.safetensors") for f in ("c2", "c4", "fedit"))
assert sorted(out) == sorted(c2)
for k in c2:
    assert torch.equal(out[k], ((c2[k].double() + c4[k].double()) / 2).float()), k
print("factorwise: torch's means bit for bit")
PYTHON
