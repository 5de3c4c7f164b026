"""Word 2003 XML (WordML: one XML file whose root is ``w:wordDocument``), read like a docx.

Banks, ERP systems and old Word macros still save "XML 文档" this way, often under a ``.doc`` or
``.xml`` name. Returning the raw XML (what the text reader did) buries a page of text in 20k
characters of markup. The structure maps onto the docx one with other names: ``w:body`` holds
``w:p`` / ``w:tbl`` (``wx:sub-section`` wraps parts of it), runs carry ``w:t``, ``w:tab``,
``w:br``; footnotes sit inside the run that references them (``w:footnote``); headers and
footers are in ``w:sectPr`` (``w:hdr`` / ``w:ftr``); text boxes are ``w:txbxContent`` inside
VML. Output is the docx reader's: headings from the paragraph style (built-in "heading N",
LibreOffice's "Heading_20_N", or an outline level), list items with their labels, table rows,
text boxes after their paragraph, then 【脚注】, 【页眉】, 【页脚】.

List labels: Word writes the label it shows (``wx:t wx:val="一、"``) and that is used as is;
otherwise (LibreOffice) ``w:lists`` (``w:listDef`` levels with ``w:nfc`` codes, ``w:list``
instances by ``w:ilfo``) is turned into the docx form and counted by ``numbering``.
"""
import re
import xml.etree.ElementTree as ET

from .base import FormatError
from .numbering import Numbering
from ..errors import what_broke

NAME = "wordml"
LABEL = "Word 2003 XML 文档（WordML）"

W = "{http://schemas.microsoft.com/office/word/2003/wordml}"
WX = "{http://schemas.microsoft.com/office/word/2003/auxHint}"
V = "{urn:schemas-microsoft-com:vml}"
DOCX_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MAX_XML = 64 << 20
HEADING = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.I)

# [MS-DOC] Nfc codes -> the docx number format names ``numbering`` knows
NFC = {0: "decimal", 1: "upperRoman", 2: "lowerRoman", 3: "upperLetter", 4: "lowerLetter", 5: "ordinal",
       10: "ideographDigital", 11: "japaneseCounting", 14: "decimalFullWidth", 18: "decimalEnclosedCircle",
       22: "decimalZero", 23: "bullet", 26: "decimalEnclosedFullstop", 27: "decimalEnclosedParen",
       28: "decimalEnclosedCircleChinese", 29: "ideographEnclosedCircle", 30: "ideographTraditional",
       31: "ideographZodiac", 33: "taiwaneseCounting", 34: "ideographLegalTraditional",
       35: "taiwaneseCountingThousand", 36: "taiwaneseDigital", 37: "chineseCounting",
       38: "chineseLegalSimplified", 39: "chineseCountingThousand", 255: "none"}


def accepts(kind):
    if kind.kind == "wordml":
        return True, None
    return False, "不是 Word 2003 XML 文档（根元素不是 w:wordDocument）"


def _val(el, name):
    found = el.find(name) if el is not None else None
    return found.get(W + "val") if found is not None else None


def _heading_styles(root):
    out = {}
    for style in root.iter(W + "style"):
        sid = style.get(W + "styleId")
        names = [(_val(style, W + "name") or ""), sid or ""]
        level = None
        for name in names:
            m = HEADING.match(name.replace("_20_", " ").strip())
            if m:
                level = int(m.group(1))
                break
        outline = _val(style.find(W + "pPr"), W + "outlineLvl")
        if level is None and outline is not None and outline.isdigit() and int(outline) < 9:
            level = int(outline) + 1
        if level and sid:
            out[sid] = level
    return out


def _numbering(root):
    """``numbering.Numbering`` over the document's ``w:lists``, rewritten in the docx form."""
    lists = root.find(W + "lists")
    if lists is None:
        return Numbering()
    d = "{%s}" % DOCX_W
    top = ET.Element(d + "numbering")
    for ld in lists.findall(W + "listDef"):
        ab = ET.SubElement(top, d + "abstractNum", {d + "abstractNumId": ld.get(W + "listDefId", "")})
        for lvl in ld.findall(W + "lvl"):
            new = ET.SubElement(ab, d + "lvl", {d + "ilvl": lvl.get(W + "ilvl", "0")})
            nfc = _val(lvl, W + "nfc")
            fmt = NFC.get(int(nfc), "decimal") if nfc and nfc.isdigit() else "decimal"
            ET.SubElement(new, d + "numFmt", {d + "val": fmt})
            for name in ("start", "lvlText", "lvlRestart", "isLgl"):
                value = _val(lvl, W + name)
                if value is not None:
                    ET.SubElement(new, d + name, {d + "val": value})
    for lst in lists.findall(W + "list"):
        num = ET.SubElement(top, d + "num", {d + "numId": lst.get(W + "ilfo", "")})
        ET.SubElement(num, d + "abstractNumId", {d + "val": _val(lst, W + "ilst") or ""})
        for over in lst.findall(W + "lvlOverride"):
            new = ET.SubElement(num, d + "lvlOverride", {d + "ilvl": over.get(W + "ilvl", "0")})
            start = _val(over, W + "startOverride")
            if start is not None:
                ET.SubElement(new, d + "startOverride", {d + "val": start})
    return Numbering(ET.tostring(top))


