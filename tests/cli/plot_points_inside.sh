# soup --plot where the scores fill their axis exactly (one-number checkpoints 1, 3, 5 scored -(w - 3)^2: from -4
# to 0, both ticks): every point lies inside the plot area, clear of its top and bottom edges (at least 2% of the
# height away), where a dot would be drawn half outside the frame.
. "$ROOT/tests/support/one_number.sh"
one_number 1 3 5
"$WAVG" soup c1.h5 c3.h5 c5.h5 --eval "$P score.py {model} 2>/dev/null" -o soup.h5 -q --plot soup.svg
$P - <<'PY'
import os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/cli")
import plot_svg
(panel,) = plot_svg.read("soup.svg")["panels"]
ticks = [v for v, _, _ in panel["y_ticks"]]
lo, hi = min(ticks), max(ticks)
ys = [y for s in panel["series"].values() for _, y, _, _ in s["points"]]
tx, ty = panel["tolerance"]
print("scores from -4 to 0:", plot_svg.close(min(ys), -4, ty), plot_svg.close(max(ys), 0, ty))
print("inside, clear of the edges:", all(lo + 0.02 * (hi - lo) <= y <= hi - 0.02 * (hi - lo) for y in ys))
PY
