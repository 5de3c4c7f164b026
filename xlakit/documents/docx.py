"""Word 2007+ (.docx/.docm/.dotx): the body in reading order, then notes, headers and footers.

Why a walk over the XML and not a text dump: structure is what lets the model answer "what does
section 3 say": headings come back as ``#``/``##`` (from the paragraph style's outline level, so
"标题 1" in a Chinese template counts as much as "heading 1"), list items as ``-``/``1.``, tables
as ``单元格 | 单元格`` rows. Deleted revisions and field codes (``HYPERLINK …``, ``PAGE``) are not
text; text boxes are (drawn once: the ``mc:Fallback`` copy of a shape is skipped).

Tracked changes come out as Word shows the document with every change accepted (ECMA-376 Part 1
§17.13.5): ``w:ins`` and ``w:moveTo`` text is kept, ``w:del`` and ``w:moveFrom`` text is not (also
when one nests in the other: a ``w:del`` inside a ``w:moveTo`` is gone, a ``w:ins`` inside a
``w:moveFrom`` moved away); a paragraph whose mark is deleted (``w:pPr/w:rPr/w:del``) runs on into
the next paragraph; a deleted table row (``w:trPr/w:del``) is gone. LibreOffice's plain text keeps
deleted revisions, so on such files its text is longer than what Word shows.

Every ``w:body`` is read (the schema allows one; some generators write several), and a
``w:altChunk`` (HTML/MHTML, RTF, text or .docx content Word imports on opening; Chinese OA exports
put their whole text in one ``afchunk.mht``) is read in place by that format's reader.
"""
import io
import posixpath
import re
import zipfile
import xml.etree.ElementTree as ET

from .. import sniff, text as textlib
from . import html, rtf
from .base import FormatError, zip_read, why
from .numbering import Numbering

NAME = "docx"
LABEL = "Word 文档（.docx）"
# All w:altChunk parts of a document together inflate at most this much, and each part is imported
# once: a few KB of XML naming one large part thousands of times would otherwise be gigabytes of text.
CHUNK_BYTES = 64 << 20

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
R_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
DC = "{http://purl.org/dc/elements/1.1/}"
OFFICE_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
HEADING_NAME = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.I)

SKIP = {W + "delText", W + "instrText", W + "del", W + "moveFrom", MC + "Fallback", W + "rPr", W + "pPr",
        W + "sectPr", W + "tblPr", W + "tblGrid", W + "trPr", W + "tcPr", W + "commentReference",
        W + "footnoteReference", W + "endnoteReference", W + "fldData", W + "numPr"}


def accepts(kind):
    if kind.kind == "docx":
        return True, None
    return False, "不是 Word 2007+ 文档（docx 包）"


class _Ctx:
    def __init__(self, styles, numbering):
        self.styles = styles          # style id -> (outline level or None, based-on id, numPr or None)
        self.numbering = numbering    # numbering.Numbering: labels as Word shows them, counted in order
        self.fields = []              # open complex fields: True once past their separator
        self.field_depth = 0          # 1 while inside the instruction part of any open field
        self.pending = []             # text-box paragraphs found inside the current paragraph
        self.carry = ""               # text of paragraphs whose mark is deleted: runs on into the next
        self.carry_boxes = []         # and the text boxes anchored in them
        self.zf = None                # the package, for w:altChunk parts
        self.chunks = {}              # relationship id -> part name of the aFChunk relationships
        self.depth = 0                # 0 for the document, 1+ inside an embedded chunk
        self.chunk_budget = None      # _ChunkBudget, shared with the chunks' own packages
        self.deadline = None


def convert(path, kind, out, deadline=None):
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FormatError("Word 文档已损坏，无法打开（%s）。请用 Word/WPS 打开后另存一份再试" % why(exc))
    with zf:
        _package(zf, out, deadline, 0)


class _ChunkBudget(object):
    """What the ``w:altChunk`` parts of one document (nested ones included) have inflated."""

    def __init__(self):
        self.seen = set()             # (package, part name) already imported
        self.used = 0                 # bytes


