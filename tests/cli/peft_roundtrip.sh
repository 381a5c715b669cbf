# Optional: wavg's adapters and folded models as PEFT and transformers load them. Needs a Python with peft and
# transformers, named by WAVG_PEFT_PYTHON; skipped without one. A tiny Llama is made and three LoRA clients of ranks
# 4, 8 and 16 (q_proj and v_proj, lora_alpha 16) are trained a few steps with PEFT. wavg's exact aggregate (-w 1,2,1)
# loads with PeftModel.from_pretrained and gives the logits of the base plus torch's float64 mean update
# sum_i w_i s_i B_i A_i; folded into the base (--lora-apply, an HF folder) it loads with from_pretrained and equals
# merge_and_unload()'s weights; two rank-8 clients merged with --lora factorwise hold torch's float64 means of A and
# of B rounded once to float32, bit for bit. The aggregate written with --format peft-bin (adapter_model.bin)
# loads with the same logits. Two DoRA clients (ranks 4 and 8, weighted 1:3) merge into a DoRA adapter that PEFT
# loads, whose merge_and_unload() weights are torch's m * (W + dW) / ||W + dW|| with the mean magnitude and the
# mean update. An adapter extracted at rank 12 (--lora-extract) from a fine-tune of a tiny Llama whose k_proj and
# v_proj are 8 x 16 (so rank_pattern gives them rank 8) loads in PEFT, and each module's s*B*A equals torch's
# float64 SVD truncation of the weight's difference to within 1e-5.
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
for name, r, dora in (("c1", 4, False), ("c2", 8, False), ("c3", 16, False), ("c4", 8, False), ("d1", 4, True),
                      ("d2", 8, True)):
    model = get_peft_model(LlamaForCausalLM.from_pretrained("base"),
                           LoraConfig(r=r, lora_alpha=16, target_modules=["q_proj", "v_proj"], use_dora=dora))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        model(input_ids=tokens, labels=tokens).loss.backward()
        opt.step()
    model.save_pretrained(name)
xcfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                   num_key_value_heads=1, max_position_embeddings=32)
xbase = LlamaForCausalLM(xcfg)
xbase.save_pretrained("xbase")
with torch.no_grad():
    for n, p in xbase.named_parameters():
        if p.dim() == 2 and "layers" in n:
            p += 0.05 * torch.randn_like(p)
xbase.save_pretrained("xtuned")
PYTHON
"$WAVG" merge -q c1 c2 c3 -w 1,2,1 -o agg/
"$WAVG" merge -q --lora-apply base agg -o folded/
"$WAVG" merge -q c2 c4 --lora factorwise -o fedit/
"$WAVG" merge -q c1 c2 c3 -w 1,2,1 --format peft-bin -o aggbin/
"$WAVG" merge -q d1 d2 -w 1,3 -o dora/
"$WAVG" merge -q --lora-extract 12 xbase xtuned -o extracted/
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
import os
assert os.listdir("aggbin") and not os.path.exists("aggbin/adapter_model.safetensors")
aggbin = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained("base"), "aggbin").double()
assert torch.allclose(aggbin(input_ids=tokens).logits, want, rtol=0, atol=1e-5)
print("adapter_model.bin: the same logits")
base = dict(LlamaForCausalLM.from_pretrained("base").named_parameters())
dora = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained("base"), "dora").merge_and_unload().state_dict()
dw, mag = {}, {}
for c, w in zip(("d1", "d2"), (0.25, 0.75)):
    config = json.load(open(c + "/adapter_config.json"))
    t = load_file(c + "/adapter_model.safetensors")
    for k, a in t.items():
        if k.endswith(".lora_A.weight"):
            module = k[len("base_model.model."):-len(".lora_A.weight")]
            b = t[k.replace("lora_A", "lora_B")].double()
            dw[module] = dw.get(module, 0) + w * config["lora_alpha"] / config["r"] * (b @ a.double())
            m = [v for n, v in t.items() if n.startswith(k[:-len("lora_A.weight")] + "lora_magnitude_vector")][0]
            mag[module] = mag.get(module, 0) + w * m.double()
for module, d in dw.items():
    v = base[module + ".weight"].double() + d
    want_w = (mag[module] / v.norm(dim=1))[:, None] * v
    assert torch.allclose(dora[module + ".weight"].double(), want_w, rtol=1e-5, atol=1e-6), module
print("DoRA: PEFT loads the aggregate, mean magnitude times the mean update's direction")
xb = dict(LlamaForCausalLM.from_pretrained("xbase").named_parameters())
xt = dict(LlamaForCausalLM.from_pretrained("xtuned").named_parameters())
config = json.load(open("extracted/adapter_config.json"))
peft = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained("xbase"), "extracted")
checked = 0
for name, module in peft.named_modules():
    if not hasattr(module, "lora_A") or "default" not in module.lora_A:
        continue
    key = name[len("base_model.model."):]
    d = xt[key + ".weight"].double() - xb[key + ".weight"].double()
    k = min(12, *d.shape)
    u, s, vh = torch.linalg.svd(d, full_matrices=False)
    want_d = (u[:, :k] * s[:k]) @ vh[:k]
    got = module.scaling["default"] * (module.lora_B["default"].weight.double() @ module.lora_A["default"].weight.double())
    assert module.lora_A["default"].weight.shape[0] == k, (key, k)
    assert torch.allclose(got, want_d, rtol=0, atol=1e-5), (key, (got - want_d).abs().max())
    checked += 1
assert checked == 15 and config["rank_pattern"] == {f"model.layers.{i}.self_attn.{p}": 8 for i in (0, 1)
                                                     for p in ("k_proj", "v_proj")}, (checked, config["rank_pattern"])
print("extracted: PEFT loads it, each module torch's SVD truncation")
PYTHON
