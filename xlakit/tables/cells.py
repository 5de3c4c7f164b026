"""Cells on their way into a file: the one conversion behind every writer (xlsx new and existing,
xls, csv) and the checks on rows before anything is written.

- :func:`to_cell`: a JSON value -> the value stored in an xlsx/xls cell (numbers stay numbers, ISO
  date text becomes a real date by the readers' own date rules, ``"007"`` and ID-card numbers stay
  text, integers over 15 digits become text because Excel would round them);
- :func:`csv_text`: the same value as csv text;
- :func:`prepare_rows`: rows checked and converted one at a time (generators stay streaming),
  with Excel's limits (rows, columns, 32,767 characters a cell) as Chinese errors naming the row;
  a row whose cells ``to_cell`` has seen before (numbers, dates, texts it kept or made dates of) is
  converted with a few C-level calls (``_Known``) instead of a function call per cell (a 100k-row
  table is a million cells);
- column widths (CJK counted double, ``values.display_width``), the header-row heuristics used
  when appending, and :func:`excel_serial` (Excel's day number for a date).
"""
import datetime
import decimal
import json
import math
import operator

from .. import opc
from ..errors import FormatError, ToolError
from ..wire import json_text
from . import values

# (max rows, max columns) per sheet
LIMITS = {"xlsx": (1048576, 16384), "xlsm": (1048576, 16384), "xls": (65536, 256)}
CELL_TEXT_LIMIT = 32767
# Excel keeps 15 significant digits: a longer integer would be silently rounded, so it is stored as text.
MAX_EXACT_DIGITS = 15
WIDTH_SAMPLE_ROWS = 1000
WIDTH_MIN, WIDTH_MAX = 6, 60
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
TIME_FORMAT = "hh:mm:ss"
TEXT_FORMAT = "@"
MAX_WARN_EXAMPLES = 3
# The tool for text too long for a cell; the runtime names it only when it exists (FormatError.tool).
TEXT_TOOL = "write_text"


def parse_date_text(text):
    """A real date/datetime for date text (``2024-03-05``, ``2024/3/5``, ``2024-03-05 14:30``,
    ``2024-03-05T14:30:00``, ``2024年3月5日``), else None.

    The rules are the readers' (``values.parse_date``) (what the table tools read as a date is what the writer stores as one);
    only whole-cell, valid calendar dates from 1900 on (Excel's epoch) count: ``2024-02-30`` stays
    text rather than becoming some other day."""
    parsed = values.parse_date(text)
    if parsed is None or parsed.year < 1900:
        return None
    return parsed


def _json_cell(value):
    return json.dumps(value, ensure_ascii=False, default=str)


_INF = float("inf")
_EXACT_LIMIT = None     # set below, once MAX_EXACT_DIGITS is known


def to_cell(value, stats=None):
    """The value stored in an xlsx/xls cell for one JSON value.

    numbers stay numbers and bools stay bools; null is an empty cell; ISO date text becomes a real
    date; all other text stays text exactly as given (``"007"`` and ID-card numbers are never turned
    into numbers); integers longer than 15 digits are stored as text because Excel would round them;
    nested lists/objects become JSON text. ``stats`` (a dict) collects what was changed, for warnings.
    """
    cls = value.__class__
    if cls is str:                          # the common cases first, by exact class
        first = value[:1]
        if not (first.isdigit() or first.isspace()):
            return value                    # cannot be date text: dates start with a digit
    elif cls is float and value == value and value not in (_INF, -_INF):
        return value
    elif cls is int and -_EXACT_LIMIT < value < _EXACT_LIMIT:
        return value
    elif cls is datetime.date and value.year >= 1900:
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) >= 10 ** MAX_EXACT_DIGITS:
            note(stats, "long_int", str(value))
            return str(value)
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, str):
        text = value.strip()
        # cheap pre-check before the regex: dates start with a digit and are 8-26 characters long
        if 8 <= len(text) <= 26 and text[:1].isdigit():
            parsed = parse_date_text(text)
            if parsed is not None:
                return parsed
        return value
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None if value.is_nan() else str(value)
        if value == value.to_integral_value() and abs(value) >= 10 ** MAX_EXACT_DIGITS:
            note(stats, "long_int", str(value))
            return str(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.date, datetime.datetime)) and value.year < 1900:
        return value.isoformat()        # before Excel's calendar starts: only text can show it
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.replace(tzinfo=None) if getattr(value, "tzinfo", None) else value
    if isinstance(value, (list, tuple, dict)):
        return _json_cell(value)
    return str(value)