def _package(zf, out, deadline, depth, chunk_budget=None):
    """The body of the package ``zf``, then (for the document itself, not a .docx embedded as an
    ``w:altChunk``: ``depth`` > 0) its title, notes, headers and footers."""
    main = _main_part(zf)
    data = zip_read(zf, main)
    if data is None:
        raise FormatError("文档里没有正文部件（%s），文件可能已损坏" % main)
    rels = _rels(zf, main)
    base = posixpath.dirname(main)
    ctx = _Ctx(_styles(zf, base), _numbering(zf, base))
    ctx.numbering.link_styles(lambda sid: (ctx.styles.get(sid, (None, None, None))[2] or (None,))[0])
    ctx.zf, ctx.deadline, ctx.depth = zf, deadline, depth
    ctx.chunk_budget = chunk_budget or _ChunkBudget()
    ctx.chunks = dict((rid, target) for kind, target, rid in _resolved(rels, base) if kind == "aFChunk")
    if depth == 0:
        core = zip_read(zf, "docProps/core.xml", cap=1 << 20)
        if core:
            try:
                title = ET.fromstring(core).findtext(DC + "title")
                if title and title.strip():
                    out.title = title.strip()
            except ET.ParseError:
                pass
    # One w:body by the schema, but generators have written several (POI's MultipleBodyBug.docx):
    # Word and LibreOffice show them all, one after another.
    root = _parse(data, main)
    bodies = root.findall(W + "body")
    if not bodies:
        return
    gone = _deleted_chars(root) if depth == 0 else 0
    if gone:
        out.warnings.append("文档带修订记录，按“接受所有修订”后的样子读出：已删除的 %d 个字没有列出"
                            "（Word 的“所有标记”视图里它们显示为删除线）" % gone)
    for body in bodies:
        _walk_blocks(body, ctx, out)
    _flush(ctx, out)
    if depth:
        return
    # What Word shows around the body comes after it, so the first page of text stays the body.
    for label, rel_type in (("脚注", "footnotes"), ("尾注", "endnotes")):
        target = _target(rels, rel_type, base) or posixpath.join(base, rel_type + ".xml")
        part = zip_read(zf, target)
        if not part:
            continue
        tag = W + rel_type[:-1]
        notes = [n for n in _parse(part, target).iter(tag) if n.get(W + "type") in (None, "normal")]
        if any(_has_text(n) for n in notes):
            out.section(label)
            for note in notes:
                _walk_blocks(note, ctx, out)
                _flush(ctx, out)
    seen = set()
    for rel_type, label in (("header", "页眉"), ("footer", "页脚")):
        for target in _targets(rels, rel_type, base):
            part = zip_read(zf, target)
            if not part:
                continue
            root = _parse(part, target)
            text = _plain(root)
            if not text or text in seen:
                continue
            seen.add(text)
            out.section(label)
            _walk_blocks(root, ctx, out)
            _flush(ctx, out)


def _parse(data, name):
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise FormatError("文档的 %s 不是完整的 XML（%s），文件可能已损坏。请用 Word/WPS 打开后另存一份再试" % (name, why(exc)))


def _main_part(zf):
    data = zip_read(zf, "_rels/.rels", cap=1 << 20)
    if data:
        try:
            for rel in ET.fromstring(data).iter(PKG_REL + "Relationship"):
                if rel.get("Type") == OFFICE_DOC and rel.get("TargetMode") != "External":
                    return rel.get("Target", "").lstrip("/")
        except ET.ParseError:
            pass
    for name in zf.namelist():
        if name.startswith("word/") and name.endswith(".xml") and "document" in name:
            return name
    return "word/document.xml"


def _rels(zf, part):
    """(type's last segment, target, id) of the part's internal relationships."""
    name = posixpath.join(posixpath.dirname(part), "_rels", posixpath.basename(part) + ".rels")
    data = zip_read(zf, name, cap=8 << 20)
    out = []
    if data:
        try:
            for rel in ET.fromstring(data).iter(PKG_REL + "Relationship"):
                if rel.get("TargetMode") != "External":
                    out.append((rel.get("Type", "").rsplit("/", 1)[-1], rel.get("Target", ""), rel.get("Id", "")))
        except ET.ParseError:
            pass
    return out


def _resolved(rels, base):
    """The relationships with their targets as package part names."""
    for kind, target, rid in rels:
        yield kind, target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target)), rid


def _targets(rels, rel_type, base):
    for kind, target, _rid in _resolved(rels, base):
        if kind == rel_type:
            yield target


def _target(rels, rel_type, base):
    return next(_targets(rels, rel_type, base), None)


