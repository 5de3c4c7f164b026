"""Cleaning a table: the rows clean_table writes, streamed from a ``Table``, with a per-column
account of every change so the user can check what happened to their data.

Why these rules, and why so conservative: a cleaned copy is only useful if nothing in it is
*wrong*. Trimming and removing invisible characters never changes what a person reads; turning
text into numbers does, so it is limited to text that is unmistakably an amount (``1234``,
``-4.5``, ``1,234.50``, ``￥1,234``, full-width ``１２３``). Everything that merely parses is kept
as it was, and counted with its reason:

- identifiers: a leading zero (``007``, ``0012``), 12+ digits (ID cards, bank cards, order
  numbers), more than 15 significant digits (Excel would round them), and every digit text in a
  column whose name says it holds codes (``编号``, ``订单号``, ``电话``, ``ID``...);
- percents (``12.5%``) and accounting negatives (``(300.00)``, ``300-``): their meaning depends
  on the reader's convention, so they are the user's call (calc_table reads them anyway);
- units (``1.2万``) and exponents (``1E5`` is often a product code).

Dates are only touched in the columns the caller names: date text (``2024/3/5``,
``2024年3月5日``, ``20240305``) and Excel day numbers become real dates, which the writers show
as ``YYYY-MM-DD``; cells that are not dates stay as they are and are counted.

Merged blocks in the data are filled into every covered cell (``Table.data_rows`` does it; this
module counts the filled cells). Empty rows (also those empty only after cleaning) and, on
request, empty columns (no header and no data) are dropped; footnote rows (``注：…``) are
dropped; 合计/小计 rows are kept unless ``drop_totals``.

Missing from ``values.py`` and written here: the strict "amount text" pattern (``values.parse_number`` accepts much more, by design, for sums), the code-column
name rule and Excel-serial dates.

Pure: no file access, no runtime; ``deadline`` is any object with ``expired()``.
"""
import datetime
import re

from .values import CellShow, INVALID, INVISIBLE_TABLE, col_letter, display, is_identifier_text, \
    is_note_row, parse_date, to_decimal

PREVIEW_ROWS = 5
_DATE = datetime.date
EXAMPLE_CUT = 60
MAX_MERGE_CELLS = 2000000        # covered cells remembered for counting merged fills
CACHE_PER_COLUMN = 20000         # distinct texts per column whose cleaning is remembered

# ---------------------------------------------------------------------------------------------
# Invisible characters

# The table itself is values.INVISIBLE_TABLE, shared with the amount parser every tool uses.
_SHOW_RE = re.compile("[%s]" % "".join(re.escape(chr(c)) for c in sorted(INVISIBLE_TABLE)))


def visible(text):
    """Text with its invisible characters spelled out (``张三[U+200B]``), for examples."""
    if text.__class__ is not str:
        return text
    return _SHOW_RE.sub(lambda m: "[U+%04X]" % ord(m.group(0)), text)


# ---------------------------------------------------------------------------------------------
# Number text

_FULLWIDTH = {ord(a): b for a, b in zip("０１２３４５６７８９．，－＋−￥＄", "0123456789.,-+-¥$")}
_AMOUNT_RE = re.compile(r"""
    (?P<sign>[+-])?
    (?:¥|\$|€|£|RMB|CNY|USD|US\$|HK\$)?\s*
    (?P<sign2>[+-])?
    (?P<int>\d{1,3}(?:,\d{3})+|\d+)
    (?P<frac>\.\d+)?
    (?:\s*元)?
    \Z""", re.VERBOSE | re.ASCII)
# plain number text with at most 15 digits and no leading zero: converted without further checks
_SIMPLE_RE = re.compile(r"-?(?:0|[1-9]\d{0,10})(?:\.\d{1,4})?\Z", re.ASCII)
_HAS_DIGIT = re.compile(r"[0-9０-９]").search
# how number text can begin (a digit, a sign, a bracket, a currency): everything else is text
_MAYBE_NUMBER = re.compile(r"[\s0-9０-９+\-−－(（.．$¥￥€£＄RCUH]").match
# column names that say "codes, not amounts"; 序号/行号 are counts and stay convertible
_CODE_NAME_RE = re.compile(r"(?:编号|编码|代码|代号|号码|身份证|证件|电话|手机|传真|邮编|邮政|条码|条形码|卡号|账号|帐号"
                           r"|工号|学号|批号|批次|型号|货号|单号|凭证|流水|税号|银行账户)"
                           r"|号\Z|(?<![A-Za-z])(?:id|code|no|sku|tel|phone|zip|ean|upc)(?![A-Za-z])",
                           re.IGNORECASE)
