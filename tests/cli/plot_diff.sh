# diff --plot on the sample MLPs: one bar per float tensor in A's order (--json's) in each panel, the names on the x axis,
# and each bar's height, read through the y ticks, is the relative distance or cosine --json gives.
/usr/bin/python3 -c 'import xml.etree.ElementTree' 2>/dev/null || { echo "python3 missing"; exit 77; }
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node3.h5" .
"$WAVG" diff node1.h5 node3.h5 --json --plot d.svg >d.json
/usr/bin/python3 - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/cli")
import plot_svg
j, svg = json.load(open("d.json")), plot_svg.read("d.svg")
print(svg["title"])
floats = [t for t in j["tensors"] if "relative" in t]
for panel, key in zip(svg["panels"], ("relative", "cosine")):
    print(panel["y_label"], "|", panel["x_label"], "|", len(panel["y_ticks"]) >= 3)
    (series,) = panel["series"].values()
    names = [t["name"] for t in floats]
    cut = [n if len(n) <= 40 else n[:37] + "..." for n in names]  # long names are cut on the axis, whole in titles
    print("  names in A's order:", panel["categories"] == cut,
          [title.rsplit(": ", 1)[0] for _, _, _, title in series["points"]] == names)
    tx, ty = panel["tolerance"]
    bars = series["points"]
    print(" ", len(bars), "bars as --json:", len(bars) == len(floats) and all(
        x == i and plot_svg.close(y, t[key], ty) for i, ((x, y, kind, _), t) in enumerate(zip(bars, floats))))
print(svg["subtitle"].startswith("whole model: relative distance %.6g, cosine %.6g" % (
    j["total"]["relative"], j["total"]["cosine"])))
PY