def _styles(zf, base):
    data = zip_read(zf, posixpath.join(base, "styles.xml"))
    styles = {}
    if not data:
        return styles
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return styles
    for st in root.iter(W + "style"):
        sid = st.get(W + "styleId")
        if not sid:
            continue
        level = None
        ppr = st.find(W + "pPr")
        if ppr is not None:
            ol = ppr.find(W + "outlineLvl")
            if ol is not None and (ol.get(W + "val") or "").isdigit() and int(ol.get(W + "val")) < 9:
                level = int(ol.get(W + "val")) + 1
        name_el = st.find(W + "name")
        name = name_el.get(W + "val", "") if name_el is not None else ""
        match = HEADING_NAME.match(name.strip()) or HEADING_NAME.match(sid)
        if level is None and match:
            level = int(match.group(1))
        if name.strip().lower() == "title" and level is None:
            level = 1
        based = st.find(W + "basedOn")
        styles[sid] = (level, based.get(W + "val") if based is not None else None,
                       _num_pr(ppr.find(W + "numPr")) if ppr is not None else None)
    return styles


def _num_pr(num):
    """(numId, ilvl) of a ``w:numPr`` (either may be None when the element leaves it out)."""
    if num is None:
        return None
    num_id, ilvl = num.find(W + "numId"), num.find(W + "ilvl")
    lvl = ilvl.get(W + "val", "0") if ilvl is not None else None
    return (num_id.get(W + "val") if num_id is not None else None,
            int(lvl) if lvl is not None and lvl.isdigit() else None)


def _numbering(zf, base):
    return Numbering(zip_read(zf, posixpath.join(base, "numbering.xml")))


def _style_level(ctx, sid):
    seen = set()
    while sid and sid not in seen:
        seen.add(sid)
        level, based, _num = ctx.styles.get(sid, (None, None, None))
        if level is not None:
            return level
        sid = based
    return None


def _style_num(ctx, sid):
    """The numbering a paragraph style carries (Chinese templates number "标题 1" this way): the
    nearest numId along ``basedOn``, and the nearest ilvl."""
    seen, num_id, ilvl = set(), None, None
    while sid and sid not in seen:
        seen.add(sid)
        _level, based, num = ctx.styles.get(sid, (None, None, None))
        if num:
            num_id = num_id if num_id is not None else num[0]
            ilvl = ilvl if ilvl is not None else num[1]
        sid = based
    return (num_id, ilvl) if num_id is not None else None


def _has_text(el):
    return any((t.text or "").strip() for t in el.iter(W + "t"))


def _plain(el):
    return "".join(t.text or "" for t in el.iter(W + "t")).strip()


def _walk_blocks(parent, ctx, out):
    for child in parent:
        tag = child.tag
        if tag == W + "p":
            _paragraph(child, ctx, out)
        elif tag == W + "tbl":
            _table(child, ctx, out)
        elif tag == W + "altChunk":
            _flush(ctx, out)
            _alt_chunk(child, ctx, out)
        elif tag in SKIP:
            continue
        else:   # w:sdt / w:sdtContent / w:customXml / w:ins / mc:AlternateContent ... hold blocks
            _walk_blocks(child, ctx, out)


def _deleted_chars(root):
    """Characters of deleted revision text in the main part (what a reader sees struck through in
    Word's markup view and we leave out; moved text shows at its destination, so is not counted)."""
    return sum(len(t.text or "") for t in root.iter(W + "delText"))


def _alt_chunk(el, ctx, out):
    """A ``w:altChunk``: content in another format that Word imports where it stands when it opens
    the file (OA systems and report generators fill a .docx this way, often with one
    ``afchunk.mht`` holding the whole text). HTML / MHTML, RTF, plain text and .docx parts are read
    in place by their own readers; anything else is left out with a warning."""
    name = ctx.chunks.get(el.get(R_NS + "id") or "")
    if not name:
        return
    budget = ctx.chunk_budget          # each part once, CHUNK_BYTES in all
    key = (id(ctx.zf), name)
    if key in budget.seen:
        out.warnings.append("文档里同一段嵌入内容（%s）被引用了多次，只读了第一次" % posixpath.basename(name))
        return
    budget.seen.add(key)
    left = CHUNK_BYTES - budget.used
    if left <= 0:
        out.warnings.append("文档里嵌入的其他格式内容合计超过 %d MB，后面的没有读出" % (CHUNK_BYTES >> 20))
        return
    data = zip_read(ctx.zf, name, cap=left)
    if not data:
        return
    budget.used += len(data)
    found = sniff.sniff(data)
    kind = found.kind
    if kind in ("html", "mhtml") or (kind == "xml" and b"<html" in data[:4096].lower()):
        html.convert_data(data, out, mhtml=kind == "mhtml", deadline=ctx.deadline)
    elif kind == "rtf":
        rtf.convert_data(data, out, ctx.deadline)
    elif kind == "docx" and ctx.depth < 3:
        try:
            inner = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, ValueError):
            inner = None
        if inner is not None:
            with inner:
                _package(inner, out, ctx.deadline, ctx.depth + 1, budget)
    elif kind == "text":
        for line in textlib.decode(data)[0].splitlines():
            out.para(line)
    else:
        out.warnings.append("文档里嵌入的一段内容（%s，%s）没有读出" % (posixpath.basename(name),
                                                              found.detail or "其他格式"))


