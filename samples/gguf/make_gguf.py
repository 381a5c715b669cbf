#!/usr/bin/env python3
"""Writes the GGUF samples with the `gguf` package's GGUFWriter (llama.cpp's Python writer; README.md here):

    make_gguf.py OUTDIR      (a Python with gguf and numpy: pip install gguf numpy)

a.gguf, b.gguf   two "fine-tunes" of a tiny Llama (2 blocks, 32-wide, vocabulary of 32), as llama.cpp's
                 convert_hf_to_gguf.py --outtype q8_0 writes one: matrices Q8_0, norms F32, llama.* and
                 tokenizer.ggml.* metadata; their values differ by a seeded random offset
types.gguf       one tensor of each type wavg reads: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 quantized by
                 gguf's own quantizer, Q2_K .. Q6_K and Q8_K as random bytes with sane float16 scales (gguf cannot
                 quantize to them), so their decoding is checked against gguf's dequantizer
"""

import os
import sys

import gguf
import numpy as np

QT = gguf.GGMLQuantizationType


# The tiny Llama's tensors in llama.cpp's order: (name, rows, cols) of each matrix, cols None for a norm (a vector
# of 32).
LLAMA_TENSORS = [("token_embd.weight", 32, 32)] + [
    (f"blk.{b}.{name}", rows, cols) for b in range(2) for name, rows, cols in (
        ("attn_norm.weight", 32, None), ("attn_q.weight", 32, 32), ("attn_k.weight", 16, 32),
        ("attn_v.weight", 16, 32), ("attn_output.weight", 32, 32), ("ffn_norm.weight", 32, None),
        ("ffn_gate.weight", 64, 32), ("ffn_up.weight", 64, 32), ("ffn_down.weight", 32, 64))
] + [("output_norm.weight", 32, None), ("output.weight", 32, 32)]


def llama_file(path, tensors, file_type=gguf.LlamaFileType.MOSTLY_Q8_0):
    """Writes a tiny Llama with tensors {name: (array, raw_dtype or None)} in LLAMA_TENSORS' order."""
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("tiny-llama")
    w.add_context_length(64)
    w.add_embedding_length(32)
    w.add_block_count(2)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_dimension_count(8)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(file_type)
    w.add_tokenizer_model("llama")
    tokens = ["<unk>", "<s>", "</s>"] + ["tok%d" % i for i in range(29)]
    w.add_token_list(tokens)
    w.add_token_scores([float(-i) for i in range(32)])
    w.add_token_types([2, 3, 3] + [1] * 29)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    for name, _, _ in LLAMA_TENSORS:
        data, raw = tensors[name]
        w.add_tensor(name, data, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_llama(path, seed):
    rng = np.random.default_rng(seed)
    base = np.random.default_rng(0)
    tensors = {}
    for name, rows, cols in LLAMA_TENSORS:
        if cols is None:
            tensors[name] = ((1.0 + rng.standard_normal(32) * 0.01).astype(np.float32), None)
        else:
            values = base.standard_normal((rows, cols)) * 0.1 + rng.standard_normal((rows, cols)) * 0.01
            tensors[name] = (gguf.quantize(values.astype(np.float32), QT.Q8_0), QT.Q8_0)
    llama_file(path, tensors)


# Byte offsets of the float16 scales in each K-quant block, set to sane values over the random bytes (a random
# scale may be NaN or infinite, which no model holds).
K_SCALES = {QT.Q2_K: (84, [80, 82]), QT.Q3_K: (110, [108]), QT.Q4_K: (144, [0, 2]), QT.Q5_K: (176, [0, 2]),
            QT.Q6_K: (210, [208])}


def types(path, seed):
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(path, "types")
    values = rng.standard_normal((2, 256)).astype(np.float32)
    w.add_tensor("f32", values)
    w.add_tensor("f16", values.astype(np.float16))
    w.add_tensor("bf16", gguf.quantize(values, QT.BF16), raw_dtype=QT.BF16)
    for qt in (QT.Q8_0, QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1):
        w.add_tensor(qt.name.lower(), gguf.quantize(values, qt), raw_dtype=qt)
    for qt, (size, scales) in K_SCALES.items():
        blocks = rng.integers(0, 256, (2, size), dtype=np.uint8)
        for at in scales:
            blocks[:, at:at + 2] = np.float16(rng.uniform(0.001, 0.01, (2, 1))).view(np.uint8)
        w.add_tensor(qt.name.lower(), blocks, raw_dtype=qt)
    q8k = rng.integers(0, 256, (2, 292), dtype=np.uint8)
    q8k[:, 0:4] = np.float32(rng.uniform(0.001, 0.01, (2, 1))).view(np.uint8)
    w.add_tensor("q8_k", q8k, raw_dtype=QT.Q8_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    tiny_llama(os.path.join(out, "a.gguf"), 1)
    tiny_llama(os.path.join(out, "b.gguf"), 2)
    types(os.path.join(out, "types.gguf"), 3)


if __name__ == "__main__":
    main()
