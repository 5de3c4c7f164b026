"""table_io: what a table *means*, shared by every table tool (read_spreadsheet, probe_table,
calc_table, and later filter_table / pivot_table / lookup_table / dedupe_table / clean_table).

Why one module: the numbers a user gets must not depend on which tool answered. "Which row is the
header", "is `（1,234.00）` a number", "is this the 合计 row", "does 2024/3/1 fall in 2024-Q1" are
decided here once, and every tool calls the same code.

Layers (bottom up):
- ``table_formats`` (another module) turns bytes into a typed cell grid: ``open_book(path)`` ->
  book with ``sheets``, ``rows(name)`` (streamed ``(row_number, values)``), ``merges(name)``.
  ``GridBook`` below has the same duck type over in-memory lists, for tests and for tools that
  already hold rows.
- values: ``display`` (what a person reads: dates as ``YYYY-MM-DD``, integral floats as ints, long
  digit strings untouched), ``to_decimal`` / ``parse_number`` (money text), ``parse_date``.
- ``Table``: one sheet with its header found (title/note/blank rows skipped, a two-row merged header
  combined into ``2024年-1月``), named columns, and ``data_rows()`` that streams the data rows with
  merged blocks filled in and 合计/小计 rows held back.
- ``compile_where`` (conditions), ``bucket_label`` (date buckets), ``make_metric`` (exact sums and
  the other aggregates, with skipped cells counted and shown).

Conventions users and the model see:
- a header cell that is blank is named ``列C`` (``列`` + its column letter); duplicate names get
  ``_2``, ``_3``: ``金额``, ``金额_2``;
- a column can be named by header text (exact, then ignoring spaces/case/full-width), by letter
  (``A``, ``AB``) or as ``列C``;
- numbers: ``￥1,234.50``, ``(300.00)``, ``1.2万``, ``12.5%``, full-width digits... parse; ``-``,
  ``--``, ``—`` and blanks are empty; anything else is *not* a number and is counted as skipped,
  never read as 0. Sums are exact decimals (no 0.30000000000000004).
"""
import datetime
import decimal
import difflib
import re
import time
import unicodedata
from collections import namedtuple

from .. import runtime as rt

Decimal = decimal.Decimal

MAX_TEXT = 500              # longest cell text shown by reading tools before it is cut with "…"
HEADER_SCAN_ROWS = 30       # non-empty rows looked at to find the header
MAX_LISTED_COLUMNS = 40     # column names listed in an "unknown column" error


# =============================================================================================
# Column letters

def col_letter(index):
    """0-based column index -> Excel letters (0 -> "A", 27 -> "AB")."""
    index += 1
    letters = ""
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


_LETTERS_RE = re.compile(r"^[A-Za-z]{1,3}$")


def letter_index(text):
    """Excel letters -> 0-based index, or None when ``text`` is not a column letter (A..XFD)."""
    if not isinstance(text, str) or not _LETTERS_RE.match(text.strip()):
        return None
    n = 0
    for ch in text.strip().upper():
        n = n * 26 + ord(ch) - 64
    return n - 1 if n <= 16384 else None


def range_ref(min_row, min_col, max_row, max_col):
    """1-based inclusive bounds -> ``A1:B2``."""
    return "%s%d:%s%d" % (col_letter(min_col - 1), min_row, col_letter(max_col - 1), max_row)


# =============================================================================================
# Display: values as a person reads them

