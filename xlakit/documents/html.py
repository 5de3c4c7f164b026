"""HTML (and "Word HTML", a .doc that Word saved as a web page; and MHTML single-file pages).

Charset: BOM, then ``<meta charset>`` / ``http-equiv`` (or the XML declaration) in the first 4 KiB
when the bytes agree with it (pages that lie about their charset are common), then a UTF-8 trial,
then the legacy encodings scored by ``xlakit.text`` (GB18030, Big5, Shift-JIS, cp125x, ...).
Script, style, navigation and form noise is skipped; block tags become paragraphs, ``<h1>``–
``<h6>`` headings, ``<li>`` list items, table rows ``单元格 | 单元格``.
"""
import email
import email.policy
import re
from html.parser import HTMLParser

from .. import text as textlib
from .base import FormatError

NAME = "html"
LABEL = "网页（HTML）"

META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""", re.I)
SKIP = {"script", "style", "noscript", "template", "svg", "nav", "head", "select", "button", "iframe",
        "object", "canvas", "math", "map", "xml"}
BLOCK = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "pre",
         "address", "figure", "figcaption", "form", "fieldset", "dl", "dt", "dd", "ul", "ol", "center",
         "hr", "table", "thead", "tbody", "tfoot", "caption", "body", "html", "details", "summary"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def accepts(kind):
    if kind.kind in ("html", "mhtml"):
        return True, None
    if kind.kind == "xml" and "html" in (kind.detail or "").lower():
        return True, None
    return False, "不是网页（HTML）"


def decode(data):
    """(text, encoding) for HTML bytes: the declared charset (``<meta>`` or the XML declaration in
    the first 4 KiB) only when the bytes agree with it, else the shared detector (``xlakit.text``:
    BOM, UTF-8, then the legacy encodings scored, so Big5 or cp1252 pages without a label are not
    read as GB18030)."""
    head = data[:4096]
    m = META.search(head) or XML_ENCODING.search(head)
    declared = m.group(1).decode("ascii", "replace") if m else None
    text, codec, _reason = textlib.decode(data, declared=declared)
    return text, codec


class _Parser(HTMLParser):
    def __init__(self, out, deadline):
        super().__init__(convert_charrefs=True)
        self.out = out
        self.deadline = deadline
        self.skip = 0
        self.buf = []
        self.heading = None
        self.list_depth = 0
        self.in_li = False
        self.cells = None
        self.cell = None
        self.title = []
        self.in_title = False
        self.pre = 0
        self.count = 0

    def flush(self):
        text = "".join(self.buf)
        self.buf = []
        if self.cell is not None:
            self.cell.append(text)
            return
        if not text.strip():
            return
        if self.heading:
            self.out.heading(self.heading, text)
        elif self.in_li:
            self.out.item(text, max(0, self.list_depth - 1))
        else:
            self.out.para(text, clean=not self.pre)

    def handle_starttag(self, tag, attrs):
        self.count += 1
        if self.deadline is not None and self.count % 2000 == 0:
            self.deadline.check("读取网页")
        if tag == "title":
            self.in_title = True
            return
        if tag in SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "br":
            self.buf.append("\n")
        elif tag in HEADINGS:
            self.flush()
            self.heading = HEADINGS[tag]
        elif tag == "li":
            self.flush()
            self.in_li = True
        elif tag in ("ul", "ol"):
            self.flush()
            self.list_depth += 1
        elif tag == "tr":
            self.flush()
            self.cells = []
        elif tag in ("td", "th"):
            if self.cells is None:
                self.cells = []
            self._end_cell()
            self.cell = []
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag in BLOCK:
            self.flush()
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt and alt.strip():
                self.buf.append(alt.strip())

    def _end_cell(self):
        if self.cell is not None:
            self.flush()
            self.cells.append(" ".join(t.strip() for t in self.cell if t.strip()))
            self.cell = None

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
            return
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in HEADINGS:
            self.flush()
            self.heading = None
        elif tag == "li":
            self.flush()
            self.in_li = False
        elif tag in ("ul", "ol"):
            self.flush()
            self.list_depth = max(0, self.list_depth - 1)
            self.in_li = self.list_depth > 0 and self.in_li
        elif tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_cell()
            if self.cells is not None:
                self.out.row(self.cells)
            self.cells = None
        elif tag == "pre":
            self.flush()
            self.pre = max(0, self.pre - 1)
        elif tag in BLOCK:
            self.flush()

    def handle_data(self, data):
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            return
        if not self.pre:
            data = re.sub(r"\s+", " ", data)
        self.buf.append(data)

    def close(self):
        super().close()
        self._end_cell()
        if self.cells:
            self.out.row(self.cells)
            self.cells = None
        self.flush()


def convert_text(text, out, deadline=None):
    parser = _Parser(out, deadline)
    try:
        parser.feed(text)
        parser.close()
    finally:
        title = "".join(parser.title).strip()
        if title and out.title is None:
            out.title = re.sub(r"\s+", " ", title)


def _mhtml_html(data):
    msg = email.message_from_bytes(data, policy=email.policy.compat32)
    for part in msg.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True) or b""
            charset = part.get_content_charset()
            if charset:
                return textlib.decode(payload, declared=charset)[0]
            return decode(payload)[0]
    raise FormatError("这个单文件网页（MHTML）里没有 HTML 正文，无法读取")


def convert_data(data, out, mhtml=False, deadline=None):
    """HTML (``mhtml``: a MIME single-file page) given as bytes: a file's content, or a part of
    another document (a .docx ``w:altChunk``, which OA systems fill with an ``afchunk.mht``)."""
    convert_text(_mhtml_html(data) if mhtml else decode(data)[0], out, deadline)


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        data = fh.read()
    convert_data(data, out, mhtml=kind.kind == "mhtml", deadline=deadline)
