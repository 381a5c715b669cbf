# Optional: a sliced merge and a tokenizer merge load in transformers. Needs a Python with transformers, torch and
# tokenizers named by WAVG_TRANSFORMERS_PYTHON (see hf_transformers_load.sh); skipped without one. Two fine-tunes
# of a tiny Llama saved by save_pretrained, b with two tokens a lacks, merge by a two-slice SLERP in bfloat16 and by
# a union tokenizer merge (the SLERP too): from_pretrained(torch_dtype="auto") loads each in the dtype config.json says (the one
# written) with the layer count and vocabulary size it says, the tokenizer encodes b's tokens to the rows that hold
# them, and the model runs.
PY=${WAVG_TRANSFORMERS_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import transformers, torch, tokenizers' 2>/dev/null ||
  { echo "no WAVG_TRANSFORMERS_PYTHON with transformers"; exit 77; }
"$PY" - <<'PYTHON'
import tokenizers, torch, transformers
torch.manual_seed(0)
for name, extra in (("a", []), ("b", ["<tool>", "<think>"])):
    vocab = {t: i for i, t in enumerate(["<s>", "</s>", "h", "e", "l", "o", "he", "ll"])}
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, [("h", "e"), ("l", "l")]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.add_tokens(extra)
    cfg = transformers.LlamaConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=4, num_attention_heads=2,
                                   num_key_value_heads=2, vocab_size=len(fast), max_position_embeddings=16,
                                   torch_dtype="float32")
    transformers.LlamaForCausalLM(cfg).save_pretrained(f"models/{name}")
    fast.save_pretrained(f"models/{name}")
PYTHON
cat > slices.yml <<'YML'
slices:
  - sources:
      - model: models/a
        layer_range: [0, 3]
      - model: models/b
        layer_range: [0, 3]
  - sources:
      - model: models/a
        layer_range: [2, 4]
      - model: models/b
        layer_range: [2, 4]
merge_method: slerp
base_model: models/a
parameters:
  t: [0, 1]
tokenizer_source: union
dtype: bfloat16
YML
printf 'models:\n  - model: models/a\n    parameters:\n      weight: 1\n  - model: models/b\n    parameters:\n      weight: 1\nmerge_method: linear\ntokenizer_source: union\n' > union.yml
"$WAVG" merge -q --recipe slices.yml -o sliced/
"$WAVG" merge -q --recipe union.yml -o union/
"$PY" - <<'PYTHON'
import torch, transformers
m = transformers.AutoModelForCausalLM.from_pretrained("sliced", torch_dtype="auto")
assert m.dtype == torch.bfloat16 and m.config.num_hidden_layers == 5 and len(m.model.layers) == 5, m.config
assert m.config.vocab_size == 10 and m.model.embed_tokens.weight.shape[0] == 10
m(torch.tensor([[0, 2, 3]]))
print("sliced: bfloat16, 5 layers, runs")
tok = transformers.AutoTokenizer.from_pretrained("union")
m = transformers.AutoModelForCausalLM.from_pretrained("union", torch_dtype="auto")
b = transformers.AutoModelForCausalLM.from_pretrained("models/b")
ids = tok("<think>", add_special_tokens=False)["input_ids"]
assert len(tok) == 10 and m.config.vocab_size == 10 and m.model.embed_tokens.weight.shape[0] == 10, len(tok)
# a lacks <think>: both models' rows are b's, so the mean (linear, weights 1 and 1) is b's row.
assert torch.equal(m.model.embed_tokens.weight[ids[0]], b.model.embed_tokens.weight[ids[0]])
m(torch.tensor([ids]))
print("union: 10 tokens, <think> is b's row, runs")
PYTHON
