# A state_dict shows its modules but not how they connect (a skip connection or a ConvTranspose leaves no trace in
# it), so its permutation spec is inferred only with --assume-sequential: without it, merge --align weights and
# align refuse (exit 2, nothing written), naming both ways out. With it, a two-layer MLP B that is A with its hidden
# units permuted (by this test, in plain Python) aligns back onto A, so the aligned average is A itself, bit for bit.
/usr/bin/python3 - <<'PY'
import json, random, struct
rng = random.Random(0)
a = {"0.weight": ([4, 3], [rng.uniform(-1, 1) for _ in range(12)]),
     "0.bias": ([4], [rng.uniform(-1, 1) for _ in range(4)]),
     "2.weight": ([2, 4], [rng.uniform(-1, 1) for _ in range(8)]),
     "2.bias": ([2], [rng.uniform(-1, 1) for _ in range(2)])}
p = [2, 0, 3, 1]  # B's hidden unit i is A's unit p[i]
b = {"0.weight": ([4, 3], [a["0.weight"][1][3 * p[i] + j] for i in range(4) for j in range(3)]),
     "0.bias": ([4], [a["0.bias"][1][p[i]] for i in range(4)]),
     "2.weight": ([2, 4], [a["2.weight"][1][4 * o + p[i]] for o in range(2) for i in range(4)]),
     "2.bias": a["2.bias"]}
def write(path, sd):
    header, blobs, offset = {}, [], 0
    for k in sorted(sd):
        shape, values = sd[k]
        blob = struct.pack("<%df" % len(values), *values)
        header[k] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
write("a.safetensors", a)
write("b.safetensors", b)
PY
"$WAVG" merge a.safetensors b.safetensors --align weights -o merged.safetensors || echo "merge: exit $?"
"$WAVG" align b.safetensors --to a.safetensors -o aligned.safetensors || echo "align: exit $?"
ls -A
"$WAVG" merge a.safetensors b.safetensors --align weights --assume-sequential -q --no-hash -o merged.safetensors
/usr/bin/python3 - <<'PY'
import json, struct
def tensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    return {k: data[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
            for k, v in header.items() if k != "__metadata__"}
a, merged = tensors("a.safetensors"), tensors("merged.safetensors")
assert a.keys() == merged.keys(), sorted(merged)
for k in sorted(a):
    assert a[k] == merged[k], k + " differs from A"
print("aligned average equals A:", ", ".join(sorted(a)))
PY
