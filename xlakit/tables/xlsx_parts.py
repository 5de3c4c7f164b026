"""The package side of editing an xlsx directly: workbook.xml and its relationships (``Book``),
``styles.xml`` edited as text (``Styles``), and copying a zip member by member with every part
but the edited ones carried over as its original compressed bytes (:func:`copy_package`).

Why text edits and raw copies: a re-serialised ElementTree would rename namespace prefixes that
``mc:Ignorable`` names (Excel then calls the file corrupt), and re-compressing parts nobody changed
costs time on a big workbook and risks changing what the user did not ask to change. Used by
``xlsx_append`` (rows added to a sheet, a sheet added to a workbook).
"""
import copy
import html
import re
import struct
import xml.etree.ElementTree as ET
import zipfile

from .. import opc
from ..errors import ToolError
from .formats._base import builtin_kind, classify_format
from .values import col_index

CHUNK = 1 << 20
NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_ATTR_RE = re.compile(rb'([\w:]+)\s*=\s*"([^"]*)"')
_REF_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?$")


class Fallback(Exception):
    """This package cannot be edited directly; the caller goes the openpyxl way (or refuses)."""


def parse_attrs(raw):
    return {k.decode(): html.unescape(v.decode("utf-8", "replace")) for k, v in _ATTR_RE.findall(raw or b"")}


def split_ref(ref):
    """``A1:H100`` -> (c1, r1, c2, r2) 1-based, or None."""
    m = _REF_RE.match((ref or "").strip())
    if not m:
        return None
    c1, r1 = col_index(m.group(1)) + 1, int(m.group(2))
    if m.group(3):
        return c1, r1, col_index(m.group(3)) + 1, int(m.group(4))
    return c1, r1, c1, r1



# ---------------------------------------------------------------------------------------------
# styles.xml, edited as text (a re-serialised ElementTree would rename namespace prefixes that
# mc:Ignorable names, and Excel would call the file corrupt)

