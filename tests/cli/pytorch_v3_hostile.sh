# Damaged _rebuild_tensor_v3 calls, made by editing data.pkl of samples/torch_uint/a.pt (torch 2.15): a dtype
# argument that is no torch dtype (a quantization scheme, a string), a ninth argument, a storage one byte shorter
# than the (2, 3) uint16 view needs, and uint32 named over the same 12 bytes (3 elements, the view needs 6); and a
# negative view written by torch 2.15 (its storage does not hold its values). Each is one line, exit 1, no output.
/usr/bin/python3 - "$SAMPLES"/torch_uint/a.pt <<'PY'
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
pkl = src.read("a/data.pkl")
first = pkl.index(b"ctorch\nuint16\n")
edits = {"scheme": (b"ctorch\nuint16\n", b"ctorch\nper_tensor_affine\n"),
         "string": (b"ctorch\nuint16\n", b"X\x06\x00\x00\x00uint16"),
         "nine": (b"ctorch\nuint16\nq\x0c", b"ctorch\nuint16\nq\x0cNN"),
         "short": (b"cpuq\x06K\x0c", b"cpuq\x06K\x0b"),
         "uint32": (b"ctorch\nuint16\n", b"ctorch\nuint32\n")}
for name, (old, new) in edits.items():
    assert pkl.index(old) <= first + 20, name  # the first tensor's (u16's)
    with zipfile.ZipFile(f"{name}.pt", "w") as out:
        for info in src.infolist():
            data = src.read(info)
            out.writestr(info.filename, pkl.replace(old, new, 1) if info.filename == "a/data.pkl" else data)
PY
cp "$SAMPLES"/torch_uint/neg.pt "$SAMPLES"/torch_uint/b.pt .
for f in scheme string nine short uint32 neg; do
  "$WAVG" merge -q $f.pt b.pt -o out.pt || echo "$f: exit $?"
  [ ! -e out.pt ] || { echo "$f: an output was written"; exit 1; }
done
