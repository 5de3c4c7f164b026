"""Aggregation: date buckets for grouping, the metric accumulators and the order of groups.

Sums are exact decimals (each float enters through its shortest repr, so 0.1 + 0.2 is 0.3 and a
total matches Excel's SUM); cells a metric cannot use are counted with examples (``SkipLog``),
never read as 0. calc_table uses these today, pivot_table and the other table tools next.
"""
from decimal import ROUND_HALF_UP

from ..collate import value_key
from ..errors import ToolError
from .values import (_PLAIN_RE, Decimal, INVALID, _clean_float, as_datetime, decimal_out, display, display_text,
                     key_value, parse_date, shorten, to_decimal)

# =============================================================================================
# Date buckets
#--------------------------------------------------------------------------

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
    raise ToolError("date_bucket 只能是 %s，收到的是 %r" % (" / ".join(BUCKETS), bucket))


def check_bucket(bucket, where="date_bucket"):
    """Normalise a bucket name (accepts a few Chinese words too) or raise a Chinese ToolError."""
    aliases = {"年": "year", "季": "quarter", "季度": "quarter", "月": "month", "周": "week", "星期": "week",
               "日": "day", "天": "day", "yearly": "year", "monthly": "month", "weekly": "week", "daily": "day"}
    key = str(bucket).strip().lower()
    key = aliases.get(key, key)
    if key not in BUCKETS:
        raise ToolError("%s 只能取 year / quarter / month / week / day（年/季度/月/ISO 周/日），收到的是 %r" % (
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

    def merge(self, other, shift=0):
        """Add the bad cells ``other`` (the same bucket over later rows, numbered from ``shift``)
        met, as if this bucketer had read those rows itself (``split_pass``)."""
        self.bad += other.bad
        self.bad_examples = (self.bad_examples + shifted_examples(other.bad_examples, shift))[:3]


def shifted_examples(examples, shift):
    """Copies of ``{"row", "value"}`` examples with ``shift`` added to their row numbers."""
    return [dict(e, row=e["row"] + shift) for e in examples]


# =============================================================================================
# Aggregation

_PLAIN_NUMBER = _PLAIN_RE.fullmatch

FUNCS = ("sum", "avg", "max", "min", "count", "count_rows", "distinct_count")
_FUNC_ALIASES = {"mean": "avg", "average": "avg", "total": "sum", "求和": "sum", "合计": "sum", "平均": "avg",
                 "平均值": "avg", "最大": "max", "最大值": "max", "最小": "min", "最小值": "min", "计数": "count",
                 "count_distinct": "distinct_count", "nunique": "distinct_count", "distinct": "distinct_count",
                 "去重计数": "distinct_count", "countd": "distinct_count", "行数": "count_rows", "count_all": "count_rows",
                 "rows": "count_rows", "countrows": "count_rows"}


def check_func(func, where="func"):
    key = str(func or "").strip().lower()
    key = _FUNC_ALIASES.get(key, key)
    if key not in FUNCS:
        raise ToolError("%s 不支持 %r。可用：sum 求和 / avg 平均 / max 最大 / min 最小 / count 计数（sum/avg 用到的"
                        "数值个数，- / 无 等占位符不算；文字列数非空单元格）/ count_rows 行数（不管该列写了什么）/ "
                        "distinct_count 去重计数" % (where, func))
    return key


class SkipLog(object):
    """Cells a metric could not use (text in a number column...): a count and 3 examples.

    ``numeric`` is set by ``count`` accumulators when the column holds at least one number: then
    every group's count is the number of values sum/avg use, not of filled cells (one rule for the
    whole metric, so count × avg = sum in every group)."""

    __slots__ = ("count", "examples", "numeric")

    def __init__(self):
        self.count = 0
        self.examples = []
        self.numeric = False

    def note(self, row_number, value):
        self.count += 1
        if len(self.examples) < 3:
            self.examples.append({"row": row_number, "value": shorten(display_text(value), 60)[0]})

    def merge(self, other, shift=0):
        """Fold in the log of the same metric over later rows (numbered from ``shift``)."""
        self.count += other.count
        self.examples = (self.examples + shifted_examples(other.examples, shift))[:3]
        self.numeric = self.numeric or other.numeric


def exact_cents(value):
    """``k`` when the float ``value`` stands for exactly ``k`` cents, else None: amounts (at most
    two decimals) summed as an int of cents are exact and several times cheaper than a Decimal per
    cell. Why it is the same number: when ``k / 100 == value`` for the integer ``k`` nearest
    ``value * 100`` and ``|value| < 1e13`` (float spacing there is below 0.01), ``k/100`` is the
    only number of at most two decimals that rounds to ``value``, so it is ``repr(value)``:
    ``Decimal(repr(value)) == Decimal(k) / 100``."""
    if -1e13 < value < 1e13:
        k = round(value * 100)
        if k / 100 == value:
            return k
    return None


def plain_decimal(text):
    """Decimal of plain number text (``"123.45"``, csv amounts) or None: ``to_decimal``'s own first
    step, without its call layers."""
    return Decimal(text) if _PLAIN_NUMBER(text) is not None else None


class SumAgg(object):
    """An exact sum; two-decimal floats are added as whole cents (``exact_cents``), ``total``
    folds them in."""

    __slots__ = ("_total", "cents", "n", "skip")

    def __init__(self, skip):
        self._total = Decimal(0)
        self.cents = 0
        self.n = 0
        self.skip = skip

    @property
    def total(self):
        if self.cents:
            self._total += Decimal(self.cents).scaleb(-2)
            self.cents = 0
        return self._total

    @total.setter
    def total(self, value):
        self._total = value
        self.cents = 0

    def add(self, value, row_number):
        # fast paths first: most cells are already int/float
        cls = value.__class__
        if cls is float:
            k = exact_cents(value)
            if k is not None:
                self.cents += k
                self.n += 1
                return
            if value == value and value not in (float("inf"), float("-inf")):
                self._total += Decimal(repr(value))
                self.n += 1
                return
        elif cls is int:
            self._total += value
            self.n += 1
            return
        elif cls is str and _PLAIN_NUMBER(value) is not None:    # "123.45" (csv): see plain_decimal
            self._total += Decimal(value)
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
        self._total += number
        self.n += 1

    def result(self):
        return decimal_out(self.total)

    def merge(self, other, shift=0):
        """Add the sum of the same group over later rows: exact (Decimal and whole cents)."""
        self._total += other._total
        self.cents += other.cents
        self.n += other.n


AVG_MIN_PLACES = 2      # an average is shown like money at least: 1234.57, not 1234.5666666667
AVG_MAX_PLACES = 6


def same_places(accs):
    """Give every average of one metric the column's precision (the most decimals any group saw),
    so groups of one column are shown alike."""
    places = max([a.places for a in accs if isinstance(a, AvgAgg)] or [0])
    for acc in accs:
        if isinstance(acc, AvgAgg):
            acc.places = places


def _places(value):
    """Decimal places a cell shows (``12.5`` -> 1, ``"0.1234"`` -> 4; ints 0)."""
    if value.__class__ is float:
        text = repr(value)
        if "e" in text or "E" in text:
            exp = Decimal(text).as_tuple().exponent
            return -exp if isinstance(exp, int) and exp < 0 else 0
        dot = text.find(".")
        return 0 if dot < 0 or text.endswith(".0") else len(text) - dot - 1
    number = to_decimal(value)
    if number is None or number is INVALID:
        return 0
    exp = number.as_tuple().exponent
    return -exp if isinstance(exp, int) and exp < 0 else 0


class AvgAgg(SumAgg):
    """An average, rounded for display to the column's own precision (at least 2, at most 6
    decimals: what a person writes down); ``exact()`` keeps the unrounded value for whoever needs
    it (issue 35: ``1234.5666666667`` came back)."""

    __slots__ = ("places",)

    def __init__(self, skip):
        SumAgg.__init__(self, skip)
        self.places = 0

    def add(self, value, row_number):
        n = self.n
        SumAgg.add(self, value, row_number)
        if self.n != n and value.__class__ is not int and self.places < AVG_MAX_PLACES:
            self.places = max(self.places, min(_places(value), AVG_MAX_PLACES))

    def merge(self, other, shift=0):
        SumAgg.merge(self, other, shift)
        self.places = max(self.places, other.places)

    def exact(self):
        if not self.n:
            return None
        return _clean_float(float("%.12g" % float(self.total / self.n)))

    def result(self):
        if not self.n:
            return None
        step = Decimal(1).scaleb(-max(AVG_MIN_PLACES, self.places))
        return _clean_float(float((self.total / self.n).quantize(step, rounding=ROUND_HALF_UP)))

    def rounded(self):
        """True when ``result()`` differs from ``exact()``."""
        return self.n and self.result() != self.exact()


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

    def merge(self, other, shift=0):
        """The later rows' extreme wins only when strictly beyond ours, as in ``add``."""
        if other.best is not None and (self.best is None or (other.best - self.best) * self.sign > 0):
            self.best = other.best
        if other.date_key is not None and (self.date_key is None or (
                (other.date_key > self.date_key) - (other.date_key < self.date_key)) * self.sign > 0):
            self.date_key, self.best_date = other.date_key, other.best_date
        self.date_rows = (self.date_rows + [(r + shift, v) for r, v in other.date_rows])[:3]

    def result(self):
        if self.best is not None:
            return decimal_out(self.best)
        if self.best_date is not None:
            return display(self.best_date)
        return None


class CountAgg(object):
    """count: the values sum/avg use (numbers and money text; ``-``, ``—``, ``/``, ``无``, ``N/A``
    and blank-looking cells are empty, text is not a number). A column with no number at all (names,
    dates) counts its filled cells instead, placeholders still empty. ``n`` numbers, ``filled``
    filled cells; which one ``result`` gives is the metric's (``skip.numeric``), see ``count_meaning``."""

    __slots__ = ("n", "filled", "skip")

    def __init__(self, skip=None):
        self.n = 0
        self.filled = 0
        self.skip = skip if skip is not None else SkipLog()

    def add(self, value, row_number):
        cls = value.__class__
        if cls is int or cls is float:
            if value == value:
                self.n += 1
                self.filled += 1
                self.skip.numeric = True
            return
        if value is None or cls is bool:
            if cls is bool:
                self.filled += 1
            return
        if cls is str:
            number = to_decimal(value)
            if number is None:               # blank or a placeholder: an empty value
                return
            self.filled += 1
            if number is not INVALID:
                self.n += 1
                self.skip.numeric = True
            return
        self.filled += 1                     # dates, times

    def merge(self, other, shift=0):
        self.n += other.n
        self.filled += other.filled

    def result(self):
        return self.n if self.skip.numeric else self.filled


class RowCount(object):
    """count_rows (and count with no column): every row, whatever the column holds."""
    __slots__ = ("n",)

    def __init__(self, skip=None):
        self.n = 0

    def add(self, value, row_number):
        self.n += 1

    def merge(self, other, shift=0):
        self.n += other.n

    def result(self):
        return self.n


def count_meaning(func, skip, column_given=True):
    """What a count metric counted, in the words the answer gives (None for other functions)."""
    if func == "count_rows" or (func == "count" and not column_given):
        return "行数：每一行都算，不管该列写了什么"
    if func != "count":
        return None
    if skip is not None and skip.numeric:
        return "数值个数：sum/avg 用到的值（- / — / 无 / N/A 等占位符和空白不算，文字不算）"
    return "非空单元格数：该列没有数字，数的是填了内容的单元格（- / 无 等占位符和空白不算）"


class DistinctAgg(object):
    __slots__ = ("seen",)

    def __init__(self, skip=None):
        self.seen = set()

    def add(self, value, row_number):
        key = key_value(value)
        if key is not None:
            self.seen.add(key)

    def merge(self, other, shift=0):
        self.seen |= other.seen

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
        return CountAgg(skip)
    if func == "count_rows":
        return RowCount()
    return DistinctAgg()


# =============================================================================================
# Sorting and misc helpers for tools

def sort_key(value, mode="pinyin"):
    """Orders mixed group keys: numbers, then text (pinyin, digits by value: ``xlakit.collate``),
    then booleans; None last. ``mode`` "codepoint" orders text by code point instead."""
    return value_key(value, mode)