_COUNT_NAMES = ("序号", "行号", "编号数", "号数")

REASONS = {"identifier": "编号（前导 0、12 位以上或超过 15 位有效数字）", "code_column": "编号列（按列名）",
           "percent": "百分数", "accounting": "会计负数（括号或尾部负号）", "unit": "带单位（万/千/亿）",
           "other": "其他写法（科学计数等）", "text_column": "按 text_columns 保持文本"}


def is_code_column(name):
    """A column whose name says it holds codes (``订单号``, ``手机``, ``客户ID``): digit text in it
    is never turned into numbers. ``序号``/``行号`` are counts, not codes."""
    if not isinstance(name, str):
        return False
    name = name.strip()
    if name in _COUNT_NAMES:
        return False
    return _CODE_NAME_RE.search(name) is not None


def amount_from_text(text):
    """(number, None) for text that is unmistakably an amount, else (None, reason) where reason
    is a key of ``REASONS`` for text that parses as a number but is kept, or None for text that
    is not a number at all. ``text`` is already trimmed."""
    if _SIMPLE_RE.match(text) is not None:          # "12", "-4.5", "1234.50": most number text
        if "." not in text:
            return int(text), None
        number = float(text)
        return (int(number) if number.is_integer() else number), None
    t = text.translate(_FULLWIDTH)
    m = _AMOUNT_RE.match(t)
    if m is not None:
        if m.group("sign") and m.group("sign2"):
            return None, None
        digits = m.group("int").replace(",", "")
        frac = m.group("frac") or ""
        if len(digits) > 1 and digits[0] == "0":
            return None, "identifier"
        if not frac and "," not in m.group("int") and is_identifier_text(digits):
            return None, "identifier"
        significant = (digits + frac[1:]).lstrip("0")
        if len(significant) > 15:
            return None, "identifier"
        negative = "-" in (m.group("sign") or "", m.group("sign2") or "")
        if frac:
            number = float(digits + frac)
            if number.is_integer():
                number = int(number)
        else:
            number = int(digits)
        return (-number if negative else number), None
    parsed = to_decimal(text)
    if parsed is None or parsed is INVALID:
        return None, None
    if "%" in t or "‰" in t or "％" in text:
        return None, "percent"
    if "(" in t or "（" in t or t.endswith("-"):
        return None, "accounting"
    if re.search("[万千亿]", t):
        return None, "unit"
    return None, "other"


# ---------------------------------------------------------------------------------------------
# Dates

_SERIAL_MIN, _SERIAL_MAX = 20000, 80000        # 1954-10-03 .. 2119-01-10: clearly a day number
_EPOCH = datetime.date(1899, 12, 30)


def date_from_cell(value):
    """A real date (or datetime when a time of day is present) for a cell of a date column, or
    None. Accepts date cells, date text (``2024/3/5``, ``2024年3月5日``, ``2024.3.5``,
    ``20240305``) and Excel day numbers (20000..80000, as left by a csv export)."""
    cls = value.__class__
    if cls is datetime.datetime:
        if value.hour == value.minute == value.second == value.microsecond == 0:
            return value.date()
        return value
    if cls is datetime.date:
        return value
    if cls is str:
        got = parse_date(value, compact=True)
        if got is not None:
            return date_from_cell(got)
        text = value.strip()
        if text.isdigit() and text.isascii() and len(text) == 5:
            value = int(text)
            cls = int
        else:
            return None
    if cls is int or cls is float:
        if cls is int and 19000101 <= value <= 20991231:
            got = parse_date(value, compact=True)
            if got is not None:
                return got
        if _SERIAL_MIN <= value <= _SERIAL_MAX and float(value).is_integer():
            return _EPOCH + datetime.timedelta(days=int(value))
    return None


# ---------------------------------------------------------------------------------------------
# The cleaning pass

