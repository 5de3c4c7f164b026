"""Reader for OpenDocument spreadsheets (``.ods``, LibreOffice/WPS/Numbers exports) and their
single-file XML form (``.fods``).

Why a reader of its own and not "save it as xlsx": LibreOffice and WPS users send ``.ods`` as a
matter of course, and the toolbox must not make them leave the conversation to convert it.

Two parsers read the sheet XML (``content.xml``), streamed in 1 MB chunks:

- the text parser (default, ``ods_text``): rows cut out of the byte stream with ``bytes.find``,
  a row of plain cells read by one regex pass, other rows cell by cell, ElementTree only for a
  cell with rich content (spans, several paragraphs, ``<text:s/>``). It is several times faster
  than a tree walk, which matters at 100k rows. It reads only what it is sure of: the root must
  bind the usual ``table:``/``office:``/``text:`` prefixes, and a comment, CDATA, odd quoting,
  a sub-table or anything else unexpected in a row sends the sheet to
- the tree parser (``XLA_ODS_READER=tree`` or ``reader="tree"``): ``ElementTree.XMLPullParser``,
  one ``table-row`` at a time, each row dropped from the tree once read. Both give the same rows
  (the tests check that on every fixture and on calamine's corpus).

ODS stores values typed, beside their display text:
``office:value-type`` float/percentage/currency -> ``office:value`` as a number (a percentage
stays the fraction, 15 % -> 0.15, as the xlsx reader gives it), date -> ``office:date-value``
(``date`` or ``datetime``), time -> ``office:time-value`` (an ISO duration: ``time`` below a
day, a ``Duration`` at or above, like elapsed formats in ``_base``), boolean -> ``bool``
(also the number 1/0 shown exactly ``TRUE``/``FALSE``: LibreOffice keeps an xlsx boolean so),
string -> the text (paragraphs joined by newlines, ``<text:s>`` runs of spaces expanded,
comments left out). Long digit strings stay text because ODS says they are strings.

ODS compresses runs with ``number-rows-repeated`` / ``number-columns-repeated``. An empty repeat
just moves the position (LibreOffice ends every sheet with an empty row repeated to 1,048,576
rows and cells repeated to 16,384 columns: that costs nothing); a repeat that carries a value is
expanded, up to 16,384 columns and :data:`MAX_REPEAT_CELLS` cells per sheet, after which the
reader stops expanding and warns (a crafted file that repeats one cell a billion times by a
billion stays bounded). ``number-columns-spanned`` / ``number-rows-spanned`` on a cell become
merges (the covered cells read as empty, as in a merged xlsx block).

Safety: the zip is checked against bombs by ``xlakit.opc`` before anything is inflated; an
encrypted package (``manifest:encryption-data``) is refused with a Chinese message; DTDs are
refused (no entity expansion). A sheet is read whole on first use and one sheet is kept at a time;
reading stops :data:`PARSE_SECONDS` after the book was opened, with the rows so far and a warning.
"""
import html
import os
import re
import time
import xml.etree.ElementTree as ET
import zipfile
import zlib

from ... import opc
from ._base import BaseBook, FormatError, SheetInfo
from . import ods_cells
from .ods_cells import (CELL, CHUNK, COVERED, MAX_COLS, MAX_ROWS, NS_OFFICE, NS_TABLE, NS_TEXT, REPEAT_CAPPED, ROW,
                        TABLE, T, _Fallback, _OutOfTime, _Sheet, add_row, cell_value)
from .ods_text import parse_text
from .spreadsheetml import _no_gc
from ...errors import what_broke


ENCRYPTED = "这个 OpenDocument 表格（.ods）已加密（设置了打开密码），无法读取。请在 LibreOffice/WPS 里去掉密码后另存一份再试"
DAMAGED = "OpenDocument 表格（.ods）已损坏或不完整（%s）。请确认文件已完整下载/复制；能用 LibreOffice/WPS 打开的话，另存一份再试"
# Reading stops this long after the book was opened (the host kills a tool at 60 s; a partial
# sheet with a warning is an answer, a killed process is not).
PARSE_SECONDS = 40
OUT_OF_TIME = ("文件很大，读了 %d 秒后停止：工作表「%s」只读到第 %d 行，后面的行没有读取，结果不完整。"
               "请在 LibreOffice/WPS/Excel 里另存为 .xlsx（读取快得多）再试")

