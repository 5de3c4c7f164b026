"""What a cell *means* and how it is shown: the value rules every table tool shares.

- column letters (``col_letter`` 0-based -> ``A``; ``letter_index`` / ``col_index`` back), the one
  helper for readers, writers and tools;
- display: ``display`` (dates ``YYYY-MM-DD``, integral floats as ints, long digit strings as
  typed, elapsed ``Duration`` s as ``255:10:10``), ``display_text``, ``shorten``, and :class:`CellShow`, the display of long cells in a
  tool's answer (cut with "…", counted, a too-long row squeezed) for every table tool;
- numbers: ``to_decimal`` / ``parse_number`` (money text such as ``￥1,234.50``, ``(300.00)``,
  ``1.2万``, ``12.5%``), ``INVALID`` for text that is not a number (skipped, never 0);
- dates: ``parse_date``, ``date_format_label``;
- totals and note rows: ``is_total_label`` (the one definition, also used by the writer),
  ``TotalsDetector``, ``is_note_row``; the footer block: ``is_summary_label`` (平均 / 最高 /
  占比 / 备注 rows) and ``FooterRun`` (when such rows are footer); ``number_text_like`` (a new total
  written like the old text one).

Pure functions only: no file access, no runtime.
"""
import datetime
import decimal
import re

from ..text import width as text_width

Decimal = decimal.Decimal

MAX_TEXT = 500              # longest cell text shown by reading tools before it is cut with "…"


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


