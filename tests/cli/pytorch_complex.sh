# complex64 and complex128 tensors as torch 1.13 saves them (ComplexFloatStorage, ComplexDoubleStorage; the zip
# format and the legacy one), a scalar and a strided view (a column slice of a larger storage) among them, beside
# a float32 one: inspect shows them as complex; a merge of three averages the real and imaginary parts
# element-wise, each part torch.load gives back equal to numpy's float64 mean rounded once to the part's type,
# written back as the same type (input 1 in either format); an .npz of complex arrays converts to a .pt torch.load reads as complex. Once
# they were refused by name.
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "no torch for /usr/bin/python3"; exit 77; }
/usr/bin/python3 - <<'PY'
import numpy as np
import torch
g = torch.Generator().manual_seed(392)
for i in range(3):
    base = torch.randn(4, 5, dtype=torch.complex64, generator=g)
    sd = {"w": torch.randn(3, generator=g), "z64": torch.randn(2, 2, dtype=torch.complex64, generator=g),
          "z128": torch.randn(3, dtype=torch.complex128, generator=g), "s": torch.tensor(0.5 + 1j * i, dtype=torch.complex128),
          "cols": base[:, 1:3]}
    torch.save(sd, f"in{i}.pt", _use_new_zipfile_serialization=(i != 1))
np.savez("z.npz", a=(np.arange(6) + 1j * np.arange(6, 12)).astype(np.complex64).reshape(2, 3))
PY
"$WAVG" inspect in0.pt | tail -n +2
"$WAVG" merge -q in0.pt in1.pt in2.pt -o merged.pt
"$WAVG" merge -q in1.pt in0.pt in2.pt -o merged_legacy.pt
"$WAVG" convert -q z.npz -o z.pt
/usr/bin/python3 - <<'PY'
import numpy as np
import torch
ins = [torch.load(f"in{i}.pt") for i in range(3)]
for out in ("merged.pt", "merged_legacy.pt"):
    got = torch.load(out)
    for name in ("w", "z64", "z128", "s", "cols"):
        stack = np.stack([d[name].numpy() for d in ins])
        if stack.dtype.kind == "c":
            part = np.float32 if stack.dtype == np.complex64 else np.float64
            want = np.empty(stack.shape[1:], stack.dtype)
            want.real = np.mean(stack.real.astype(np.float64), axis=0).astype(part)
            want.imag = np.mean(stack.imag.astype(np.float64), axis=0).astype(part)
        else:
            want = np.mean(stack.astype(np.float64), axis=0).astype(stack.dtype)
        value = got[name].numpy()
        assert value.dtype == want.dtype and value.shape == want.shape, (name, value.dtype, value.shape)
        assert np.ascontiguousarray(value).tobytes() == want.tobytes(), (name, value, want)
        print(out, name, got[name].dtype, tuple(value.shape), "exact")
z = torch.load("z.pt")["a"]
assert z.dtype == torch.complex64 and z.numpy().tobytes() == np.load("z.npz")["a"].tobytes()
print("z.npz as .pt:", z.dtype, tuple(z.shape), "exact")
PY
