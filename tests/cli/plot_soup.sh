# soup --plot on soup_greedy's example (one-number checkpoints 1, 2, 5, 9 scored -(w - 3)^2): the inputs best
# first on the x axis, each one's score alone, the candidate soup with it (a dot when taken, a ring when not) and
# the soup so far, read back through the ticks and compared with the closed form and with --json.
. "$ROOT/tests/support/one_number.sh"
one_number 1 2 5 9
"$WAVG" soup c1.h5 c2.h5 c5.h5 c9.h5 --eval "$P score.py {model} 2>/dev/null" -o soup.h5 --json \
  --plot soup.svg >soup.json
$P - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/cli")
import plot_svg
j, svg = json.load(open("soup.json")), plot_svg.read("soup.svg")
print(svg["title"])
print(svg["subtitle"])
(panel,) = svg["panels"]
print(panel["y_label"], "|", panel["x_label"], "|", panel["categories"])
f = lambda *w: -(sum(w) / len(w) - 3) ** 2
want = {"input alone": [f(2), f(1), f(5), f(9)], "soup with it (ring: not taken)": [f(2), f(2, 1), f(2, 5), f(2, 5, 9)],
        "soup so far": [f(2), f(2), f(2, 5), f(2, 5)]}
from_json = {"input alone": [s["score"] for s in j["steps"]],
             "soup with it (ring: not taken)": [s["with_it"] for s in j["steps"]],
             "soup so far": [s["soup"] for s in j["steps"]]}
tx, ty = panel["tolerance"]
for name, values in want.items():
    pts = panel["series"][name]["points"]
    print(" ", name, [k for _, _, k, _ in pts],
          all(x == i and plot_svg.close(y, v, ty) and plot_svg.close(y, u, ty)
              for i, ((x, y, _, _), v, u) in enumerate(zip(pts, values, from_json[name]))))
print("taken:", [s["taken"] for s in j["steps"]], "score:", j["score"])
PY