def csv_text(value):
    """csv cells are text exactly as given; numbers in their plain form, bools as Excel spells them."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple, dict)):
        return _json_cell(value)
    return str(value)


def note(stats, key, example):
    if stats is None:
        return
    entry = stats.setdefault(key, {"count": 0, "examples": []})
    entry["count"] += 1
    if len(entry["examples"]) < MAX_WARN_EXAMPLES:
        entry["examples"].append(example)


def is_digit_text(value):
    return isinstance(value, str) and value.isdigit() and value.isascii()



def column_widths(rows):
    """Sensible widths for the columns of ``rows`` (a sample): widest cell + 2, within 6..60."""
    widths = []
    for row in rows:
        for i, value in enumerate(row):
            w = values.display_width(value)
            if i >= len(widths):
                widths.append(0)
            if w > widths[i]:
                widths[i] = w
    return [min(WIDTH_MAX, max(WIDTH_MIN, w + 2)) for w in widths]


def looks_like_header(row):
    """First row is styled as a header only if it is all text (a row of numbers is data)."""
    texts = [v for v in row if v is not None and v != ""]
    return bool(texts) and all(isinstance(v, str) for v in texts)


def is_repeated_header(new_first, old_first):
    """True when the first row to append repeats the file's header row (merging monthly exports
    usually sends the header again). Only a header-like row counts, all text and no numbers or
    dates, so appending a data row that equals the first data row of a headerless file still works."""
    old = _norm_row(old_first)
    if not old or old != _norm_row(new_first):
        return False
    for cell in old:
        if not cell:
            continue
        try:
            float(cell.replace(",", ""))
            return False
        except ValueError:
            pass
        if parse_date_text(cell) is not None:
            return False
    return True


def _norm_row(row):
    cells = ["" if v is None else str(v).strip() for v in row]
    while cells and cells[-1] == "":
        cells.pop()
    return cells




def clean_xml_row(row, stats):
    """XML cannot hold most control characters; openpyxl would refuse the whole write. Drop them."""
    for j, v in enumerate(row):
        if isinstance(v, str) and opc.ILLEGAL_XML_RE.search(v):
            row[j] = opc.clean_xml_text(v)
            note(stats, "control_chars", row[j][:20])
    return row


_EPOCH = datetime.datetime(1899, 12, 30)


def excel_serial(value):
    """Excel's day number for a date/datetime/time (1900 system, including its fake 1900-02-29)."""
    if isinstance(value, datetime.time):
        return (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86400.0
    if not isinstance(value, datetime.datetime):
        value = datetime.datetime(value.year, value.month, value.day)
    delta = value - _EPOCH
    serial = delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400.0
    if serial < 61:             # before 1900-03-01 Excel counts one day less (no phantom leap day yet)
        serial -= 1
    return int(serial) if serial == int(serial) else serial



# ---------------------------------------------------------------------------------------------
# Rows before they are written

def _row_error(index, row):
    got = json_text(row)
    if len(got) > 60:
        got = got[:60] + "…"
    return ToolError("rows 的第 %d 项（rows[%d]）不是数组，收到的是 %s。rows 必须是二维数组，每一行写成 [...]，"
                        "例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]" % (index + 1, index, got))


def picker(indexes):
    """A C-level function: row -> its cells at ``indexes`` (a tuple, or a one-cell slice), or None
    for no indexes. The fast paths of the writers gather a row's cells by kind with these."""
    if not indexes:
        return None
    if len(indexes) == 1:                   # a one-index itemgetter returns the cell, not a tuple
        return operator.itemgetter(slice(indexes[0], indexes[0] + 1))
    return operator.itemgetter(*indexes)


class _Known(object):
    """``known(row)``: ``row`` as ``to_cell`` would convert it, found without calling ``to_cell``
    per cell (a new list), or None when it must take the per-cell path.

    Checked per row shape (the classes of its cells) with a few C-level calls: integers within
    15 digits (``min``/``max``), floats finite (their sum minus itself is 0.0: an inf or nan is
    not), dates from 1900 on (``min``); and texts met before (``learn``, from the rows that took
    the per-cell path): those ``to_cell`` kept and that fit a cell (a set), and date text with the
    date it became (a dict: csv sources hand the writer their dates as text, the same few hundred
    days again and again). ``to_cell`` of a text depends on the text alone and notes nothing in
    ``stats``, so a remembered answer is the answer. Any other class (datetime, Decimal, ...)
    means the per-cell path."""

    SHAPES = 2000           # row shapes kept
    TEXTS = 200000          # texts remembered, each kind (cleared when full: unique notes, IDs)

    def __init__(self):
        self.plans = {}
        self.kept = set()
        self.dates = {}

    def _plan(self, shape):
        by_class = {str: [], int: [], float: [], datetime.date: []}
        for c, cls in enumerate(shape):
            if cls in by_class:
                by_class[cls].append(c)
            elif cls is not type(None) and cls is not bool:
                return False
        return (by_class[str],) + tuple(picker(by_class[cls]) for cls in (str, int, float, datetime.date))

    def __call__(self, row):
        shape = tuple(map(type, row))
        plan = self.plans.get(shape)
        if plan is None:
            plan = self._plan(shape)
            if len(self.plans) < self.SHAPES:
                self.plans[shape] = plan
        if plan is False:
            return None
        text_columns, texts, ints, floats, dates = plan
        if ints is not None:
            got = ints(row)
            if not (-_EXACT_LIMIT < min(got) and max(got) < _EXACT_LIMIT):
                return None
        if floats is not None:
            total = sum(floats(row), 0.0)
            if total - total != 0.0:
                return None
        if dates is not None and min(dates(row)).year < 1900:
            return None
        out = list(row)
        if texts is not None:
            got = texts(row)
            kept = self.kept
            if not kept.issuperset(got):
                became = self.dates
                for c, value in zip(text_columns, got):
                    if value not in kept:
                        date = became.get(value)
                        if date is None:
                            return None
                        out[c] = date
        return out

    def learn(self, row, out):
        """Remember the texts of ``row`` with what ``to_cell`` made of them (``out``, already
        checked against the cell limit)."""
        kept, became = self.kept, self.dates
        if len(kept) > self.TEXTS:
            kept.clear()
        if len(became) > self.TEXTS:
            became.clear()
        for before, after in zip(row, out):
            if before.__class__ is str:
                if after is before:
                    kept.add(before)
                elif after.__class__ is datetime.date or after.__class__ is datetime.datetime:
                    became[before] = after


def prepare_rows(rows, fmt, stats):
    """Check and convert rows one at a time (works for generators): a bad row or a limit raises
    ToolError naming the row and column. xlsx/xls rows come out as cell values, csv rows as text."""
    max_rows, max_cols = LIMITS.get(fmt, (None, None))
    known = _Known()
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise ToolError("rows 必须是二维数组（每一行是一个数组），例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]")
    for i, row in enumerate(rows):
        if not isinstance(row, (list, tuple)):
            raise _row_error(i, row)
        if max_rows is not None and i >= max_rows:
            raise too_many_rows(fmt, i + 1, 1)
        if max_cols is not None and len(row) > max_cols:
            raise ToolError("第 %d 行有 %d 列，超过 %s 每个工作表最多 %d 列的限制。%s" % (
                i + 1, len(row), fmt, max_cols,
                "请改存为 .xlsx（最多 16384 列）" if fmt == "xls" else "请减少列数或拆成多个工作表"))
        if fmt == "csv":
            yield [csv_text(v) for v in row]
            continue
        out = known(row)
        if out is not None:
            yield out
            continue
        out = [to_cell(value, stats) for value in row]
        for j, cell in enumerate(out):
            if isinstance(cell, str) and len(cell) > CELL_TEXT_LIMIT:
                raise FormatError("第 %d 行第 %d 列（%s 列）的文字有 %d 个字符，超过 Excel 单元格最多 %d 个字符的限制。"
                                   "请把长文字拆到多个单元格" % (
                                       i + 1, j + 1, values.col_letter(j), len(cell), CELL_TEXT_LIMIT),
                                  tool=TEXT_TOOL)
        known.learn(row, out)
        yield out


def too_many_rows(fmt, count, start_row):
    max_rows = LIMITS[fmt][0]
    where = "" if start_row <= 1 else "从第 %d 行开始写，" % start_row
    hint = ("请改存为 .xlsx（最多 1,048,576 行）" if fmt == "xls"
            else "请拆成多个工作表或多个文件，或改存为 .csv")
    return ToolError("%s要写 %d 行，超过 %s 每个工作表最多 %s 行的限制。%s" % (
        where, count, fmt, "{:,}".format(max_rows), hint))


_EXACT_LIMIT = 10 ** MAX_EXACT_DIGITS