def col_index(letters):
    """Excel letters (trusted: ``A``..``XFD`` as a file stores them) -> 0-based index."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def letter_index(text):
    """Excel letters -> 0-based index, or None when ``text`` is not a column letter (A..XFD)."""
    if not isinstance(text, str) or not _LETTERS_RE.match(text.strip()):
        return None
    n = col_index(text.strip()) + 1
    return n - 1 if n <= 16384 else None


def range_ref(min_row, min_col, max_row, max_col):
    """1-based inclusive bounds -> ``A1:B2``."""
    return "%s%d:%s%d" % (col_letter(min_col - 1), min_row, col_letter(max_col - 1), max_row)


# =============================================================================================
# Elapsed durations

class Duration(float):
    """An elapsed time as a number of days (what Excel stores), shown the way its format shows
    it: ``255:10:10`` for 10.632… days in ``[h]:mm:ss``, ``15310:10`` in ``[mm]:ss``.

    Why a float: sums, averages, comparisons and writers keep treating it as the number it is;
    only ``display`` gives the text the person sees. ``style`` is the elapsed pattern the reader
    found (``h:mm:ss``, ``mm:ss``, ``s``, ``h:mm:ss.00``; the first part is the bracketed unit)."""

    __slots__ = ("style",)
    made = 0                # how many were made in this process: the page cache keeps none

    def __new__(cls, days, style="h:mm:ss"):
        self = float.__new__(cls, days)
        self.style = style
        Duration.made += 1
        return self

    def __reduce__(self):
        return (Duration, (float(self), self.style))

    def text(self):
        return duration_text(float(self), self.style)


def duration_text(days, style="h:mm:ss"):
    """Days shown in an elapsed pattern (``h:mm:ss``, ``hh:mm``, ``mm:ss``, ``s``, ``h:mm:ss.0``):
    the first part counts the whole duration in its unit, the later ones run 00-59; seconds are
    rounded to the decimals shown, a pattern without seconds drops them (as Excel does)."""
    head, _, frac = style.partition(".")
    parts = [p for p in head.split(":") if p] or ["h"]
    places = len(frac)
    scale = 10 ** places
    ticks = int(round(abs(days) * 86400 * scale))
    secs, fraction = divmod(ticks, scale)
    units = [p[0] for p in parts]
    out = []
    if units[-1] != "s":
        secs -= secs % 60
    rest = secs
    for i, (part, unit) in enumerate(zip(parts, units)):
        size = {"h": 3600, "m": 60, "s": 1}[unit]
        if i == 0:
            amount, rest = divmod(rest, size)
            out.append(str(amount).rjust(len(part), "0"))
        else:
            amount, rest = divmod(rest, size)
            out.append("%02d" % amount)
    text = ":".join(out)
    if places and units[-1] == "s":
        text += "." + str(fraction).rjust(places, "0")
    return ("-" if days < 0 and ticks else "") + text


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
    if cls is Duration:
        return value.text()
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

# Invisible characters, one table for every tool: clean_table removes them from any text, and
# the amount parser below ignores them, so ``1,234.50`` with a zero-width space copied from a web
# page or a chat is the same amount for calc, pivot, filter, lookup and reconcile as for clean.
# Removed: zero-width and direction marks, soft hyphen, BOM, word joiners, control characters;
# made ordinary spaces: non-breaking and typographic spaces (the full-width space U+3000 is a real
# character in Chinese text and is only trimmed at the ends).
INVISIBLE_REMOVED = [0x00ad, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0x2061, 0x2062, 0x2063,
                     0x2064, 0xfeff] + list(range(0x202a, 0x202f)) + list(range(0x2066, 0x206a)) + \
    [c for c in range(0x20) if c not in (0x09, 0x0a, 0x0d)] + [0x7f]
INVISIBLE_SPACES = [0x00a0, 0x2007, 0x202f, 0x205f] + list(range(0x2000, 0x200b))
INVISIBLE_TABLE = dict([(c, None) for c in INVISIBLE_REMOVED] + [(c, " ") for c in INVISIBLE_SPACES])

# Full-width and look-alike characters -> ASCII, so `１２３．５`, `－5`, `（1，234）` parse.
_NUM_TRANSLATE = {ord(a): b for a, b in zip("０１２３４５６７８９．，－−–＋（）％＄￥", "0123456789.,---+()%$¥")}
for _code in INVISIBLE_REMOVED + INVISIBLE_SPACES:
    _NUM_TRANSLATE[_code] = None
for _space in (" ", "\u3000", "\t", "\r", "\n", "'"):
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
        return None                          # (also a cell of only invisible characters)
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
    if cls is str:                  # csv cells are all text: the plain-number check first
        if _PLAIN_RE.fullmatch(value):
            return Decimal(value)
        return _parse_number_text(value)
    if cls is int:
        return Decimal(value)
    if cls is float:
        if value != value or value in (float("inf"), float("-inf")):
            return INVALID
        return Decimal(repr(value))
    if value is None:
        return None
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


# Column names that mark codes, not amounts (序号, 订单号, 手机, ID...): such columns are never summed
# by a suggestion and never turned into numbers by the derived tables, whatever digits they hold.
CODE_NAME_WORDS = ("序号", "编号", "编码", "代码", "号码", "单号", "卡号", "账号", "帐号", "工号", "学号", "电话",
                   "手机", "身份证", "邮编", "id", "no", "code")


def is_code_name(name):
    """True when a column name says the column holds codes (``订单号``, ``客户编码``, ``ID``)."""
    text = str(name or "").strip().lower()
    return any(word in text for word in CODE_NAME_WORDS) or text.endswith("号")


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



# =============================================================================================
# Totals and note rows

_TOTAL_WORDS = ("合计", "总计", "小计", "总和", "累计", "共计", "总合计", "合計", "總計", "小計")
_TOTAL_EXACT = frozenset(list(_TOTAL_WORDS) + ["total", "totals", "grandtotal", "subtotal", "sum", "总数", "汇总"])
_LABEL_STRIP = re.compile(r"[\s\u3000:：]+")
# 小计(华东), 合计（华东区）, 总计[2024]: a totals word with a bracketed qualifier
_TOTAL_QUALIFIED = re.compile(r"(?:%s)[(（\[【][^()（）\[\]【】]{1,12}[)）\]】]\Z" % "|".join(_TOTAL_WORDS))
# Total revenue, Grand total sales, Subtotal East: English statements put the word first
_TOTAL_ENGLISH = re.compile(r"(?:grand\s*)?(?:sub\s*)?totals?(?:\s+[a-z&/-]+){0,3}\s*\Z", re.ASCII)
_NOTE_PREFIXES = ("注：", "注:", "注 ", "备注：", "备注:", "说明：", "说明:", "制表", "审核", "复核", "打印",
                  "数据来源", "来源：", "单位：", "单位:", "填报", "编制")


def is_total_label(text):
    """The one definition of a totals label, for the readers (rows held back from sums) and the
    writer (rows appended under a totals row): ``合计``, ``合  计``, ``总计：``, ``本月合计``,
    ``本年累计`` (a short label that is or ends with a totals word), ``小计(华东)`` (a totals word
    with a bracketed qualifier), ``Total``, ``Subtotal``, ``Total revenue``, ``Grand total``.
    Longer text that merely starts with 合计 (``合计金额说明…``) is a sentence, not a label."""
    if text.__class__ is not str or len(text) > 24:
        return False
    label = _LABEL_STRIP.sub("", text).lower()
    if not label:
        return False
    if label in _TOTAL_EXACT:
        return True
    if len(label) <= 8 and label.endswith(_TOTAL_WORDS):
        return True
    if _TOTAL_QUALIFIED.match(label):
        return True
    words = text.strip().rstrip(":：").strip().lower()
    return words[:1] in "gst" and _TOTAL_ENGLISH.match(words) is not None


class TotalsDetector(object):
    """Decides whether a data row is a totals row: a totals label in one of the first 3 columns or
    in the first non-empty cell. Memoises labels because the same category text repeats."""

    def __init__(self):
        self.cache = {}

    def __call__(self, values):
        cache = self.cache
        if len(values) >= 3:
            # nearly every row: three texts already known not to be labels (no slice, no loop)
            get = cache.get
            if get(values[0]) is False and get(values[1]) is False and get(values[2]) is False:
                return False
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


# Summary rows that sit with a 合计 in a ledger's footer block (平均 / 最高 / 最低 / 占比 / 备注):
# never data, but only footer when they are *in* that block (see ``FooterRun``), because a word
# like 最高 can also be a category in the data.
_SUMMARY_WORDS = ("平均", "平均值", "平均数", "平均分", "均值", "人均", "日均", "月均", "最高", "最高值", "最低", "最低值",
                  "最大", "最大值", "最小", "最小值", "中位数", "占比", "比例", "比重", "百分比", "同比", "环比",
                  "增长率", "备注", "说明", "注")
_SUMMARY_EXACT = frozenset(list(_SUMMARY_WORDS) + ["average", "avg", "mean", "max", "min", "maximum", "minimum",
                                                   "median", "percent", "share", "note", "notes"])
_SUMMARY_ENDS = tuple(w for w in _SUMMARY_WORDS if len(w) >= 2 and w not in ("说明", "备注"))


def is_summary_label(text):
    """A short label of a summary row kept with the totals (``平均``, ``平均值：``, ``人均``,
    ``月平均``, ``最高``, ``占比(%)``, ``备注``, ``Average``); see ``FooterRun`` for when such a row
    is footer and not data."""
    if text.__class__ is not str or len(text) > 16:
        return False
    label = _LABEL_STRIP.sub("", text).lower()
    if not label:
        return False
    label = _UNIT_SUFFIX.sub("", label) or label
    if label in _SUMMARY_EXACT:
        return True
    return len(label) <= 6 and label.endswith(_SUMMARY_ENDS)


_UNIT_SUFFIX = re.compile(r"[(（\[【][^()（）\[\]【】]{0,6}[)）\]】]\Z")


def row_label(values):
    """The label a totals/summary row would carry: the first text among its first three cells,
    or its first non-empty cell when those three are empty; None otherwise."""
    for value in values[:3]:
        if value.__class__ is str and value.strip():
            return value
    if len(values) > 3 and all(v is None or (v.__class__ is str and not v.strip()) for v in values[:3]):
        for value in values[3:]:
            if value is not None:
                return value if value.__class__ is str else None
    return None


def is_summary_row(values):
    """True when the row's label (``row_label``) is a summary label (平均, 最高, 占比…)."""
    label = row_label(values)
    return label is not None and is_summary_label(label)


