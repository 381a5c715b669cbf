# Names a model cannot hold are refused (issue 26), one line each, exit 1, nothing written: a pickle that
# instantiates subprocess.Popen or posix.system objects with NEWOBJ and no arguments (nothing would run in wavg, but
# a user's torch.load of an output keeping those names would build them), builtins.object, and a class reached
# through the script's module (__main__.os.system); zip entry names that are not plain relative paths ('..', an
# absolute path, a backslash). A whole model of torch.nn classes and a user package's class still merges.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import copyreg, zipfile, torch
class Marker:
    def __reduce__(self):
        return (copyreg.__newobj__, (Marker,), {"args": "touch pwned"})
torch.save({"w": torch.ones(2), "x": Marker()}, "marker.pt")
torch.save({"w": torch.ones(2)}, "good.pt")
def rewrite(out, src, pickle=None, extra=None):
    with zipfile.ZipFile(src) as s, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in s.infolist():
            data = s.read(info)
            z.writestr(info.filename, pickle(data) if pickle and info.filename.endswith("data.pkl") else data)
        if extra:
            z.writestr(extra, b"x")
# NEWOBJ(cls, ()) then BUILD: the marker's class swapped for another (protocol 2 names it in a text line).
for name, cls in (("popen", b"subprocess\nPopen"), ("posix", b"posix\nsystem"), ("object", b"builtins\nobject"),
                  ("mainos", b"__main__\nos.system")):
    rewrite(f"{name}.pt", "marker.pt", lambda d: d.replace(b"c__main__\nMarker\n", b"c" + cls + b"\n"))
for name, extra in (("dotdot", "good/../../evil"), ("absolute", "/good/evil"), ("backslash", "good\\evil")):
    rewrite(f"{name}.pt", "good.pt", extra=extra)
PY
for f in popen posix object mainos dotdot absolute backslash; do
  code=0
  "$WAVG" merge -q $f.pt good.pt -o out.pt || code=$?
  echo "$f: exit $code"
done
[ ! -e pwned ] && [ ! -e out.pt ] || { echo "the payload ran or an output was written"; exit 1; }
