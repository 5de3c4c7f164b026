"""Two tables joined on a key: ``merge`` (VLOOKUP: the right table's columns brought onto each left
row) and ``reconcile`` (对账: per key, is it on both sides, and do the amounts agree).

Why here and not in the tool: the same join must give the same answer in a user's own script
(``from xlakit.tables.lookup import ...``) and in the tool, and it must be testable on in-memory
books. Keys go through ``keys.KeyMaker`` (trimmed, invisible characters gone, full-width =
half-width, ``1001`` = ``1001.0`` = ``"1001"``, IDs as text). Amounts are exact (``Decimal``), and
"equal" allows a small tolerance (default 0.005) for the float noise of exported numbers.

The right table is held as an index (key -> first row, only the columns needed); the left table
is streamed, so the left side can be as long as the source allows.
"""
import decimal

from .derive import PREVIEW_ROWS, TEXT_SOURCES, OutValues, out_value
from .aggregate import exact_cents, plain_decimal
from .keys import KeyMaker, strip_zeros
from .values import CellShow, INVALID, decimal_out, display, to_decimal

Decimal = decimal.Decimal
DEFAULT_TOLERANCE = Decimal("0.005")
EXAMPLES = 10                 # keys listed per kind in the answer
ROWS_PER_KEY = 5              # row numbers remembered per duplicate key
CHECK_EVERY = 0x3FF           # rows between deadline checks

S_SAME, S_DIFF, S_NOVALUE, S_LEFT, S_RIGHT, S_BOTH = "一致", "不一致", "缺少金额", "仅左表", "仅右表", "两表都有"
STATUS_ORDER = (S_DIFF, S_NOVALUE, S_LEFT, S_RIGHT, S_SAME, S_BOTH)


class Stopped(Exception):
    """The time budget ended while the right table was being indexed (no partial join is right)."""

    def __init__(self, rownum):
        Exception.__init__(self, rownum)
        self.rownum = rownum


def _text_source(table):
    return getattr(table.book, "kind", None) in TEXT_SOURCES


def _expired(deadline, reserve):
    if deadline is None:
        return False
    if reserve:
        return deadline.remaining() < reserve
    return deadline.expired()


class RightIndex(object):
    """Key -> (row number, kept cells) of the first row with that key; duplicates counted with
    their row numbers; keys in first-seen order (dict order). ``used`` collects matched keys."""

    def __init__(self, table, key_index, keep, keymaker, deadline=None, include_totals=False):
        self.table = table
        self.key_index = key_index
        self.keep = list(keep)
        self.rows = {}
        self.dups = {}            # key -> [row numbers] (first ROWS_PER_KEY), only keys seen twice+
        self.dup_counts = {}      # key -> count of rows
        self.shown = {}           # key -> the first cell as written (for the answer)
        self.empty_keys = 0
        self.scanned = 0
        self.used = set()
        text_source = _text_source(table)
        key_of = keymaker.key
        rows = self.rows
        keep_idx = self.keep
        for rownum, values in table.data_rows(include_totals=include_totals):
            self.scanned += 1
            if not self.scanned & CHECK_EVERY and _expired(deadline, 0):
                raise Stopped(rownum)
            n = len(values)
            raw = values[key_index] if key_index < n else None
            key = key_of(raw)
            if key is None:
                self.empty_keys += 1
                continue
            if key in rows:
                count = self.dup_counts.get(key)
                if count is None:
                    self.dups[key] = [rows[key][0], rownum]
                    self.dup_counts[key] = 2
                else:
                    self.dup_counts[key] = count + 1
                    if len(self.dups[key]) < ROWS_PER_KEY:
                        self.dups[key].append(rownum)
                continue
            rows[key] = (rownum, [out_value(values[i], text_source) if i < n else None for i in keep_idx])
            self.shown[key] = raw

    def duplicates(self, limit=EXAMPLES):
        """[{key, rows (first few Excel row numbers), count, used_row}] for keys on 2+ rows."""
        out = []
        for key, rownums in self.dups.items():
            if len(out) >= limit:
                break
            out.append({"key": display(self.shown.get(key)), "count": self.dup_counts[key], "rows": rownums,
                        "used_row": rownums[0]})
        return out

    def unused(self):
        return [k for k in self.rows if k not in self.used]


