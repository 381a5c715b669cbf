# barrier --plot: the SVG read back with xml.etree (plot_svg.py) has both panels' axes, labels and ticks, and its
# points, converted to data units through the ticks, are the numbers --json prints; the barriers are marked.
/usr/bin/python3 -c 'import xml.etree.ElementTree' 2>/dev/null || { echo "python3 missing"; exit 77; }
cp "$SAMPLES/digits/digits.csv.gz" .
for s in 1 2; do
  "$WAVG" local-sgd --data digits.csv.gz --hidden 16 --workers 1 --period 60 --rounds 1 --seed $s --out-dir n$s -q
done
"$WAVG" barrier n1/final.h5 n2/final.h5 --data digits.csv.gz --steps 6 --json --plot line.svg >line.json
/usr/bin/python3 - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/cli")
import plot_svg
j, svg = json.load(open("line.json")), plot_svg.read("line.svg")
print(svg["title"])
t = [p["t"] for p in j["points"]]
for panel, key, label in zip(svg["panels"], ("test_loss", "accuracy"), ("test loss", "accuracy")):
    print(panel["y_label"], "against", panel["x_label"], "|", len(panel["y_ticks"]) >= 3, len(panel["x_ticks"]) >= 3)
    tx, ty = panel["tolerance"]
    pts = panel["series"][label + " along the path"]["points"]
    ok = len(pts) == len(t) and all(plot_svg.close(x, tt, tx) and plot_svg.close(y, p[key], ty)
                                    for (x, y, _, _), tt, p in zip(pts, t, j["points"]))
    print(" ", len(pts), "points as --json:", ok)
    ends = panel["series"]["between the end points"]["path"]
    print("  line between the end points drawn:", ends, "| notes:", panel["notes"][1:])
b = j["barrier"]
print("loss barrier note:", svg["panels"][0]["notes"][0] == "barrier %.4g at t = %.2f" % (b["loss"], b["loss_t"]))
print("subtitle:", svg["subtitle"] == "loss barrier %.6f (t = %.4f), accuracy barrier %.6f (t = %.4f)" % (
    b["loss"], b["loss_t"], b["accuracy"], b["accuracy_t"]))
PY