def _clean_float(value):
    """A float as Excel shows it: 15 significant digits (0.1+0.2 -> 0.3), integral -> int."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    cleaned = float("%.15g" % value)
    if cleaned.is_integer() and abs(cleaned) < 2 ** 53:
        return int(cleaned)
    return cleaned


def display(value):
    """JSON-ready value as the user reads it in Excel.

    Dates -> ``YYYY-MM-DD`` (``YYYY-MM-DD HH:MM:SS`` when the time is not midnight), times ->
    ``HH:MM:SS``, integral floats -> int, text unchanged (so ``007`` and 18-digit ID numbers stay
    exactly as typed)."""
    cls = value.__class__
    if value is None or cls is str or cls is int or cls is bool:
        return value
    if cls is float:
        return _clean_float(value)
    if cls is datetime.datetime:
        if value.hour == 0 and value.minute == 0 and value.second == 0 and value.microsecond == 0:
            return "%04d-%02d-%02d" % (value.year, value.month, value.day)
        return "%04d-%02d-%02d %02d:%02d:%02d" % (value.year, value.month, value.day,
                                                  value.hour, value.minute, value.second)
    if cls is datetime.date:
        return "%04d-%02d-%02d" % (value.year, value.month, value.day)
    if cls is datetime.time:
        return "%02d:%02d:%02d" % (value.hour, value.minute, value.second)
    if isinstance(value, Decimal):
        return decimal_out(value)
    if isinstance(value, (int, float, datetime.date, datetime.time)):   # subclasses
        return display(_plain(value))
    return str(value)


def _plain(value):
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime.datetime):
        return datetime.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second)
    if isinstance(value, datetime.date):
        return datetime.date(value.year, value.month, value.day)
    return datetime.time(value.hour, value.minute, value.second)


def display_text(value):
    """The cell as text (what a person would type to find it): ``""`` for empty."""
    shown = display(value)
    if shown is None:
        return ""
    if shown is True:
        return "TRUE"
    if shown is False:
        return "FALSE"
    return shown if isinstance(shown, str) else repr(shown) if isinstance(shown, float) else str(shown)


def shorten(text, limit=MAX_TEXT):
    """(text cut to ``limit`` characters with "…", was_cut)."""
    if isinstance(text, str) and len(text) > limit:
        return text[:limit] + "…", True
    return text, False


def is_empty(value):
    """None or a string of only spaces (incl. full-width) counts as an empty cell."""
    return value is None or (value.__class__ is str and not value.strip())


# =============================================================================================
# Numbers

class _Invalid(object):
    """Sentinel: the cell has content but it is not a number (counted as skipped, never 0)."""
    __slots__ = ()

    def __bool__(self):
        return False

    def __repr__(self):
        return "INVALID"


INVALID = _Invalid()

# Full-width and look-alike characters -> ASCII, so `１２３．５`, `－5`, `（1，234）` parse.
_NUM_TRANSLATE = {ord(a): b for a, b in zip("０１２３４５６７８９．，－−–＋（）％＄￥", "0123456789.,---+()%$¥")}
for _space in (" ", "\u3000", "\xa0", "\t", "\u2009", "\u202f", "\u2002", "\u2003", "'"):
    # spaces (and the apostrophe some systems use as a thousands mark) inside a number are dropped
    _NUM_TRANSLATE[ord(_space)] = None
_EMPTY_MARKERS = frozenset(["", "-", "--", "---", "—", "——", "/", "、", "无", "N/A", "n/a", "NA", "#N/A"])
_PLAIN_RE = re.compile(r"[+-]?\d+(?:\.\d+)?", re.ASCII)
_NUMBER_RE = re.compile(r"""
    (?P<open>\()?
    (?P<sign>[+-])?
    (?:¥|\$|€|£|RMB|CNY|USD|US\$|HK\$)?
    (?P<sign2>[+-])?
    (?P<open2>\()?
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)
    (?P<exp>[eE][+-]?\d+)?
    (?P<close2>\))?
    (?P<unit>万亿|千万|百万|万|亿|千)?
    (?P<pct>%|‰)?
    (?:元|圆|RMB|CNY)?
    (?P<close>\))?
    (?P<trail>-)?
    \Z""", re.VERBOSE | re.ASCII | re.IGNORECASE)
_UNITS = {"万": Decimal(10000), "亿": Decimal(100000000), "千": Decimal(1000), "百万": Decimal(1000000),
          "千万": Decimal(10000000), "万亿": Decimal(1000000000000)}
_IDENT_RE = re.compile(r"(?:\d{12,}|0\d+)\Z", re.ASCII)


def _parse_number_text(text):
    """Decimal for number/money text, None for an empty marker, INVALID otherwise."""
    if _PLAIN_RE.fullmatch(text):            # fast path: "123", "-4.5"
        return Decimal(text)
    stripped = text.strip()
    if stripped in _EMPTY_MARKERS:
        return None
    t = stripped.translate(_NUM_TRANSLATE)
    if t in _EMPTY_MARKERS:
        return None
    m = _NUMBER_RE.match(t)
    if m is None:
        return INVALID
    opens = bool(m.group("open")) + bool(m.group("open2"))
    closes = bool(m.group("close")) + bool(m.group("close2"))
    if opens != closes or opens > 1:
        return INVALID
    negative = opens == 1 or m.group("sign") == "-" or m.group("sign2") == "-" or bool(m.group("trail"))
    if m.group("trail") and (m.group("sign") or m.group("sign2")):
        return INVALID                       # "-5-" is not a number
    try:
        number = Decimal(m.group("num").replace(",", "") + (m.group("exp") or ""))
    except decimal.InvalidOperation:
        return INVALID
    unit = m.group("unit")
    if unit:
        number *= _UNITS[unit]
    pct = m.group("pct")
    if pct == "%":
        number /= 100
    elif pct == "‰":
        number /= 1000
    return -number if negative else number


def to_decimal(value):
    """Exact number of a cell: ``Decimal``, ``None`` (empty cell or ``-``/``--``), or ``INVALID``.

    Floats go through their shortest repr (``Decimal(repr(0.1)) == Decimal("0.1")``), so a sum of
    cells is what Excel shows, not binary noise. Booleans, dates and times are not numbers."""
    cls = value.__class__
    if cls is int:
        return Decimal(value)
    if cls is float:
        if value != value or value in (float("inf"), float("-inf")):
            return INVALID
        return Decimal(repr(value))
    if value is None:
        return None
    if cls is str:
        return _parse_number_text(value)
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return INVALID
    return to_decimal(_plain(value))


def decimal_out(number):
    """Decimal -> JSON number: int when integral, else the float nearest to the exact decimal."""
    if number is None or number is INVALID:
        return None
    if number == number.to_integral_value():
        return int(number)
    return float(number)


def parse_number(value):
    """int/float for a numeric cell or number text, ``None`` for empty, ``INVALID`` otherwise.

    Long digit strings (ID numbers) do parse here: whether they are *shown* as text is a display
    question; use ``is_identifier_text`` to keep them out of numeric comparisons."""
    number = to_decimal(value)
    if number is None or number is INVALID:
        return number
    return decimal_out(number)


def is_identifier_text(value):
    """Digit text that is an identifier, not an amount: 12+ digits (ID card, bank card, order no.)
    or a leading zero (``007``). Such text must never become a float."""
    return value.__class__ is str and _IDENT_RE.match(value.strip()) is not None


def number_kind(value):
    """For statistics: "number" (a numeric cell), "plain_text" (``"123"``), "money_text"
    (``"￥1,234"``, ``"(5.00)"``, ``"12%"``, ``"1.2万"``), "identifier", "empty" or "invalid"."""
    cls = value.__class__
    if cls is int or cls is float:
        return "number"
    if is_empty(value):
        return "empty"
    if cls is not str:
        return "invalid"
    if is_identifier_text(value):
        return "identifier"
    parsed = _parse_number_text(value)
    if parsed is None:
        return "empty"
    if parsed is INVALID:
        return "invalid"
    return "plain_text" if _PLAIN_RE.fullmatch(value.strip()) else "money_text"


# =============================================================================================
# Dates

# 2024-03-01 / 2024/3/1 / 2024.3.1 / 2024年3月1日, optionally followed by 10:30[:00] or 10时30分[00秒]
_DATE_RE = re.compile(
    r"(\d{4})\s*([-/.年])\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?"
    r"(?:(?:\s+|T|(?<=[日号]))(\d{1,2})[:：时](\d{1,2})(?:[:：分](\d{1,2})(?:\.\d+)?)?[分秒]?)?\s*\Z")
_COMPACT_RE = re.compile(r"(19|20)\d{6}\Z")


def _date_from_match(m):
    y, mo, d = int(m.group(1)), int(m.group(3)), int(m.group(4))
    try:
        if m.group(5) is not None:
            return datetime.datetime(y, mo, d, int(m.group(5)), int(m.group(6)), int(m.group(7) or 0))
        return datetime.date(y, mo, d)
    except ValueError:
        return None


def parse_date(value, compact=False):
    """date/datetime for a date cell or date text (``2024-03-01``, ``2024/3/1``, ``2024.3.1``,
    ``2024年3月1日``, optionally with ``HH:MM[:SS]``); None otherwise.

    ``compact=True`` also accepts ``20240301`` (text or number) — only where a date is expected
    (a date bucket, a comparison against a date), because elsewhere it is just a number."""
    cls = value.__class__
    if cls is datetime.date or cls is datetime.datetime:
        return value
    if cls is str:
        text = value.strip()
        if len(text) < 8 or len(text) > 30:
            return None
        m = _DATE_RE.match(text)
        if m is not None:
            return _date_from_match(m)
        if compact and _COMPACT_RE.match(text):
            return _compact_date(int(text))
        return None
    if compact and cls is int and 19000101 <= value <= 20991231:
        return _compact_date(value)
    if isinstance(value, datetime.date) and not isinstance(value, bool):
        return _plain(value)
    return None


def _compact_date(n):
    try:
        return datetime.date(n // 10000, n // 100 % 100, n % 100)
    except ValueError:
        return None


def date_format_label(value):
    """How a date is written, for probe statistics: "日期单元格", "YYYY-MM-DD", "YYYY/M/D",
    "YYYY年M月D日", "YYYY.M.D", "YYYYMMDD" (each + " 时:分" when a time is present), or None."""
    cls = value.__class__
    if cls is datetime.datetime:
        return "日期时间单元格"
    if cls is datetime.date:
        return "日期单元格"
    if cls is not str:
        return None
    m = _DATE_RE.match(value.strip())
    if m is None:
        if _COMPACT_RE.match(value.strip()) and _compact_date(int(value.strip())):
            return "YYYYMMDD"
        return None
    if _date_from_match(m) is None:
        return None
    sep = m.group(2)
    label = {"-": "YYYY-MM-DD", "/": "YYYY/M/D", ".": "YYYY.M.D", "年": "YYYY年M月D日"}[sep]
    return label + (" 时:分" if m.group(5) is not None else "")


def as_datetime(value):
    """date -> datetime at midnight, so dates and datetimes compare."""
    if value.__class__ is datetime.date:
        return datetime.datetime(value.year, value.month, value.day)
    return value


# Date buckets --------------------------------------------------------------------------------

BUCKETS = ("year", "quarter", "month", "week", "day")
BUCKET_NAMES = {"year": "年", "quarter": "季度", "month": "月", "week": "周（ISO）", "day": "日"}


def bucket_label(day, bucket):
    """``2024`` / ``2024-Q1`` / ``2024-03`` / ``2024-W09`` (ISO week-year and week) / ``2024-03-05``."""
    if bucket == "year":
        return "%04d" % day.year
    if bucket == "quarter":
        return "%04d-Q%d" % (day.year, (day.month - 1) // 3 + 1)
    if bucket == "month":
        return "%04d-%02d" % (day.year, day.month)
    if bucket == "week":
        iso = day.isocalendar()
        return "%04d-W%02d" % (iso[0], iso[1])
    if bucket == "day":
        return "%04d-%02d-%02d" % (day.year, day.month, day.day)
    raise rt.ToolError("date_bucket 只能是 %s，收到的是 %r" % (" / ".join(BUCKETS), bucket))


def check_bucket(bucket, where="date_bucket"):
    """Normalise a bucket name (accepts a few Chinese words too) or raise a Chinese ToolError."""
    aliases = {"年": "year", "季": "quarter", "季度": "quarter", "月": "month", "周": "week", "星期": "week",
               "日": "day", "天": "day", "yearly": "year", "monthly": "month", "weekly": "week", "daily": "day"}
    key = str(bucket).strip().lower()
    key = aliases.get(key, key)
    if key not in BUCKETS:
        raise rt.ToolError("%s 只能取 year / quarter / month / week / day（年/季度/月/ISO 周/日），收到的是 %r" % (
            where, bucket))
    return key


class Bucketer(object):
    """Maps a cell to its bucket label, caching by cell value (dates repeat a lot in ledgers).

    Cells that are not dates give None and are counted in ``bad`` with up to 3 examples."""

    def __init__(self, bucket):
        self.bucket = bucket
        self.cache = {}
        self.bad = 0
        self.bad_examples = []

    def __call__(self, value, row_number):
        try:
            label = self.cache[value]
        except KeyError:
            if value is None or (value.__class__ is str and not value.strip()):
                label = None
            else:
                day = parse_date(value, compact=True)
                label = bucket_label(day, self.bucket) if day is not None else INVALID
            if len(self.cache) > 200000:
                self.cache.clear()
            self.cache[value] = label
        except TypeError:               # unhashable: cannot happen for cell values, but be safe
            day = parse_date(value, compact=True)
            label = bucket_label(day, self.bucket) if day is not None else INVALID
        if label is INVALID:
            self.bad += 1
            if len(self.bad_examples) < 3:
                self.bad_examples.append({"row": row_number, "value": shorten(display_text(value), 60)[0]})
            return None
        return label


# =============================================================================================
# Totals and note rows

_TOTAL_WORDS = ("合计", "总计", "小计", "总和", "累计", "共计", "总合计", "合計", "總計", "小計")
_TOTAL_EXACT = frozenset(list(_TOTAL_WORDS) + ["total", "totals", "grandtotal", "subtotal", "sum", "总数", "汇总"])
_LABEL_STRIP = re.compile(r"[\s\u3000:：]+")
_NOTE_PREFIXES = ("注：", "注:", "注 ", "备注：", "备注:", "说明：", "说明:", "制表", "审核", "复核", "打印",
                  "数据来源", "来源：", "单位：", "单位:", "填报", "编制")


def is_total_label(text):
    """``合计``, ``合  计``, ``总计：``, ``Total``, ``本月合计``, ``本年累计``... (a short label that is
    or ends with a totals word)."""
    if text.__class__ is not str or len(text) > 24:
        return False
    label = _LABEL_STRIP.sub("", text).lower()
    if not label:
        return False
    if label in _TOTAL_EXACT:
        return True
    return len(label) <= 8 and label.endswith(_TOTAL_WORDS)


class TotalsDetector(object):
    """Decides whether a data row is a totals row: a totals label in one of the first 3 columns or
    in the first non-empty cell. Memoises labels because the same category text repeats."""

    def __init__(self):
        self.cache = {}

    def __call__(self, values):
        cache = self.cache
        for value in values[:3]:
            if value.__class__ is str:
                hit = cache.get(value)
                if hit is None:
                    hit = is_total_label(value)
                    if len(cache) < 50000:
                        cache[value] = hit
                if hit:
                    return True
        if len(values) > 3 and values[0] is None and values[1] is None and values[2] is None:
            # the first three cells are empty: look at the first non-empty cell further right
            for value in values[3:]:
                if value is not None:
                    return is_total_label(value)
        return False


def is_note_row(values, width):
    """A lone text cell under/among the data that reads like a footnote (``注：``, ``制表人：``)."""
    # list.count runs in C: rows with two or more cells (nearly all of them) are rejected cheaply
    if width < 2 or len(values) - values.count(None) != 1:
        return False
    found = next(v for v in values if v is not None)
    return found.__class__ is str and found.strip().startswith(_NOTE_PREFIXES)


# =============================================================================================
# In-memory book (same duck type as table_formats books)

SheetInfo = namedtuple("SheetInfo", "name hidden index")


class GridBook(object):
    """A book over in-memory rows: ``GridBook({"Sheet1": [[...], ...]}, merges={"Sheet1": [...]})``.

    Row lists are 0-based (row 1 first); rows whose cells are all None are not yielded, like the
    file readers. Used by tests and by tools that already hold a grid."""

    kind = "grid"

    def __init__(self, sheets, merges=None, hidden=(), warnings=None):
        if isinstance(sheets, list):
            sheets = {"Sheet1": sheets}
        self._grids = dict(sheets)
        self._merges = dict(merges or {})
        self.sheets = [SheetInfo(name, name in hidden, i) for i, name in enumerate(self._grids)]
        self.warnings = list(warnings or [])
        self.encoding = None

    def sheet(self, name=None):
        if name is None:
            for info in self.sheets:
                if not info.hidden:
                    return info
            return self.sheets[0]
        for info in self.sheets:
            if info.name == name:
                return info
        raise rt.ToolError("没有名为「%s」的工作表。现有工作表：%s" % (name, "、".join(s.name for s in self.sheets)))

    def rows(self, name=None, max_rows=None):
        grid = self._grids[self.sheet(name).name]
        count = 0
        for i, row in enumerate(grid):
            if max_rows is not None and count >= max_rows:
                return
            values = list(row)
            while values and values[-1] is None:
                values.pop()
            if values:
                count += 1
                yield i + 1, values

    def merges(self, name=None):
        return list(self._merges.get(self.sheet(name).name, []))

    def dimensions(self, name=None):
        grid = self._grids[self.sheet(name).name]
        return (len(grid), max((len(r) for r in grid), default=0))

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_book(path_or_book):
    """A book from a path (through ``table_formats``, by content) or a ready book object."""
    if not isinstance(path_or_book, str):
        return path_or_book
    from . import formats as table_formats            # imported here so the pure helpers above work without it
    return table_formats.open_book(path_or_book)


# =============================================================================================
# Header detection

Column = namedtuple("Column", "index letter name")
HeaderInfo = namedtuple("HeaderInfo", "rows names reason combined width")


def _norm_name(text):
    """Key for forgiving column lookup: NFKC (full-width -> ASCII), no spaces, case-folded."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).casefold()


