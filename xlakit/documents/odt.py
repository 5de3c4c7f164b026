"""OpenDocument text (.odt/.ott, what LibreOffice and WPS write): content.xml in reading order.

Headings (``text:h`` with its outline level and outline number), lists with their numbers
(``odt_lists``), tables (repeated cells expanded, capped),
frames and text boxes, footnotes collected after the body, then the master pages' headers and
footers from styles.xml. Tracked deletions and annotations are not text.
"""
import zipfile
import xml.etree.ElementTree as ET

from .base import FormatError, zip_read, why
from .odt_lists import Numbers

NAME = "odt"
LABEL = "OpenDocument 文字文档（.odt）"

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"

SKIP = {TEXT + "tracked-changes", OFFICE + "annotation", OFFICE + "annotation-end", TEXT + "sequence-decls",
        TEXT + "variable-decls", TEXT + "user-field-decls", OFFICE + "forms", TABLE + "table-columns",
        TABLE + "table-column", TEXT + "note-citation", TEXT + "deletion",
        OFFICE + "event-listeners", DRAW + "image", TEXT + "table-of-content-source",
        TEXT + "illustration-index-source", TEXT + "alphabetical-index-source"}


def accepts(kind):
    if kind.kind == "odt":
        return True, None
    if kind.kind == "xml" and (kind.detail or "").startswith("OpenDocument"):
        return True, None           # flat XML (.fodt); a .fods goes on to the text reader
    return False, "不是 OpenDocument 文字文档（.odt）"


def _flat(path, kind, out, deadline):
    """A flat OpenDocument file (.fodt: the package's parts in one XML document)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise FormatError("OpenDocument 单文件 XML 不完整（%s），文件可能已损坏" % why(exc))
    if root.get(OFFICE + "mimetype") != "application/vnd.oasis.opendocument.text":
        from . import text as plain        # not a text document (.fods, .fodp): shown as XML text
        return plain.convert(path, kind, out, deadline)
    title = root.findtext(".//" + OFFICE + "meta/" + DC + "title")
    if title and title.strip():
        out.title = title.strip()
    body = root.find(OFFICE + "body")
    text = body.find(OFFICE + "text") if body is not None else None
    if text is None:
        return None
    ctx = _Ctx(Numbers([root.find(OFFICE + "automatic-styles"), root.find(OFFICE + "styles")]))
    _blocks(text, ctx, out, 0)
    if ctx.notes:
        out.section("脚注")
        for note in ctx.notes:
            _blocks(note, _Ctx(), out, 0)
    _headers_footers(root, out)
    return None


class _Ctx:
    def __init__(self, numbers=None):
        self.notes = []
        self.frames = []
        self.numbers = numbers or Numbers([])


def convert(path, kind, out, deadline=None):
    if kind.kind == "xml":
        return _flat(path, kind, out, deadline)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FormatError("OpenDocument 文档已损坏，无法打开（%s）" % why(exc))
    with zf:
        content = zip_read(zf, "content.xml")
        if content is None:
            raise FormatError("OpenDocument 文档里没有 content.xml，文件已损坏或不完整")
        try:
            root = ET.fromstring(content)
        except ET.ParseError as exc:
            raise FormatError("OpenDocument 文档的 content.xml 不是完整的 XML（%s），文件可能已损坏" % why(exc))
        meta = zip_read(zf, "meta.xml", cap=1 << 20)
        if meta:
            try:
                title = ET.fromstring(meta).findtext(".//" + DC + "title")
                if title and title.strip():
                    out.title = title.strip()
            except ET.ParseError:
                pass
        body = root.find(OFFICE + "body")
        text = body.find(OFFICE + "text") if body is not None else None
        if text is None:
            return
        styles = zip_read(zf, "styles.xml")
        sroot = None
        if styles:
            try:
                sroot = ET.fromstring(styles)
            except ET.ParseError:
                sroot = None
        ctx = _Ctx(Numbers([root.find(OFFICE + "automatic-styles"), sroot]))
        _blocks(text, ctx, out, 0)
        if ctx.notes:
            out.section("脚注")
            for note in ctx.notes:
                _blocks(note, _Ctx(), out, 0)
        if sroot is not None:
            _headers_footers(sroot, out)


def _headers_footers(sroot, out):
    """The master pages' headers and footers, each different one once, after the body."""
    seen = set()
    for tag, label in ((STYLE + "header", "页眉"), (STYLE + "footer", "页脚")):
        for part in sroot.iter(tag):
            plain = _inline(part, _Ctx()).strip()
            if plain and plain not in seen:
                seen.add(plain)
                out.section(label)
                _blocks(part, _Ctx(), out, 0)