_TABLE_TAG_RE = re.compile(rb"<((?:[A-Za-z_][\w.-]*:)?)table([\s/>])")
_TABLE_WORD_RE = re.compile(rb"table[\s/>]")
_ATTR_RE = re.compile(r"""([\w.-]+:)?([\w.-]+)\s*=\s*("[^"]*"|'[^']*')""")
_STYLE_RE = re.compile(rb"<(?:[\w.-]+:)?style\s([^>]*?)(/?)>(.*?)(?:</(?:[\w.-]+:)?style>|(?=<(?:[\w.-]+:)?style\s))",
                       re.S)
_DISPLAY_FALSE_RE = re.compile(rb"""display\s*=\s*["']false["']""")

_ROOT_TAG_RE = re.compile(rb"<office:document(?:-content)?\b[^>]*>")
_XMLNS_RE = re.compile(rb'xmlns:([\w.-]+)\s*=\s*"([^"]*)"')
def _attrs(text):
    """{local name: value} of a start tag's attribute text (prefixes dropped)."""
    out = {}
    for _prefix, name, value in _ATTR_RE.findall(text):
        out[name] = html.unescape(value[1:-1])
    return out


def _int_attr(el, name, default=1, cap=MAX_ROWS):
    raw = el.get(T + name)
    if raw is None:
        return default
    try:
        n = int(raw)
    except ValueError:
        return default
    return max(1, min(n, cap))



