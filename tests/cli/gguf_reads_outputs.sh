# The gguf package (llama.cpp's Python reader) reads what wavg writes: merged tiny Llamas keep input 1's metadata
# and tensor types; Q8_0 and Q4_0 outputs hold exactly gguf's own quantization of the float64 mean (rounded once
# to float32, as gguf's quantize takes it), float outputs that mean rounded once; a merge of every type wavg reads
# equals the float64 mean of gguf's dequantization (Q8_K aside: gguf 0.19 has no dequantizer for it; the suite
# checks it in test_gguf.cpp). gguf is not a Debian package: set WAVG_GGUF_PYTHON to a python with gguf and numpy
# (e.g. a venv with gguf 0.19.0); without it the test is skipped.
PY=${WAVG_GGUF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import gguf' 2>/dev/null || { echo "no WAVG_GGUF_PYTHON with gguf"; exit 77; }
G=$SAMPLES/gguf
"$PY" -c "import sys; sys.path.insert(0, '$G'); import make_gguf; make_gguf.types('types_b.gguf', 4)"
"$WAVG" merge -q $G/a.gguf $G/b.gguf -o q8.gguf
for t in float32 float16 bfloat16 q4_0; do "$WAVG" merge -q $G/a.gguf $G/b.gguf -o $t.gguf --out-dtype $t; done
"$WAVG" merge -q $G/types.gguf types_b.gguf -o types.gguf --out-dtype float32
"$WAVG" convert -q $G/a.gguf -o converted.gguf
"$PY" - "$G" <<'PY'
import sys
import gguf, numpy as np
G = sys.argv[1]
QT = gguf.GGMLQuantizationType
def tensors(path):
    r = gguf.GGUFReader(path)
    return r, {t.name: t for t in r.tensors}
def values(t):
    return np.asarray(gguf.dequantize(t.data, t.tensor_type), dtype=np.float64).reshape(-1)
def fields(r):
    return {k: (f.types, [bytes(p) for p in f.parts[1:]]) for k, f in r.fields.items()
            if not k.startswith("wavg_") and not k.startswith("GGUF.")}
def bf16(x):  # float64 to bfloat16, rounded once to nearest even, as float64
    m, e = np.frexp(x)
    return np.ldexp(np.round(m * 256) / 256, e)
(ra, a), (rb, b) = tensors(f"{G}/a.gguf"), tensors(f"{G}/b.gguf")
mean = {n: (values(a[n]) + values(b[n])) / 2 for n in a}
rq, q = tensors("q8.gguf")
assert fields(rq) == fields(ra), "metadata differs from input 1's"
assert list(q) == list(a) and all(q[n].tensor_type == a[n].tensor_type for n in a)
assert rq.fields["wavg_command"].contents() == "merge"
for n in a:
    shape = tuple(int(d) for d in reversed(a[n].shape))
    m32 = mean[n].astype(np.float32).reshape(shape)
    if a[n].tensor_type == QT.Q8_0:
        assert np.array_equal(np.asarray(q[n].data).reshape(-1), gguf.quantize(m32, QT.Q8_0).reshape(-1)), n
    else:
        assert np.array_equal(values(q[n]), m32.reshape(-1).astype(np.float64)), n
for name, kind, rounded in (("float32", QT.F32, lambda x: x.astype(np.float32)),
                            ("float16", QT.F16, lambda x: x.astype(np.float16)),
                            ("bfloat16", QT.BF16, bf16)):
    _, o = tensors(f"{name}.gguf")
    for n in a:
        assert o[n].tensor_type == kind, (name, n, o[n].tensor_type)
        assert np.array_equal(values(o[n]), np.asarray(rounded(mean[n]), dtype=np.float64)), (name, n)
_, o = tensors("q4_0.gguf")
for n in a:
    m32 = mean[n].astype(np.float32).reshape(tuple(int(d) for d in reversed(a[n].shape)))
    if len(a[n].shape) == 1:  # vectors stay float32, as llama.cpp's quantizer keeps norms
        assert o[n].tensor_type == QT.F32 and np.array_equal(values(o[n]), m32.reshape(-1).astype(np.float64)), n
    else:
        assert o[n].tensor_type == QT.Q4_0, n
        assert np.array_equal(np.asarray(o[n].data).reshape(-1), gguf.quantize(m32, QT.Q4_0).reshape(-1)), n
(_, x), (_, y), (_, z) = tensors(f"{G}/types.gguf"), tensors("types_b.gguf"), tensors("types.gguf")
checked = []
for n in x:
    if x[n].tensor_type == QT.Q8_K:
        continue
    want = ((values(x[n]) + values(y[n])) / 2).astype(np.float32).astype(np.float64)
    assert z[n].tensor_type == QT.F32 and np.array_equal(values(z[n]), want), n
    checked.append(x[n].tensor_type.name)
_, c = tensors("converted.gguf")
assert all(np.array_equal(np.asarray(c[n].data), np.asarray(a[n].data)) for n in a), "convert changed a block"
print("gguf reads the outputs: metadata and types kept, Q8_0/Q4_0 equal to gguf's quantization of the mean")
print("types decoded as gguf does:", " ".join(checked))
PY
