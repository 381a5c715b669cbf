# Corrupt .keras archives, made by Python's zipfile and patched byte by byte: each one is one line on stderr and
# exit 1, and nothing is left in $TMPDIR. The zip bombs: an entry whose headers declare 100 bytes but whose
# deflate stream inflates to 10 MB, and one declaring 4 GB from a few hundred compressed bytes.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
mkdir tmp
export TMPDIR=$PWD/tmp
/usr/bin/python3 - <<'PY'
import io, struct, zipfile, h5py, numpy as np
buf = io.BytesIO()
with h5py.File(buf, "w") as f:
    f.create_dataset("layers/dense/vars/0", data=np.zeros(4, np.float32))
h5 = buf.getvalue()
def archive(name, entries, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(name, "w", method) as z:
        for n, data in entries:
            z.writestr(n, data)
good = [("metadata.json", b'{"keras_version": "3.5.0"}'), ("config.json", b"{}"), ("model.weights.h5", h5)]
archive("ok.keras", good)
raw = open("ok.keras", "rb").read()
open("a_truncated.keras", "wb").write(raw[:len(raw) // 2])
open("b_bad_magic.keras", "wb").write(b"PK\x03\x04" + b"\x00" * 60)
archive("c_extra_entry.keras", good + [("assets/x", b"1")])
archive("d_missing_config.keras", [good[0], good[2]])
archive("e_weights_not_hdf5.keras", good[:2] + [("model.weights.h5", b"not hdf5 at all" * 10)])
archive("f_metadata_not_json.keras", [("metadata.json", b'{"k": "\xff"}')] + good[1:])
import warnings; warnings.simplefilter("ignore")
archive("g_duplicate.keras", good + [("config.json", b"{}")])
# Bombs: patch the sizes in both the local header (offset 22) and the central directory entry (offset 24).
def patch_sizes(name, entry, size):
    data = bytearray(open(name, "rb").read())
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = z.getinfo(entry)
    struct.pack_into("<I", data, info.header_offset + 22, size)
    cd = data.rfind(b"PK\x01\x02" + data[info.header_offset + 4:info.header_offset + 6])
    cd = data.find(b"PK\x01\x02")
    while True:
        n = struct.unpack_from("<H", data, cd + 28)[0]
        if data[cd + 46:cd + 46 + n] == entry.encode(): break
        cd = data.find(b"PK\x01\x02", cd + 4)
    struct.pack_into("<I", data, cd + 24, size)
    open(name, "wb").write(data)
archive("h_bomb_lies.keras", good[:2] + [("model.weights.h5", b"\0" * 10_000_000)], zipfile.ZIP_DEFLATED)
patch_sizes("h_bomb_lies.keras", "model.weights.h5", 100)
archive("i_bomb_absurd.keras", good[:2] + [("model.weights.h5", b"\0" * 1000)], zipfile.ZIP_DEFLATED)
patch_sizes("i_bomb_absurd.keras", "model.weights.h5", 0xfffffff0)
PY
"$WAVG" inspect ok.keras >/dev/null
for f in [a-i]_*.keras; do
  set +e
  "$WAVG" inspect "$f" >/dev/null
  echo "$f: exit $?"
  set -e
done
[ -z "$(ls tmp)" ] || { echo "left in TMPDIR: $(ls tmp)"; exit 1; }
