"""Duplicate rows of a table: which rows share a key (``report``) and the table with one row per
key (``remove``, keeping the first or the last), streamed so a 1M-row ledger never sits in memory.

Why the same keys as lookup_table (``keys.KeyMaker``): ``张三 `` and ``张三``, ``1001`` and
``"1001"``, a full-width ``１００１`` and a zero-width space pasted from a web page are one key to a
person, so they are one key in both tools; long ID numbers are compared as text, never through
floats. Row numbers are the ones Excel shows (1-based, title and header rows counted).

A row whose key cells are all empty is never a duplicate (a missing 身份证号 does not make two
people the same); such rows are kept and counted. With no key columns the whole row is the key.
"""
import time

from .derive import PREVIEW_ROWS, TEXT_SOURCES, OutValues
from .values import CellShow, display, display_text

ROWS_PER_GROUP = 20           # row numbers listed per group in the answer
RAW_KEYS = 1000               # groups whose variant spellings are kept (for the answer)
MAX_RAW = 200000              # first rows whose key is written differently from its canonical form
MAX_VARIANTS = 5              # spellings listed per group
CHECK_EVERY = 0x3FF
REPORT_ROWS = 100000          # rows of duplicate groups a report file holds (the first ones, in table order)
WRITE_RESERVE = 12.0          # seconds (at least) a report keeps for writing its rows


def _expired(deadline, reserve=0):
    if deadline is None:
        return False
    return deadline.remaining() < reserve if reserve else deadline.expired()


