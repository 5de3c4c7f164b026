"""Reader for SpreadsheetML 2003 (Excel "XML 表格"), the fake ``.xls`` of many bank, ERP, tax
and e-commerce exports.

Why: those systems write ``<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet">``
and name it ``.xls``; Excel and WPS open it, so users call it a spreadsheet and expect every
table tool to read it.

What is read (element and attribute names are matched by local name, in or out of the ``ss:``
namespace, since generators differ):

- ``<Worksheet ss:Name>`` -> a sheet; ``<WorksheetOptions><Visible>SheetHidden`` (or
  ``SheetVeryHidden``) marks it hidden;
- ``<Row ss:Index>`` / ``<Cell ss:Index>`` jump over empty rows and cells; a cell without an
  index follows the previous one (after its ``ss:MergeAcross``) and skips columns that a
  ``ss:MergeDown`` from a row above still covers;
- ``ss:MergeAcross`` / ``ss:MergeDown`` -> merges (value in the top-left cell only);
- ``<Data ss:Type>``: Number -> int/float; String -> the text as written (long digit strings stay
  text); DateTime (``2024-01-05T00:00:00.000``) -> ``date`` when the cell's style shows only a
  date or the time is midnight, ``time`` when the style shows only a time, else ``datetime``;
  Boolean -> bool; Error -> its text (``#DIV/0!``). A Number whose style has a date format
  (``Short Date``, ``yyyy-mm-dd``…) is a day serial and becomes a date, as in xlsx. Rich text
  (``html:`` children) is flattened; a cell's ``<Comment>`` is not its value.

Encoding: the XML declaration is obeyed (GBK/GB2312 exports are common, and expat cannot decode
them itself), but a file that does not decode as declared is read as the bytes say (UTF-8, then
GB18030) with a warning. Exports that use the ``ss:`` prefix without declaring it, HTML
entities such as ``&nbsp;`` or a bare ``<br>`` in a cell (web pages that build the file from a
table's innerHTML) are repaired on the fly. DTDs are refused. The file is parsed once,
streamed in chunks (a ``Row`` is read whole when it closes, then dropped from the tree);
rows of every sheet are kept, and reading stops with a warning :data:`PARSE_SECONDS` after the
file was opened (these exports are small: Excel itself caps
them at 65,536 rows per sheet for .xls users).
"""
import codecs
import datetime
import gc
import html
import re
import time
import xml.etree.ElementTree as ET

from ... import text as xtext
from ...errors import os_error, what_broke
from ._base import (BaseBook, FormatError, SheetInfo, classify_format, number, serial_to_value,
                    DATE, DATETIME, TIME, elapsed_style)
from ..values import Duration

NS_SS = "urn:schemas-microsoft-com:office:spreadsheet"
NS_X = "urn:schemas-microsoft-com:office:excel"
NS_O = "urn:schemas-microsoft-com:office:office"
NS_HTML = "http://www.w3.org/TR/REC-html40"
SS = "{%s}" % NS_SS
MAX_COLS = 16384
MAX_ROWS = 1048576
CHUNK = 1 << 20

DAMAGED = ("Excel 2003 XML 表格（SpreadsheetML）内容不完整或格式有误（%s）。请确认文件已完整下载；"
           "能用 Excel/WPS 打开的话，另存为 .xlsx 再试")

# Reading stops this long after the file was opened: a partial answer that says so, not a tool
# killed by the host at 60 s.
PARSE_SECONDS = 40
OUT_OF_TIME = ("文件很大，读了 %d 秒后停止：工作表「%s」只读到第 %d 行，后面的行和工作表没有读取，结果不完整。"
               "请在 Excel/WPS 里另存为 .xlsx（读取快得多）再试")

# Excel's named number formats (SpreadsheetML writes these words instead of a format code).
_NAMED = {"general date": DATETIME, "long date": DATE, "medium date": DATE, "short date": DATE,
          "long time": TIME, "medium time": TIME, "short time": TIME,
          # named number formats whose letters must not be read as date tokens ("Currency" has a y)
          "general": None, "general number": None, "fixed": None, "standard": None, "percent": None,
          "scientific": None, "currency": None, "euro currency": None, "yes/no": None, "true/false": None,
          "on/off": None}
