# Adam's step is one counter of the output, written into every rank's state: a checkpoint whose ranks hold
# different steps is refused naming the file (exit 1). Rank 1's step (the only 4-byte storage of its optim file) is
# patched from 1.0 to 2.0 in a copy of the engine sample.
cp -r "$SAMPLES"/deepspeed/engine/zero2/global_step1 ck
/usr/bin/python3 - ck/bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt <<'PYTHON'
import struct, sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    (entry,) = [i for i in z.infolist() if "/data/" in i.filename and i.file_size == 4]
with open(path, "r+b") as f:
    f.seek(entry.header_offset + 26)
    name, extra = struct.unpack("<HH", f.read(4))
    at = entry.header_offset + 30 + name + extra
    f.seek(at)
    assert struct.unpack("<f", f.read(4))[0] == 1.0
    f.seek(at)
    f.write(struct.pack("<f", 2.0))
PYTHON
"$WAVG" merge -q ck "$SAMPLES"/deepspeed/engine/zero2/global_step2 -o avg.safetensors