class Groups(object):
    """One pass over ``table``: every key's first (and last) row, and for keys on several rows
    their count and row numbers. ``stopped_at`` is the row where the deadline ended the pass."""

    def __init__(self, table, indexes, keymaker, deadline=None, reserve=0, include_totals=False, store_cap=0,
                 report_rows=REPORT_ROWS, last_cap=0):
        self.table = table
        # keep="last" keeps each key's latest row (and the empty-key rows) while they are at most
        # last_cap rows: the rows a keep-last file holds, so it needs no second pass either
        self.last_rows = {} if last_cap else None
        self.empty_rows = []
        self.last_cap = last_cap
        # report mode keeps the rows it reads (the first store_cap keyed rows, as the report writes
        # them) so it needs no second pass: when the table is longer, the kept prefix still holds
        # the report's rows unless the duplicates are sparse (ReportRows.from_store decides)
        self.store = {} if store_cap else None
        self.store_complete = True
        self.stored = 0
        self.report_rows = report_rows
        self.kept_in_groups = 0   # kept rows whose key is on 2+ rows: once report_rows, no second pass
        self.store_cap = store_cap
        self.indexes = list(indexes)
        self.keymaker = keymaker
        self.first = {}           # key -> first row number
        self.last = {}            # key -> last row number (only keys seen twice+)
        self.count = {}           # key -> rows (only keys seen twice+)
        self.rownums = {}         # key -> first ROWS_PER_GROUP row numbers (only keys seen twice+)
        self.raw = {}             # key -> key cells as written in its FIRST row, only when they differ from the key
        self.variants = {}        # key -> distinct ways its key cells were written (first RAW_KEYS groups)
        self.empty_keys = 0
        self.scanned = 0
        self.stopped_at = None
        self.last_row = None
        self._deadline = deadline
        self._reserve = reserve
        self._include_totals = include_totals

    def scan(self):
        """Read the table once (for keep="last" and for report)."""
        for _ in self.iter_new():
            pass

    def iter_new(self):
        """Read the table once, yielding ``(rownum, values)`` of the rows a keep-first ``remove``
        keeps (first occurrences and empty keys) while counting every group."""
        row_key = self.keymaker.row_key
        indexes = self.indexes
        first, count, rownums, last = self.first, self.count, self.rownums, self.last
        deadline, reserve = self._deadline, self._reserve
        width = len(self.table.columns)
        # rows are kept as the report writes them (a csv's texts converted, memoised: the repeated
        # texts are then one object each, which is most of the memory a kept csv row takes)
        convert = OutValues() if getattr(self.table.book, "kind", None) in TEXT_SOURCES else None
        started = time.monotonic()
        for rownum, values in self.table.data_rows(include_totals=self._include_totals):
            self.scanned += 1
            if not self.scanned & CHECK_EVERY:
                now = reserve
                if reserve:
                    if self.store is not None and self.kept_in_groups >= self.report_rows:
                        writing = self.report_rows
                    elif self.last_rows is not None:
                        writing = len(self.last_rows) + len(self.empty_rows)
                    else:
                        writing = None
                    if writing is not None:
                        # the kept rows are the file: no second pass, only the writing, which takes
                        # about as long per row as reading did here (a loaded machine is slow at both)
                        per_row = (time.monotonic() - started) / max(1, self.scanned)
                        now = min(reserve, max(WRITE_RESERVE, 2.0 * writing * per_row + 3.0))
                if _expired(deadline, now):
                    self.stopped_at = rownum
                    self.scanned -= 1          # the row where time ran out was not looked at
                    return
            self.last_row = rownum
            key = row_key(values, indexes)
            latest = self.last_rows
            if latest is not None:
                cells = convert.row(values, width) if convert is not None else (
                    values[:width] if len(values) >= width else list(values) + [None] * (width - len(values)))
                if key is None:
                    self.empty_rows.append((rownum, cells))
                else:
                    latest[key] = (rownum, cells)
                if len(latest) + len(self.empty_rows) > self.last_cap:
                    self.last_rows, self.empty_rows = None, []    # too many: Remover reads the table again
            if key is None:
                self.empty_keys += 1
                yield rownum, values
                continue
            store = self.store
            kept = False
            if store is not None:
                if self.stored < self.store_cap:
                    kept = True
                    self.stored += 1
                    cells = convert.row(values, width) if convert is not None else (
                        values[:width] if len(values) >= width else list(values) + [None] * (width - len(values)))
                    bucket = store.get(key)
                    if bucket is None:
                        store[key] = [(rownum, cells)]
                    else:
                        bucket.append((rownum, cells))
                else:
                    self.store_complete = False  # a prefix of the table is kept (see ReportRows.from_store)
            seen = first.get(key)
            if seen is None:
                first[key] = rownum
                written = self._written(values)
                if written != key and len(self.raw) < MAX_RAW:
                    self.raw[key] = written      # "C001 ": shown as the user typed it first
                yield rownum, values
                continue
            n = count.get(key)
            if store is not None:
                if n is None:
                    self.kept_in_groups += len(store.get(key, ()))    # the key's kept rows, this one too
                elif kept:
                    self.kept_in_groups += 1
            if n is None:
                count[key] = 2
                rownums[key] = [seen, rownum]
                if len(self.variants) < RAW_KEYS:
                    forms = [self.raw.get(key, key)]
                    written = self._written(values)
                    if written not in forms:
                        forms.append(written)
                    self.variants[key] = forms
            else:
                count[key] = n + 1
                if len(rownums[key]) < ROWS_PER_GROUP:
                    rownums[key].append(rownum)
                forms = self.variants.get(key)
                if forms is not None and len(forms) < MAX_VARIANTS:
                    written = self._written(values)
                    if written not in forms:
                        forms.append(written)
            last[key] = rownum

    def _written(self, values):
        """The key cells as text, the way they are written (a tuple shaped like the key)."""
        n = len(values)
        return tuple(display_text(values[i]) if i < n and values[i] is not None else None for i in self.indexes)

    def _named(self, parts):
        names = [self.table.columns[i].name for i in self.indexes]
        return dict(zip(names, parts))

    def listing(self, keep=None, offset=0, limit=None):
        """Groups in order of first appearance: [{key, count, rows, (variants), (kept_row)}]; the
        key is written as in the group's first row, ``variants`` lists the other ways the rows
        wrote it (``"C001 "``, ``"Ｃ００１"``) when there were any."""
        keys = sorted(self.count, key=self.first.__getitem__)
        stop = len(keys) if limit is None else offset + limit
        out = []
        for key in keys[offset:stop]:
            item = {"key": self._named(self.raw.get(key, key)),
                    "count": self.count[key], "rows": self.rownums[key]}
            forms = self.variants.get(key)
            if forms is not None and len(forms) > 1:
                item["variants"] = [self._named(f) for f in forms]
            if keep is not None:
                item["kept_row"] = self.first[key] if keep == "first" else self.last[key]
            out.append(item)
        return out

    @property
    def group_count(self):
        return len(self.count)

    @property
    def removable(self):
        """Rows a ``remove`` drops: every row of a group but one."""
        return sum(self.count.values()) - len(self.count)

    @property
    def rows_in_groups(self):
        return sum(self.count.values())

    def keep_rows(self, keep):
        """Row numbers kept by ``remove`` for groups (keep first or last); None = everything else."""
        if keep == "last":
            return self.last
        return {k: self.first[k] for k in self.count}