_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "gb_2312-80": "gb18030",
            "utf8": "utf-8", "unicode": "utf-16"}
_DECL_RE = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)["']""")
_DECL_TEXT_RE = re.compile(r"""^(\s*<\?xml[^>]*?)encoding\s*=\s*["'][^"']*["']""")
_ROOT_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)Workbook\b([^>]*)>", re.I)
_ENTITY_RE = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)([A-Za-z][A-Za-z0-9]*);")
_BR_RE = re.compile(r"<br\s*/?>", re.I)      # web exporters paste a cell's innerHTML, <br> and all
_PREFIX_RE = re.compile(r"<(?:/)?([A-Za-z_][\w.-]*):|\s([A-Za-z_][\w.-]*):[\w.-]+\s*=")
_DT_RE = re.compile(r"^\s*(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?)?\s*(?:Z)?\s*$")
_KNOWN_NS = {"ss": NS_SS, "x": NS_X, "o": NS_O, "html": NS_HTML, "c": "urn:schemas-microsoft-com:office:component:spreadsheet",
             "dt": "uuid:C2F41010-65B3-11d1-A29F-00AA00C14882", "x2": "http://schemas.microsoft.com/office/excel/2003/xml",
             "rs": "urn:schemas-microsoft-com:rowset", "z": "#RowsetSchema", "s": "uuid:BDC6E3F0-6DA3-11d1-A2A3-00AA00C14882"}


_LOCAL = {}


def _local(tag):
    """``{ns}Row`` / ``ss:Row`` / ``Row`` -> ``Row`` (cached: a file has few distinct tags)."""
    name = _LOCAL.get(tag)
    if name is None:
        name = tag.rsplit("}", 1)[-1] if "}" in tag else tag.rsplit(":", 1)[-1]
        if len(_LOCAL) < 10000:
            _LOCAL[tag] = name
    return name


def _get(el, name):
    """An attribute by local name: ``ss:Index`` or a bare ``Index`` (an undeclared ``ss:`` prefix
    is declared by the reader before parsing, so it lands in the ss namespace too)."""
    value = el.get(SS + name)
    if value is None:
        value = el.get(name)
    return value


def _int(el, name, default=None, lo=0, hi=MAX_ROWS):
    raw = _get(el, name)
    if raw is None:
        return default
    try:
        n = int(float(raw.strip()))
    except ValueError:
        return default
    return max(lo, min(n, hi))


def parse_datetime(text, kind):
    """``2024-01-05T10:30:00.000`` shown with a format of ``kind`` -> date / time / datetime."""
    m = _DT_RE.match(text)
    if not m:
        return text
    y, mo, d, hh, mi, ss, frac = m.groups()
    try:
        micro = int(round(float("0." + frac) * 1e6)) if frac else 0
        micro = min(micro, 999999)
        moment = datetime.datetime(int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0), micro)
    except ValueError:
        return text
    style = elapsed_style(kind)
    if style is not None:
        # a duration written as a moment after Excel's day 0 (1899-12-31; the fake 1900-02-29
        # counts from March 1900 on)
        days = (moment - datetime.datetime(1899, 12, 31)).total_seconds() / 86400.0
        return Duration(days + 1 if days >= 60 else days, style)
    if kind == TIME and moment.date() <= datetime.date(1900, 1, 1):
        return moment.time()        # Excel writes a bare time as 1899-12-31T10:30:00.000
    if kind != DATETIME and moment.time() == datetime.time(0):
        return moment.date()
    return moment


