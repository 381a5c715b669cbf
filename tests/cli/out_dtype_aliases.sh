# --out-dtype takes the frameworks' spellings as aliases: half and fp16 (float16), bf16 (bfloat16), float and fp32
# (float32), double and fp64 (float64); each output's float dtype is read from its safetensors header.
for t in half fp16 bf16 float fp32 double fp64; do
  "$WAVG" convert -q "$SAMPLES/mlp/node1.h5" -o $t.safetensors --out-dtype $t
done
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, struct
for t in "half fp16 bf16 float fp32 double fp64".split():
    raw = open(f"{t}.safetensors", "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    dtypes = sorted({e["dtype"] for k, e in header.items() if k != "__metadata__"} - {"I64"})
    print(t, dtypes, header["__metadata__"]["wavg_out_dtype"])
PY
