"""The parts of a pptx slide that are not in the slide's own XML: chart data, SmartArt text,
speaker notes and the text the slide's layout and master draw on it.

A chart keeps the numbers it shows in the chart part's caches (``c:strCache``/``c:numCache``), so
the reader answers "第三季度销售额是多少" without opening the embedded workbook; a SmartArt
diagram keeps its words in the data part (``dgm:pt``), the drawing part is only a rendering;
a footer or a fixed banner ("内部资料 注意保密") placed on the master or layout shows on every
slide, while the master's placeholders only hold prompt text ("单击此处编辑母版标题样式") that the
audience never sees, so only non-placeholder shapes count.
"""
import posixpath

from .base import zip_xml

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"

# series kinds: the category axis and the values (scatter and bubble charts name them x and y)
_CATS = (C + "cat", C + "xVal")
_VALS = (C + "val", C + "yVal")


def rels(zf, part):
    """{rId: (part name, relationship type's last word)} of a part."""
    folder, name = posixpath.split(part)
    root = zip_xml(zf, posixpath.join(folder, "_rels", name + ".rels"))
    found = {}
    if root is not None:
        for rel in root.iter(PKG + "Relationship"):
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            found[rel.get("Id")] = (path, rel.get("Type", "").rsplit("/", 1)[-1])
    return found


def related(zf, part, kind):
    """The first part of relationship type ``kind`` (slideLayout, slideMaster, notesSlide)."""
    for path, rtype in rels(zf, part).values():
        if rtype == kind:
            return path
    return None


def _texts(el):
    return "".join(t.text or "" for t in el.iter(A + "t")) if el is not None else ""


def _cache(el):
    """The cached points of a ``c:tx``/``c:cat``/``c:val`` (string, number or multi-level cache)."""
    if el is None:
        return []
    points = {}
    for pt in el.iter(C + "pt"):
        v = pt.find(C + "v")
        try:
            idx = int(pt.get("idx", len(points)))
        except ValueError:
            idx = len(points)
        if v is not None and v.text is not None and idx not in points:
            points[idx] = _number(v.text)
    if not points:
        literal = el.find(C + "v")
        return [literal.text] if literal is not None and literal.text else []
    size = max(points) + 1
    return [points.get(i, "") for i in range(size)]


def _number(text):
    """8.200000000000001 as 8.2: the cache holds binary doubles, the slide shows the short form."""
    try:
        value = float(text)
    except ValueError:
        return text
    if value != value or value in (float("inf"), float("-inf")):
        return text
    short = "%.15g" % value
    return short if "e" not in short else text


def chart(zf, part, out):
    """A chart part as "图表：title" and a table: categories down, one column per series."""
    root = zip_xml(zf, part)
    if root is None:
        return
    series = []
    for ser in root.iter(C + "ser"):
        name = " ".join(str(v) for v in _cache(ser.find(C + "tx")))
        cats = next((_cache(ser.find(t)) for t in _CATS if ser.find(t) is not None), [])
        vals = next((_cache(ser.find(t)) for t in _VALS if ser.find(t) is not None), [])
        series.append((name, cats, vals))
    title_el = root.find(C + "chart/" + C + "title")
    title = _texts(title_el).strip() or " ".join(str(v) for v in _cache(title_el.find(C + "tx"))) if title_el is not None else ""
    deleted = root.find(C + "chart/" + C + "autoTitleDeleted")
    if not title and title_el is not None and len(series) == 1 and (deleted is None or deleted.get("val") in ("0", "false")):
        title = series[0][0]                     # PowerPoint titles a one-series chart with its name
    out.para("图表：%s" % title if title else "图表")
    if not series:
        return
    cats = max((s[1] for s in series), key=len)
    rows = max(len(cats), max(len(s[2]) for s in series))
    out.row(["类别"] + [s[0] or "系列%d" % (i + 1) for i, s in enumerate(series)])
    for r in range(min(rows, 200)):
        label = str(cats[r]) if r < len(cats) else str(r + 1)
        out.row([label] + [str(s[2][r]) if r < len(s[2]) else "" for s in series])


def diagram(zf, part, out):
    """SmartArt: the text of each node of the data model as a list item, indented by its depth
    in the diagram's tree (``parOf`` connections from the ``doc`` point, in ``srcOrd`` order);
    nodes no connection reaches follow at the top level, in the model's order."""
    root = zip_xml(zf, part)
    if root is None:
        return
    nodes, order, top = {}, [], None
    for pt in root.iter(DGM + "pt"):
        kind = pt.get("type", "node")
        if kind == "doc" and top is None:
            top = pt.get("modelId")
        elif kind == "node":
            nodes[pt.get("modelId")] = pt
            order.append(pt.get("modelId"))
    children = {}
    for cxn in root.iter(DGM + "cxn"):
        if cxn.get("type", "parOf") == "parOf":
            try:
                rank = int(cxn.get("srcOrd", "0"))
            except ValueError:
                rank = 0
            children.setdefault(cxn.get("srcId"), []).append((rank, cxn.get("destId")))
    seen = set()
    placed = []
    stack = [(top, -1)]
    while stack:
        mid, depth = stack.pop()
        if mid in seen:
            continue
        seen.add(mid)
        if mid in nodes:
            placed.append((mid, depth))
        for _rank, child in sorted(children.get(mid, ()), key=lambda c: c[0], reverse=True):
            stack.append((child, depth + 1))
    placed += [(mid, 0) for mid in order if mid not in seen]
    for mid, depth in placed:
        body = nodes[mid].find(DGM + "t")
        if body is None:
            continue
        for p in body.iter(A + "p"):
            text = _texts(p).strip()
            if text:
                out.item(text, max(0, min(depth, 8)))


def graphic(zf, slide_part, frame, out):
    """A graphicFrame's chart or SmartArt (tables are read where they stand, by the caller)."""
    data = frame.find(".//" + A + "graphicData")
    if data is None:
        return
    links = None
    for el in data:
        if el.tag == C + "chart":
            links = links or rels(zf, slide_part)
            target = links.get(el.get(R + "id"))
            if target:
                chart(zf, target[0], out)
        elif el.tag == DGM + "relIds":
            links = links or rels(zf, slide_part)
            target = links.get(el.get(R + "dm"))
            if target:
                diagram(zf, target[0], out)