class ColumnLog(object):
    """What happened to one column: counts per kind, reasons for text kept as text, and the first
    example of each kind. Text cells are counted per *plan* (the tuple of kinds one cleaning did,
    plus its reason) in ``hits``, one dict update a cell; ``final()`` spreads them over kinds."""

    __slots__ = ("column", "counts", "hits", "examples", "reasons", "changed")

    def __init__(self, column):
        self.column = column
        self.counts = {}
        self.hits = {}
        self.examples = {}
        self.reasons = {}
        self.changed = 0          # changed cells counted outside ``hits`` (see ``changed_cells``)

    def changed_cells(self):
        """Cells whose written value differs from the source cell: text cells whose plan changed
        them, plus the cells counted directly (date cells converted, merged fills, 合计 rows)."""
        return self.changed + sum(n for (names, _reason), n in self.hits.items()
                                  if n and any(k in CHANGE_KINDS for k in names))

    def add(self, kind, rownum, before, after):
        counts = self.counts
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in self.examples:
            self.examples[kind] = (rownum, before, after)

    def final(self):
        """(counts per kind, counts per reason) with the per-plan hits folded in."""
        counts = dict(self.counts)
        reasons = dict(self.reasons)
        for (names, reason), n in self.hits.items():
            if not n:
                continue
            for name in names:
                counts[name] = counts.get(name, 0) + n
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + n
        return {k: n for k, n in counts.items() if n}, {k: n for k, n in reasons.items() if n}

    def summary(self, show):
        """The column's entry in the answer (only kinds that happened)."""
        counts, reasons = self.final()
        c = self.column
        out = {"column": c.name, "letter": c.letter, "changed_cells": self.changed_cells()}
        for kind in KINDS:
            if counts.get(kind):
                out[kind] = counts[kind]
        if reasons:
            out["kept_text_reasons"] = {REASONS[k]: n for k, n in sorted(reasons.items(), key=lambda kv: -kv[1])}
        examples = []
        for kind in KINDS:
            if kind in self.examples and counts.get(kind):
                rownum, before, after = self.examples[kind]
                examples.append({"kind": KIND_NAMES[kind], "row": rownum,
                                 "before": show.cell(visible(before), EXAMPLE_CUT),
                                 "after": show.cell(after, EXAMPLE_CUT)})
        if examples:
            out["examples"] = examples
        return out


KINDS = ("invisible", "trimmed", "to_number", "to_date", "merged_filled", "kept_text", "not_date")
CHANGE_KINDS = frozenset(("invisible", "trimmed", "to_number", "to_date", "merged_filled"))   # the cell differs
KIND_NAMES = {"invisible": "去不可见字符", "trimmed": "去首尾空格", "to_number": "文本转数字", "to_date": "统一日期",
              "merged_filled": "合并单元格填充", "kept_text": "像数字但保持文本", "not_date": "日期列里不是日期"}


class Options(object):
    """The switches of a cleaning pass (the tool's parameters, already resolved to columns)."""

    def __init__(self, trim=True, to_number=True, remove_invisible=True, date_columns=(), text_columns=(),
                 number_columns=(), drop_empty_rows=True, drop_totals=False, text_output=False):
        self.trim = trim
        self.to_number = to_number
        self.remove_invisible = remove_invisible
        self.date_columns = set(c.index for c in date_columns)
        self.text_columns = set(c.index for c in text_columns)
        self.number_columns = set(c.index for c in number_columns)     # not codes, whatever the name says
        self.drop_empty_rows = drop_empty_rows
        self.drop_totals = drop_totals
        self.text_output = text_output     # csv target: a date is written as ``YYYY-MM-DD`` text again


