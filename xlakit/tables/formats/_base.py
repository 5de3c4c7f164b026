"""What every format reader shares: the error type, the sheet record, the value rules.

The readers must agree on what a cell *is* (the same workbook read through the fast xlsx parser,
openpyxl or a LibreOffice re-save must give the same Python values), so the rules live here once:

- ``number(x)``: integral floats become ``int`` (exactly integral and below 2**53, where a float
  still counts units exactly), everything else stays ``float``;
- ``classify_format(code)``: whether a number format shows a date, a date+time, a time or an
  elapsed duration (``elapsed`` / ``elapsed:<pattern>``, see ``elapsed_style``) — by its tokens, ignoring quoted text, ``[...]`` colour/locale blocks and
  backslash escapes, so Chinese formats such as ``yyyy"年"m"月"d"日"`` are recognised;
- ``serial_to_value(serial, kind, date1904)``: Excel's day serial to ``date``/``datetime``/``time``
  with Excel's own calendar quirks (1900 leap-year bug, 1904 system).
"""
import collections
import datetime
import re

from ...errors import FormatError  # noqa: F401 - the readers' error type, re-exported
from ..values import Duration


SheetInfo = collections.namedtuple("SheetInfo", "name hidden index")

NOCACHE_WARNING = ("工作簿里有公式没有缓存值（多见于程序生成、未用 Excel 打开保存过的文件），"
                   "这些单元格读作空值；请用 Excel/WPS 打开后保存一次再试")
# The same note with its count and one example, as the book gives it once cells were read.
NOCACHE_COUNTED = ("工作簿里有 %d 个公式单元格没有缓存值（例如%s），这些单元格读作空值，不是真的空：文件多半是程序生成、"
                   "从未在 Excel/WPS 里计算过。请用 Excel/WPS 打开后保存一次再读；或按数据列用 calc_table 重新计算")

MAX_EXACT = 2 ** 53


def number(value):
    """``float`` -> ``int`` when it is exactly integral and small enough to be exact."""
    if value.__class__ is float and value.is_integer() and -MAX_EXACT < value < MAX_EXACT:
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------
# Number formats

# Built-in format ids that show dates in Excel/WPS. 27-36 and 50-58 are the ids the Chinese
# (and other East Asian) editions use for their localised date/time formats; their format text
# is not stored in the file, so the id alone must decide.
_BUILTIN_TIME = frozenset([18, 19, 20, 21, 32, 33, 34, 35, 45, 47, 52, 53, 55, 56])
_BUILTIN_DATETIME = frozenset([22])
_BUILTIN_ELAPSED = frozenset([46])
_BUILTIN_DATE = frozenset(list(range(14, 18)) + [27, 28, 29, 30, 31, 36, 50, 51, 54, 57, 58])

DATE, DATETIME, TIME, ELAPSED = "date", "datetime", "time", "elapsed"

# Pieces of a format code that are never date tokens: "quoted text", \x escapes, _x (spacing) and
# *x (fill) pairs, and [...] blocks other than the elapsed-time ones [h] [mm] [ss].
_STRIP_RE = re.compile(r'"[^"]*"|\\.|_.|\*.|\[(?![hms]+\])[^\]]*\]', re.S)
_ELAPSED_RE = re.compile(r"\[[hms]+\]")
_AMPM_RE = re.compile(r"am/pm|a/p")
# One token per run of the same letter: "ggge" + "m" + "d" (quotes stripped) must not read as one
# "emd" token. g (era name) and e (era year) are the Japanese/ROC calendar formats.
_TOKEN_RE = re.compile(r"y+|m+|d+|h+|s+|e+|g+|0+")


_ELAPSED_STYLE_RE = re.compile(r"\[(h+|m+|s+)\]((?::?(?:m+|s+))*)(\.0+)?")


def _elapsed_style(code):
    """The shown pattern of an elapsed format (quotes and colour blocks already stripped):
    ``[h]:mm:ss`` -> ``h:mm:ss``, ``[mm]:ss.00`` -> ``mm:ss.00``; None when there is none."""
    m = _ELAPSED_STYLE_RE.search(code)
    if m is None:
        return None
    parts = [m.group(1)] + re.findall(r"m+|s+", m.group(2))
    return ":".join(parts) + (m.group(3) or "")


def elapsed_style(kind):
    """The display pattern carried by an elapsed kind (``elapsed`` -> ``h:mm:ss``,
    ``elapsed:mm:ss`` -> ``mm:ss``); None for any other kind."""
    if kind is None or not kind.startswith(ELAPSED):
        return None
    return kind[len(ELAPSED) + 1:] or "h:mm:ss"


def builtin_kind(fmt_id):
    if fmt_id in _BUILTIN_DATE:
        return DATE
    if fmt_id in _BUILTIN_TIME:
        return TIME
    if fmt_id in _BUILTIN_DATETIME:
        return DATETIME
    if fmt_id in _BUILTIN_ELAPSED:
        return ELAPSED
    return None


