"""Derived tables: the rows a table tool writes into a new file (filter_table, lookup_table,
dedupe_table), streamed from a ``Table`` so a 1M-row ledger never sits in memory.

Cells keep their meaning on the way out: dates stay dates, numbers stay numbers, identifier text
(ID-card numbers, ``007``) stays text. A csv or HTML source has only text cells; there plain
number text (``1234.5``) becomes a number so the new workbook can be summed.

Money text (``￥2,903.88``, ``(300.00)``, ``1.2万``) is what sum/avg read as a number, so a derived
table that kept it as text would make Excel's SUM over the result miss those rows. ``NumberCells``
looks at the first rows of the output, picks the columns that are money or numbers (not codes:
``订单号``, ``007``), and writes their parsed values as number cells with the source column's own
number format when its cells have one (xlsx styles, ``Table.number_formats``), else ``#,##0.00``
(``0.00%`` for percentages); ``keep_text`` turns this off. The answer lists the columns (``converted_columns``).
"""
import itertools

from .values import (CellShow, INVALID, decimal_out, display_text, is_code_name, is_identifier_text, key_value,
                     number_kind, parse_number, to_decimal)

PREVIEW_ROWS = 5
DISTINCT_CAP = 5000          # distinct values remembered per condition column, for "did you mean"
TEXT_SOURCES = ("csv", "html")


def out_value(value, text_source):
    """A source cell as it goes into the new file (see the module docstring)."""
    if text_source and value.__class__ is str and not is_identifier_text(value) and \
            number_kind(value) == "plain_text":
        number = parse_number(value)
        if number is not None and number is not INVALID:
            return number
    return value


class OutValues(object):
    """``out_value`` for text sources (csv, html), memoised: the same texts (regions, names,
    codes) repeat down a column, and deciding "number or text" is the costly part."""

    def __init__(self, cap=200000):
        self.memo = {}
        self.cap = cap

    def __call__(self, value):
        if value.__class__ is not str:
            return value
        memo = self.memo
        hit = memo.get(value, memo)
        if hit is memo:
            hit = out_value(value, True)
            if len(memo) < self.cap:
                memo[value] = hit
        return hit

    def row(self, values, width):
        n = len(values)
        return [self(values[i]) if i < n else None for i in range(width)]


class Filtered(object):
    """``rows()`` yields the header and then the matching rows (at most ``limit``), while counting
    every match (``match_count``), the rows looked at and, per condition column, the distinct
    values seen (for suggestions when nothing matched). ``stopped_at`` is the row number where
    the deadline ended the pass (None when the whole table was read)."""

    def __init__(self, table, where, columns=None, limit=None, include_totals=False, deadline=None):
        self.table = table
        self.where = where
        self.columns = columns or list(table.columns)
        self.limit = limit
        self.include_totals = include_totals
        self.deadline = deadline
        self.match_count = 0
        self.written = 0
        self.scanned = 0
        self.stopped_at = None
        self.show = CellShow(100)
        self.preview = []
        self.preview_rows = []
        self.text_source = getattr(table.book, "kind", None) in TEXT_SOURCES
        self.seen = {}               # column index -> set of displayed values
        for idx, op, _operand, _name in where.conditions:
            if op in ("eq", "in", "contains", "starts_with", "ends_with"):
                self.seen.setdefault(idx, set())

    @property
    def header(self):
        return [c.name for c in self.columns]

    def rows(self):
        yield self.header
        indexes = [c.index for c in self.columns]
        whole = indexes == list(range(len(indexes)))     # every column, in order (the default)
        width = len(indexes)
        match = self.where.test
        seen = self.seen
        # raw cells already put in a bag (or found empty): key_value runs once per distinct cell
        looked = dict((idx, set()) for idx in seen)
        deadline = self.deadline
        convert = OutValues() if self.text_source else None
        limit = self.limit
        for rownum, values in self.table.data_rows(include_totals=self.include_totals):
            self.scanned += 1
            if deadline is not None and not self.scanned & 0x3FF and deadline.expired():
                self.stopped_at = rownum
                return
            n = len(values)
            for idx, bag in seen.items():
                if len(bag) < DISTINCT_CAP and idx < n:
                    raw = values[idx]
                    done = looked[idx]
                    if raw.__class__ is str and raw in done:
                        continue
                    key = key_value(raw)
                    if raw.__class__ is str and len(done) < DISTINCT_CAP * 4:
                        done.add(raw)
                    if key is not None:
                        bag.add(key)
            if not match(values):
                continue
            self.match_count += 1
            if limit is not None and self.written >= limit:
                continue
            if convert is not None:
                out = [convert(values[i]) if i < n else None for i in indexes]
            elif whole:
                out = values[:width] if n >= width else list(values) + [None] * (width - n)
            else:
                out = [values[i] if i < n else None for i in indexes]
            if len(self.preview) < PREVIEW_ROWS:
                self.preview.append(self.show.row(out))
                self.preview_rows.append(rownum)
            self.written += 1
            yield out

    def suggestions(self):
        """For each text condition that matched nothing: the closest values the column holds."""
        out = []
        for idx, op, operand, name in self.where.conditions:
            bag = self.seen.get(idx)
            if not bag:
                continue                 # only equality and text conditions keep values
            wanted = [o.raw for o in operand] if isinstance(operand, list) else [operand.raw]
            texts = sorted(set(display_text(v) for v in bag))
            for want in wanted:
                want = display_text(want)
                import difflib  # only for a value that is not there
                close = difflib.get_close_matches(want, texts, n=5, cutoff=0.4)
                close += [t for t in texts if want and want in t and t not in close][:5 - len(close)]
                if close:
                    out.append({"column": name, "value": want, "closest": close[:5]})
        return out


