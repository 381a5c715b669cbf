# An ONNX output touches an OUT.data only as its own external data file, and never one another model uses. A
# user's file named OUT.data beside no model of that name stays, even with --force, when the output has no
# external data (it once was removed as an earlier output's). An earlier output kept under another name (v1.onnx,
# whose external data is m.onnx.data) is not changed by a new m.onnx with external data, even with --force: the
# output is refused (once its data file was written over, exit 0, and v1.onnx read the new values).
T=$ROOT/tests/cli/onnx_tools.py
mkdir ext out
/usr/bin/python3 "$T" make ext/model.onnx 3 external
/usr/bin/python3 "$T" make a.onnx 1 raw
echo "my notes" > out/m.onnx.data
"$WAVG" merge -q a.onnx ext/model.onnx -o out/m.onnx --force
cat out/m.onnx.data
rm out/m.onnx out/m.onnx.data
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx
mv out/m.onnx out/v1.onnx
"$WAVG" merge -q ext/model.onnx a.onnx -o out/m.onnx -w 1,3 --force 2>&1 || echo "exit $?"
ls out
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import onnx_tools as ot
ins = [ot.tensors(p) for p in ("ext/model.onnx", "a.onnx")]
got = ot.tensors("out/v1.onnx")
for name in ("W", "B", "C", "D", "E", "V"):
    assert got[name].tobytes() == ot.mean([d[name] for d in ins]).tobytes(), name
print("out/v1.onnx: still the mean of both")
PY