class Remover(object):
    """``rows()`` yields the header and the rows ``remove`` keeps, in table order.

    keep="first": one pass, writing while counting. keep="last": ``groups`` must come from a
    first pass over the same table (``Groups.scan()``), and ``table`` is a fresh copy of it: a row
    of a group is written only at its last occurrence."""

    def __init__(self, table, indexes, keymaker, keep="first", groups=None, deadline=None, include_totals=False):
        self.table = table
        self.indexes = list(indexes)
        self.keymaker = keymaker
        self.keep = keep
        self.groups = groups if groups is not None else Groups(table, indexes, keymaker, deadline,
                                                               include_totals=include_totals)
        self.deadline = deadline
        self.include_totals = include_totals
        self.written = 0
        self.scanned = 0
        self.stopped_at = None
        self.show = CellShow(100)
        self.preview = []
        self.preview_rows = []
        self.text_source = getattr(table.book, "kind", None) in TEXT_SOURCES
        self.header = list(table.names)
        self.convert = OutValues()

    def _out(self, values):
        width = len(self.header)
        if self.text_source:
            out = self.convert.row(values, width)
        else:
            out = values[:width] if len(values) >= width else list(values) + [None] * (width - len(values))
        return self._counted(out)

    def _counted(self, out):
        if len(self.preview) < PREVIEW_ROWS:
            self.preview.append(self.show.row(out))
        self.written += 1
        return out

    def _rows_kept(self):
        """keep="last" from the rows the first pass kept (``Groups(last_cap=...)``): each key's
        last row and the empty-key rows, in table order: what the second pass would write."""
        groups = self.groups
        kept = list(groups.last_rows.values()) + groups.empty_rows
        kept.sort(key=lambda item: item[0])
        for rownum, cells in kept:
            if len(self.preview_rows) < PREVIEW_ROWS:
                self.preview_rows.append(rownum)
            yield self._counted(cells)
        self.scanned = groups.scanned
        self.stopped_at = groups.stopped_at

    def rows(self):
        yield self.header
        if self.keep == "last":
            for row in self._rows_last():
                yield row
            return
        groups = self.groups
        for rownum, values in groups.iter_new():
            if len(self.preview_rows) < PREVIEW_ROWS:
                self.preview_rows.append(rownum)
            yield self._out(values)
        self.scanned = groups.scanned
        self.stopped_at = groups.stopped_at

    def _rows_last(self):
        if self.groups.last_rows is not None:
            for row in self._rows_kept():
                yield row
            return
        groups = self.groups
        row_key = self.keymaker.row_key
        indexes = self.indexes
        last = groups.last
        limit = groups.last_row if groups.stopped_at is not None else None
        deadline = self.deadline
        for rownum, values in self.table.data_rows(include_totals=self.include_totals):
            self.scanned += 1
            if limit is not None and rownum > limit:
                self.stopped_at = groups.stopped_at
                return
            if not self.scanned & CHECK_EVERY and _expired(deadline):
                self.stopped_at = rownum
                return
            key = row_key(values, indexes)
            if key is not None:
                at = last.get(key)
                if at is not None and at != rownum:
                    continue
            if len(self.preview_rows) < PREVIEW_ROWS:
                self.preview_rows.append(rownum)
            yield self._out(values)
        self.stopped_at = groups.stopped_at


