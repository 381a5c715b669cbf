# .keras archives built from samples/keras3's: one whose config.json nests 1,000,000 JSON arrays (read and merged
# with itself: the output keeps input 1's config as it is), one whose archive lists 100,000 members (a zip's central
# directory of 5 MB, refused in one line, exit 1), each within 256 MiB and 20 s (tests/support/bounded.py).
src=$(ls "$SAMPLES"/keras3/*.keras | head -1)
/usr/bin/python3 - "$src" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    members = {n: z.read(n) for n in z.namelist()}
with zipfile.ZipFile("deep.keras", "w") as z:
    for n, data in members.items():
        z.writestr(n, b"[" * 1000000 + b"]" * 1000000 if n == "config.json" else data)
with zipfile.ZipFile("many.keras", "w") as z:
    for n, data in members.items():
        z.writestr(n, data)
    for i in range(100000):
        z.writestr(f"x/{i}", b"")
PY
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" merge -q deep.keras deep.keras -o out.keras
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect many.keras
