"""The table model: a book (sheets, streamed rows, merges) and ``Table``, one sheet with its
header found, named columns and ``data_rows()`` that streams the data with merged blocks filled
and 合计/小计 rows held back.

Books come from ``formats.open_book(path)`` (readers by content) or ``GridBook`` (in-memory
rows, same duck type) for tests and tools that already hold a grid.
"""
import itertools
from .. import progress
from ..errors import ToolError
from .formats._base import SheetInfo
from .header import HEADER_SCAN_ROWS, Column, HeaderInfo, _norm_name, _unique_names, detect_header
from .values import (TotalsDetector, col_letter, display_text, is_note_row, is_summary_label, is_summary_row,
                     letter_index, range_ref)

PROGRESS_ROWS = 1000         # a progress report every this many rows (small tables report nothing),
PROGRESS_ROWS_UNSIZED = 5000  # every this many when the reader cannot say how many rows come (csv)
MAX_LISTED_COLUMNS = 40     # column names listed in an "unknown column" error

# =============================================================================================
# In-memory book (same duck type as the format readers' books)



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
        raise ToolError("没有名为「%s」的工作表。现有工作表：%s" % (name, "、".join(s.name for s in self.sheets)))

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


def open_book(path_or_book, password=None):
    """A book from a path (through ``table_formats``, by content; ``password`` opens an encrypted
    workbook) or a ready book object."""
    if not isinstance(path_or_book, str):
        return path_or_book
    from . import formats as table_formats            # imported here so the pure helpers above work without it
    return table_formats.open_book(path_or_book, password=password)


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
                raise ToolError("第 %d 行是空行或超出了表格范围（工作表「%s」），不能当表头。可先用 probe_table 看表头在"
                                   "哪一行，或不传 header_row 让工具自动识别" % (header_row, self.sheet_name))
        else:
            for rownum, values in self._rows:
                sample.append((rownum, values))
                if len(sample) >= scan_rows:
                    break
        self.sample_end = sample[-1][0] if sample else 0     # the last row read so far (split_pass)
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
        self.summary_rows = []      # the footer's 平均/最高/占比 rows (also in totals_rows)
        self.note_rows = []
        self.rows_seen = 0
        self.open_footer = False
        self._by_name = {c.name: c for c in self.columns}
        self._by_norm = {}
        for c in self.columns:
            self._by_norm.setdefault(_norm_name(c.name), c)

    @classmethod
    def detached(cls, book, names, rows):
        """A table over ``rows`` (a part of a file) with the columns ``names`` already known from
        the whole file's header (``split_pass``'s worker): no header detection, no merges."""
        self = cls.__new__(cls)
        self.book, self.sheet_name, self.sheet_hidden = book, book.sheet().name, False
        self._rows, self._buffer, self.merges, self.merged_data = rows, [], [], []
        self.header, self.header_rows, self.header_row, self.header_reason, self.combined = None, (), None, "", False
        self.columns = [Column(i, col_letter(i), name) for i, name in enumerate(names)]
        self.data_start, self.sample_end = 1, 0
        self.totals_rows, self.totals_count, self.summary_rows, self.note_rows = [], 0, [], []
        self.rows_seen, self.open_footer = 0, False
        self._by_name = {c.name: c for c in self.columns}
        self._by_norm = {}
        for c in self.columns:
            self._by_norm.setdefault(_norm_name(c.name), c)
        return self

    @property
    def warnings(self):
        """The reader's warnings (some, like "formulas without cached values", appear only while
        rows are read, so ask after the pass)."""
        return list(getattr(self.book, "warnings", None) or [])

    def number_formats(self):
        """{column name: money/number format code} the first data rows of the source carry
        (xlsx cell styles; empty for formats without them): derived tables keep them."""
        reader = getattr(self.book, "number_formats", None)
        if reader is None:
            return {}
        try:
            by_index = reader(self.sheet_name, first_row=self.data_start)
        except (OSError, ValueError, KeyError):
            return {}
        return dict((self.columns[i].name, code) for i, code in by_index.items() if i < len(self.columns))

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
            raise ToolError("参数 %s 需要一个列名或列标（如 \"金额\" 或 \"C\"），收到的是 %r。%s" % (
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
        import difflib          # only for a column name that is not there
        close = difflib.get_close_matches(spec, self.names, n=3, cutoff=0.5)
        close += [n for n in self.names if _norm_name(spec) in _norm_name(n) and n not in close][:3]
        hint = "；你可能想找：%s" % "、".join(close[:4]) if close else ""
        raise ToolError("找不到列「%s」（参数 %s）%s。%s" % (spec, param, hint, self.columns_hint()),
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
        totals rows are recorded in ``totals_rows`` and not yielded unless ``include_totals``, and
        so are the footer block's summary rows (平均 / 最高 / 占比 by ``values.FooterRun``'s rule,
        also listed in ``summary_rows``; a run of them is held until a 合计, data or the end decides),
        lone footnote rows (``注：…``, ``制表人：…``) are recorded in ``note_rows`` and skipped.
        ``values`` may be shorter than the column count (missing cells are empty); the list may be
        modified by the caller only if it does not iterate again."""
        is_total = TotalsDetector()
        labels = is_total.cache           # text -> "is a totals label" (the detector's own memo)
        width = len(self.columns)
        pending = sorted(self.merged_data) if fill_merged else []
        ptr, active = 0, []
        rows = self._chain()
        total = None
        seen = self.rows_seen
        summaries = {}                    # text -> "is a summary label" (平均, 最高…)
        quiet = set()                     # first-three-cell values proven to decide nothing (see below)
        held, after_total = [], False
        for rownum, values in rows:
            seen += 1
            if not seen % PROGRESS_ROWS:
                self.rows_seen = seen
                if total is None:
                    total = self._row_total()
                if total or not seen % PROGRESS_ROWS_UNSIZED:
                    progress.report(rownum, total or None, "已读 %d 行" % rownum)
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
            # A row whose first three cells are all "quiet" values is plain data: each is a text
            # that is neither a totals nor a summary label, or a non-empty non-text (which both
            # rules pass over), so no 合计 rule, no summary rule and no footnote rule (it has
            # three filled cells) can apply: the checks below would all say "data". Three set
            # lookups instead of two loops over the first cells for most rows of a ledger.
            if len(values) > 2 and values[0] in quiet and values[1] in quiet and values[2] in quiet:
                after_total = False
                if held:
                    for item in held:
                        yield item
                    held = []
                yield rownum, values
                continue
            # The totals rule (TotalsDetector) with its memo consulted here first: a ledger row's
            # first cells are texts already seen, and the call per row was a good part of the
            # cost of this loop. Unknown texts and rows starting with three empty cells go
            # through the detector itself.
            for value in values[:3]:
                if value.__class__ is str:
                    hit = labels.get(value)
                    if hit is None:
                        hit = is_total(values)
                    if hit:
                        break
            else:
                hit = len(values) > 3 and values[0] is None and values[1] is None and values[2] is None \
                    and is_total(values)
            if hit:
                if held:
                    # 平均 / 最高 rows standing right above a 合计: footer, not data
                    for item in self._footer(held):
                        if include_totals:
                            yield item
                    held = []
                after_total = True
                self.totals_count += 1
                if len(self.totals_rows) < 1000:
                    self.totals_rows.append(rownum)
                if not include_totals:
                    continue
            elif skip_notes and values.count(None) == len(values) - 1 and is_note_row(values, width):
                self.note_rows.append(rownum)
                continue
            else:
                # the footer block's summary rows (FooterRun's rule, inline: this loop is hot)
                for value in values[:3]:
                    if value.__class__ is str:
                        summary = summaries.get(value)
                        if summary is None:
                            summary = is_summary_label(value)
                            if len(summaries) < 50000:
                                summaries[value] = summary
                        break
                else:
                    summary = values[:3].count(None) == 3 and is_summary_row(values)
                if summary:
                    if after_total:
                        for item in self._footer([(rownum, values)]):
                            if include_totals:
                                yield item
                    else:
                        held.append((rownum, values))     # footer if a 合计 or the end follows
                    continue
                after_total = False
                if held:
                    for item in held:                    # a summary-looking row amid data: data
                        yield item
                    held = []
                if len(quiet) < 50000:
                    for value in values[:3]:
                        if value is None:
                            continue
                        if value.__class__ is str:
                            if labels.get(value) is not False:
                                continue
                            summary = summaries.get(value)
                            if summary is None:
                                summary = summaries[value] = is_summary_label(value)
                            if summary:
                                continue
                        quiet.add(value)
            yield rownum, values
        # where the footer rule stood when the rows ran out: a pass over the first part of a file
        # (split_pass) is exact only when neither a 合计 nor held summary rows were pending here
        self.open_footer = bool(held) or after_total
        if held:
            for item in self._footer(held):             # summary rows ending the table: footer
                if include_totals:
                    yield item
        self.rows_seen = seen

    def _footer(self, items):
        """Record summary rows of the footer block (平均, 最高…) as held back with the totals."""
        for rownum, values in items:
            self.totals_count += 1
            if len(self.totals_rows) < 1000:
                self.totals_rows.append(rownum)
            if len(self.summary_rows) < 1000:
                self.summary_rows.append(rownum)
            yield rownum, values

    def _row_total(self):
        """The sheet's last row as the reader declares it (0 when it cannot say cheaply: csv)."""
        try:
            dims = self.book.dimensions(self.sheet_name)
            return int(dims[0]) if dims and dims[0] else 0
        except Exception:   # noqa: BLE001 - a total is a nicety; progress then counts without one
            return 0

    def project(self, indexes):
        """The caller of ``data_rows`` reads only the cells of columns ``indexes`` (0-based): a
        reader that can build just those (the xlsx fast parser) is told so. ``data_rows`` itself
        looks at the first three cells, so those are always kept; rows whose first three cells
        are not all filled come whole (the reader sees to it). Not with merged cells in the data
        (their filling reads the block's first cell, wherever it is)."""
        project = getattr(self.book, "project", None)
        if project is None or self.merged_data:
            return
        project(self.sheet_name, frozenset(i for i in indexes if i is not None and i >= 0) | {0, 1, 2})

    def _chain(self):
        """The rows read ahead for the header, then the rest (a C-level chain: no Python frame
        per row)."""
        buffer, self._buffer = self._buffer, []
        return itertools.chain(buffer, self._rows)

    def row_warnings(self, include_totals=False):
        """Chinese notes about held-back totals rows, footnotes and filled merges (after a pass)."""
        out = []
        summary = set(self.summary_rows)
        count = self.totals_count - len(summary)
        if count > 0:
            listed = [r for r in self.totals_rows if r not in summary]
            rows = "、".join(str(r) for r in listed[:8]) + ("等" if count > 8 else "")
            if include_totals:
                out.append("第 %s 行是合计/小计行，按 include_totals=true 也计入了统计（注意可能重复计算）" % rows)
            else:
                out.append("第 %s 行是合计/小计行，已排除（避免重复计算）；如需计入请传 include_totals=true" % rows)
        if summary:
            rows = "、".join(str(r) for r in self.summary_rows[:8]) + ("等" if len(summary) > 8 else "")
            if include_totals:
                out.append("第 %s 行是表尾的平均/最高/占比等汇总行，按 include_totals=true 也计入了统计" % rows)
            else:
                out.append("第 %s 行是表尾的平均/最高/占比等汇总行（不是数据），已排除" % rows)
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


def open_table(path_or_book, sheet=None, header_row=None, password=None):
    """``Table`` for a file path (opened by content; ``password`` for an encrypted workbook) or a
    book object; closes the book on error."""
    book = open_book(path_or_book, password=password)
    try:
        return Table(book, sheet=sheet, header_row=header_row)
    except BaseException:
        book.close()
        raise


