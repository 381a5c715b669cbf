# torch.save files (a zip archive and the legacy pickle format) holding beside a tensor a list nested 60 levels
# deep whose every level lists the one below twice: 2^60 lists once unshared, 2 KB pickled through the memo. wavg
# keeps that entry unread (it is no tensor) in inspect and in a merge, within 256 MiB and 20 s
# (tests/support/bounded.py), in both formats.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
dag = []
for _ in range(60):
    dag = [dag, dag]
state = {"w": torch.arange(4, dtype=torch.float32), "laughs": dag}
torch.save(state, "zip.pt")
torch.save(state, "legacy.pt", _use_new_zipfile_serialization=False)
PY
for f in zip legacy; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" merge -q $f.pt $f.pt -o out_$f.pt
done
