# Three ONNX models of one graph, their values stored in ONNX's three forms (raw_data, typed fields, external data),
# merge: every float weight (initializers and the Constant node's value; float32, float64, float16) equals numpy's
# float64 mean rounded once to its type; the int64 Reshape target and the Resize scales (graph constants) are input
# 1's; the rest of the model is input 1's (opsets, inputs and outputs, nodes, doc strings), its metadata_props keep
# input 1's and gain the provenance, and each tensor keeps input 1's value form (raw, or typed after a typed input 1).
T=$ROOT/tests/cli/onnx_tools.py
mkdir ext
/usr/bin/python3 "$T" make a.onnx 1 raw
/usr/bin/python3 "$T" make b.onnx 2 typed
/usr/bin/python3 "$T" make ext/model.onnx 3 external
"$WAVG" merge -q a.onnx b.onnx ext/model.onnx -o out.onnx
"$WAVG" merge -q b.onnx a.onnx -o typed.onnx
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import onnx_tools as ot
for out, paths, form in (("out.onnx", ["a.onnx", "b.onnx", "ext/model.onnx"], "raw"),
                         ("typed.onnx", ["b.onnx", "a.onnx"], "typed")):
    ins = [ot.tensors(p) for p in paths]
    got = ot.tensors(out)
    assert sorted(got) == sorted(ins[0]), sorted(got)
    for name in ("W", "B", "C", "D", "E", "V"):
        want = ot.mean([d[name] for d in ins])
        assert got[name].dtype == want.dtype and got[name].tobytes() == want.tobytes(), (out, name)
    for name in ("shape", "scales"):
        assert got[name].tobytes() == ins[0][name].tobytes(), (out, name)
        assert got[name].tobytes() != ins[1][name].tobytes(), (out, name)
    assert ot.skeleton(out) == ot.skeleton(paths[0]), out
    assert all(ot.form(out, n) == form for n in ("W", "B", "D", "E", "V", "shape", "scales")), out
    meta = {p.key: p.value for p in ot.load(out).metadata_props}
    assert meta["author"] == "tests" and "wavg_version" in meta, meta
    print(out, len(got), "tensors,", form, "values, the rest as input 1")
PY