def _flush(ctx, out):
    """Text of a paragraph whose mark was deleted with nothing after it to run into (the end of
    the body, a note, or a table next): a paragraph of its own."""
    text, boxes = ctx.carry, ctx.carry_boxes
    ctx.carry, ctx.carry_boxes = "", []
    out.para(text)
    for box in boxes:
        _walk_blocks(box, ctx, out)


def _removed(props):
    """True when a ``w:pPr/w:rPr`` or ``w:trPr`` records its paragraph mark or row as deleted (or
    moved away): gone once the changes are accepted."""
    return props is not None and (props.find(W + "del") is not None or props.find(W + "moveFrom") is not None)


def _mark_deleted(p):
    ppr = p.find(W + "pPr")
    return ppr is not None and _removed(ppr.find(W + "rPr"))


def _table(tbl, ctx, out):
    _flush(ctx, out)
    for tr in _children(tbl, W + "tr"):
        if _removed(tr.find(W + "trPr")):
            continue
        out.row([_cell_text(tc, ctx) for tc in _children(tr, W + "tc")])


def _children(el, tag):
    """Direct ``tag`` children of ``el``, also through content controls and custom XML wrappers
    (rows of a nested table live inside a cell and are not reached)."""
    for child in el:
        if child.tag == tag:
            yield child
        elif child.tag in (W + "sdt", W + "sdtContent", W + "customXml", W + "ins", MC + "AlternateContent",
                           MC + "Choice"):
            for inner in _children(child, tag):
                yield inner


def _cell_text(tc, ctx):
    texts, carry = [], ""
    for p in tc.iter(W + "p"):
        text = carry + _runs_text(p, ctx)
        if _mark_deleted(p):
            carry = text
            continue
        carry = ""
        if text.strip():
            texts.append(text.strip())
    if carry.strip():
        texts.append(carry.strip())
    return " ".join(texts)


def _paragraph(p, ctx, out):
    if _mark_deleted(p):
        # The mark is deleted: what is left of this paragraph joins the next one (which keeps its
        # own style and list label, as Word's paragraph mark carries them); it takes no label.
        ctx.pending = []
        ctx.carry += _runs_text(p, ctx)
        ctx.carry_boxes += ctx.pending
        ctx.pending = []
        return
    ppr = p.find(W + "pPr")
    level = None
    list_marker = None
    list_level = 0
    if ppr is not None:
        ol = ppr.find(W + "outlineLvl")
        if ol is not None and (ol.get(W + "val") or "").isdigit() and int(ol.get(W + "val")) < 9:
            level = int(ol.get(W + "val")) + 1
        ps = ppr.find(W + "pStyle")
        if level is None and ps is not None:
            level = _style_level(ctx, ps.get(W + "val"))
        num = _num_pr(ppr.find(W + "numPr"))
        style_num = _style_num(ctx, ps.get(W + "val")) if ps is not None else None
        if num is None or num[0] is None:
            num = (style_num[0], num[1] if num else None) if style_num else num
        if num is not None and num[0] and num[0] != "0":
            ilvl = num[1] if num[1] is not None else (style_num[1] if style_num and style_num[1] is not None else 0)
            list_marker = ctx.numbering.label(num[0], ilvl)
            list_level = ilvl
    ctx.pending = []
    text = ctx.carry + _runs_text(p, ctx)
    pending, ctx.pending = ctx.carry_boxes + ctx.pending, []
    ctx.carry, ctx.carry_boxes = "", []
    if level is not None and level <= 6:
        if list_marker and list_marker != "-" and text.strip():
            text = list_marker + _gap(list_marker) + text.strip()
        out.heading(level, text)
    elif list_marker:
        out.item(text, list_level, list_marker)
    else:
        out.para(text)
    for box in pending:   # text boxes anchored in this paragraph, after it
        _walk_blocks(box, ctx, out)


