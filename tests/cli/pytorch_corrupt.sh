# A matrix of damaged torch.save files, zip and legacy: truncations, lengths and offsets set huge in the zip's records
# and in the pickle, every opcode replaced by an invalid one in turn, tensor views pointing past their storage, a pickle
# that names 2^40 paths, a key with a newline. Each is read by `wavg merge` (with an intact input 2): a damaged length
# or a truncation must be one line `wavg: error: FILE: ...` and exit 1 (a size argument set huge may also be read as
# intact: exit 0); nothing else (no crash, no second line), and no output is left behind by a failure.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import io, os, pickletools, struct, subprocess, sys, zipfile
import torch
wavg = sys.argv[1]
sd = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.ones(3), "n": torch.tensor(4)}
torch.save(sd, "good.pt")
torch.save(sd, "legacy.pt", _use_new_zipfile_serialization=False)
zip_bytes, legacy_bytes = open("good.pt", "rb").read(), open("legacy.pt", "rb").read()
z = zipfile.ZipFile("good.pt")
pkl = z.getinfo("good/data.pkl")
extra_length = struct.unpack("<H", zip_bytes[pkl.header_offset + 28:pkl.header_offset + 30])[0]
pkl_at = pkl.header_offset + 30 + len(pkl.filename) + extra_length
cd_at = zip_bytes.rfind(b"PK\x01\x02", 0, zip_bytes.rfind(b"PK\x05\x06"))  # the last central directory entry
eocd_at = zip_bytes.rfind(b"PK\x05\x06")

def patch(data, at, value, size):
    return data[:at] + value.to_bytes(size, "little") + data[at + size:]

def run(name, data, must_fail):
    with open(name, "wb") as f:
        f.write(data)
    # A byte replaced inside a key still reads, as another name: merging that would be a mismatch (exit 3), so
    # such cases are read with inspect.
    partner = "good.pt" if name.startswith("z") else "legacy.pt"
    args = ["merge", name, partner, "-o", "out.pt"] if must_fail else ["inspect", name]
    p = subprocess.run([wavg] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, errors="replace")
    lines = p.stderr.splitlines()
    ok = (p.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"wavg: error: {name}: ")
          and not os.path.exists("out.pt"))
    if not ok and not (p.returncode == 0 and not must_fail):
        print(f"{name}: exit {p.returncode}: {p.stderr!r}")
        sys.exit(1)
    if os.path.exists("out.pt"):
        os.remove("out.pt")
    os.remove(name)
    return p.returncode

cases = 0
for n in list(range(0, len(zip_bytes), 97)) + [len(zip_bytes) - 1]:
    run(f"z_trunc_{n}.pt", zip_bytes[:n], True); cases += 1
for n in list(range(0, len(legacy_bytes), 37)) + [len(legacy_bytes) - 1]:
    run(f"l_trunc_{n}.pt", legacy_bytes[:n], True); cases += 1
# torch writes a zip64 end record as well; 0xffff(ffff) in the classic record defers to it (and may read).
z64_at = zip_bytes.rfind(b"PK\x06\x06")
huge = [(cd_at + 20, 4, True), (cd_at + 24, 4, True), (cd_at + 28, 2, True), (cd_at + 30, 2, True),
        (cd_at + 42, 4, True), (eocd_at + 8, 2, True), (eocd_at + 10, 2, False), (eocd_at + 12, 4, False),
        (eocd_at + 16, 4, False), (z64_at + 32, 8, True), (z64_at + 40, 8, True), (z64_at + 48, 8, True),
        (pkl.header_offset + 26, 2, True), (pkl.header_offset + 28, 2, True)]
for at, size, must_fail in huge:
    for value in (2 ** (8 * size) - 1, 2 ** (8 * size) - 2, 2 ** (8 * size - 1)):
        run(f"z_huge_{at}_{value}.pt", patch(zip_bytes, at, value, size), must_fail); cases += 1
# Pickle lengths: every BINUNICODE's length, and every int argument of a tensor's size set huge.
pickle = zip_bytes[pkl_at:pkl_at + pkl.file_size]
for i in range(len(pickle)):
    if pickle[i] == ord("X"):
        run(f"z_strlen_{i}.pt", patch(zip_bytes, pkl_at + i + 1, 0x7fffffff, 4), True); cases += 1
for i in range(len(legacy_bytes) - 1):
    if legacy_bytes[i] == ord("K") and legacy_bytes[i + 1] in (2, 3, 6):   # the sizes 2, 3 and numel 6
        run(f"l_dim_{i}.pt", legacy_bytes[:i] + b"J\xff\xff\xff\x7f" + legacy_bytes[i + 2:], False); cases += 1
# Every opcode of the pickles replaced by an invalid one in turn.
for _, _, at in pickletools.genops(pickle):
    run(f"z_op_{at}.pt", zip_bytes[:pkl_at + at] + b"\xff" + zip_bytes[pkl_at + at + 1:], True); cases += 1
stream = io.BytesIO(legacy_bytes)
for _ in range(5):
    start = stream.tell()
    for _, _, at in pickletools.genops(stream):
        pass
    for _, _, at in pickletools.genops(legacy_bytes[start:stream.tell()]):
        run(f"l_op_{start + at}.pt", legacy_bytes[:start + at] + b"\xff" + legacy_bytes[start + at + 1:], True)
        cases += 1
# A pickle whose lists share their items 40 levels deep (a few hundred bytes that name 2^40 paths) and one whose
# key holds a newline: refused promptly, on one line.
nested = []
for _ in range(40):
    nested = [nested, nested]
for label, obj in (("dag", {"w": nested}), ("newline", {"a\nb": {("t",): 1}})):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"z_{label}/data.pkl", __import__("pickle").dumps(obj, protocol=2))
        zf.writestr(f"z_{label}/version", "3\n")
    run(f"z_{label}.pt", buf.getvalue(), label != "dag"); cases += 1  # the DAG holds no tensor: read, linearly
print(f"{cases} damaged files: each a one-line error (or read as intact), none left an output")
PY