class _Styles(object):
    """ss:ID -> date kind (None for plain numbers), following ``ss:Parent``."""

    def __init__(self):
        self.formats = {}
        self.parents = {}
        self._kinds = {}

    def kind(self, sid):
        if sid is None:
            sid = "Default"
        if sid in self._kinds:
            return self._kinds[sid]
        seen = set()
        cur = sid
        fmt = None
        while cur is not None and cur not in seen:
            seen.add(cur)
            if cur in self.formats:
                fmt = self.formats[cur]
                break
            cur = self.parents.get(cur)
        kind = None
        if fmt:
            low = fmt.strip().lower()
            kind = _NAMED.get(low) if low in _NAMED else classify_format(fmt)
        self._kinds[sid] = kind
        return kind


class _SheetData(object):
    __slots__ = ("name", "hidden", "rows", "merges", "nrows", "ncols")

    def __init__(self, name):
        self.name = name
        self.hidden = False
        self.rows = []
        self.merges = []
        self.nrows = 0
        self.ncols = 0


def _encoding(raw_head):
    """(codec, declared name or None) for the file's bytes."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw_head.startswith(bom):
            return name, None
    if raw_head[:4] in (b"<\x00?\x00", b"<\x00\x00\x00"):
        return "utf-16-le", None
    if raw_head[:2] == b"\x00<":
        return "utf-16-be", None
    m = _DECL_RE.match(raw_head)
    if m:
        declared = m.group(1).decode("ascii").lower()
        name = _ALIASES.get(declared, declared)
        try:
            codecs.lookup(name)
            return name, declared
        except LookupError:
            pass
    return xtext.detect_encoding(raw_head), None


class SpreadsheetMLBook(BaseBook):
    kind = "spreadsheetml"

    def __init__(self, path):
        BaseBook.__init__(self, path)
        self._stop_at = time.monotonic() + PARSE_SECONDS
        self._styles = _Styles()
        self._sheets = []
        try:
            with _no_gc():
                self._parse()
        except ET.ParseError as exc:
            raise FormatError(DAMAGED % ("XML 第 %s 行第 %s 列出错" % exc.position if getattr(exc, "position", None)
                                         else what_broke(exc)))
        except OSError as exc:
            raise os_error(exc, path, "读取")
        if not self._sheets:
            raise FormatError("这个 Excel 2003 XML 表格里没有工作表（<Worksheet>），没有可读的数据")
        seen = set()
        for i, sh in enumerate(self._sheets):
            name, n = sh.name, 2
            while name in seen:
                name = "%s (%d)" % (sh.name, n)
                n += 1
            sh.name = name
            seen.add(name)
            self.sheets.append(SheetInfo(name, sh.hidden, i))

    # -- decoding ---------------------------------------------------------------------------

    def _chunks(self):
        """The file as text chunks, each ending after a ``>`` (so no entity or tag is cut),
        with the declaration's encoding removed (the text is already decoded), undeclared
        prefixes declared on the root element and HTML entities turned into characters."""
        with open(self.path, "rb") as fh:
            head = fh.read(CHUNK)
            codec, declared = _encoding(head[:4096])
            strict = True
            decoder = codecs.getincrementaldecoder(codec)("strict")
            pending = head
            carry = ""
            first = True
            eof = False
            while True:
                if pending is None:
                    pending = fh.read(CHUNK)
                    eof = not pending
                raw, pending = pending, None
                try:
                    text = decoder.decode(raw, final=eof)
                except UnicodeDecodeError:
                    if not strict or not first:
                        # a bad byte late in the file: keep going, show it as U+FFFD
                        decoder = codecs.getincrementaldecoder(codec)("replace")
                        text = decoder.decode(raw, final=eof)
                        self.warn("文件里有无法按 %s 解码的字节，已显示为 �" % codec)
                    else:
                        guess = xtext.detect_encoding(head[:65536])
                        if guess == codec:
                            guess = "gb18030" if codec.startswith("utf") else "utf-8"
                        self.warn("文件声明的编码是 %s，但内容实际按 %s 解码" % (declared or codec, guess))
                        codec = guess
                        decoder = codecs.getincrementaldecoder(codec)("replace")
                        text = decoder.decode(raw, final=eof)
                    strict = False
                self.encoding = codec
                text = carry + text
                if eof:
                    carry = ""
                else:
                    cut = text.rfind(">") + 1
                    carry, text = text[cut:], text[:cut]
                if first and text:
                    text = self._repair_head(text.lstrip("\ufeff"))
                    first = False
                if "&" in text:
                    text = _ENTITY_RE.sub(_entity, text)
                if "<br" in text or "<BR" in text or "<Br" in text:
                    text = _BR_RE.sub("&#10;", text)
                if text:
                    yield text
                if eof:
                    if carry:
                        yield carry
                    return

    def _repair_head(self, text):
        if text.lstrip().startswith("<?xml"):
            text = _DECL_TEXT_RE.sub(r"\1", text, count=1)
        low = text[:65536]
        if "<!DOCTYPE" in low or "<!ENTITY" in low:
            raise FormatError(DAMAGED % "文件里有 DTD 声明，为安全起见不予解析")
        m = _ROOT_RE.search(text)
        if m:
            declared = set(re.findall(r"xmlns:([\w.-]+)\s*=", m.group(2)))
            used = set(a or b for a, b in _PREFIX_RE.findall(text[:CHUNK]))
            used.discard("xmlns")
            used.discard("xml")
            add = ""
            for prefix in sorted(used - declared):
                add += ' xmlns:%s="%s"' % (prefix, _KNOWN_NS.get(prefix, "urn:xla:undeclared:" + prefix))
            if add:
                text = text[:m.end() - 1].rstrip("/") + add + text[m.end() - 1:] if not m.group(0).endswith("/>") \
                    else text[:m.end() - 2] + add + text[m.end() - 2:]
        return text

    # -- parsing ----------------------------------------------------------------------------

    def _parse(self):
        """One pass over the file: a ``Row`` is handled whole when it closes (its cells are its
        children), then dropped from the tree; styles and sheet options likewise."""
        parser = ET.XMLPullParser(("start", "end"))
        state = {"sheet": None, "rownum": 0, "down": {}}
        table = None
        for text in self._chunks():
            parser.feed(text)
            for event, el in parser.read_events():
                name = _local(el.tag)
                if event == "start":
                    if name == "Table":
                        table = el
                    elif name == "Worksheet":
                        state["open_name"] = _get(el, "Name")
                    continue
                if name == "Row":
                    self._row(el, state)
                    el.clear()
                    if time.monotonic() > self._stop_at:
                        sheet = self._current(state)
                        self.warn(OUT_OF_TIME % (PARSE_SECONDS, sheet.name or "Sheet%d" % len(self._sheets),
                                                 state["rownum"]))
                        self._finish_partial(state)
                        return
                    if table is not None:
                        try:
                            table.remove(el)      # a cleared row left in the tree still costs memory
                        except ValueError:
                            pass
                elif name == "Cell" or name == "Data":
                    continue
                elif name == "Style":
                    self._style(el)
                elif name == "Visible" and state["sheet"] is not None:
                    if (el.text or "").strip().lower() in ("sheethidden", "sheetveryhidden"):
                        self._current(state).hidden = True
                elif name == "Table":
                    self._current(state)          # a sheet with an empty table still counts
                    el.clear()
                elif name == "Worksheet":
                    sheet = self._current(state)
                    sheet.name = _get(el, "Name") or "Sheet%d" % len(self._sheets)
                    state["sheet"] = None
                    el.clear()
        parser.close()

    def _finish_partial(self, state):
        """Name the sheet that was being read when time ran out (its name sits on the
        ``Worksheet`` start tag, which the parser has seen; its element is the open one)."""
        sheet = state["sheet"]
        if sheet is not None and sheet.name is None:
            sheet.name = state.get("open_name") or "Sheet%d" % len(self._sheets)

    def _current(self, state):
        sheet = state["sheet"]
        if sheet is None:
            sheet = state["sheet"] = _SheetData(None)
            self._sheets.append(sheet)
            state["rownum"] = 0
            state["down"] = {}
        return sheet

    def _style(self, el):
        sid = _get(el, "ID")
        if not sid:
            return
        parent = _get(el, "Parent")
        if parent:
            self._styles.parents[sid] = parent
        for child in el:
            if _local(child.tag) == "NumberFormat":
                fmt = _get(child, "Format")
                if fmt is not None:
                    self._styles.formats[sid] = fmt

    def _row(self, row, state):
        sheet = self._current(state)
        down = state["down"]
        idx = _int(row, "Index", lo=1)
        rownum = state["rownum"]
        rownum = idx if idx is not None and idx > rownum else rownum + 1
        state["rownum"] = rownum
        values = []
        col = 0
        for cell in row:
            if _local(cell.tag) != "Cell":
                continue
            idx = _int(cell, "Index", lo=1, hi=MAX_COLS)
            if idx is not None and idx - 1 >= col:
                col = idx - 1
            elif down:
                while down.get(col, 0) >= rownum:
                    col += 1
            across = _int(cell, "MergeAcross", 0, 0, MAX_COLS)
            mdown = _int(cell, "MergeDown", 0, 0, MAX_ROWS)
            value = None
            for child in cell:
                if _local(child.tag) == "Data":
                    value = self._value(child, _get(cell, "StyleID"))
                    break
            c = col
            if c < MAX_COLS:
                if value is not None:
                    if len(values) < c:
                        values.extend([None] * (c - len(values)))
                    if c < len(values):
                        values[c] = value
                    else:
                        values.append(value)
                if across or mdown:
                    last = min(c + across, MAX_COLS - 1)
                    sheet.merges.append((rownum, c + 1, rownum + mdown, last + 1))
                    if mdown:
                        for k in range(c, last + 1):
                            down[k] = max(down.get(k, 0), rownum + mdown)
                    sheet.nrows = max(sheet.nrows, rownum + mdown)
                width = min(c + across + 1, MAX_COLS)
                if width > sheet.ncols:
                    sheet.ncols = width
            col = c + across + 1
        while values and values[-1] is None:
            values.pop()
        if values:
            sheet.rows.append((rownum, values))
            if rownum > sheet.nrows:
                sheet.nrows = rownum

    def _value(self, el, style_id):
        kind = (_get(el, "Type") or "String").strip()
        text = "".join(el.itertext())
        if kind == "String":
            return text if text != "" else None
        if kind == "Number":
            raw = text.strip()
            if not raw:
                return None
            try:
                value = number(float(raw))
            except ValueError:
                return text
            date_kind = self._styles.kind(style_id)
            if date_kind:
                return serial_to_value(value, date_kind)
            return value
        if kind == "DateTime":
            if not text.strip():
                return None
            return parse_datetime(text, self._styles.kind(style_id))
        if kind == "Boolean":
            raw = text.strip().lower()
            if raw in ("1", "true"):
                return True
            if raw in ("0", "false"):
                return False
            return text or None
        return text if text != "" else None       # Error and anything else: as displayed

    # -- book interface ---------------------------------------------------------------------

    def rows(self, name=None, max_rows=None):
        rows = self._sheets[self.sheet(name).index].rows
        if max_rows is not None:
            rows = rows[:max_rows]
        return ((n, list(values)) for n, values in rows)

    def merges(self, name=None):
        return list(self._sheets[self.sheet(name).index].merges)

    def dimensions(self, name=None):
        sh = self._sheets[self.sheet(name).index]
        return (sh.nrows, sh.ncols)


class _no_gc(object):
    """Pause the cyclic garbage collector while a sheet is parsed. The parse makes millions of
    small objects and keeps the rows: each full collection walks all of them, which made reading
    100k rows three times slower than 10 x 10k. Nothing here forms reference cycles."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()
        return False


def _entity(m):
    name = m.group(1)
    char = html.unescape("&%s;" % name)
    if char == "&%s;" % name:
        return "&amp;%s;" % name
    return "&#%d;" % ord(char) if len(char) == 1 else "".join("&#%d;" % ord(c) for c in char)