def _label_text(value):
    """Header cell -> name text: displayed, line breaks and runs of spaces collapsed."""
    text = display_text(value)
    return re.sub(r"\s+", " ", text).strip()


_KEY_VALUE_RE = re.compile(r"[:：]\s*\S")


def _is_label(value):
    """Text that could be a column title: not a number, not a date, not a sentence, not a
    ``单位：元`` / ``制表日期：2024-05-01`` note (a colon followed by a value)."""
    if value.__class__ is not str:
        return False
    text = value.strip()
    if not text or len(text) > 40 or _KEY_VALUE_RE.search(text):
        return False
    if to_decimal(text) is not INVALID:
        return False
    return parse_date(text) is None


class _MergeIndex(object):
    """Merged ranges by row: which merges start in / cover a given row."""

    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]

    def covering(self, row):
        return [m for m in self.merges if m[0] <= row <= m[2]]


def _row_profile(rownum, values, merges, width):
    """Facts about one candidate header row used by the scorer."""
    raw = [(i, v) for i, v in enumerate(values) if not is_empty(v)]
    covered = set(i for i, _ in raw)
    for m in merges.covering(rownum):
        covered.update(range(m[1] - 1, m[3]))
    labels = [v.strip() for _, v in raw if _is_label(v)]
    distinct = len(set(labels))
    return {"row": rownum, "n": len(raw), "covered": len(covered & set(range(width))), "labels": len(labels),
            "distinct": distinct, "cols": set(i for i, _ in raw), "label_cols": set(i for i, v in raw if _is_label(v)),
            "total": any(is_total_label(v) for _, v in raw[:3])}


