"""HTML (and "Word HTML", a .doc that Word saved as a web page; and MHTML single-file pages).

Charset: BOM, then ``<meta charset>`` / ``http-equiv`` in the first 4 KiB, then a UTF-8 trial,
then GB18030 (a superset of GBK/GB2312, which is what Chinese pages without a declaration use).
Script, style, navigation and form noise is skipped; block tags become paragraphs, ``<h1>``–
``<h6>`` headings, ``<li>`` list items, table rows ``单元格 | 单元格``.
"""
import codecs
import email
import email.policy
import re
from html.parser import HTMLParser

from .base import FormatError

NAME = "html"
LABEL = "网页（HTML）"

META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
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
    """(text, encoding) for HTML bytes."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(enc, "replace"), enc
    m = META.search(data[:4096])
    if m:
        enc = m.group(1).decode("ascii", "replace").lower()
        if enc in ("gb2312", "gbk", "x-gbk", "gb_2312-80", "cp936"):
            enc = "gb18030"
        try:
            codecs.lookup(enc)
            if enc.replace("-", "").replace("_", "") not in ("utf16", "utf32"):
                return data.decode(enc, "replace"), enc
        except LookupError:
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), "utf-8"


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
                try:
                    return payload.decode(charset, "replace")
                except LookupError:
                    pass
            return decode(payload)[0]
    raise FormatError("这个单文件网页（MHTML）里没有 HTML 正文，无法读取")


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        data = fh.read()
    if kind.kind == "mhtml":
        text = _mhtml_html(data)
    else:
        text = decode(data)[0]
    convert_text(text, out, deadline)
