# llama.cpp itself, through llama-cpp-python, runs a merge of two fine-tunes of a tiny Llama (written here with the
# gguf package's GGUFWriter, samples/gguf/make_gguf.py): the logits of the merged GGUF equal those of the same model
# written by gguf from the numpy mean (float64, rounded once to float32; for the Q8_0 output, gguf's quantization
# of that), for the Q8_0 output that keeps input 1's types and for --out-dtype float32; and differ from input 1's.
# llama-cpp-python is built from source (no wheel on PyPI): set WAVG_LLAMA_PYTHON to a python with llama_cpp, gguf
# and numpy (tests/README.md says how); without it the test is skipped.
PY=${WAVG_LLAMA_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import llama_cpp, gguf' 2>/dev/null || { echo "no WAVG_LLAMA_PYTHON with llama_cpp and gguf"; exit 77; }
G=$SAMPLES/gguf
"$PY" -c "import sys; sys.path.insert(0, '$G'); import make_gguf as m; m.tiny_llama('a.gguf', 1); m.tiny_llama('b.gguf', 2)"
"$WAVG" merge -q a.gguf b.gguf -o merged_q8.gguf
"$WAVG" merge -q a.gguf b.gguf -o merged_f32.gguf --out-dtype float32
"$PY" - "$G" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gguf, llama_cpp, numpy as np
import make_gguf as m
QT = gguf.GGMLQuantizationType

def values(path):
    out = {}
    for t in gguf.GGUFReader(path).tensors:
        v = np.asarray(gguf.dequantize(t.data, t.tensor_type), dtype=np.float64)
        out[t.name] = v.reshape(tuple(int(d) for d in reversed(t.shape)))
    return out

a, b = values("a.gguf"), values("b.gguf")
mean = {n: ((a[n] + b[n]) / 2).astype(np.float32) for n in a}
m.llama_file("numpy_f32.gguf", {n: (v, None) for n, v in mean.items()}, gguf.LlamaFileType.ALL_F32)
m.llama_file("numpy_q8.gguf", {n: (v, None) if v.ndim == 1 else (gguf.quantize(v, QT.Q8_0), QT.Q8_0)
                               for n, v in mean.items()})

def logits(path, tokens=(1, 5, 9, 17, 30, 3)):
    llm = llama_cpp.Llama(model_path=path, n_ctx=16, n_batch=16, logits_all=True, n_threads=1, verbose=False)
    llm.eval(list(tokens))
    out = np.array(llm.scores[:len(tokens)], dtype=np.float32)
    llm.close()
    return out

q8, f32 = logits("merged_q8.gguf"), logits("merged_f32.gguf")
assert q8.shape == (6, 32) and np.all(np.isfinite(q8)), q8.shape
assert np.array_equal(q8, logits("numpy_q8.gguf")), "Q8_0 merge: logits differ from the numpy mean's"
assert np.array_equal(f32, logits("numpy_f32.gguf")), "float32 merge: logits differ from the numpy mean's"
assert not np.array_equal(q8, logits("a.gguf")), "the merge gives input 1's logits"
print("llama.cpp", llama_cpp.__version__, "loads both merges; logits equal the numpy mean's")
PY