def detect_header(sample, merges=(), header_row=None):
    """Find the header among the first rows.

    ``sample``: list of ``(row_number, values)`` (the first non-empty rows, in order). Returns a
    HeaderInfo: ``rows`` (tuple of 1-based header row numbers, empty when there is no header),
    ``names`` (final unique column names), ``reason`` (Chinese), ``combined`` (list of
    "2024年 + 1月 -> 2024年-1月" notes), ``width``.

    Scoring (the row a person would call the header): many non-empty cells that are short, distinct
    text (not numbers or dates), covering most of the table's width (merged cells count for the
    columns they span), followed by rows with data. Title rows (one cell, often merged across) and
    notes are skipped; among rows that score close to the best, the earliest wins, because in an
    all-text table every data row looks like a header too."""
    merge_index = _MergeIndex(merges)
    width = 0
    for rownum, values in sample:
        last = len(values)
        while last and is_empty(values[last - 1]):
            last -= 1
        width = max(width, last)
    if width == 0:
        return HeaderInfo((), [], "表格是空的（没有非空行）", [], 0)

    profiles = [_row_profile(r, v, merge_index, width) for r, v in sample]
    by_row = dict(sample)

    if header_row is not None:
        if header_row not in by_row:
            raise rt.ToolError("第 %d 行是空行或超出了表格范围，不能当表头。可先用 probe_table 查看表头在哪一行，"
                               "或不传 header_row 让工具自动识别" % header_row)
        index = [p["row"] for p in profiles].index(header_row)
        reason = "按参数 header_row=%d 使用第 %d 行作表头" % (header_row, header_row)
    else:
        scores = []
        for i, p in enumerate(profiles):
            scores.append(_score(p, profiles[i + 1:i + 6], width))
        best = max(scores) if scores else 0
        if best <= 0.15:
            names = _unique_names(["" for _ in range(width)], width)
            return HeaderInfo((), names, "前 %d 个非空行里没有像表头的一行（多为数字或日期），按无表头处理：第一行就是数据，"
                                         "列名用列标（列A、列B…）" % len(sample), [], width)
        # the earliest row close to the best: in an all-text table every data row looks like a header
        threshold = max(0.7 * best, min(best, 0.45))
        index = next(i for i, s in enumerate(scores) if s >= threshold)
        p = profiles[index]
        if index == 0 and _looks_like_data(p, profiles[1:4], by_row[p["row"]]):
            names = _unique_names(["" for _ in range(width)], width)
            return HeaderInfo((), names, "第 %d 行和下面的行结构相同（文字和数字在同样的列，数字也不像年份等列名），"
                                         "按无表头处理：第一行就是数据，列名用列标（列A、列B…）；如果它其实是表头，"
                                         "请传 header_row=%d" % (p["row"], p["row"]), [], width)
        skipped = [q["row"] for q in profiles[:index]]
        reason = "第 %d 行：%d 个非空单元格里 %d 个是互不重复的文字标题，覆盖 %d/%d 列，下面紧接着是数据" % (
            p["row"], p["n"], p["distinct"], p["covered"], width)
        if skipped:
            reason += "；上面的第 %s 行像标题/说明，已跳过" % "、".join(str(r) for r in skipped[:6])
            if len(skipped) > 6:
                reason += "等"

    rownum = profiles[index]["row"]
    rows = (rownum,)
    top = _filled_row(by_row[rownum], rownum, merge_index, width)
    names = [_label_text(v) for v in top]
    combined = []
    second = _second_header_row(rownum, profiles, index, by_row, merge_index, width)
    if second is not None:
        rows = (rownum, second)
        bottom = _filled_row(by_row[second], second, merge_index, width)
        if not merge_index.covering(rownum):          # merges lost: spread each group title right
            names = _group_fill(names, profiles[index + 1]["label_cols"], width)
        vspans = set()
        for m in merge_index.covering(rownum):
            if m[0] == rownum and m[2] >= second:
                vspans.update(range(m[1] - 1, m[3]))
        for c in range(width):
            upper, lower = names[c], _label_text(bottom[c])
            if c in vspans or not lower or lower == upper:
                continue
            names[c] = "%s-%s" % (upper, lower) if upper else lower
            if upper:
                combined.append("%s + %s → %s" % (upper, lower, names[c]))
        reason += "；第 %d、%d 行是两行合并表头，已合成一个列名（如 %s）" % (
            rownum, second, combined[0].split("→ ")[-1] if combined else names[0])
    return HeaderInfo(rows, _unique_names(names, width), reason, combined, width)