class Styles:
    def __init__(self, data):
        self.text = data.decode("utf-8")
        self.changed = False
        m = re.search(r"<(\w+:)?cellXfs\b[^>]*>(.*?)</(?:\w+:)?cellXfs>", self.text, re.S)
        if not m:
            raise Fallback("no cellXfs")
        self.prefix = m.group(1) or ""
        self.xfs = re.findall(r"<(?:\w+:)?xf\b[^>]*?(?:/>|>.*?</(?:\w+:)?xf>)", m.group(2), re.S)
        if not self.xfs:
            raise Fallback("no xf")
        self.added_xfs = []
        self.numfmts = {}
        for fid, code in re.findall(r'<(?:\w+:)?numFmt\b[^>]*?numFmtId="(\d+)"[^>]*?formatCode="([^"]*)"', self.text):
            self.numfmts[int(fid)] = html.unescape(code)
        for code, fid in re.findall(r'<(?:\w+:)?numFmt\b[^>]*?formatCode="([^"]*)"[^>]*?numFmtId="(\d+)"', self.text):
            self.numfmts[int(fid)] = html.unescape(code)
        self.added_fmts = []
        self.derived = {}
        self.bold_font = None
        self.added_font = None

    def _xf(self, index):
        allx = self.xfs + self.added_xfs
        return allx[index] if 0 <= index < len(allx) else allx[0]

    def numfmt(self, index):
        m = re.search(r'\bnumFmtId="(\d+)"', self._xf(index).split(">", 1)[0])
        return int(m.group(1)) if m else 0

    def is_general(self, index):
        fid = self.numfmt(index)
        return fid == 0 or self.numfmts.get(fid, "").lower() == "general"

    def kind(self, index):
        fid = self.numfmt(index)
        if fid in self.numfmts:
            return classify_format(self.numfmts[fid])
        return builtin_kind(fid)

    def fmt_id(self, code):
        for fid, c in self.numfmts.items():
            if c == code:
                return fid
        fid = max([163] + list(self.numfmts)) + 1
        self.numfmts[fid] = code
        self.added_fmts.append((fid, code))
        return fid

    def derive(self, base, numfmt_id=None, bold=False):
        """Index of a cell style like ``base`` but with another number format (and/or bold)."""
        key = (base, numfmt_id, bold)
        if key in self.derived:
            return self.derived[key]
        head, sep, rest = self._xf(base).partition(">")
        selfclosing = head.endswith("/")
        if selfclosing:
            head = head[:-1]
        if numfmt_id is not None:
            head = self._set(head, "numFmtId", str(numfmt_id))
            head = self._set(head, "applyNumberFormat", "1")
        if bold:
            head = self._set(head, "fontId", str(self._bold_font(head)))
            head = self._set(head, "applyFont", "1")
        xf = head + ("/>" if selfclosing else ">" + rest)
        self.added_xfs.append(xf)
        self.changed = True
        index = len(self.xfs) + len(self.added_xfs) - 1
        self.derived[key] = index
        return index

    @staticmethod
    def _set(head, name, value):
        if re.search(r'\b%s="[^"]*"' % name, head):
            return re.sub(r'\b%s="[^"]*"' % name, '%s="%s"' % (name, value), head, count=1)
        return head.rstrip() + ' %s="%s"' % (name, value)

    def _bold_font(self, xf_head):
        if self.bold_font is not None:
            return self.bold_font
        m = re.search(r"<(\w+:)?fonts\b[^>]*>(.*?)</(?:\w+:)?fonts>", self.text, re.S)
        if not m:
            raise Fallback("no fonts")
        fonts = re.findall(r"<(?:\w+:)?font\b[^>]*?(?:/>|>.*?</(?:\w+:)?font>)", m.group(2), re.S)
        fm = re.search(r'\bfontId="(\d+)"', xf_head)
        base = fonts[int(fm.group(1))] if fm and int(fm.group(1)) < len(fonts) else (fonts[0] if fonts else None)
        p = m.group(1) or ""
        if base is not None and re.search(r"<(?:\w+:)?b\b(?![^>]*val=\"(?:0|false)\")", base):
            self.bold_font = fonts.index(base)
            return self.bold_font
        if base is None or base.endswith("/>"):
            font = "<%sfont><%sb/></%sfont>" % (p, p, p)
        else:
            font = re.sub(r"^(<(?:\w+:)?font\b[^>]*>)", r"\1<%sb/>" % p, base, count=1)
        self.added_font = font
        self.bold_font = len(fonts)
        return self.bold_font

    def data(self):
        text = self.text
        if self.added_fmts:
            new = "".join('<%snumFmt numFmtId="%d" formatCode="%s"/>' % (self.prefix, fid, opc.xml_attr(code))
                          for fid, code in self.added_fmts)
            m = re.search(r"<(\w+:)?numFmts\b([^>]*?)(/?)>", text)
            if m and not m.group(3):
                close = re.search(r"</(?:\w+:)?numFmts>", text)
                text = text[:close.start()] + new + text[close.start():]
            elif m:
                p = m.group(1) or ""
                text = text[:m.start()] + "<%snumFmts>%s</%snumFmts>" % (p, new, p) + text[m.end():]
            else:
                root = re.search(r"<(?:\w+:)?styleSheet\b[^>]*>", text)
                text = text[:root.end()] + "<%snumFmts>%s</%snumFmts>" % (self.prefix, new, self.prefix) + \
                    text[root.end():]
            text = fix_count(text, "numFmts", len(self.numfmts_in(text)))
        if self.added_font:
            close = re.search(r"</(?:\w+:)?fonts>", text)
            text = text[:close.start()] + self.added_font + text[close.start():]
            text = fix_count(text, "fonts", self.bold_font + 1)
        if self.added_xfs:
            close = re.search(r"</(?:\w+:)?cellXfs>", text)
            text = text[:close.start()] + "".join(self.added_xfs) + text[close.start():]
            text = fix_count(text, "cellXfs", len(self.xfs) + len(self.added_xfs))
        return text.encode("utf-8")

    @staticmethod
    def numfmts_in(text):
        m = re.search(r"<(?:\w+:)?numFmts\b[^>]*>(.*?)</(?:\w+:)?numFmts>", text, re.S)
        return re.findall(r"<(?:\w+:)?numFmt\b", m.group(1)) if m else []


def fix_count(text, tag, count):
    m = re.search(r"<(?:\w+:)?%s\b[^>]*>" % tag, text)
    if not m:
        return text
    head = m.group(0)
    if re.search(r'\bcount="\d*"', head):
        new = re.sub(r'\bcount="\d*"', 'count="%d"' % count, head, count=1)
    else:
        new = head[:-1] + ' count="%d">' % count
    return text[:m.start()] + new + text[m.end():]


# ---------------------------------------------------------------------------------------------
# The package

