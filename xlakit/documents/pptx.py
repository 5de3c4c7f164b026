"""PowerPoint 2007+ (.pptx): slide text in presentation order, one ``【第 N 页】`` per slide.

The order is the presentation's slide list (``sldIdLst`` through the relationships), not the part
names: slide7.xml may well be shown second. Within a slide, shapes come in their drawing order;
tables as rows; charts as a small table of their cached data and SmartArt as its nodes' text
(``pptx_parts``). After the slide's own shapes comes the text its layout and master draw on it (a
footer, a banner; not the placeholders' prompt text), then the speaker notes as ``【备注】``, like
the .ppt reader: the notes are often where the presenter wrote what the slide means.
"""
import posixpath
import zipfile

from .base import FormatError, zip_xml
from . import pptx_parts
from ..errors import what_broke

NAME = "pptx"
LABEL = "PowerPoint 演示文稿（.pptx）"

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"


def accepts(kind):
    if kind.kind == "pptx":
        return True, None
    return False, "不是 PowerPoint 2007+ 演示文稿（pptx 包）"


def _slides(zf):
    pres = zip_xml(zf, "ppt/presentation.xml")
    rels = zip_xml(zf, "ppt/_rels/presentation.xml.rels")
    targets = {}
    if rels is not None:
        for rel in rels.iter(PKG + "Relationship"):
            targets[rel.get("Id")] = posixpath.normpath(posixpath.join("ppt", rel.get("Target", "")))
    order = []
    if pres is not None:
        for sid in pres.iter(P + "sldId"):
            target = targets.get(sid.get(R + "id"))
            if target:
                order.append(target)
    if not order:
        names = [n for n in zf.namelist() if n.startswith("ppt/slides/slide") and n.endswith(".xml")]
        order = sorted(names, key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))
    return order


def convert(path, kind, out, deadline=None):
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FormatError("演示文稿已损坏，无法打开（%s）" % what_broke(exc))
    with zf:
        slides = _slides(zf)
        shown = {}
        out.page_count = len(slides)
        for number, name in enumerate(slides, 1):
            if deadline is not None:
                deadline.check("读取演示文稿")
            root = zip_xml(zf, name)
            out.page(number)
            if root is None:
                continue
            _shapes(zf, name, root, out)
            for text in _behind(zf, name, root, shown):
                out.para(text)
            _notes(zf, name, out)


def _shows_master(root):
    return root.get("showMasterSp", "1") not in ("0", "false")


def _behind(zf, name, root, shown):
    """Text of the non-placeholder shapes of the slide's layout and (unless hidden) master."""
    if not _shows_master(root):
        return []
    layout = pptx_parts.related(zf, name, "slideLayout")
    if not layout:
        return []
    texts = []
    layout_root = _fixed(zf, layout, shown)
    if layout_root is not None:
        texts += shown[layout][1]
        if _shows_master(layout_root):
            master = pptx_parts.related(zf, layout, "slideMaster")
            if master and _fixed(zf, master, shown) is not None:
                texts = shown[master][1] + texts
    return texts


def _fixed(zf, part, shown):
    """(root, [texts of shapes that are not placeholders]) of a layout or master, cached."""
    if part not in shown:
        root = zip_xml(zf, part)
        texts = []
        if root is not None:
            for sp in root.iter(P + "sp"):
                if sp.find(P + "nvSpPr/" + P + "nvPr/" + P + "ph") is None and sp.find(P + "txBody") is not None:
                    texts += [t for t in (_para(p) for p in sp.find(P + "txBody").iter(A + "p")) if t.strip()]
        shown[part] = (root, texts)
    return shown[part][0]


_NOT_NOTES = ("sldImg", "sldNum", "hdr", "ftr", "dt")


def _notes(zf, name, out):
    part = pptx_parts.related(zf, name, "notesSlide")
    root = zip_xml(zf, part) if part else None
    if root is None:
        return
    texts = []
    for sp in root.iter(P + "sp"):
        ph = sp.find(P + "nvSpPr/" + P + "nvPr/" + P + "ph")
        body = sp.find(P + "txBody")
        if body is None or (ph is not None and ph.get("type") in _NOT_NOTES):
            continue
        texts += [t for t in (_para(p) for p in body.iter(A + "p")) if t.strip()]
    if texts:
        out.section("备注")
        for text in texts:
            out.para(text)


def _shapes(zf, name, el, out):
    for child in el:
        tag = child.tag
        if tag == MC + "Fallback":
            continue
        if tag == P + "sp":
            body = child.find(P + "txBody")
            ph = child.find(".//" + P + "ph")
            if ph is not None and ph.get("type") == "sldNum":
                continue                         # the slide number: 【第 N 页】 says it already
            if body is not None:
                title = False
                if ph is not None and ph.get("type") in ("title", "ctrTitle"):
                    title = True
                paras = [_para(p) for p in body.iter(A + "p")]
                paras = [p for p in paras if p.strip()]
                if title and paras:
                    out.heading(2, " ".join(paras))
                else:
                    for p in paras:
                        out.para(p)
        elif tag == P + "graphicFrame" and child.find(".//" + A + "tbl") is None:
            pptx_parts.graphic(zf, name, child, out)
        elif tag == A + "tbl":
            for tr in child.iter(A + "tr"):
                out.row([" ".join(_para(p) for p in tc.iter(A + "p")) for tc in tr.iter(A + "tc")])
        else:
            _shapes(zf, name, child, out)


def _para(p):
    parts = []
    for child in p:
        if child.tag in (A + "r", A + "fld"):
            t = child.find(A + "t")
            if t is not None and t.text:
                parts.append(t.text)
        elif child.tag == A + "br":
            parts.append("\n")
    return "".join(parts)