def _blocks(parent, ctx, out, list_level):
    for child in parent:
        tag = child.tag
        if tag in SKIP:
            continue
        if tag == TEXT + "h":
            level = child.get(TEXT + "outline-level") or "1"
            level = int(level) if level.isdigit() else 1
            text = _inline(child, ctx)
            label = ctx.numbers.heading(level, child) if text.strip() else None
            out.heading(level, _labelled(label, text))
            _frames(ctx, out)
        elif tag == TEXT + "p":
            out.para(_inline(child, ctx))
            _frames(ctx, out)
        elif tag == TEXT + "list":
            _list(child, ctx, out, list_level)
        elif tag == TABLE + "table":
            _table(child, ctx, out)
        else:   # sections, index bodies, frames at block level
            _blocks(child, ctx, out, list_level)


def _frames(ctx, out):
    frames, ctx.frames = ctx.frames, []
    for box in frames:
        _blocks(box, ctx, out, 0)


def _labelled(label, text):
    if not label:
        return text
    return label + ("" if label[-1:] in "、）】．" else " ") + text


def _list(lst, ctx, out, level, style=None, counts=None):
    """A list and the lists nested in it; ``style``/``counts``: the top list's numbering."""
    top = counts is None
    style = lst.get(TEXT + "style-name") or style
    if top:
        counts = ctx.numbers.start(lst, style)
    for item in lst:
        if item.tag not in (TEXT + "list-item", TEXT + "list-header"):
            continue
        first = True
        for child in item:
            if child.tag in (TEXT + "p", TEXT + "h"):
                label = None
                if first and item.tag == TEXT + "list-item":
                    label = ctx.numbers.item(style, level + 1, counts, item)
                first = False
                out.item(_inline(child, ctx), level, label or "-")
                _frames(ctx, out)
            elif child.tag == TEXT + "list":
                _list(child, ctx, out, level + 1, style, counts)
            elif child.tag == TABLE + "table":
                _table(child, ctx, out)
    if top:
        ctx.numbers.stop(lst, style, counts)


def _table(tbl, ctx, out):
    for row in tbl.iter(TABLE + "table-row"):
        cells = []
        for cell in row:
            if cell.tag not in (TABLE + "table-cell", TABLE + "covered-table-cell"):
                continue
            text = " ".join(t for t in (_inline(p, ctx).strip() for p in cell.iter() if p.tag in (TEXT + "p", TEXT + "h")) if t)
            repeat = cell.get(TABLE + "number-columns-repeated") or "1"
            n = min(int(repeat) if repeat.isdigit() else 1, 64)
            cells.extend([text] * (n if text else min(n, 1)))
        row_repeat = row.get(TABLE + "number-rows-repeated") or "1"
        for _ in range(min(int(row_repeat) if row_repeat.isdigit() else 1, 16)):
            out.row(cells)
        ctx.frames = []


def _inline(el, ctx):
    parts = [el.text or ""]
    for child in el:
        tag = child.tag
        if tag == TEXT + "s":
            c = child.get(TEXT + "c") or "1"
            parts.append(" " * min(int(c) if c.isdigit() else 1, 100))
        elif tag == TEXT + "tab":
            parts.append("\t")
        elif tag == TEXT + "line-break":
            parts.append("\n")
        elif tag == TEXT + "note":
            body = child.find(TEXT + "note-body")
            if body is not None:
                ctx.notes.append(body)
        elif tag == TEXT + "ruby":
            # phonetic guide: the base, then the reading in brackets (as the doc/docx readers)
            base = child.find(TEXT + "ruby-base")
            reading = child.find(TEXT + "ruby-text")
            base = _inline(base, ctx) if base is not None else ""
            reading = (_inline(reading, ctx) if reading is not None else "").strip()
            parts.append("%s（%s）" % (base, reading) if reading and base else base or reading)
        elif tag == DRAW + "frame":
            box = child.find(DRAW + "text-box")
            if box is not None:
                ctx.frames.append(box)
        elif tag in SKIP:
            pass
        else:
            parts.append(_inline(child, ctx))
        parts.append(child.tail or "")
    return "".join(parts)