class OdsBook(BaseBook):
    kind = "ods"

    def __init__(self, path, flat=False, reader=None):
        BaseBook.__init__(self, path)
        self._stop_at = time.monotonic() + PARSE_SECONDS
        self.flat = flat
        self._scanned = False        # the sheet scan went through all of content.xml (see ``sheet``)
        reader = reader or os.environ.get("XLA_ODS_READER", "").strip().lower() or "fast"
        self.reader = "tree" if reader == "tree" else "fast"
        self.fallback_reason = None
        self._root_ns = None        # xmlns declarations of the root element (bytes), for the text parser
        self._zip = None
        self._cache = {}
        self._label = os.path.basename(path)
        if flat:
            self.kind = "fods"
        else:
            try:
                self._zip = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise FormatError(DAMAGED % ("压缩结构无法打开：%s" % what_broke(exc)))
            try:
                opc.check_package(self._zip, self._label)
                self._check_encryption()
                if self._member("content.xml") is None:
                    raise FormatError(DAMAGED % "缺少 content.xml")
            except FormatError:
                self.close()
                raise
        try:
            self._scan(first_only=True)
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
            self.close()
            raise FormatError(DAMAGED % ("content.xml 无法解压：%s" % what_broke(exc)))
        if not self._sheets:
            self.close()
            raise FormatError("这个 OpenDocument 文件里没有工作表（不是表格文档，或文件已损坏）。请用 LibreOffice/WPS 打开确认")

    # -- package ----------------------------------------------------------------------------

    def _member(self, name):
        for n in self._zip.namelist():
            if n.lower() == name.lower():
                return n
        return None

    def _check_encryption(self):
        name = self._member("META-INF/manifest.xml")
        if name is None:
            return
        data = opc.read_part(self._zip, name, label=self._label)
        if b"encryption-data" in data:
            raise FormatError(ENCRYPTED)

    def _open_content(self):
        if self.flat:
            return open(self.path, "rb")
        return self._zip.open(self._member("content.xml"))

    @property
    def sheets(self):
        """All the sheets; the first access after opening finishes the scan (see ``sheet``)."""
        if not self._scanned:
            self._finish_scan()
        return self._sheets

    @sheets.setter
    def sheets(self, value):
        self._sheets = value

    def sheet(self, name=None):
        """Like every book's; the first visible sheet is known without scanning past it.

        Why: the scan inflates and searches all of content.xml (0.18 s of a 100k-row sheet's
        0.85 s), then reading the rows inflates it again. The table styles come before
        ``<office:body>``, so once the first ``<table:table>`` tag is met, whether that sheet is
        hidden is known; when it is visible, a caller asking for the first visible sheet (most
        calls) gets it at once and the rest of the document is never scanned."""
        if (name is None or name == "") and not self._scanned and self._sheets and not self._sheets[0].hidden:
            return self._sheets[0]
        return BaseBook.sheet(self, name)

    def _finish_scan(self):
        reopened = not self.flat and self._zip is None      # asked after close(): open the file again
        try:
            if reopened:
                self._zip = zipfile.ZipFile(self.path)
            self._scan()
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
            raise FormatError(DAMAGED % ("content.xml 无法解压：%s" % what_broke(exc)))
        finally:
            if reopened and self._zip is not None:
                self._zip.close()
                self._zip = None

    def _scan(self, first_only=False):
        """Sheet names and hidden flags, from the ``<table:table>`` start tags and the table
        styles (``display="false"``) of a quick pass over the raw XML: no tree is built.
        ``first_only``: stop after the piece holding the first table tag (``sheet``); the
        sheets found so far are kept and ``_scanned`` stays False.

        The styles come before ``<office:body>`` (the schema orders the document's parts so), so
        the chunks after the one holding that tag are not searched for styles: a search for
        "display" that finds nothing costs a pass over each chunk (about 0.1 s of 130 MB)."""
        hidden_styles = set()
        in_body = False
        tables = []
        tail = b""
        with self._open_content() as fh:
            while True:
                chunk = fh.read(CHUNK)
                data = tail + chunk
                if not chunk:
                    end = len(data)
                else:
                    end = data.rfind(b">") + 1
                    if end <= 0:
                        tail = data[-65536:]
                        continue
                part = data[:end]
                if not tables and (b"<!DOCTYPE" in part or b"<!ENTITY" in part):
                    raise FormatError(DAMAGED % "文件里有 DTD 声明，为安全起见不予解析")
                if self._root_ns is None:
                    root = _ROOT_TAG_RE.search(part)
                    if root:
                        self._root_ns = _XMLNS_RE.findall(root.group(0))
                        self._utf8 = not re.match(rb"""\s*<\?xml[^>]*encoding=["'](?!utf-8)""", part[:200], re.I)
                if not in_body and b"style" in part and b"display" in part:
                    for m in _STYLE_RE.finditer(part):
                        attrs = _attrs(m.group(1).decode("utf-8", "replace"))
                        if attrs.get("family") == "table" and _DISPLAY_FALSE_RE.search(m.group(3)):
                            hidden_styles.add(attrs.get("name"))
                if not in_body and b"<office:body" in part:
                    in_body = True
                for w in _TABLE_WORD_RE.finditer(part):
                    # a search led by a literal skips the XML fast; _TABLE_TAG_RE then checks the
                    # word is a table start tag's name (from the "<" before it)
                    m = _TABLE_TAG_RE.match(part, max(0, part.rfind(b"<", 0, w.start())))
                    if m is None or m.end() != w.end():
                        continue
                    close = part.find(b">", m.end() - 1)
                    attrs = _attrs(part[m.end() - 1:close].decode("utf-8", "replace")) if close > 0 else {}
                    if attrs.get("is-sub-table") == "true":
                        continue
                    tables.append((attrs.get("name") or "Sheet%d" % (len(tables) + 1), attrs.get("style-name")))
                if not chunk:
                    break
                if first_only and tables:
                    break
                tail = data[end:]
        self._scanned = not first_only or not chunk
        seen = set()
        sheets = []
        for i, (name, style) in enumerate(tables):
            base, n = name, 2
            while name in seen:
                name = "%s (%d)" % (base, n)
                n += 1
            seen.add(name)
            sheets.append(SheetInfo(name, style in hidden_styles, i))
        self._sheets = sheets

    # -- sheets -----------------------------------------------------------------------------

    def _load(self, name):
        info = self.sheet(name)
        sheet = self._cache.get(info.index)
        if sheet is None:
            try:
                with _no_gc():
                    sheet = None
                    try:
                        if self.reader == "fast" and self._text_ok():
                            try:
                                sheet = parse_text(self, info)
                            except _Fallback as why:
                                self.fallback_reason = str(why)
                        if sheet is None:
                            sheet = self._parse(info)
                    except _OutOfTime as late:
                        sheet = late.sheet
                        self.warn(OUT_OF_TIME % (PARSE_SECONDS, info.name, late.row))
            except ET.ParseError as exc:
                raise FormatError(DAMAGED % ("XML 无法解析：%s" % what_broke(exc)))
            except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
                raise FormatError(DAMAGED % ("content.xml 无法解压：%s" % what_broke(exc)))
            self._cache = {info.index: sheet}
        return sheet

    def _parse(self, info):
        sheet = _Sheet()
        budget = [ods_cells.MAX_REPEAT_CELLS]
        capped = False
        with self._open_content() as fh:
            parser = ET.XMLPullParser(("start", "end"))
            stack = []
            index = -1          # top-level tables seen
            depth = 0           # nesting of table elements
            active = False
            rownum = 0
            done = False
            while not done:
                chunk = fh.read(CHUNK)
                if chunk:
                    parser.feed(chunk)
                else:
                    parser.close()
                for event, el in parser.read_events():
                    if event == "start":
                        stack.append(el)
                        if el.tag == TABLE:
                            if el.get(T + "is-sub-table") == "true":
                                depth += 1
                                continue
                            if depth == 0:
                                index += 1
                                active = index == info.index
                            depth += 1
                        continue
                    stack.pop()
                    tag = el.tag
                    if tag == ROW and depth == 1:
                        if active:
                            rownum, hit = self._row(el, rownum, sheet, budget)
                            capped = capped or hit
                            if time.monotonic() > self._stop_at:
                                raise _OutOfTime(sheet, rownum)
                        if stack:
                            stack[-1].remove(el)
                    elif tag == TABLE:
                        depth -= 1
                        if depth == 0:
                            if active:
                                done = True
                                break
                            if stack:
                                stack[-1].remove(el)
                if not chunk:
                    break
        if capped:
            self.warn(REPEAT_CAPPED % (info.name, ods_cells.MAX_REPEAT_CELLS))
        return sheet

    # -- the text parser ---------------------------------------------------------------------

    def _text_ok(self):
        """The text parser reads ``table:``/``office:``/``text:`` tags literally, so it needs
        the root to bind exactly those prefixes (every real producer does) and UTF-8."""
        ns = dict(self._root_ns or [])
        return (getattr(self, "_utf8", False) and ns.get(b"table") == NS_TABLE.encode()
                and ns.get(b"office") == NS_OFFICE.encode() and ns.get(b"text") == NS_TEXT.encode())

    def _row(self, row, rownum, sheet, budget):
        """Read one row element into ``sheet``; returns (new row number, whether a cap hit)."""
        cells = []
        for cell in row:
            tag = cell.tag
            if tag == CELL:
                cells.append((cell_value(cell), _int_attr(cell, "number-columns-repeated", cap=MAX_COLS),
                              _int_attr(cell, "number-columns-spanned", cap=MAX_COLS),
                              _int_attr(cell, "number-rows-spanned")))
            elif tag == COVERED:
                cells.append((None, _int_attr(cell, "number-columns-repeated", cap=MAX_COLS), 1, 1))
        return add_row(sheet, rownum, _int_attr(row, "number-rows-repeated"), cells, budget)

    def rows(self, name=None, max_rows=None):
        rows = self._load(name).rows
        if max_rows is not None:
            rows = rows[:max_rows]
        return ((n, list(values)) for n, values in rows)

    def merges(self, name=None):
        return list(self._load(name).merges)

    def dimensions(self, name=None):
        sheet = self._load(name)
        return (sheet.nrows, sheet.ncols)

    def close(self):
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        self._cache = {}