def classify_format(code):
    """None for a plain number format, else DATE / DATETIME / TIME / ELAPSED."""
    if not code:
        return None
    code = code.split(";", 1)[0].lower()      # the section used for positive numbers
    if code in ("general", "@"):
        return None
    code = _STRIP_RE.sub("", code)
    style = _elapsed_style(code)
    # "General" after a colour/locale block ([$-804]General, [DBNum1][$-804]General, [Red]General)
    # is still General: its g/e letters are no era tokens
    code = code.replace("general", "")
    elapsed = bool(_ELAPSED_RE.search(code))
    code = _ELAPSED_RE.sub("h", code)
    code = _AMPM_RE.sub("", code)
    # 'e' is the era/year token (e.g. "ge.m.d"), but only next to other date letters; in a
    # number format it is the exponent (0.00E+00), which never comes with y/m/d/h/s.
    letters = [t for t in _TOKEN_RE.findall(code) if t[0] != "0"]
    has_date = has_time = False
    for i, tok in enumerate(letters):
        c = tok[0]
        if c in "yd":
            has_date = True
        elif c in "hs":
            has_time = True
        elif c == "m":
            # "m" is minutes right after an hour or right before a second, else month
            prev = letters[i - 1][0] if i else ""
            nxt = letters[i + 1][0] if i + 1 < len(letters) else ""
            if prev == "h" or nxt == "s":
                has_time = True
            else:
                has_date = True
        elif c in "eg" and (len(letters) > 1 or c == "g"):
            has_date = True
    if not has_date and not has_time:
        return None
    if elapsed and not has_date:
        return ELAPSED if style in (None, "h:mm:ss") else ELAPSED + ":" + style
    if has_date and has_time:
        return DATETIME
    if has_date:
        return DATE
    return TIME


# ---------------------------------------------------------------------------------------------
# Day serials

_EPOCH_1900 = datetime.datetime(1899, 12, 30)
_EPOCH_1900_EARLY = datetime.datetime(1899, 12, 31)   # serials before the fake 1900-02-29
_EPOCH_1904 = datetime.datetime(1904, 1, 1)
_MS_PER_DAY = 86400000


def serial_to_value(serial, kind, date1904=False):
    """An Excel day serial shown with a format of ``kind`` -> date / datetime / time.

    - DATE with an integral serial -> ``datetime.date``;
    - a fractional serial, or DATETIME -> ``datetime.datetime`` (rounded to the millisecond,
      as Excel stores times as binary fractions of a day);
    - a serial below 1 with a TIME format, or with a fraction whatever the date format ->
      ``datetime.time`` (serial 0 itself with a date format stays Excel's 1900-01-00, read as
      1899-12-31);
    - ELAPSED kinds ([h]:mm:ss, [mm]:ss, [s]) -> ``Duration``: the number of days (sums keep
      working) shown as the person sees it (``255:10:10``); a duration is no point in time.
    Excel's 1900 system believes 1900 was a leap year: serial 60 is the non-existent 1900-02-29
    (read as 1900-02-28 here) and serials below 60 are one day off from a plain count.
    Out-of-range serials (negative, beyond year 9999) stay numbers.
    """
    if kind is None:
        return serial
    style = elapsed_style(kind)
    if style is not None:
        return Duration(serial, style)
    if not -1 < serial < 2958466:
        return serial
    if serial < 0:
        return serial
    ms = int(round(serial * _MS_PER_DAY))
    days, ms = divmod(ms, _MS_PER_DAY)
    if days == 0 and (kind == TIME or (ms and not date1904)):
        # a serial below 1 is a time of day, whatever the format says (Excel shows 0.6667 in a
        # date+time format as 16:00, not as a moment on the non-existent 1900-01-00; in the
        # 1904 system day 0 is a real date, 1904-01-01)
        return _ms_to_time(ms)
    if date1904:
        base = _EPOCH_1904
    elif days < 60:
        base = _EPOCH_1900_EARLY
    elif days == 60:
        base, days = _EPOCH_1900_EARLY, 59
    else:
        base = _EPOCH_1900
    moment = base + datetime.timedelta(days=days, milliseconds=ms)
    if ms == 0 and kind == DATE:
        return moment.date()
    return moment