class Merged(object):
    """``rows()`` yields the header (left columns + brought columns) and one row per left data row,
    with the right table's cells when the key matched (empty cells otherwise)."""

    def __init__(self, left, left_key, index, bring_names, keymaker, deadline=None, include_totals=False):
        self.left = left
        self.left_key = left_key
        self.index = index
        self.keymaker = keymaker
        self.deadline = deadline
        self.include_totals = include_totals
        left_names = set(left.names)
        self.brought = []
        for name in bring_names:
            out = name
            if out in left_names or out in self.brought:
                out = "%s_右表" % name
                k = 2
                while out in left_names or out in self.brought:
                    out = "%s_右表%d" % (name, k)
                    k += 1
            self.brought.append(out)
        self.header = list(left.names) + self.brought
        self.rows_written = 0
        self.matched = 0
        self.unmatched = 0
        self.empty_keys = 0
        self.unmatched_examples = []     # [{key, row}]
        self.unmatched_keys = {}         # key -> first row (capped)
        self.stopped_at = None
        self.show = CellShow(100)
        self.preview = []
        self.preview_rows = []

    def rows(self):
        yield self.header
        width = len(self.left.columns)
        blank = [None] * len(self.brought)
        text_source = _text_source(self.left)
        convert = OutValues()
        key_of = self.keymaker.key
        lookup = self.index.rows
        used = self.index.used
        k = self.left_key
        deadline = self.deadline
        scanned = 0
        for rownum, values in self.left.data_rows(include_totals=self.include_totals):
            scanned += 1
            if not scanned & CHECK_EVERY and _expired(deadline, 0):
                self.stopped_at = rownum
                return
            n = len(values)
            raw = values[k] if k < n else None
            key = key_of(raw)
            hit = lookup.get(key) if key is not None else None
            if hit is not None:
                self.matched += 1
                used.add(key)
                extra = hit[1]
            else:
                extra = blank
                if key is None:
                    self.empty_keys += 1
                else:
                    self.unmatched += 1
                    if len(self.unmatched_keys) < 5000 and key not in self.unmatched_keys:
                        self.unmatched_keys[key] = rownum
                    if len(self.unmatched_examples) < EXAMPLES:
                        self.unmatched_examples.append({"key": display(raw), "row": rownum})
            if text_source:
                out = convert.row(values, width) + extra
            elif n >= width:
                out = values[:width] + extra      # one new list per row, not two
            else:
                out = list(values) + [None] * (width - n) + extra
            if len(self.preview) < PREVIEW_ROWS:
                self.preview.append(self.show.row(out))
                self.preview_rows.append(rownum)
            self.rows_written += 1
            yield out

    def near_misses(self, limit=5):
        """Unmatched left keys that would match if leading zeros were ignored (``007`` vs ``7``):
        the usual sign that one system stored the codes as numbers."""
        right = {}
        for key in self.index.rows:
            short = strip_zeros(key)
            if short not in right:
                right[short] = key
        out = []
        for key, rownum in self.unmatched_keys.items():
            other = right.get(strip_zeros(key))
            if other is not None and other != key:
                out.append({"left": key, "right": other, "row": rownum})
                if len(out) >= limit:
                    break
        return out


class _Side(object):
    """Per-key state of one table in a reconcile: rows, first cell as written, exact sum (two-decimal
    floats as whole ``cents`` while reading, folded into ``total`` by ``Reconciled._read``)."""
    __slots__ = ("rows", "count", "raw", "total", "cents", "has_value")

    def __init__(self, raw):
        self.rows = []
        self.count = 0
        self.raw = raw
        self.total = Decimal(0)
        self.cents = 0
        self.has_value = False