class FooterRun(object):
    """Which rows of a streamed table belong to its footer block: the 合计 rows and the summary
    rows (平均 / 最高 / 最低 / 占比 / 备注) standing with them.

    A summary row is footer when its run of summary rows touches a totals row (just above or just
    below it: ``合计`` then ``平均``, or ``平均`` then ``合计``) or reaches the end of the table;
    a summary-looking row followed by plain data is data after all. ``feed(values)`` says what to
    do with a row: ``"total"``, ``"summary"`` (footer now: right after a totals row), ``"hold"``
    (undecided: keep it back) or ``"data"``; the caller asks ``release(total_next)`` for the held
    rows' fate when the next decided row comes (``True``: they are footer) and treats held rows at
    the end of the table as footer. One rule for readers, probe, sums and the append position."""

    __slots__ = ("is_total", "after_total")

    def __init__(self, is_total=None):
        self.is_total = is_total or TotalsDetector()
        self.after_total = False

    def feed(self, values, total=None):
        if total is None:
            total = self.is_total(values)
        if total:
            self.after_total = True
            return "total"
        if is_summary_row(values):
            return "summary" if self.after_total else "hold"
        self.after_total = False
        return "data"


def number_text_like(old, number):
    """``number`` written the way the text ``old`` was: same currency sign or unit, thousands
    separators, at least as many decimals (``￥12,566,875.33`` + 1000 -> ``￥12,567,875.33``).
    None when ``old`` is not a plain number written like that (units such as 万 or %, words)."""
    m = _NUMBER_TEXT_LIKE.match(old.translate(_LIKE_TRANSLATE))
    if not m:
        return None
    decimals = len(m.group(4) or "")
    exponent = -number.normalize().as_tuple().exponent if isinstance(number, Decimal) else 0
    decimals = max(decimals, exponent if exponent > 0 else 0)
    spec = "%s.%df" % ("," if "," in m.group(3) else "", decimals)
    return m.group(1) + format(number, spec) + m.group(5)