def _ms_to_time(ms):
    seconds, milli = divmod(ms, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return datetime.time(hour, minute, second, milli * 1000)


# ---------------------------------------------------------------------------------------------
# Reading helpers

def col_letters(index):
    """0-based column index -> ``A``, ``Z``, ``AA``…"""
    out = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def trim(values):
    """Drop trailing ``None`` in place and return the list."""
    while values and values[-1] is None:
        values.pop()
    return values


def merge_repeated_rows(rows):
    """``(row number, values)`` pairs with rows that come more than once in a row merged into one.

    Some writers put every cell in its own ``<row r="N">`` element (the same N again and again);
    Excel shows them as one row. A cell given twice keeps the later value, as Excel does. The
    merged row goes out only when the next row number arrives, so a reader failing half-way
    never hands out half a row."""
    held_num, held = None, None
    for rnum, values in rows:
        if rnum == held_num:
            for ci, value in enumerate(values):
                if value is not None:
                    if ci < len(held):
                        held[ci] = value
                    else:
                        held.extend([None] * (ci - len(held)))
                        held.append(value)
            continue
        if held_num is not None:
            yield held_num, held
        held_num, held = rnum, list(values)
    if held_num is not None:
        yield held_num, held


def _example_text(example):
    where = "工作表「%s」的 %s" % (example["sheet"], example["cell"])
    return where + ("：%s" % example["formula"] if example["formula"] else "（共享公式）")


class BaseBook(object):
    """The duck type every reader implements; holds the shared sheet-name logic."""

    kind = None

    def __init__(self, path):
        self.path = path
        self.sheets = []
        self._warnings = []
        self.encoding = None
        self.delimiter = None
        self._nocache = {}          # sheet name -> [count, last (row, col) counted, example]

    @property
    def warnings(self):
        """The reader's notes so far (a fresh list: add notes with ``warn``). The note about
        formulas without cached values carries the count and an example, so it is built here."""
        out = []
        for note in self._warnings:
            if note == NOCACHE_WARNING:
                info = self.formula_without_value
                if info is None:
                    out.append(note)
                    continue
                note = NOCACHE_COUNTED % (info["count"], _example_text(info["example"]))
            out.append(note)
        return out

    @warnings.setter
    def warnings(self, notes):
        self._warnings = list(notes)

    def number_formats(self, name=None, first_row=1, rows=200):
        """{0-based column: number format code} that the sheet's first cells carry (money and
        number formats only, never dates) in rows ``first_row`` to ``first_row + rows - 1``:
        derived tables keep them. Readers of formats without cell styles (csv, html…) have none."""
        return {}

    def note_formula_without_value(self, sheet, row, col, formula=None):
        """Record a formula cell the file stores without its result (1-based ``row``, 0-based
        ``col``; ``formula`` its text when the file has it). Rows come in order within a pass, so
        a cell at or before the last one counted belongs to an earlier pass over the same sheet
        and is not counted twice."""
        entry = self._nocache.get(sheet)
        if entry is None:
            entry = self._nocache[sheet] = [0, (0, -1), None]
        if (row, col) <= entry[1]:
            return
        entry[0] += 1
        entry[1] = (row, col)
        if entry[2] is None:
            entry[2] = {"sheet": sheet, "cell": "%s%d" % (col_letters(col), row),
                        "formula": ("=" + formula.lstrip("=")) if formula else None}
        self.warn(NOCACHE_WARNING)

    @property
    def formula_without_value(self):
        """None, or ``{"count": N, "sheets": {name: n}, "example": {"sheet", "cell", "formula"}}``
        for the formula cells without a cached value met in the rows read so far."""
        return self.formula_without_value_in()

    def formula_without_value_in(self, sheet=None):
        """``formula_without_value`` of one sheet (None: all sheets read so far)."""
        found = [(name, e) for name, e in self._nocache.items() if sheet is None or name == sheet]
        if not found:
            return None
        sheets = {name: e[0] for name, e in found}
        return {"count": sum(sheets.values()), "sheets": sheets, "example": found[0][1][2]}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def warn(self, message):
        if not any(message is n or message == n for n in self._warnings):
            self._warnings.append(message)

    def sheet(self, name=None):
        """The SheetInfo for ``name``; None means the first visible sheet."""
        if not self.sheets:
            raise FormatError("文件里没有工作表，无法读取")
        if name is None or name == "":
            for info in self.sheets:
                if not info.hidden:
                    return info
            return self.sheets[0]
        if isinstance(name, int) and not isinstance(name, bool):
            if 0 <= name < len(self.sheets):
                return self.sheets[name]
        for info in self.sheets:
            if info.name == name:
                return info
        wanted = str(name).strip().lower()
        for info in self.sheets:
            if info.name.strip().lower() == wanted:
                return info
        raise FormatError("找不到工作表「%s」。这个文件里的工作表有：%s" % (
            name, "、".join("「%s」%s" % (s.name, "（隐藏）" if s.hidden else "") for s in self.sheets)),
            sheets=[s.name for s in self.sheets])

    def rows(self, name=None, max_rows=None):
        raise NotImplementedError

    def merges(self, name=None):
        return []

    def dimensions(self, name=None):
        return None

    def close(self):
        pass