class Book:
    """What the direct edit needs from workbook.xml and its relationships."""

    def __init__(self, zf, path):
        self.path = path
        names = set(zf.namelist())
        self.names = names
        self.wb_part = "xl/workbook.xml"
        self.wb_text = opc.read_part(zf, self.wb_part).decode("utf-8")
        root = ET.fromstring(self.wb_text.encode("utf-8"))
        if not root.tag.startswith("{%s}" % NS_MAIN):
            raise Fallback("not transitional SpreadsheetML")
        pr = root.find("{%s}workbookPr" % NS_MAIN)
        self.date1904 = pr is not None and (pr.get("date1904") or "").lower() in ("1", "true")
        self.rels_part = opc.rels_part(self.wb_part)
        self.rels_text = opc.read_part(zf, self.rels_part).decode("utf-8") if self.rels_part in names else None
        if self.rels_text is None:
            raise Fallback("no workbook rels")
        rels = opc.parse_rels(self.rels_text.encode("utf-8"), self.wb_part)
        self.rel_ids = set(re.findall(r'\bId="([^"]*)"', self.rels_text))
        self.sheets = []            # (name, sheetId, rid, part or None, kind)
        rid_attr = "{%s}id" % opc.NS_OFFICE_RELS
        for el in root.iter("{%s}sheet" % NS_MAIN):
            rel = rels.get(el.get(rid_attr))
            self.sheets.append((el.get("name") or "", el.get("sheetId") or "0", el.get(rid_attr),
                                rel[1] if rel else None, rel[0] if rel else None))
        self.styles_part = next((t for k, t in rels.values() if k == "styles"), None)
        self.sst_part = next((t for k, t in rels.values() if k == "sharedStrings"), None)
        if self.styles_part not in names:
            raise Fallback("no styles part")
        self.ct_text = opc.read_part(zf, "[Content_Types].xml").decode("utf-8")

    @property
    def sheet_names(self):
        return [s[0] for s in self.sheets]

    def sheet(self, name):
        for i, s in enumerate(self.sheets):
            if s[0] == name:
                return i, s
        raise Fallback("sheet vanished")



def copy_package(tmp, book, replaced, added=(), level=6, small=(), dropped=(), late=()):
    """Every member of the source in its order, its compressed bytes copied as they are, except
    ``replaced`` ({name: bytes or callable(zip writer)}) and ``dropped`` (names left out); then
    ``added`` (name, bytes/callable). Replaced members named in ``late`` are written last, after
    the others: their content depends on what writing the others found (the workbook's
    recalculation flag depends on the formulas met while the sheet was streamed)."""
    with zipfile.ZipFile(book.path) as zin, open(book.path, "rb") as raw, \
            zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zout:
        for zi in zin.infolist():
            if zi.filename in dropped or zi.filename in late:
                continue
            if zi.filename in replaced:
                put_part(zout, zi.filename, replaced[zi.filename], zi.filename not in small)
            else:
                copy_raw(raw, zi, zout)
        for name in late:
            put_part(zout, name, replaced[name], False)
        for name, content in added:
            put_part(zout, name, content)


def put_part(zout, name, content, zip64=True):
    """``zip64``: a streamed part of unknown size needs the 64-bit header; one known to stay far
    below 4 GB gets the plain header older readers expect."""
    if callable(content):
        with zout.open(name, "w", force_zip64=zip64) as out:
            content(out)
    else:
        zout.writestr(name, content)


def copy_raw(src, zi, zout):
    """One member's local header + compressed data, unchanged content and compression."""
    src.seek(zi.header_offset)
    header = src.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise ToolError("原文件的压缩结构异常，无法直接追加。原文件没有改动")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    src.seek(name_len + extra_len, 1)
    out = copy.copy(zi)
    out.extra = b""                          # local timestamps/zip64 fields: zipfile writes its own
    out.flag_bits &= ~0x08                   # sizes and CRC go in the header, no data descriptor
    fp = zout.fp
    out.header_offset = fp.tell()
    fp.write(out.FileHeader())
    left = zi.compress_size
    while left > 0:
        block = src.read(min(CHUNK, left))
        if not block:
            raise ToolError("原文件被截断了，无法直接追加。原文件没有改动")
        fp.write(block)
        left -= len(block)
    zout.filelist.append(out)
    zout.NameToInfo[out.filename] = out
    zout.start_dir = fp.tell()



def prefix_for(text, ns):
    """The prefix the ROOT element binds to ``ns`` (None if it binds none): a declaration on some
    child (openpyxl with lxml puts ``xmlns:r`` on every ``<sheet>``) is out of scope elsewhere."""
    root = re.search(r"<(?![?!])[^>]*>", text)
    m = re.search(r'xmlns:(\w+)=["\']%s["\']' % re.escape(ns), root.group(0)) if root else None
    return m.group(1) if m else None