def row_notes(table, totals_note):
    """``table.row_warnings()`` for a tool that has no ``include_totals`` parameter: the totals line
    (which tells the model to pass include_totals=true) is replaced by ``totals_note``, a sentence
    with one ``%s`` for the row numbers, so no hint names a parameter the tool does not declare."""
    notes = table.row_warnings(False)
    summary = set(getattr(table, "summary_rows", None) or ())     # (their own line follows)
    count = table.totals_count - len(summary)
    if count > 0 and notes:
        listed = [r for r in table.totals_rows if r not in summary]
        notes[0] = totals_note % ("、".join(str(r) for r in listed[:8]) + ("等" if count > 8 else ""))
    return notes


SAMPLE_ROWS = 2000           # output rows looked at to decide which columns are money/number columns
MONEY_FORMAT = "#,##0.00"
PERCENT_FORMAT = "0.00%"


class NumberCells(object):
    """Writes money and number text of the number columns as number cells (module docstring).

    ``wrap(rows)`` takes the output stream (header first), reads up to ``SAMPLE_ROWS`` rows ahead
    to choose the columns, and gives the stream back with those cells converted. A column is
    converted when its name is not a code's (``is_code_name``), no cell is identifier text
    (``007``, 18-digit IDs), at least 90% of its filled cells (placeholders such as ``-`` are empty)
    are numbers or number text, and some of them are text. Placeholders and text that is not a
    number stay as written (Excel's SUM skips them, as sum/avg do). ``styles()`` is the writer's
    per-column number format; ``converted_columns()`` what the answer says."""

    def __init__(self, keep_text=False, source_formats=None):
        self.keep_text = bool(keep_text)
        self.source_formats = source_formats or {}     # header name -> the source's format code
        self.header = []
        self.columns = {}            # output column index -> {"format", "cells"}

    def wrap(self, rows):
        rows = iter(rows)
        header = next(rows, None)
        if header is None:
            return iter(())
        self.header = list(header)
        if self.keep_text:
            return itertools.chain([header], rows)
        ahead = list(itertools.islice(rows, SAMPLE_ROWS))
        self._choose(ahead)
        if not self.columns:
            return itertools.chain([header], ahead, rows)
        return itertools.chain([header], self._convert(itertools.chain(ahead, rows)))

    def _choose(self, sample):
        width = max([len(self.header)] + [len(r) for r in sample[:200]])
        for c in range(width):
            name = self.header[c] if c < len(self.header) else None
            if name is not None and is_code_name(name):
                continue
            filled = numeric = texts = pct = 0
            code = False
            for row in sample:
                value = row[c] if c < len(row) else None
                kind = number_kind(value)
                if kind == "empty":
                    continue
                if kind == "identifier":
                    code = True
                    break
                filled += 1
                if kind == "number":
                    numeric += 1
                elif kind in ("plain_text", "money_text"):
                    numeric += 1
                    texts += 1
                    if value.rstrip().endswith(("%", "％")):
                        pct += 1
            if code or not texts or numeric < 0.9 * filled:
                continue
            percent = pct == texts and pct == numeric
            fmt = PERCENT_FORMAT if percent else MONEY_FORMAT
            source = self.source_formats.get(name) if name is not None else None
            if source and ("%" in source) == percent:
                fmt = source              # the source's own money/number format, as it was shown
            self.columns[c] = {"format": fmt, "cells": 0}

    def _convert(self, rows):
        plan = sorted(self.columns.items())
        memo = {}
        for row in rows:
            n = len(row)
            changed = None
            for c, info in plan:
                if c >= n:
                    break
                value = row[c]
                if value.__class__ is not str:
                    continue
                number = memo.get(value, memo)
                if number is memo:
                    number = None
                    if not is_identifier_text(value):
                        parsed = to_decimal(value)
                        if parsed is not None and parsed is not INVALID:
                            number = decimal_out(parsed)
                    if len(memo) < 100000:
                        memo[value] = number
                if number is None:
                    continue
                if changed is None:
                    changed = list(row)
                changed[c] = number
                info["cells"] += 1
            yield changed if changed is not None else row

    def styles(self, base=None):
        """The writer's ``styles`` (bold header, frozen header, per-column formats), or ``base``
        unchanged when nothing is converted."""
        if not self.columns:
            return base
        out = dict(base or {})
        out.setdefault("bold_rows", [0])
        out.setdefault("freeze", [1, 0])
        out["column_formats"] = {c: info["format"] for c, info in self.columns.items()}
        return out

    def converted_columns(self):
        """[{"column", "cells", "number_format"}] for the answer (after the stream was written)."""
        out = []
        for c, info in sorted(self.columns.items()):
            name = self.header[c] if c < len(self.header) else None
            out.append({"column": display_text(name) if name is not None else "第 %d 列" % (c + 1),
                        "cells": info["cells"], "number_format": info["format"]})
        return out

    def note(self):
        """One Chinese line for the warnings, or None."""
        done = [x for x in self.converted_columns() if x["cells"]]
        if not done:
            return None
        return "「%s」里的金额/数字文字已写成数字单元格（共 %d 个，Excel 里可直接求和）；要保留原来的文字请传 keep_text=true" % (
            "」「".join(x["column"] for x in done), sum(x["cells"] for x in done))