class Cleaner(object):
    """One pass over ``table``: ``rows(keep)`` yields the header (when the table has one) and the
    cleaned data rows, restricted to the column indexes ``keep`` (None = all). Counts land in
    ``logs`` (one ColumnLog per column), ``rows_in``, ``rows_out``, ``empty_rows``, ``note_rows``,
    ``totals_rows``, ``totals_dropped``, ``wide_cells``; ``stopped_at`` is the row number where
    the deadline ended the pass (None when the table was read to the end).

    ``nonempty_columns()`` is the cheap first pass for ``drop_empty_cols``: which columns hold
    anything once cleaned."""

    def __init__(self, table, options, deadline=None):
        self.table = table
        self.opt = options
        self.deadline = deadline
        self.columns = list(table.columns)
        self.logs = [ColumnLog(c) for c in self.columns]
        self.header_log = ColumnLog(None)
        self.rows_in = 0
        self.rows_out = 0
        self.empty_rows = 0
        self.note_rows = 0
        self.totals_rows = 0
        self.totals_dropped = 0
        self.wide_cells = 0
        self.wide_rows = []
        self.stopped_at = None
        self._in_total = False
        self._names = None
        self._code_idx = set()
        self._cache = [{} for _ in table.columns]
        self.show = CellShow(100)
        self.preview = []
        self.preview_rows = []
        self.header_changed = []
        self.code_columns = [c.name for c in self.columns if is_code_column(c.name)
                             and c.index not in options.date_columns and c.index not in options.number_columns]
        self._covered = self._merge_cells()

    # -- pieces -----------------------------------------------------------------------------
    def _merge_cells(self):
        """{row: set(column indexes)} of the cells a merged block in the data fills (anchor excluded)."""
        covered, total = {}, 0
        start = self.table.data_start
        for (r1, c1, r2, c2) in self.table.merged_data:
            if r1 < start:
                continue          # its value sits in the header area; nothing is filled
            total += (r2 - r1 + 1) * (c2 - c1 + 1)
            if total > MAX_MERGE_CELLS:
                return covered
            for r in range(r1, r2 + 1):
                cols = covered.setdefault(r, set())
                cols.update(c for c in range(c1 - 1, c2) if not (r == r1 and c == c1 - 1))
        return covered

    def header(self):
        """The column names, cleaned of invisible characters (still unique)."""
        if self._names is not None:
            return self._names
        names, seen = [], set()
        for c in self.columns:
            name = c.name
            if self.opt.remove_invisible and not name.isprintable():
                cleaned = name.translate(INVISIBLE_TABLE).strip() or "列%s" % c.letter
                if cleaned != name:
                    self.header_changed.append({"column": visible(name), "now": cleaned})
                    name = cleaned
            base, n = name, 2
            while name in seen:
                name = "%s_%d" % (base, n)
                n += 1
            seen.add(name)
            names.append(name)
        self._names = names
        return names

    def _text_plan(self, value, index):
        """(cleaned value, ((kind, after), ...), reason, (kind names, reason)) for one text cell
        of column ``index``: a pure function of the text and the column, so it is memoised."""
        out, kinds, reason = self._plan(value, index)
        return out, kinds, reason, (tuple(k for k, _ in kinds), reason)

    def _plan(self, value, index):
        opt = self.opt
        kinds = []
        reason = None
        if opt.remove_invisible and not value.isprintable():
            text = value.translate(INVISIBLE_TABLE)
            if text != value:
                kinds.append(("invisible", text.strip() or None))
                value = text
                if not opt.trim and not value.strip():
                    return None, tuple(kinds), None
        if opt.trim:
            text = value.strip()
            if text != value:
                kinds.append(("trimmed", text or None))
                value = text
        if not value:
            return None, tuple(kinds), None
        if index in opt.date_columns:
            got = date_from_cell(value)
            if got is None:
                kinds.append(("not_date", value))
            else:
                # counted even when the text already reads ``2024-03-05``: it becomes a date cell,
                # which is a change a cell-by-cell comparison (and Excel's date filters) sees; in a
                # csv the date is that same text again, so there it is no change
                if not (opt.text_output and display(got) == value):
                    kinds.append(("to_date", got))
                value = got
            return value, tuple(kinds), None
        if opt.to_number and _MAYBE_NUMBER(value) is not None and _HAS_DIGIT(value) is not None:
            number, reason = amount_from_text(value.strip())
            if number is not None:
                if index in opt.text_columns:
                    reason = "text_column"
                elif index in self._code_idx:
                    reason = "code_column"
                else:
                    kinds.append(("to_number", number))
                    return number, tuple(kinds), None
            if reason is not None:
                kinds.append(("kept_text", value))
        return value, tuple(kinds), reason

    def _log_plan(self, index, rownum, value, plan):
        """Count one text cell's plan; the first time a plan is seen, its examples are kept."""
        hits = self.logs[index].hits
        key = plan[3]
        n = hits.get(key)
        if n is None:
            hits[key] = 1
            examples = self.logs[index].examples
            for kind, after in plan[1]:
                if kind not in examples:
                    examples[kind] = (rownum, value, after)
        else:
            hits[key] = n + 1

    def _log_total(self, index, rownum, value, plan):
        """A 合计 row's text cell: like ``_log_plan`` but its label is no "not a date"."""
        log = self.logs[index]
        for kind, after in plan[1]:
            if kind != "not_date":
                log.add(kind, rownum, value, after)
        if any(kind in CHANGE_KINDS for kind, _after in plan[1]):
            log.changed += 1
        if plan[2] is not None:
            log.reasons[plan[2]] = log.reasons.get(plan[2], 0) + 1

    def clean_cell(self, value, index, rownum):
        """The cleaned value of one cell; changes are logged on the column."""
        if value.__class__ is str:
            cache = self._cache[index]
            plan = cache.get(value)
            if plan is None:
                plan = self._text_plan(value, index)
                if len(cache) < CACHE_PER_COLUMN:
                    cache[value] = plan
            if plan[1]:
                if self._in_total:
                    self._log_total(index, rownum, value, plan)
                else:
                    self._log_plan(index, rownum, value, plan)
            return plan[0]
        if value is None or index not in self.opt.date_columns:
            return value
        got = date_from_cell(value)
        log = self.logs[index]
        if got is None:
            if not self._in_total:
                log.add("not_date", rownum, value, value)
        elif display(got) != display(value):       # a datetime at midnight is the same day
            log.add("to_date", rownum, value, got)
            log.changed += 1
        return got

    # -- passes -----------------------------------------------------------------------------
    def _source_rows(self):
        """(rownum, values, kind) for every row the table yields, kind in data/total/note; empty
        rows of the file (not yielded by the readers) come through as (rownum, [], "gap")."""
        table = self.table
        width = len(self.columns)
        deadline = self.deadline
        prev = table.data_start - 1
        seen = 0
        totals = table.totals_count
        for rownum, values in table.data_rows(include_totals=True, skip_notes=False):
            seen += 1
            if deadline is not None and not seen & 0x3FF and deadline.expired():
                self.stopped_at = rownum
                return
            if rownum > prev + 1:
                for gap in range(prev + 1, rownum):
                    yield gap, [], "gap"
            prev = rownum
            if table.totals_count != totals:       # data_rows ran the one totals rule on this row
                totals = table.totals_count
                yield rownum, values, "total"
            elif values.count(None) == len(values) - 1 and is_note_row(values, width):
                yield rownum, values, "note"            # (a row of one cell: the only kind that can be)
            else:
                yield rownum, values, "data"

    def nonempty_columns(self):
        """Indexes of the columns with any content once cleaned (same rows as ``rows()`` keeps)."""
        found = set()
        width = len(self.columns)
        strip_inv = self.opt.remove_invisible
        trim = self.opt.trim
        for _rownum, values, kind in self._source_rows():
            if kind == "note" or kind == "gap" or (kind == "total" and self.opt.drop_totals):
                continue
            for i, v in enumerate(values[:width]):
                if v is None or i in found:
                    continue
                if v.__class__ is str:
                    if strip_inv and not v.isprintable():
                        v = v.translate(INVISIBLE_TABLE)
                    if not (v.strip() if trim or not strip_inv else v):
                        continue                    # cleans to nothing (see _text_plan)
                found.add(i)
            if len(found) == width:
                break
        return found

    def rows(self, keep=None):
        """The header row (if the table has one), then the cleaned rows."""
        opt = self.opt
        width = len(self.columns)
        keep = list(range(width)) if keep is None else list(keep)
        self._code_idx = set(c.index for c in self.columns if c.name in self.code_columns)
        names = self.header()
        if self.table.header_rows:
            yield [names[i] for i in keep]
        clean = self.clean_cell
        covered = self._covered
        logs = self.logs
        keep_all = keep == list(range(width))
        caches = self._cache
        text_plan = self._text_plan
        date_cols = opt.date_columns
        for rownum, values, kind in self._source_rows():
            if kind == "gap":
                if opt.drop_empty_rows:
                    self.empty_rows += 1
                else:
                    self.rows_out += 1
                    yield [None] * len(keep)
                continue
            self.rows_in += 1
            if kind == "note":
                self.note_rows += 1
                continue
            if kind == "total":
                self.totals_rows += 1
                if opt.drop_totals:
                    self.totals_dropped += 1
                    continue
            self._in_total = kind == "total"
            n = len(values)
            if n > width and any(v is not None for v in values[width:]):
                self.wide_cells += sum(1 for v in values[width:] if v is not None)
                if len(self.wide_rows) < 5:
                    self.wide_rows.append(rownum)
            filled = covered.get(rownum) if covered else None
            out = values[:width] if n >= width else values + [None] * (width - n)
            if kind == "total":
                for i, v in enumerate(out):
                    if v is not None:
                        out[i] = clean(v, i, rownum)
                        if filled is not None and i in filled:
                            logs[i].add("merged_filled", rownum, None, v)
                            if not self._text_changed(v, i):
                                logs[i].changed += 1
            else:
                for i, v in enumerate(out):
                    if v.__class__ is str:
                        plan = caches[i].get(v)
                        if plan is None:
                            plan = text_plan(v, i)
                            if len(caches[i]) < CACHE_PER_COLUMN:
                                caches[i][v] = plan
                        out[i] = plan[0]
                        if plan[1]:
                            hits = logs[i].hits
                            n_hit = hits.get(plan[3])
                            if n_hit is None:
                                self._log_plan(i, rownum, v, plan)
                            else:
                                hits[plan[3]] = n_hit + 1
                    elif v is None:
                        continue
                    elif i in date_cols and v.__class__ is not _DATE:
                        out[i] = clean(v, i, rownum)     # a date cell is already what this makes
                    if filled is not None and i in filled:
                        logs[i].add("merged_filled", rownum, None, v)
                        if not self._text_changed(v, i):
                            logs[i].changed += 1
            if not keep_all:
                out = [out[i] for i in keep]
            if out.count(None) == len(out):
                if opt.drop_empty_rows:
                    self.empty_rows += 1
                    self._unlog(values, rownum, filled)
                    continue
            self.rows_out += 1
            if len(self.preview) < PREVIEW_ROWS:
                self.preview.append(self.show.row(out))
                self.preview_rows.append(rownum)
            yield out

    def _text_changed(self, value, index):
        """True when ``value`` is text whose cleaning plan changes it (already counted in hits)."""
        if value.__class__ is not str:
            return False
        plan = self._cache[index].get(value) or self._text_plan(value, index)
        return any(kind in CHANGE_KINDS for kind, _after in plan[1])

    def _unlog(self, values, rownum, filled):
        """A row that is empty once cleaned is dropped, not "changed": take back what its cells
        counted (the memoised plan of each text cell, and merged fills)."""
        for i, v in enumerate(values[:len(self.columns)]):
            if v is None:
                continue
            log = self.logs[i]
            if filled is not None and i in filled:
                log.counts["merged_filled"] -= 1
                if not self._text_changed(v, i):
                    log.changed -= 1
            if v.__class__ is str:
                plan = self._cache[i].get(v) or self._text_plan(v, i)
                if plan[1] and log.hits.get(plan[3]):
                    log.hits[plan[3]] -= 1
                for kind, _after in plan[1]:
                    if log.examples.get(kind, (None,))[0] == rownum:
                        del log.examples[kind]

    # -- the account -------------------------------------------------------------------------
    def changes(self, keep=None):
        """Per-column summaries (only columns where something happened), in column order."""
        keep = set(range(len(self.columns)) if keep is None else keep)
        out = []
        for log in self.logs:
            if log.column.index in keep and log.final()[0]:
                out.append(log.summary(self.show))
        return out

    def guarded_columns(self):
        """Names of the columns where the code-column rule actually kept number text as text."""
        return [log.column.name for log in self.logs if log.final()[1].get("code_column")]

    def reasons(self):
        """Why text that looks like a number was kept, over all columns: {reason key: count}."""
        out = {}
        for log in self.logs:
            for k, n in log.final()[1].items():
                out[k] = out.get(k, 0) + n
        return out

    def totals(self):
        """Counts over all columns, per kind, and ``changed_cells`` (cells that differ)."""
        total = dict((k, 0) for k in KINDS)
        total["changed_cells"] = 0
        for log in self.logs:
            for k, n in log.final()[0].items():
                total[k] += n
            total["changed_cells"] += log.changed_cells()
        return total


def empty_header(column):
    """True when the header cell of ``column`` was blank (the header layer named it ``列C``)."""
    return column.name == "列%s" % col_letter(column.index)


__all__ = ["Cleaner", "Options", "amount_from_text", "date_from_cell", "is_code_column", "empty_header",
           "visible", "INVISIBLE_TABLE", "REASONS", "KIND_NAMES"]
