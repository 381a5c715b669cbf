# An input 1 with external data gives an output with external data: every tensor of 1 KiB or more lies in the
# companion OUT.data beside the output (its location a plain name, its offset aligned to 4 KiB, its length the
# tensor's), the smaller ones stay in the model as raw_data, and every value is numpy's mean. A second merge onto the
# same name is refused without --force (the model and its data file exist) and replaces both with it; an output
# without external data onto that name removes the old OUT.data, unless another model in the folder names it.
T=$ROOT/tests/cli/onnx_tools.py
mkdir ext out
/usr/bin/python3 "$T" make ext/model.onnx 3 external
/usr/bin/python3 "$T" make a.onnx 1 raw
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx
ls out
set +e
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx
echo "exit $?"
set -e
"$WAVG" merge -q a.onnx ext/model.onnx -o out/m.onnx --force
ls out
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx --force
cp out/m.onnx out/keep.onnx
"$WAVG" merge -q a.onnx ext/model.onnx -o out/m.onnx --force
ls out
rm out/keep.onnx
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx --force
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import onnx_tools as ot
ins = [ot.tensors(p) for p in ("ext/model.onnx", "a.onnx")]
got = ot.tensors("out/m.onnx")
for name in ("W", "B", "C", "D", "E", "V"):
    assert got[name].tobytes() == ot.mean([d[name] for d in ins]).tobytes(), name
for t in ot.load("out/m.onnx").graph.initializer:
    e = {x.key: x.value for x in t.external_data}
    if t.name == "V":
        assert t.data_location == 1 and e["location"] == "m.onnx.data" and int(e["offset"]) % 4096 == 0, e
        assert int(e["length"]) == 16 * 20 * 4, e
    else:
        assert not e and ot.form("out/m.onnx", t.name) == "raw", t.name
print("external: V; in the model:", ", ".join(t.name for t in ot.load("out/m.onnx").graph.initializer if t.name != "V"))
PY