def _looks_like_data(p, below, values):
    """True when the first row of a sheet is just another data row (a sheet without a header):
    labels are a minority, the rows below have text in exactly the same columns, and its numbers
    are not the kind that title columns (years such as 2023, or a run 1, 2, 3 of periods).
    A title row above the table, or a majority of labels, keeps the usual header reading."""
    if not below or p["labels"] * 2 >= p["n"]:
        return False
    if any(q["label_cols"] != p["label_cols"] for q in below):
        return False
    numbers = [v for v in values if v.__class__ is int]
    if numbers and (all(1900 <= v <= 2100 for v in numbers) or
                    (len(numbers) >= 2 and all(b == a + 1 for a, b in zip(numbers, numbers[1:])))):
        return False
    return True


def _score(p, below, width):
    """0..~1.2: how much row ``p`` looks like the header of a table ``width`` wide."""
    if p["n"] == 0 or p["total"]:
        return 0.0
    if p["n"] == 1 and width > 1:
        return 0.0                            # a title or a note: one cell (possibly merged across)
    coverage = p["covered"] / float(width)
    label_ratio = p["labels"] / float(p["n"])
    distinct_ratio = p["distinct"] / float(max(p["labels"], 1))
    score = coverage * label_ratio * distinct_ratio
    if not below:
        return score * 0.5                    # nothing under it: a header of nothing
    fill = sum(min(q["n"], p["n"]) for q in below[:3]) / float(p["n"] * min(len(below), 3))
    if fill < 0.3:
        score *= 0.5                          # the rows below are sparse: notes, not data
    # rows below that hold numbers/dates in this row's label columns = a typed body under a header
    typed = any((q["cols"] - q["label_cols"]) & p["label_cols"] for q in below[:3])
    if typed:
        score *= 1.2
    return score


def _filled_row(values, rownum, merge_index, width):
    """Header row values with the merges that start in this row filled in (``2024年`` spread over
    the columns it spans). Merges coming down from an earlier row are handled by the caller."""
    row = list(values[:width]) + [None] * max(0, width - len(values))
    for m in merge_index.covering(rownum):
        if m[0] != rownum:
            continue
        value = values[m[1] - 1] if m[1] - 1 < len(values) else None
        for c in range(m[1] - 1, min(m[3], width)):
            row[c] = value
    return row


def _second_header_row(rownum, profiles, index, by_row, merge_index, width):
    """The row under the header when the two form one merged header: the header row has a merge
    spanning several columns (``2024年`` over ``1月``/``2月``) or a cell merged down into the next
    row, and the next row is labels under it."""
    nxt = rownum + 1
    if nxt not in by_row or index + 1 >= len(profiles):
        return None
    merges_here = [m for m in merge_index.covering(rownum) if m[0] == rownum]
    horizontal = [m for m in merges_here if m[3] > m[1] and m[2] == rownum]
    vertical = [m for m in merges_here if m[2] >= nxt]
    if not horizontal and not vertical:
        return nxt if _unmerged_group_header(profiles[index], profiles[index + 1], width) else None
    q = profiles[index + 1]
    if q["n"] == 0 or q["labels"] < max(1, 0.7 * q["n"]):
        return None
    under = set()
    for m in horizontal:
        under.update(range(m[1] - 1, m[3]))
    if horizontal and not (q["label_cols"] & under):
        return None
    return nxt


def _unmerged_group_header(p, q, width):
    """A two-row header whose merges were lost (csv exports, xlwt files): ``2024年`` followed by
    blank cells, with ``1月 / 2月 / 3月`` under it in the next row, while single-row titles such as
    ``门店`` have a blank cell under them. Strict on purpose: a plain header over an all-text data
    row must not be taken for this."""
    if q["n"] == 0 or q["labels"] < max(2, 0.7 * q["n"]):
        return False
    groups = 0
    for c in sorted(p["label_cols"]):
        gap = c + 1 < width and (c + 1) not in p["cols"]
        if gap:
            span = c + 1
            while span < width and span not in p["cols"]:
                span += 1
            if not all(col in q["label_cols"] for col in range(c, span)):
                return False          # a group title needs a sub-title under each of its columns
            groups += 1
        elif c in q["cols"]:
            return False              # a stand-alone title has nothing under it
    return groups > 0


def _group_fill(names, second_labels, width):
    """Spread a group title over the blank cells to its right that have sub-titles below."""
    out = list(names)
    for c in range(1, width):
        if not out[c] and c in second_labels and out[c - 1]:
            out[c] = out[c - 1]
    return out


def _unique_names(names, width):
    """Blank -> ``列C``; duplicates -> ``金额``, ``金额_2``, ``金额_3``."""
    out, seen = [], set()
    for i in range(width):
        name = names[i] if i < len(names) else ""
        name = name or "列%s" % col_letter(i)
        base, n = name, 2
        while name in seen:
            name = "%s_%d" % (base, n)
            n += 1
        seen.add(name)
        out.append(name)
    return out


# =============================================================================================
# Table

