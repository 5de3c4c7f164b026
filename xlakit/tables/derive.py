"""Derived tables: the rows a table tool writes into a new file (filter_table today; pivot, lookup,
dedupe and clean next), streamed from a ``Table`` so a 1M-row ledger never sits in memory.

Cells keep their meaning on the way out: dates stay dates, numbers stay numbers, identifier text
(ID-card numbers, ``007``) stays text. A csv or HTML source has only text cells; there plain
number text (``1234.5``) becomes a number so the new workbook can be summed, while money text
(``￥1,234``) and identifiers are written exactly as they were.
"""
import difflib

from .values import CellShow, INVALID, display_text, is_identifier_text, key_value, number_kind, parse_number

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
        match = self.where.test
        seen = self.seen
        deadline = self.deadline
        text_source = self.text_source
        limit = self.limit
        for rownum, values in self.table.data_rows(include_totals=self.include_totals):
            self.scanned += 1
            if deadline is not None and not self.scanned & 0x3FF and deadline.expired():
                self.stopped_at = rownum
                return
            n = len(values)
            for idx, bag in seen.items():
                if len(bag) < DISTINCT_CAP and idx < n:
                    key = key_value(values[idx])
                    if key is not None:
                        bag.add(key)
            if not match(values):
                continue
            self.match_count += 1
            if limit is not None and self.written >= limit:
                continue
            out = [out_value(values[i], text_source) if i < n else None for i in indexes]
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
                close = difflib.get_close_matches(want, texts, n=5, cutoff=0.4)
                close += [t for t in texts if want and want in t and t not in close][:5 - len(close)]
                if close:
                    out.append({"column": name, "value": want, "closest": close[:5]})
        return out