_NUMBER_TEXT_LIKE = re.compile(r"^(\s*(?:[￥¥$€£]|RMB|CNY)?\s*)(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(\s*元?\s*)$")
# invisible characters a copied amount carries (zero-width space, BOM, NBSP) are dropped first
_LIKE_TRANSLATE = {0x200b: None, 0x200c: None, 0x200d: None, 0x2060: None, 0xfeff: None, 0xa0: " "}


def is_note_row(values, width):
    """A lone text cell under/among the data that reads like a footnote (``注：``, ``制表人：``)."""
    # list.count runs in C: rows with two or more cells (nearly all of them) are rejected cheaply
    if width < 2 or len(values) - values.count(None) != 1:
        return False
    found = next(v for v in values if v is not None)
    return found.__class__ is str and found.strip().startswith(_NOTE_PREFIXES)


def key_value(value):
    """A cell as a grouping/lookup key: displayed, text trimmed, blanks -> None."""
    if value.__class__ is str:
        value = value.strip()
        return value or None
    return display(value)



# =============================================================================================
# Cells in a tool's answer

class CellShow(object):
    """How every table tool shows cells in its answer: ``display`` rules, text longer than
    ``limit`` cut with "…" (counted in ``cut``), and a row too big for the whole answer squeezed
    (``squeezed``). ``notes()`` gives the Chinese warnings for what was shortened."""

    def __init__(self, limit=MAX_TEXT):
        self.limit = limit
        self.cut = 0
        self.squeezed = 0

    def cell(self, value, limit=None):
        shown = display(value)
        limit = self.limit if limit is None else limit
        if shown.__class__ is str and len(shown) > limit:
            self.cut += 1
            return shown[:limit] + "…"
        return shown

    def row(self, values, width=None):
        """A list of cells, trailing empty ones dropped (``width`` caps the columns)."""
        cells = values if width is None else values[:width]
        out = [self.cell(v) for v in cells]
        while out and (out[-1] is None or out[-1] == ""):
            out.pop()
        return out

    def record(self, values, columns):
        """``{column name: cell}`` with empty cells left out; ``columns`` are Column tuples."""
        record = {}
        for i, value in enumerate(values):
            if is_empty(value):
                continue
            name = columns[i].name if i < len(columns) else "列%s" % col_letter(i)
            record[name] = self.cell(value)
        return record

    def squeeze(self, row, room, size):
        """A single row bigger than ``room`` characters (measured by ``size``): its texts cut
        harder, then its last columns dropped with a note of how many."""
        self.squeezed += 1
        for limit in (200, 50, 20):
            if isinstance(row, dict):
                smaller = {k: (v[:limit] + "…" if isinstance(v, str) and len(v) > limit else v) for k, v in row.items()}
            else:
                smaller = [v[:limit] + "…" if isinstance(v, str) and len(v) > limit else v for v in row]
            if size(smaller) <= room:
                return smaller
            row = smaller
        items = list(row.items()) if isinstance(row, dict) else list(row)
        keep, used = 0, 80
        for item in items:
            used += size(item) + 1
            if used > room:
                break
            keep += 1
        keep = max(1, keep)
        if isinstance(row, dict):
            out = dict(items[:keep])
            out["…"] = "本行共 %d 列，后 %d 列放不下已省略" % (len(items), len(items) - keep)
            return out
        return items[:keep] + ["…（本行共 %d 列，后 %d 列放不下已省略）" % (len(items), len(items) - keep)]

    def notes(self):
        out = []
        if self.cut:
            out.append("有 %d 个单元格文字超过 %d 字，已截断（以 … 结尾）" % (self.cut, self.limit))
        if self.squeezed:
            out.append("有一行内容太长，已进一步缩短单元格文字后返回")
        return out


def display_width(value):
    """Columns a cell takes on screen (CJK counted double, the longest line of a text), capped
    at 120: what the writer sizes columns by."""
    if value is None:
        return 0
    if isinstance(value, datetime.datetime):
        return 19
    if isinstance(value, datetime.date):
        return 10
    if isinstance(value, bool):
        return 5
    if isinstance(value, (int, float)):
        return min(len(str(value)), 15)
    return max(text_width(line[:120]) for line in str(value).split("\n"))