class Table(object):
    """One sheet as a table: header found, columns named, data rows streamed.

    ``Table(book, sheet=None, header_row=None)``; ``header_row`` (1-based) forces the header row
    (a two-row merged header starting there is still combined); ``header_row=0`` means "no header:
    every row is data". Attributes: ``sheet_name``, ``header_rows``, ``header_row`` (first header
    row or None), ``columns`` (list of Column), ``header_reason``, ``combined``, ``warnings``,
    ``merged_data`` (merged ranges inside the data), and after ``data_rows()`` ran:
    ``totals_rows`` (row numbers held back), ``note_rows``."""

    def __init__(self, book, sheet=None, header_row=None, scan_rows=HEADER_SCAN_ROWS):
        self.book = book
        info = pick_sheet(book, sheet)
        self.sheet_name = info.name
        self.sheet_hidden = info.hidden
        self._rows = book.rows(info.name)
        merges = [tuple(m) for m in (book.merges(info.name) or [])]
        self.merges = merges
        sample = []
        if header_row is not None and header_row > 0:
            # keep the asked-for row and a few after it; rows before it are skipped entirely
            for rownum, values in self._rows:
                if rownum >= header_row:
                    sample.append((rownum, values))
                if len(sample) >= 6:
                    break
            if not sample or sample[0][0] != header_row:
                self._buffer = sample
                raise rt.ToolError("第 %d 行是空行或超出了表格范围（工作表「%s」），不能当表头。可先用 probe_table 看表头在"
                                   "哪一行，或不传 header_row 让工具自动识别" % (header_row, self.sheet_name))
        else:
            for rownum, values in self._rows:
                sample.append((rownum, values))
                if len(sample) >= scan_rows:
                    break
        if header_row == 0:
            width = max([len(v) for _, v in sample] or [0])
            header = HeaderInfo((), _unique_names([], width), "按参数 header_row=0：没有表头，第一行就是数据", [], width)
        else:
            header = detect_header(sample, merges, header_row if header_row else None)
        self.header = header
        self.header_rows = header.rows
        self.header_row = header.rows[0] if header.rows else None
        self.header_reason = header.reason
        self.combined = header.combined
        width = header.width
        last_header = header.rows[-1] if header.rows else 0
        for rownum, values in sample:
            if rownum > last_header:
                width = max(width, len(values))
        names = list(header.names) + _unique_names([], width)[len(header.names):]
        self.columns = [Column(i, col_letter(i), names[i]) for i in range(width)]
        self.data_start = last_header + 1
        self._buffer = [(r, v) for r, v in sample if r >= self.data_start]
        self.merged_data = [m for m in merges if m[2] >= self.data_start and (m[2] > m[0] or m[3] > m[1])]
        self.totals_rows = []
        self.totals_count = 0
        self.note_rows = []
        self.rows_seen = 0
        self._by_name = {c.name: c for c in self.columns}
        self._by_norm = {}
        for c in self.columns:
            self._by_norm.setdefault(_norm_name(c.name), c)

    @property
    def warnings(self):
        """The reader's warnings (some, like "formulas without cached values", appear only while
        rows are read, so ask after the pass)."""
        return list(getattr(self.book, "warnings", None) or [])

    # -- columns ---------------------------------------------------------------------------
    @property
    def names(self):
        return [c.name for c in self.columns]

    def column(self, spec, param="column"):
        """Column for a name (exact, then forgiving), a letter (``AB``) or ``列C``.

        Unknown -> ToolError listing the available names (and close matches first)."""
        if isinstance(spec, dict):
            spec = spec.get("column")
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            spec = display_text(spec)
        if not isinstance(spec, str) or not spec.strip():
            raise rt.ToolError("参数 %s 需要一个列名或列标（如 \"金额\" 或 \"C\"），收到的是 %r。%s" % (
                param, spec, self.columns_hint()), available_columns=self.names[:60])
        if spec in self._by_name:
            return self._by_name[spec]
        found = self._by_norm.get(_norm_name(spec))
        if found is not None:
            return found
        text = spec.strip()
        if text.startswith("列") and letter_index(text[1:]) is not None:
            text = text[1:]
        idx = letter_index(text)
        if idx is not None:
            if idx < len(self.columns):
                return self.columns[idx]
            return Column(idx, col_letter(idx), "列%s" % col_letter(idx))
        close = difflib.get_close_matches(spec, self.names, n=3, cutoff=0.5)
        close += [n for n in self.names if _norm_name(spec) in _norm_name(n) and n not in close][:3]
        hint = "；你可能想找：%s" % "、".join(close[:4]) if close else ""
        raise rt.ToolError("找不到列「%s」（参数 %s）%s。%s" % (spec, param, hint, self.columns_hint()),
                           available_columns=self.names[:60])

    def columns_hint(self):
        names = self.names
        shown = "、".join(names[:MAX_LISTED_COLUMNS])
        more = "…（共 %d 列，只列出前 %d 个）" % (len(names), MAX_LISTED_COLUMNS) if len(names) > MAX_LISTED_COLUMNS else ""
        where = "第 %d 行是表头，" % self.header_row if self.header_row else "没有识别到表头，"
        return "工作表「%s」%s可用的列：%s%s。也可以用列标，如 A、B、AB" % (self.sheet_name, where, shown or "（无）", more)

    # -- rows --------------------------------------------------------------------------------
    def data_rows(self, include_totals=False, fill_merged=True, skip_notes=True):
        """Stream ``(row_number, values)`` of the data rows.

        Merged blocks inside the data are filled (every covered cell shows the block's value),
        totals rows are recorded in ``totals_rows`` and not yielded unless ``include_totals``,
        lone footnote rows (``注：…``, ``制表人：…``) are recorded in ``note_rows`` and skipped.
        ``values`` may be shorter than the column count (missing cells are empty); the list may be
        modified by the caller only if it does not iterate again."""
        is_total = TotalsDetector()
        width = len(self.columns)
        pending = sorted(self.merged_data) if fill_merged else []
        ptr, active = 0, []
        rows = self._chain()
        for rownum, values in rows:
            self.rows_seen += 1
            if pending:
                while ptr < len(pending) and pending[ptr][0] <= rownum:
                    m = pending[ptr]
                    ptr += 1
                    value = values[m[1] - 1] if m[0] == rownum and m[1] - 1 < len(values) else None
                    if value is not None:
                        active.append((m[2], m[0], m[1] - 1, m[3], value))
                if active:
                    active = [a for a in active if a[0] >= rownum]
                    for _end, start, c0, c1, value in active:
                        if len(values) < c1:
                            values = list(values) + [None] * (c1 - len(values))
                        for c in range(c0, c1):
                            if c == c0 and rownum == start:
                                continue
                            values[c] = value
                    if not active and ptr >= len(pending):
                        pending = []
            if is_total(values):
                self.totals_count += 1
                if len(self.totals_rows) < 1000:
                    self.totals_rows.append(rownum)
                if not include_totals:
                    continue
            elif skip_notes and is_note_row(values, width):
                self.note_rows.append(rownum)
                continue
            yield rownum, values

    def _chain(self):
        buffer, self._buffer = self._buffer, []
        for item in buffer:
            yield item
        for item in self._rows:
            yield item

    def row_warnings(self, include_totals=False):
        """Chinese notes about held-back totals rows, footnotes and filled merges (after a pass)."""
        out = []
        if self.totals_count:
            rows = "、".join(str(r) for r in self.totals_rows[:8]) + ("等" if self.totals_count > 8 else "")
            if include_totals:
                out.append("第 %s 行是合计/小计行，按 include_totals=true 也计入了统计（注意可能重复计算）" % rows)
            else:
                out.append("第 %s 行是合计/小计行，已排除（避免重复计算）；如需计入请传 include_totals=true" % rows)
        if self.note_rows:
            out.append("第 %s 行是表尾说明（如「注：」「制表人」），已跳过" % "、".join(str(r) for r in self.note_rows[:8]))
        if self.merged_data:
            refs = "、".join(range_ref(*m) for m in self.merged_data[:5])
            out.append("数据区有 %d 处合并单元格（%s%s），已把合并值填进它覆盖的每一格" % (
                len(self.merged_data), refs, "等" if len(self.merged_data) > 5 else ""))
        return out

    def close(self):
        self.book.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pick_sheet(book, name=None):
    """SheetInfo for ``name`` (None = first visible). A csv/txt file has one unnamed sheet, so a
    sheet name given for it is ignored rather than refused."""
    if getattr(book, "kind", None) == "csv":
        name = None
    return book.sheet(name if name not in ("",) else None)


