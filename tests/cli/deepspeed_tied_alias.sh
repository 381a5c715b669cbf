# A DeepSpeed shared_params alias (samples/deepspeed/aligned: lm_head.weight tied to emb.weight) is one parameter
# with its target: DARE draws one mask for both, and the DeepSpeed folder written says one thing about it. Two
# perturbed copies of the sample (each rank's fp32 partitions and the module's copies given deterministic noise,
# CRC-32s fixed) are merged with dare-linear over the sample; torch 1.13 reads the output: every parameter's module
# copy equals its fp32 master cut from the ranks' partitions as zero_to_fp32 cuts them (paddings skipped), and the
# module's lm_head.weight equals emb.weight's master. With WAVG_TORCH2_PYTHON, zero_to_fp32 agrees with the module.
S="$SAMPLES"/deepspeed/aligned/global_step1
/usr/bin/python3 - "$S" <<'PYTHON'
import glob, os, shutil, struct, sys, zipfile, zlib
import numpy as np
for seed, out in ((1, "a"), (2, "b")):
    shutil.copytree(sys.argv[1], out)
    rng = np.random.default_rng(seed)
    for path in sorted(glob.glob(out + "/*.pt")):
        raw = bytearray(open(path, "rb").read())
        with zipfile.ZipFile(path) as z:
            entries = [i for i in z.infolist() if "/data/" in i.filename]
        for info in entries:  # every storage here is float32: partitions, parameters, the buffer
            name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
            at = info.header_offset + 30 + name_len + extra_len
            v = np.frombuffer(raw, "<f4", info.file_size // 4, at) + rng.standard_normal(info.file_size // 4)
            raw[at:at + info.file_size] = v.astype("<f4").tobytes()
            crc = zlib.crc32(raw[at:at + info.file_size])
            end = at + info.file_size  # torch writes the CRC-32 in a data descriptor after the data
            struct.pack_into("<I", raw, end + 4 if raw[end:end + 4] == b"PK\x07\x08" else end, crc)
            central = raw.find(b"PK\x01\x02")  # the central directory's record of the entry
            name = info.filename.encode()
            while raw[central + 46:central + 46 + struct.unpack_from("<H", raw, central + 28)[0]] != name:
                central = raw.find(b"PK\x01\x02", central + 46)
            struct.pack_into("<I", raw, central + 16, crc)
        open(path, "wb").write(raw)
PYTHON
"$WAVG" merge -q --method dare-linear --density 0.5 --seed 1 --base "$S" a b -o out/
/usr/bin/python3 - <<PYTHON
import sys, torch
sys.path.insert(0, "$ROOT/tests/deepspeed")
from check_writer import load  # DeepSpeed's classes read as stand-ins, CRC-32s checked
model = load("out/mp_rank_00_model_states.pt")
ranks = [load(f"out/zero_pp_rank_{r}_mp_rank_00_optim_states.pt")["optimizer_state_dict"] for r in range(4)]
module = model["module"]
for g, shapes in enumerate(model["param_shapes"]):
    flat = torch.cat([r["single_partition_of_fp32_groups"][g] for r in ranks])
    offset = 0
    for (name, shape), pad in zip(shapes.items(), ranks[0]["param_alignment_paddings"][g]):
        master = flat[offset:offset + shape.numel()].reshape(shape)
        assert torch.equal(module[name], master), name + ": the module's copy differs from the fp32 master"
        if name == "emb.weight":
            assert torch.equal(module["lm_head.weight"], master), "lm_head.weight differs from emb.weight's master"
        offset += shape.numel() + pad
print("ok")
PYTHON
# Optional (WAVG_TORCH2_PYTHON with deepspeed): DeepSpeed's own zero_to_fp32 gives every module copy's values.
PY=${WAVG_TORCH2_PYTHON:-}
if [ -n "$PY" ] && "$PY" -c 'import deepspeed.utils.zero_to_fp32' >/dev/null 2>&1; then
  "$PY" - <<'PYTHON' 2>/dev/null
import contextlib, io, torch
with contextlib.redirect_stdout(io.StringIO()):  # DeepSpeed reports on stdout
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint as consolidate
    got = consolidate(".", tag="out")
module = torch.load("out/mp_rank_00_model_states.pt", map_location="cpu", weights_only=False)["module"]
assert sorted(got) == sorted(module)
for name, t in got.items():
    assert torch.equal(t, module[name].float()), name
PYTHON
fi
