# Interrupting a .keras merge (SIGINT, SIGTERM, SIGHUP at moments spread over the run) leaves no file behind: not
# the temporary output, not libzip's temporary beside it, not the weights extracted to $TMPDIR. A merge killed by
# SIGKILL (which no handler sees) leaves its temporaries, and they do not confuse the next run: it writes the same
# target without --force and its weights are numpy's mean.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
mkdir tmp out
export TMPDIR=$PWD/tmp
/usr/bin/python3 - <<'PY'
import io, json, zipfile, h5py, numpy as np
for i in (1, 2):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.create_group("layers/dense/vars").create_dataset("0", data=np.full((1024, 4096), float(i), np.float32))
    with zipfile.ZipFile(f"in{i}.keras", "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0"}))
        z.writestr("config.json", json.dumps({"class_name": "Sequential"}))
        z.writestr("model.weights.h5", buf.getvalue())
PY
for delay in 0.02 0.05 0.1 0.2 0.3 0.5; do
  for sig in INT TERM HUP; do
    "$WAVG" merge -q in1.keras in2.keras -o out/m.keras 2>/dev/null & pid=$!
    sleep $delay
    kill -$sig $pid 2>/dev/null || true
    wait $pid || true
    rm -f out/m.keras  # the run may have finished before the signal
    [ -z "$(ls -A tmp)$(ls -A out)" ] || { echo "left after SIG$sig at ${delay}s: $(ls -A tmp out)"; exit 1; }
  done
done
"$WAVG" merge -q in1.keras in2.keras -o out/m.keras & pid=$!
sleep 0.1
kill -KILL $pid 2>/dev/null || true
wait $pid || true
rm -f out/m.keras
"$WAVG" merge -q in1.keras in2.keras -o out/m.keras
/usr/bin/python3 - <<'PY'
import io, zipfile, h5py, numpy as np
with h5py.File(io.BytesIO(zipfile.ZipFile("out/m.keras").read("model.weights.h5")), "r") as f:
    assert (f["layers/dense/vars/0"][()] == np.full((1024, 4096), 1.5, np.float32)).all()
PY
echo ok