class _Reader:
    def __init__(self, root, out, deadline):
        self.out = out
        self.deadline = deadline
        self.headings = _heading_styles(root)
        self.numbering = _numbering(root)
        self.notes = []          # footnote/endnote paragraphs, after the body
        self.headers, self.footers = [], []
        self.count = 0

    # ------------------------------------------------------------ blocks
    def blocks(self, parent):
        for el in parent:
            tag = el.tag
            if tag == W + "p":
                self.paragraph(el)
            elif tag == W + "tbl":
                self.table(el)
            elif tag == W + "sectPr":
                self.section(el)
            elif tag in (W + "pPr", W + "rPr", W + "tblPr"):
                continue
            else:                 # wx:sub-section, w:sdt, w:customXml and friends: look inside
                self.blocks(el)

    def section(self, sect):
        for kind, store in ((W + "hdr", self.headers), (W + "ftr", self.footers)):
            for part in sect.findall(kind):
                for p in part.iter(W + "p"):
                    text = self.text(p, [])
                    if text.strip() and text not in store:
                        store.append(text)

    def paragraph(self, p):
        self.count += 1
        if self.deadline is not None and self.count % 200 == 0:
            self.deadline.check("读取 Word XML 文档")
        boxes = []
        text = self.text(p, boxes)
        ppr = p.find(W + "pPr")
        style = _val(ppr, W + "pStyle")
        level = self.headings.get(style)
        outline = _val(ppr, W + "outlineLvl")
        if level is None and outline is not None and outline.isdigit() and int(outline) < 6:
            level = int(outline) + 1
        label, ilvl = self.label(ppr)
        if level:
            gap = "" if label and label[-1] in "、）】．" else " "
            self.out.heading(level, (label + gap if label and label != "-" else "") + text)
        elif label:
            self.out.item(text, ilvl, label)
        else:
            self.out.para(text)
        for box in boxes:
            self.blocks(box)

    def label(self, ppr):
        lst = ppr.find(W + "listPr") if ppr is not None else None
        if lst is None:
            return None, 0
        ilvl = _val(lst, W + "ilvl")
        ilvl = int(ilvl) if ilvl and ilvl.isdigit() else 0
        shown = lst.find(WX + "t")
        ilfo = _val(lst, W + "ilfo")
        counted = self.numbering.label(ilfo, ilvl) if ilfo else None     # keeps the counts moving
        if shown is not None and shown.get(WX + "val", "").strip():
            value = shown.get(WX + "val").strip()
            return ("-" if len(value) == 1 and not value.isalnum() else value), ilvl
        return counted, ilvl

    def table(self, tbl):
        for tr in tbl.iter(W + "tr"):
            cells = []
            for tc in tr.findall(W + "tc"):
                parts = [self.text(p, []) for p in tc.iter(W + "p")]
                cells.append("\n".join(x for x in parts if x.strip()))
            self.out.row(cells)

    # ------------------------------------------------------------ inline
    def text(self, p, boxes):
        parts = []
        self._inline(p, parts, boxes, [])
        return "".join(parts)

    def _inline(self, el, parts, boxes, fields):
        for child in el:
            tag = child.tag
            if tag == W + "t":
                if all(fields):
                    parts.append(child.text or "")
            elif tag == W + "tab":
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                parts.append("\n")
            elif tag == W + "fldChar":
                kind = child.get(W + "fldCharType")
                if kind == "begin":
                    fields.append(False)
                elif kind == "separate" and fields:
                    fields[-1] = True
                elif kind == "end" and fields:
                    fields.pop()
            elif tag in (W + "instrText", W + "delText", W + "pPr", W + "rPr"):
                continue
            elif tag in (W + "footnote", W + "endnote"):
                for note in child.iter(W + "p"):
                    text = self.text(note, [])
                    if text.strip():
                        self.notes.append(text)
            elif tag == W + "txbxContent":
                boxes.append(child)
            else:
                self._inline(child, parts, boxes, fields)

    def finish(self):
        for name, items in (("脚注", self.notes), ("页眉", self.headers), ("页脚", self.footers)):
            if items:
                self.out.section(name)
                for text in items:
                    self.out.para(text)


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        data = fh.read(MAX_XML + 1)
    if len(data) > MAX_XML:
        raise FormatError("这个 Word XML 文档超过 64 MB，太大了。请用 Word/WPS 打开后另存为 .docx 再试")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise FormatError("Word 2003 XML 文档的 XML 不完整或已损坏（%s）。请用 Word/WPS 打开后另存为 .docx 再试" % what_broke(exc))
    if root.tag != W + "wordDocument":
        raise FormatError("这个 XML 文件不是 Word 2003 XML 文档（根元素是 %s）" % root.tag.split("}")[-1])
    props = root.find("{urn:schemas-microsoft-com:office:office}DocumentProperties")
    title = props.find("{urn:schemas-microsoft-com:office:office}Title") if props is not None else None
    if title is not None and (title.text or "").strip():
        out.title = title.text.strip()
    body = root.find(W + "body")
    if body is None:
        return
    reader = _Reader(root, out, deadline)
    reader.blocks(body)
    reader.finish()
