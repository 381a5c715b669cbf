"""Reads a --plot SVG back with xml.etree (no wavg code): each panel's axis labels and ticks, and each series'
points in data units, recovered from their pixel positions through the ticks' labels. Used by the plot_* cases."""
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def _text(el):
    t = el.find(NS + "text")
    return None if t is None else t.text


def _linear(ticks):
    """The map from pixels to values that the ticks (value, pixel) define; checks that they agree with it."""
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    scale = (v1 - v0) / (p1 - p0)
    for v, p in ticks:
        assert abs(v0 + (p - p0) * scale - v) <= abs(scale) * 0.02 + 1e-12, ("ticks not evenly spaced", ticks)
    return lambda p: v0 + (p - p0) * scale, abs(scale)


def read(path):
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", root.tag
    for bad in ("script", "image", "foreignObject", "style"):
        assert root.find(".//" + NS + bad) is None, "an SVG for --plot holds no " + bad
    for el in root.iter():
        for k, v in el.attrib.items():
            assert "href" not in k and "url(" not in v, ("external reference", k, v)
    out = {"title": root.find(NS + "title").text, "panels": []}
    for t in root.findall(NS + "text"):
        out[t.get("class")] = t.text
    for g in root.findall(NS + "g"):
        if g.get("class") != "panel":
            continue
        axes = {a.get("class"): a for a in g.findall(NS + "g") if (a.get("class") or "").startswith("axis")}
        panel = {"series": {}}
        for name, axis in (("x", axes["axis x"]), ("y", axes["axis y"])):
            label = [t.text for t in axis.findall(NS + "text") if t.get("class") == "label"]
            panel[name + "_label"] = label[0]
            ticks = []
            for tick in axis.findall(NS + "g"):
                line = tick.find(NS + "line")
                pos = float(line.get("x1" if name == "x" else "y1"))
                ticks.append((float(tick.get("data-value")), pos, _text(tick)))
            panel[name + "_ticks"] = ticks
        ymap, yscale = _linear([(v, p) for v, p, _ in panel["y_ticks"]])
        if all(_is_number(t) for _, _, t in panel["x_ticks"]):
            xmap, xscale = _linear([(v, p) for v, p, _ in panel["x_ticks"]])
            panel["categories"] = None
        else:
            centres = [p for _, p, _ in panel["x_ticks"]]
            xmap = lambda p: min(range(len(centres)), key=lambda i: abs(centres[i] - p))
            xscale = 0
            panel["categories"] = [t for _, _, t in panel["x_ticks"]]
        panel["tolerance"] = (xscale * 0.02, yscale * 0.02)
        zero = ymap  # bars grow from 0: the edge that is not at 0 is the value
        for s in g.findall(NS + "g"):
            if s.get("class") != "series":
                continue
            points = []
            for c in s.findall(NS + "circle"):
                points.append((xmap(float(c.get("cx"))), ymap(float(c.get("cy"))),
                               "ring" if c.get("fill") == "white" else "dot", c.find(NS + "title").text))
            for r in s.findall(NS + "rect"):
                top, bottom = float(r.get("y")), float(r.get("y")) + float(r.get("height"))
                x = xmap(float(r.get("x")) + float(r.get("width")) / 2)
                v = zero(top) if abs(zero(top)) > abs(zero(bottom)) else zero(bottom)
                points.append((x, v, "bar", r.find(NS + "title").text))
            panel["series"][s.get("data-name")] = {"points": points, "path": s.find(NS + "path") is not None}
        panel["notes"] = [_text(n) for n in g.findall(NS + "g") if n.get("class") == "note"]
        out["panels"].append(panel)
    return out


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def close(got, want, tol):
    return abs(got - want) <= tol + 1e-9 * abs(want)
