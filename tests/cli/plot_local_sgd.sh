# local-sgd --plot over two run folders (H = 8 and H = 32, 256 steps each): one line per run in each panel, a dot
# at each average (the end of a round) at its step, placed through the ticks at the --json numbers.
/usr/bin/python3 -c 'import xml.etree.ElementTree' 2>/dev/null || { echo "python3 missing"; exit 77; }
cp "$SAMPLES/digits/digits.csv.gz" .
run() { "$WAVG" local-sgd --data digits.csv.gz --hidden 16 --workers 4 --shard label-sorted -q "$@"; }
run --period 8 --rounds 32 --out-dir h8
run --period 32 --rounds 8 --out-dir h32 --plot h32.svg
"$WAVG" local-sgd h8 h32 --json --plot runs.svg >runs.json
/usr/bin/python3 - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/cli")
import plot_svg
j, svg = json.load(open("runs.json")), plot_svg.read("runs.svg")
print(svg["title"])
for panel, key in zip(svg["panels"], ("test_loss", "test_accuracy")):
    print(panel["y_label"], "|", panel["x_label"], "|", len(panel["y_ticks"]) >= 3, len(panel["x_ticks"]) >= 3)
    tx, ty = panel["tolerance"]
    for run in j["runs"]:
        pts = panel["series"][run["dir"]]["points"]
        ok = len(pts) == len(run["rounds"]) and all(
            plot_svg.close(x, r["step"], tx) and plot_svg.close(y, r[key], ty) and kind == "dot"
            for (x, y, kind, _), r in zip(pts, run["rounds"]))
        print(" ", run["dir"], len(pts), "averages as --json:", ok, "line:", panel["series"][run["dir"]]["path"])
print("one run:", plot_svg.read("h32.svg")["title"])
PY
