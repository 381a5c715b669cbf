# Every error is one printable line that names its file. Files made here byte by byte: a safetensors tensor whose
# name holds a newline, a fake "wavg: error:" and a terminal escape (printed escaped); a wavg JSON tensor named
# with U+0000 (refused by name: HDF5 would cut it there); a safetensors header holding 1e400 (beyond double); a
# .keras input while $TMPDIR names no directory. Each exits 1 and leaves no output.
/usr/bin/python3 - <<'PY'
import json, struct
def safetensors(path, header, data=b""):
    h = header.encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
name = "a\nwavg: error: all is well\x1b[31m"
safetensors("a_name.safetensors", json.dumps({name: {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}),
            b"\0" * 8)
safetensors("b_huge.safetensors", '{"x":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}}', b"\0" * 4)
open("c_nul.json", "w").write('{"format": "wavg-json", "tensors": [{"name": "a\\u0000b", "dtype": "float32", '
                              '"shape": [1], "data": [1]}]}')
import zipfile
with zipfile.ZipFile("d_model.keras", "w") as z:
    z.writestr("metadata.json", "{}")
    z.writestr("config.json", "{}")
    z.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n")
PY
for f in a_name.safetensors b_huge.safetensors c_nul.json; do
  set +e
  "$WAVG" merge -q "$f" "$f" -o out.h5
  echo "$f: exit $?"
  set -e
done
set +e
TMPDIR=$PWD/no-such-dir "$WAVG" inspect d_model.keras 2>&1 >/dev/null | sed "s|$PWD|WORK|g" >&2
echo "d_model.keras: exit ${PIPESTATUS[0]}"
set -e
[ ! -e out.h5 ] || { echo "an output was written"; exit 1; }
