# Pickles that would run code when loaded: an object whose __reduce__ calls os.system (zip and legacy format), and
# builtins.eval (which protocol 2 spells __builtin__.eval). wavg refuses each in one line naming the global, exit 1,
# before reading any tensor; the command never runs (the file it would create does not appear) and no output is written.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import builtins, os, torch
class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))
class Eval:
    def __reduce__(self):
        return (builtins.eval, ("open('pwned', 'w')",))
good = {"w": torch.ones(2)}
torch.save({"w": torch.ones(2), "x": Evil()}, "evil.pt")
torch.save({"w": torch.ones(2), "x": Evil()}, "evil_legacy.pt", _use_new_zipfile_serialization=False)
torch.save({"w": torch.ones(2), "x": Eval()}, "eval.pt")
torch.save(good, "good.pt")
PY
for f in evil.pt evil_legacy.pt eval.pt; do
  code=0
  "$WAVG" merge "$f" good.pt -o out.pt || code=$?
  echo "$f: exit $code"
done
[ ! -e pwned ] || { echo "the payload ran"; exit 1; }
[ ! -e out.pt ] || { echo "an output was written"; exit 1; }