def open_table(path_or_book, sheet=None, header_row=None):
    """``Table`` for a file path (opened by content) or a book object; closes the book on error."""
    book = open_book(path_or_book)
    try:
        return Table(book, sheet=sheet, header_row=header_row)
    except BaseException:
        book.close()
        raise


def row_value(values, index):
    """Cell ``index`` of a data row (None when the row is shorter)."""
    return values[index] if index < len(values) else None


def key_value(value):
    """A cell as a grouping/lookup key: displayed, text trimmed, blanks -> None."""
    if value.__class__ is str:
        value = value.strip()
        return value or None
    return display(value)


# =============================================================================================
# Conditions

OPS = ("eq", "ne", "contains", "not_contains", "starts_with", "ends_with", "gt", "gte", "lt", "lte",
       "in", "not_in", "empty", "not_empty")
_OP_ALIASES = {"=": "eq", "==": "eq", "equals": "eq", "is": "eq", "!=": "ne", "<>": "ne", "neq": "ne",
               ">": "gt", ">=": "gte", "ge": "gte", "<": "lt", "<=": "lte", "le": "lte",
               "like": "contains", "包含": "contains", "不包含": "not_contains", "等于": "eq", "不等于": "ne",
               "大于": "gt", "大于等于": "gte", "小于": "lt", "小于等于": "lte", "为空": "empty",
               "不为空": "not_empty", "非空": "not_empty", "is_empty": "empty", "notempty": "not_empty",
               "nin": "not_in", "startswith": "starts_with", "endswith": "ends_with"}
OPS_HELP = ("eq 等于 / ne 不等于 / contains 包含 / not_contains 不包含 / starts_with 开头是 / ends_with 结尾是 / "
            "gt 大于 / gte 大于等于 / lt 小于 / lte 小于等于 / in 在列表中 / not_in 不在列表中 / "
            "empty 为空 / not_empty 非空")


def _norm_text(value):
    return unicodedata.normalize("NFKC", display_text(value)).strip().casefold()


class _Operand(object):
    """A condition's value, pre-parsed once: number (unless identifier text), date, text."""

    def __init__(self, value):
        self.raw = value
        self.number = None
        self.date = None
        if not isinstance(value, bool) and not is_identifier_text(value):
            number = to_decimal(value)
            self.number = number if isinstance(number, Decimal) else None
        if self.number is None:
            self.date = parse_date(value, compact=False)
        # 20240301 given as a number still means a day when the cell is a real date
        self.compact_date = parse_date(value, compact=True) if self.number is not None else None
        self.text = _norm_text(value)
        self.date_only = self.date is not None and self.date.__class__ is datetime.date


def _cell_vs(operand, cell):
    """-1/0/1 comparing ``cell`` to ``operand`` by number, then date; None when not comparable."""
    if operand.number is not None:
        if is_identifier_text(cell):
            return None
        n = to_decimal(cell)
        if n is None or n is INVALID:
            if operand.compact_date is not None and cell.__class__ in (datetime.date, datetime.datetime):
                d = cell.date() if cell.__class__ is datetime.datetime else cell
                return (d > operand.compact_date) - (d < operand.compact_date)
            return None
        return (n > operand.number) - (n < operand.number)
    if operand.date is not None:
        d = parse_date(cell, compact=True)
        if d is None:
            return None
        if operand.date_only:
            d = d.date() if d.__class__ is datetime.datetime else d
            return (d > operand.date) - (d < operand.date)
        d = as_datetime(d)
        return (d > operand.date) - (d < operand.date)
    return None


class Where(object):
    """Compiled ``where`` list: ``where.match(values)`` is True when every condition holds.

    ``uncomparable`` counts, per condition, cells that could not be compared (e.g. text in a
    ``gt 100`` column): such rows do not match, and ``warnings()`` says how many there were."""

    def __init__(self, table, where, param="where"):
        self.conditions = []
        self.uncomparable = []
        if where is None:
            where = []
        if isinstance(where, dict):
            where = [where]
        if not isinstance(where, list):
            raise rt.ToolError("参数 %s 应是条件数组，例如 [{\"column\":\"金额\",\"op\":\"gt\",\"value\":100}]" % param)
        for i, cond in enumerate(where):
            where_i = "%s[%d]" % (param, i)
            if not isinstance(cond, dict):
                raise rt.ToolError("%s 应是对象，例如 {\"column\":\"金额\",\"op\":\"gt\",\"value\":100}，收到的是 %r" % (
                    where_i, cond))
            column = table.column(cond.get("column"), where_i + ".column")
            op_raw = cond.get("op", "eq")
            op = _OP_ALIASES.get(str(op_raw).strip().lower(), str(op_raw).strip().lower())
            if op not in OPS:
                raise rt.ToolError("%s.op 不支持 %r。可用：%s" % (where_i, op_raw, OPS_HELP))
            value = cond.get("value")
            if op in ("in", "not_in"):
                if not isinstance(value, list):
                    if value is None:
                        raise rt.ToolError("%s：op=%s 需要 value 为数组，例如 [\"北京\",\"上海\"]" % (where_i, op))
                    value = [value]
                operand = [_Operand(v) for v in value]
            elif op in ("empty", "not_empty"):
                operand = None
            else:
                if value is None or isinstance(value, (list, dict)):
                    raise rt.ToolError("%s：op=%s 需要一个 value（数字、文字或日期），例如 {\"column\":\"%s\",\"op\":\"%s\","
                                       "\"value\":100}" % (where_i, op, column.name, op))
                operand = _Operand(value)
                if op in ("gt", "gte", "lt", "lte") and operand.number is None and operand.date is None:
                    pass                         # text comparison (lexicographic), allowed
            self.conditions.append((column.index, op, operand, column.name))
            self.uncomparable.append(0)
        self.test = self._build()

    def _build(self):
        tests = []
        for i, (idx, op, operand, _name) in enumerate(self.conditions):
            tests.append(self._one(i, idx, op, operand))
        if not tests:
            return lambda values: True
        if len(tests) == 1:
            return tests[0]
        return lambda values: all(t(values) for t in tests)

    def _one(self, i, idx, op, operand):
        uncomparable = self.uncomparable

        def cell(values):
            return values[idx] if idx < len(values) else None

        if op == "empty":
            return lambda values: is_empty(cell(values))
        if op == "not_empty":
            return lambda values: not is_empty(cell(values))
        if op in ("eq", "ne"):
            want = op == "eq"
            return lambda values: _equals(operand, cell(values)) == want
        if op in ("in", "not_in"):
            want = op == "in"
            return lambda values: any(_equals(o, cell(values)) for o in operand) == want
        if op in ("contains", "not_contains", "starts_with", "ends_with"):
            needle = operand.text
            if op == "contains":
                return lambda values: needle in _norm_text(cell(values))
            if op == "not_contains":
                return lambda values: needle not in _norm_text(cell(values))
            if op == "starts_with":
                return lambda values: _norm_text(cell(values)).startswith(needle)
            return lambda values: _norm_text(cell(values)).endswith(needle)
        accept = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[op]

        def compare(values):
            value = cell(values)
            if is_empty(value):
                return False
            if operand.number is None and operand.date is None:
                text = _norm_text(value)
                return ((text > operand.text) - (text < operand.text)) in accept
            result = _cell_vs(operand, value)
            if result is None:
                uncomparable[i] += 1
                return False
            return result in accept
        return compare

    def match(self, values):
        return self.test(values)

    def warnings(self):
        out = []
        for (idx, op, operand, name), n in zip(self.conditions, self.uncomparable):
            if n:
                kind = "数字" if operand.number is not None else "日期"
                out.append("条件「%s %s %s」：有 %d 行的「%s」不是%s，无法比较，按不满足处理" % (
                    name, op, display_text(operand.raw), n, name, kind))
        return out