class ReportRows(object):
    """The rows of every duplicate group, for the report file: ``重复组`` (group number, in order of
    first appearance), ``原行号``, then the table's columns; a second pass over a fresh table."""

    def __init__(self, table, indexes, keymaker, groups, deadline=None, include_totals=False, cap=REPORT_ROWS,
                 reserve=WRITE_RESERVE):
        self.table = table
        self.indexes = list(indexes)
        self.keymaker = keymaker
        self.groups = groups
        self.deadline = deadline
        self.include_totals = include_totals
        self.cap = cap
        self.reserve = reserve        # seconds kept for writing the collected rows
        self.header = ["重复组", "原行号"] + list(table.names)
        self.number = {}
        for i, key in enumerate(sorted(groups.count, key=lambda k: groups.first[k])):
            self.number[key] = i + 1
        self.written = 0
        self.capped = False
        self.stopped_at = None

    def from_store(self):
        """The same as ``collect()`` from the rows the first pass kept (``Groups(store_cap=...)``),
        or None when they are not enough: the kept rows are a prefix of the table, and the report
        holds the first ``cap`` rows of duplicate groups in table order, so a prefix with that many
        of them (or all of them) is enough."""
        number = self.number
        store = self.groups.store
        in_groups = self.groups.rows_in_groups
        if in_groups <= self.cap:
            # every row of every group goes into the report (the usual case): each key's kept
            # rows are already in table order, so they are the group as they are -- no list of
            # all rows to build and sort (issue 39: 0.1-0.2 s of a 100k-row report)
            out, have = {}, 0
            for key, g in number.items():
                rows = store.get(key)
                if rows is None:
                    return None
                have += len(rows)
                out[g] = rows
            if have < in_groups:
                return None            # the kept prefix ended inside a group: read again
            self.capped = False
            return out
        picked = []
        for key, rows in store.items():
            g = number.get(key)
            if g is not None:
                picked.extend((rownum, g, cells) for rownum, cells in rows)
        if len(picked) < min(self.cap, in_groups):
            return None
        picked.sort(key=lambda item: item[0])
        self.capped = in_groups > self.cap
        out = {}
        for rownum, g, cells in picked[:self.cap]:
            rows = out.get(g)
            if rows is None:
                rows = out[g] = []
            rows.append((rownum, cells))
        return out

    def collect(self):
        """{group number: [(rownum, values)]} read in one pass (capped at ``cap`` rows)."""
        number = self.number
        out = {}
        row_key = self.keymaker.row_key
        indexes = self.indexes
        limit = self.groups.last_row if self.groups.stopped_at is not None else None
        text_source = getattr(self.table.book, "kind", None) in TEXT_SOURCES
        convert = OutValues()
        width = len(self.table.columns)
        scanned = 0
        taken = 0
        if not number:
            return out
        for rownum, values in self.table.data_rows(include_totals=self.include_totals):
            scanned += 1
            if limit is not None and rownum > limit:
                break
            if not scanned & CHECK_EVERY and _expired(self.deadline, self.reserve):
                self.stopped_at = rownum
                break
            key = row_key(values, indexes)
            g = number.get(key) if key is not None else None
            if g is None:
                continue
            if taken >= self.cap:
                self.capped = True     # the groups themselves are complete (first pass)
                break
            if text_source:
                cells = convert.row(values, width)
            else:
                cells = values[:width] if len(values) >= width else list(values) + [None] * (width - len(values))
            out.setdefault(g, []).append((rownum, cells))
            taken += 1
        return out

    def rows(self, collected):
        yield self.header
        for g in sorted(collected):
            for rownum, values in collected[g]:
                self.written += 1
                yield [g, rownum] + values
