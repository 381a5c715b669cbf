# Optional (WAVG_CHROMIUM=/usr/bin/chromium, Debian's package): a real browser renders each --plot picture, the
# README's four (samples/plots, made by make_plots.sh) and one made here, without a parse error, and not blank.
[ -n "${WAVG_CHROMIUM:-}" ] || { echo "WAVG_CHROMIUM not set"; exit 77; }
mkdir made
"$WAVG" diff "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node3.h5" --plot made/diff-here.svg >/dev/null
for svg in "$SAMPLES"/plots/*.svg made/diff-here.svg; do
  name=$(basename "$svg" .svg)
  cp "$svg" "$name.svg"
  size=$(/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot()
print("%d,%d" % (float(r.get("width")) + 1, float(r.get("height")) + 1))' "$name.svg")
  flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=$size"
  timeout 60 "$WAVG_CHROMIUM" $flags --dump-dom "file://$PWD/$name.svg" >"$name.dom" 2>/dev/null
  timeout 60 "$WAVG_CHROMIUM" $flags --screenshot="$PWD/$name.png" "file://$PWD/$name.svg" >/dev/null 2>&1
  /usr/bin/python3 - "$name" <<'PY'
import struct, sys, zlib
name = sys.argv[1]
dom = open(name + ".dom").read()
assert "<svg" in dom and "parsererror" not in dom and "This page contains the following errors" not in dom, name
png = open(name + ".png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(png):
    n, kind = struct.unpack(">I4s", png[pos:pos + 8])
    body = png[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, color = struct.unpack(">IIBB", body[:10])
        channels = {2: 3, 6: 4}[color]
        assert depth == 8
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * channels + 1
# Undo each row's PNG filter (types 0-4), then count the dark pixels: text, axes and lines.
prev = bytearray(w * channels)
dark = 0
for y in range(h):
    f, row = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
    for i in range(len(row)):
        a = row[i - channels] if i >= channels else 0
        b, c = prev[i], prev[i - channels] if i >= channels else 0
        if f == 1: row[i] = (row[i] + a) & 255
        elif f == 2: row[i] = (row[i] + b) & 255
        elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    dark += sum(1 for x in range(0, len(row), channels) if min(row[x:x + 3]) < 128)
    prev = row
print(name, "rendered:", dark > 0.005 * w * h)
PY
done
