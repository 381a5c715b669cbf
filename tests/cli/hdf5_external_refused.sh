# HDF5 inputs whose tensors live in other files, made by h5py: external raw-data storage (absolute and relative
# names), a virtual dataset, and external links to a weight, in plain HDF5, a Keras 2 model, a Keras 3
# .weights.h5 and a .keras archive. Each is refused by merge, convert and inspect with one line naming the dataset,
# exit 1, no output; the victim files' bytes never change (with external storage as input 1, the output's copy
# would otherwise have had HDF5 write the mean into them).
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
mkdir tmp
export TMPDIR=$PWD/tmp
/usr/bin/python3 - <<'PY'
import io, json, os, zipfile, h5py, numpy as np
victim = os.path.abspath("victim.bin")
open(victim, "wb").write(np.arange(4, dtype=np.float32).tobytes())
with h5py.File("victim.h5", "w") as f:
    f["w"] = np.arange(4, dtype=np.float32)
with h5py.File("partner.h5", "w") as f:
    f["w"] = np.ones(4, np.float32)
with h5py.File("a_external.h5", "w") as f:
    f.create_dataset("w", (4,), np.float32, external=[(victim, 0, 16)])
with h5py.File("b_external_relative.h5", "w") as f:
    f.create_dataset("w", (4,), np.float32, external=[("victim.bin", 0, 16)])
with h5py.File("c_virtual.h5", "w") as f:
    layout = h5py.VirtualLayout((4,), np.float32)
    layout[:] = h5py.VirtualSource("victim.h5", "w", shape=(4,))
    f.create_virtual_dataset("w", layout)
# Keras 2 model: the listed weight is an external link into the victim.
with h5py.File("d_keras2_link.h5", "w") as f:
    mw = f.create_group("model_weights")
    mw.attrs["layer_names"] = [b"dense"]
    g = mw.create_group("dense")
    g.attrs["weight_names"] = [b"dense/kernel:0"]
    g.create_group("dense")["kernel:0"] = h5py.ExternalLink("victim.h5", "/w")
# Keras 2 model: the weight's group is an external link to the victim's root.
with h5py.File("h_keras2_group_link.h5", "w") as f:
    mw = f.create_group("model_weights")
    mw.attrs["layer_names"] = [b"dense"]
    g = mw.create_group("dense")
    g.attrs["weight_names"] = [b"dense/w"]
    g["dense"] = h5py.ExternalLink("victim.h5", "/")
with h5py.File("partner_keras2.h5", "w") as f:
    mw = f.create_group("model_weights")
    mw.attrs["layer_names"] = [b"dense"]
    g = mw.create_group("dense")
    g.attrs["weight_names"] = [b"dense/kernel:0"]
    g.create_group("dense")["kernel:0"] = np.ones(4, np.float32)
def keras3(f, how):
    f.create_group("vars")
    v = f.create_group("layers/dense/vars")
    if how == "link": v["0"] = h5py.ExternalLink("victim.h5", "/w")
    elif how == "external": v.create_dataset("0", (4,), np.float32, external=[(victim, 0, 16)])
    else: v["0"] = np.ones(4, np.float32)
with h5py.File("e_keras3_link.weights.h5", "w") as f: keras3(f, "link")
with h5py.File("f_keras3_external.weights.h5", "w") as f: keras3(f, "external")
with h5py.File("partner.weights.h5", "w") as f: keras3(f, "plain")
def archive(name, how):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f: keras3(f, how)
    with zipfile.ZipFile(name, "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0"}))
        z.writestr("config.json", "{}")
        z.writestr("model.weights.h5", buf.getvalue())
archive("g_archive_external.keras", "external")
archive("partner.keras", "plain")
PY
sums() { sha256sum victim.bin victim.h5; }
before=$(sums)
partner_for() {
  case $1 in
    [dh]_*) echo partner_keras2.h5 ;; [ef]_*) echo partner.weights.h5 ;;
    g_*) echo partner.keras ;; *) echo partner.h5 ;;
  esac
}
for f in [a-h]_*; do
  ext=${f#*.}
  set +e
  "$WAVG" merge -q "$f" "$(partner_for "$f")" -o "out.$ext"; m=$?
  "$WAVG" merge -q "$(partner_for "$f")" "$f" -o "out2.$ext" 2>/dev/null; m2=$?
  "$WAVG" convert -q "$f" -o out.safetensors 2>/dev/null; c=$?
  "$WAVG" inspect "$f" >/dev/null 2>&1; i=$?
  set -e
  echo "$f: merge $m, as input 2 $m2, convert $c, inspect $i"
  [ ! -e "out.$ext" ] && [ ! -e "out2.$ext" ] && [ ! -e out.safetensors ] || { echo "an output was written"; exit 1; }
done
[ "$before" = "$(sums)" ] || { echo "a victim file changed"; exit 1; }
[ -z "$(ls tmp)" ] || { echo "left in TMPDIR: $(ls tmp)"; exit 1; }