def _equals(operand, value):
    if is_empty(value):
        return operand.text == ""
    if operand.number is not None and not is_identifier_text(value):
        n = to_decimal(value)
        if isinstance(n, Decimal):
            return n == operand.number
        if operand.compact_date is not None and value.__class__ in (datetime.date, datetime.datetime):
            return (value.date() if value.__class__ is datetime.datetime else value) == operand.compact_date
    elif operand.date is not None:
        d = parse_date(value, compact=True)
        if d is not None:
            if operand.date_only:
                return (d.date() if d.__class__ is datetime.datetime else d) == operand.date
            return as_datetime(d) == operand.date
    return _norm_text(value) == operand.text


def compile_where(table, where, param="where"):
    """``Where`` for a list of ``{"column", "op", "value"}`` (see ``OPS_HELP``)."""
    return Where(table, where, param)


# =============================================================================================
# Aggregation

FUNCS = ("sum", "avg", "max", "min", "count", "distinct_count")
_FUNC_ALIASES = {"mean": "avg", "average": "avg", "total": "sum", "求和": "sum", "合计": "sum", "平均": "avg",
                 "平均值": "avg", "最大": "max", "最大值": "max", "最小": "min", "最小值": "min", "计数": "count",
                 "count_distinct": "distinct_count", "nunique": "distinct_count", "distinct": "distinct_count",
                 "去重计数": "distinct_count", "countd": "distinct_count"}


def check_func(func, where="func"):
    key = str(func or "").strip().lower()
    key = _FUNC_ALIASES.get(key, key)
    if key not in FUNCS:
        raise rt.ToolError("%s 不支持 %r。可用：sum 求和 / avg 平均 / max 最大 / min 最小 / count 计数（非空单元格；"
                           "不给列则数行数）/ distinct_count 去重计数" % (where, func))
    return key


class SkipLog(object):
    """Cells a metric could not use (text in a number column...): a count and 3 examples."""

    __slots__ = ("count", "examples")

    def __init__(self):
        self.count = 0
        self.examples = []

    def note(self, row_number, value):
        self.count += 1
        if len(self.examples) < 3:
            self.examples.append({"row": row_number, "value": shorten(display_text(value), 60)[0]})


class SumAgg(object):
    __slots__ = ("total", "n", "skip")

    def __init__(self, skip):
        self.total = Decimal(0)
        self.n = 0
        self.skip = skip

    def add(self, value, row_number):
        # fast paths first: most cells are already int/float
        cls = value.__class__
        if cls is int:
            self.total += value
            self.n += 1
            return
        if cls is float:
            if value == value and value not in (float("inf"), float("-inf")):
                self.total += Decimal(repr(value))
                self.n += 1
                return
        if value is None:
            return
        number = to_decimal(value)
        if number is None:
            return
        if number is INVALID:
            self.skip.note(row_number, value)
            return
        self.total += number
        self.n += 1

    def result(self):
        return decimal_out(self.total)


class AvgAgg(SumAgg):
    __slots__ = ()

    def result(self):
        if not self.n:
            return None
        value = float(self.total / self.n)
        return _clean_float(float("%.12g" % value))


class ExtremeAgg(object):
    """max/min over numbers; over dates when the column has dates and no numbers."""

    __slots__ = ("sign", "best", "best_date", "date_key", "skip", "date_rows")

    def __init__(self, skip, want_max):
        self.sign = 1 if want_max else -1
        self.best = None
        self.best_date = None
        self.date_key = None
        self.skip = skip
        self.date_rows = []

    def add(self, value, row_number):
        number = to_decimal(value)
        if number is None:
            return
        if number is not INVALID:
            if self.best is None or (number - self.best) * self.sign > 0:
                self.best = number
            return
        day = parse_date(value)
        if day is None:
            self.skip.note(row_number, value)
            return
        key = as_datetime(day)
        if self.date_key is None or ((key > self.date_key) - (key < self.date_key)) * self.sign > 0:
            self.date_key, self.best_date = key, day
        if len(self.date_rows) < 3:
            self.date_rows.append((row_number, value))

    def result(self):
        if self.best is not None:
            return decimal_out(self.best)
        if self.best_date is not None:
            return display(self.best_date)
        return None


class CountAgg(object):
    """count of non-empty cells (Excel COUNTA); with no column, the number of rows."""

    __slots__ = ("n",)

    def __init__(self, skip=None):
        self.n = 0

    def add(self, value, row_number):
        if value is not None and not (value.__class__ is str and not value.strip()):
            self.n += 1

    def add_row(self):
        self.n += 1

    def result(self):
        return self.n


class DistinctAgg(object):
    __slots__ = ("seen",)

    def __init__(self, skip=None):
        self.seen = set()

    def add(self, value, row_number):
        key = key_value(value)
        if key is not None:
            self.seen.add(key)

    def result(self):
        return len(self.seen)


def make_metric(func, skip):
    """A fresh accumulator for ``func`` (one per group) sharing the metric's SkipLog."""
    if func == "sum":
        return SumAgg(skip)
    if func == "avg":
        return AvgAgg(skip)
    if func == "max":
        return ExtremeAgg(skip, True)
    if func == "min":
        return ExtremeAgg(skip, False)
    if func == "count":
        return CountAgg()
    return DistinctAgg()


# =============================================================================================
# Sorting and misc helpers for tools

def sort_key(value):
    """Orders mixed group keys: numbers, then text (and date labels), then booleans; None last."""
    if value is None:
        return (3, 0, "")
    if isinstance(value, bool):
        return (2, int(value), "")
    if isinstance(value, (int, float)):
        return (0, value, "")
    return (1, 0, str(value))


class Deadline(object):
    """Time budget inside the host's 60 s limit (counting rows of a huge sheet stops in time)."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def passed(self):
        return time.monotonic() > self.end
