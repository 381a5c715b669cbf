# Small hostile ONNX models: an initializer whose dims claim 2^80 float32 values over 8 bytes of raw_data, one whose
# external data claims an exabyte at an offset past its 8-byte file, and 200,000 initializers of a 2^40-element
# shape each (typed values, none stored): inspect and merge end each in one error line, exit 1, within 256 MiB and
# 20 s (tests/support/bounded.py).
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import onnx_tools as ot
pb = ot.pb
def model(path, tensors):
    m = pb.ModelProto(ir_version=8, producer_name="hostile")
    m.opset_import.add(domain="", version=13)
    m.graph.name = "g"
    m.graph.initializer.extend(tensors)
    open(path, "wb").write(m.SerializeToString())
model("dims.onnx", [pb.TensorProto(name="w", data_type=ot.FLOAT, dims=[1 << 40, 1 << 40], raw_data=b"\0" * 8)])
open("weights.bin", "wb").write(b"\0" * 8)
t = pb.TensorProto(name="w", data_type=ot.FLOAT, dims=[1 << 58], data_location=1)
for k, v in (("location", "weights.bin"), ("offset", str(1 << 50)), ("length", str(1 << 60))):
    t.external_data.add(key=k, value=v)
model("external.onnx", [t])
model("many.onnx", [pb.TensorProto(name=f"w{i}", data_type=ot.FLOAT, dims=[1 << 40]) for i in range(200000)])
PY
for f in dims external many; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.onnx
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" merge -q $f.onnx $f.onnx -o out.safetensors
done