class Reconciled(object):
    """Reads both tables, sums ``value`` per key on each side (exactly), and gives one result row
    per key with a status. ``rows()`` yields the header and the rows, problems first
    (不一致, 缺少金额, 仅左表, 仅右表, then 一致 / 两表都有), each group in table order."""

    def __init__(self, left, left_key, left_value, right, right_key, right_value, keymaker,
                 tolerance=DEFAULT_TOLERANCE, deadline=None, reserve=0, include_totals=False):
        self.tolerance = Decimal(str(tolerance))
        self.with_values = left_value is not None
        self.key_name = left.columns[left_key].name
        self.value_names = (left.columns[left_value].name if self.with_values else None,
                            right.columns[right_value].name if self.with_values else None)
        self.skipped = {"left": [0, []], "right": [0, []]}
        self.empty_keys = {"left": 0, "right": 0}
        self.scanned = {"left": 0, "right": 0}
        self.stopped = None              # ("left"|"right", row number) when the deadline ended a pass
        self.left = self._read("left", left, left_key, left_value, keymaker, deadline, reserve, include_totals)
        if self.stopped is None:
            self.right = self._read("right", right, right_key, right_value, keymaker, deadline, reserve,
                                    include_totals)
        else:
            self.right = {}
        self._classify()

    def _read(self, side, table, key_index, value_index, keymaker, deadline, reserve, include_totals):
        out = {}
        key_of = keymaker.key
        text_source = _text_source(table)
        skipped = self.skipped[side]
        scanned = 0
        for rownum, values in table.data_rows(include_totals=include_totals):
            scanned += 1
            if not scanned & CHECK_EVERY and _expired(deadline, reserve):
                self.stopped = (side, rownum)
                scanned -= 1               # the row where time ran out was not looked at
                break
            n = len(values)
            raw = values[key_index] if key_index < n else None
            key = key_of(raw)
            if key is None:
                self.empty_keys[side] += 1
                continue
            entry = out.get(key)
            if entry is None:
                entry = out[key] = _Side(out_value(raw, text_source))
            entry.count += 1
            if len(entry.rows) < ROWS_PER_KEY:
                entry.rows.append(rownum)
            if value_index is not None:
                cell = values[value_index] if value_index < n else None
                cls = cell.__class__
                if cls is float:
                    k = exact_cents(cell)
                    if k is not None:
                        entry.cents += k
                        entry.has_value = True
                        continue
                number = plain_decimal(cell) if cls is str else None
                if number is None:
                    number = to_decimal(cell)
                if number is INVALID:
                    skipped[0] += 1
                    if len(skipped[1]) < 5:
                        skipped[1].append("第 %d 行「%s」" % (rownum, display(cell)))
                elif number is not None:
                    entry.total += number
                    entry.has_value = True
        self.scanned[side] = scanned
        for entry in out.values():
            if entry.cents:
                entry.total += Decimal(entry.cents).scaleb(-2)
                entry.cents = 0
        return out

    def _classify(self):
        tol = self.tolerance
        self.results = {s: [] for s in STATUS_ORDER}
        self.left_total = Decimal(0)
        self.right_total = Decimal(0)
        self.only_left_total = Decimal(0)
        self.only_right_total = Decimal(0)
        self.diff_total = Decimal(0)        # sum of (left - right) over 不一致 keys
        right = self.right
        for key, l in self.left.items():
            r = right.get(key)
            if l.has_value:
                self.left_total += l.total
            if r is None:
                self.results[S_LEFT].append(key)
                if l.has_value:
                    self.only_left_total += l.total
                continue
            if not self.with_values:
                self.results[S_BOTH].append(key)
            elif not (l.has_value and r.has_value):
                self.results[S_NOVALUE].append(key)
            else:
                diff = l.total - r.total
                if abs(diff) <= tol:
                    self.results[S_SAME].append(key)
                else:
                    self.results[S_DIFF].append(key)
                    self.diff_total += diff
        for key, r in right.items():
            if r.has_value:
                self.right_total += r.total
            if key not in self.left:
                self.results[S_RIGHT].append(key)
                if r.has_value:
                    self.only_right_total += r.total

    @property
    def counts(self):
        return {s: len(v) for s, v in self.results.items() if v or s in self._statuses()}

    def _statuses(self):
        if self.with_values:
            return (S_SAME, S_DIFF, S_LEFT, S_RIGHT)
        return (S_BOTH, S_LEFT, S_RIGHT)

    @property
    def header(self):
        head = [self.key_name, "状态"]
        if self.with_values:
            ln, rn = self.value_names
            head += ["%s（左表）" % ln, "%s（右表）" % rn, "差额（左-右）"]
        return head + ["左表条数", "右表条数", "左表行号", "右表行号"]

    def _row(self, key, status):
        l = self.left.get(key)
        r = self.right.get(key)
        row = [l.raw if l is not None else r.raw, status]
        if self.with_values:
            lv = l.total if l is not None and l.has_value else None
            rv = r.total if r is not None and r.has_value else None
            diff = (lv or 0) - (rv or 0) if (lv is not None or rv is not None) else None
            row += [decimal_out(lv), decimal_out(rv), decimal_out(Decimal(diff)) if diff is not None else None]
        row += [l.count if l else 0, r.count if r else 0, _rows_text(l), _rows_text(r)]
        return row

    def rows(self):
        yield self.header
        for status in STATUS_ORDER:
            for key in self.results[status]:
                yield self._row(key, status)

    def preview(self, n=PREVIEW_ROWS):
        show = CellShow(100)
        out = []
        it = self.rows()
        next(it)
        for row in it:
            if len(out) >= n:
                break
            out.append(show.row(row))
        return out

    def examples(self, status, limit=EXAMPLES):
        return [self._record(key, status) for key in self.results[status][:limit]]

    def _record(self, key, status):
        row = self._row(key, status)
        return {name: display(v) for name, v in zip(self.header, row) if v is not None}

    def amounts(self):
        """The money summary (JSON numbers, exact decimals rounded only on output)."""
        return {"left_total": decimal_out(self.left_total), "right_total": decimal_out(self.right_total),
                "total_difference": decimal_out(self.left_total - self.right_total),
                "mismatch_difference": decimal_out(self.diff_total),
                "only_left_total": decimal_out(self.only_left_total),
                "only_right_total": decimal_out(self.only_right_total)}


def _rows_text(side):
    if side is None:
        return None
    text = "、".join(str(r) for r in side.rows)
    if side.count > len(side.rows):
        text += "…"
    return text


def make_keymaker(case_sensitive=False):
    return KeyMaker(case_sensitive=case_sensitive)
