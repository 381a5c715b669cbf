# External data must lie in the model's folder, as every companion file: a location that is absolute, has a '..'
# component, is a symbolic link, or lies behind a linked folder is refused naming the tensor; so is a range past
# the file's end.
T=$ROOT/tests/cli/onnx_tools.py
mkdir m secret
/usr/bin/python3 "$T" make m/model.onnx 3 external
cp m/weights.bin secret/weights.bin
ln -s ../secret/weights.bin m/link.bin
ln -s ../secret m/linked
for location in "$PWD/secret/weights.bin" ../secret/weights.bin link.bin linked/weights.bin weights.bin:past; do
  PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$location" <<'PY'
import sys
import onnx_tools as ot
location = sys.argv[1]
m = ot.load("m/model.onnx")
for e in m.graph.initializer[0].external_data:
    if e.key == "location":
        e.value = location.split(":")[0]
    if e.key == "offset" and location.endswith(":past"):
        e.value = "1400"
open("m/bad.onnx", "wb").write(m.SerializeToString())
PY
  set +e
  "$WAVG" inspect m/bad.onnx 2>&1 | sed "s|$PWD|PWD|g"
  echo "exit ${PIPESTATUS[0]}"
  set -e
done