def _gap(label):
    """What goes between a label and the text: nothing after Chinese punctuation ("一、总则",
    "（一）范围"), a space after "1." or "①"."""
    return "" if label[-1] in "、）)】．" else " "


# Check boxes drawn with a symbol font (w:sym): Word's "插入符号" and Chinese form templates use
# Wingdings 2 R/T/£ and Wingdings þ/ý/¨/o/x. (font, code & 0xFF) -> the Unicode box.
BOXES = {("wingdings 2", 0x52): "\u2611", ("wingdings 2", 0x54): "\u2612", ("wingdings 2", 0xA3): "\u2610",
         ("wingdings 2", 0x2A): "\u2610", ("wingdings 2", 0xA2): "\u2610",
         ("wingdings", 0xFE): "\u2611", ("wingdings", 0xFD): "\u2612", ("wingdings", 0xA8): "\u2610",
         ("wingdings", 0x6F): "\u2610", ("wingdings", 0x78): "\u2612", ("wingdings", 0x71): "\u2610"}


def _checkbox(fld):
    """"☑"/"☐" for the begin of a legacy form check box field (w:ffData/w:checkBox: w:checked,
    else w:default), None for any other field."""
    data = fld.find(W + "ffData")
    box = data.find(W + "checkBox") if data is not None else None
    if box is None:
        return None
    state = box.find(W + "checked")
    if state is None:
        state = box.find(W + "default")
        on = state is not None and state.get(W + "val", "1") not in ("0", "false", "off")
    else:
        on = state.get(W + "val", "1") not in ("0", "false", "off")
    return "\u2611" if on else "\u2610"


def _runs_text(p, ctx):
    parts = []
    _collect(p, ctx, parts)
    return "".join(parts)


def _collect(el, ctx, parts):
    for child in el:
        tag = child.tag
        if tag == W + "t":
            if ctx.field_depth == 0:
                parts.append(child.text or "")
        elif tag == W + "fldChar":
            kind = child.get(W + "fldCharType")
            if kind == "begin":
                box = _checkbox(child)
                if box and ctx.field_depth == 0:
                    parts.append(box)    # a FORMCHECKBOX field shows no text: its state is the text
                ctx.fields.append(False)
            elif kind == "separate" and ctx.fields:
                ctx.fields[-1] = True
            elif kind == "end" and ctx.fields:
                ctx.fields.pop()
            ctx.field_depth = 0 if all(ctx.fields) else 1
        elif tag == W + "tab" and ctx.field_depth == 0:
            parts.append("\t")
        elif tag in (W + "br", W + "cr") and ctx.field_depth == 0:
            if child.get(W + "type") in (None, "textWrapping"):
                parts.append("\n")
        elif tag == W + "noBreakHyphen":
            parts.append("-")
        elif tag == W + "sym":
            code = child.get(W + "char", "")
            try:
                ch = chr(int(code, 16))
                if 0xF000 <= ord(ch) <= 0xF0FF:
                    # symbol-font glyph: only the check boxes forms use have a meaning to keep
                    box = BOXES.get(((child.get(W + "font") or "").lower(), ord(ch) & 0xFF))
                    if box:
                        parts.append(box)
                    continue
                parts.append(ch)
            except ValueError:
                pass
        elif tag == W + "ruby":
            # phonetic guide (拼音指南 / ふりがな): the base, then the reading in brackets
            base, reading = [], []
            for part, into in ((child.find(W + "rubyBase"), base), (child.find(W + "rt"), reading)):
                if part is not None:
                    _collect(part, ctx, into)
            base, reading = "".join(base), "".join(reading).strip()
            parts.append("%s（%s）" % (base, reading) if reading and base else base or reading)
        elif tag == W + "txbxContent":
            ctx.pending.append(child)
        elif tag in SKIP:
            continue
        elif tag == W + "p":    # a paragraph inside something inline (rare): keep its text
            _collect(child, ctx, parts)
            parts.append("\n")
        else:
            _collect(child, ctx, parts)
