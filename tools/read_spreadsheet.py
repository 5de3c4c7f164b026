"""read_spreadsheet: the cells of a spreadsheet, page by page, as a person reads them.

Why this shape: the model needs to *see* a table (what columns, what rows) without the answer ever
being cut by the host at 20,000 characters. So whatever ``limit`` says, the tool measures the JSON
it is about to print and returns fewer rows when they would not fit, saying where to continue
(``next_offset``). Values follow ``table_io.display``: dates ``YYYY-MM-DD``, integral numbers
without ``.0``, ID-card and bank-card numbers and ``007`` exactly as typed, formulas as their cached
results. Very long cell text is cut at 500 characters with "…".

Parameters:
    path        spreadsheet (xlsx/xlsm/xls/csv/tsv/txt, fake-html .xls...), format found by content.
    sheet       worksheet name; omitted = every visible sheet (hidden ones are listed, not read);
                ignored for csv/txt (one sheet).
    limit       rows per sheet, default 200, at most 2000 (fewer when the output cap is reached).
    offset      0-based index of the first data row to return (paging).
    header_row  1-based header row: rows after it come back as {column name: value} objects
                (empty cells left out, merged blocks filled); omitted or 0 (no header, as in every
                table tool) = rows as plain lists.

Returns ``format``, ``sheet_names``, ``hidden_sheets`` and per sheet ``name``, ``total_rows``
(non-empty rows; ``total_rows_exact`` false when a huge sheet could not be counted in time),
``offset``, ``returned``, ``next_offset`` (null when done), ``truncated`` (more rows remain),
``row_numbers`` (the Excel row of each returned row), ``rows``, ``merged`` (``A1:B2`` ranges),
plus ``warnings`` and, when the file has formulas stored without their results (a generator that
never computed them), ``formula_without_value`` (count, per-sheet counts, first example): those
cells read as empty, and the answer says so. When no sheet is named, the output budget (``rt.budget``) is shared: each sheet
gets a fair minimum and the first sheets get the rest. Cells are shown by ``table_io.CellShow``
(the display every table tool uses); counting a huge sheet stops at ``rt.deadline``.
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

import itertools  # noqa: E402

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.tables import page_cache  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
import table_io as tio  # noqa: E402

MAX_SHEETS = 20              # sheets read when none is named
MAX_MERGED_LISTED = 30
MAX_LIMIT = 2000


class _SheetRows(object):
    """The book as ``Table`` sees it for one sheet, with ``rows()`` and ``merges()`` given here
    (from the page cache, or the real rows passing through its recorder)."""

    def __init__(self, book, rows, merges):
        self._book, self._rows, self._merges = book, rows, merges

    def rows(self, name=None, max_rows=None):
        return self._rows

    def merges(self, name=None):
        return list(self._merges)

    def __getattr__(self, name):
        return getattr(self._book, name)


def read_sheet(book, info, offset, limit, header_row, show, notes):
    """One sheet's page (rows displayed) and its row count.

    A big sheet read to the end is written to the page cache on the way (``page_cache``); a later
    call for another page of the same file takes the count, merges and notes from there and
    decodes only the rows it returns. ``notes`` collects what the cache remembers of the reader
    (warnings, formulas without values) for the answer."""
    path = getattr(book, "path", None) if getattr(book, "cacheable", True) else None   # decrypted: never cached
    entry = page_cache.lookup(path, info) if path else None
    if entry is not None:
        kept = {k: len(v) for k, v in notes.items()}
        try:
            return _read_sheet(book, info, offset, limit, header_row, show, notes, path, entry)
        except page_cache.CacheError:           # removed; read the file itself
            for k, n in kept.items():
                del notes[k][n:]
    return _read_sheet(book, info, offset, limit, header_row, show, notes, path, None)


def _read_sheet(book, info, offset, limit, header_row, show, notes, path, entry):
    page = {"name": info.name}
    if info.hidden:
        page["hidden"] = True
    before = set(book.warnings)         # notes of this sheet's pass are the ones the cache keeps
    recorder = None
    if entry is not None:
        merges = entry.merges
        source = entry.rows(0 if header_row else offset)
        notes["warnings"].extend(entry.notes)
        if entry.formula_without_value:
            notes["formula_without_value"].append(entry.formula_without_value)
    else:
        merges = None
        recorder = page_cache.Recorder(path, info) if path else None
        source = book.rows(info.name)
        if recorder is not None:
            source = recorder.wrap(source)
    raw = []            # (row_number, source values) of the page, displayed later
    count = 0 if header_row or entry is None else offset
    exact = True
    table = None
    if header_row:
        view = _SheetRows(book, source, merges if merges is not None else book.merges(info.name))
        table = tio.Table(view, info.name, header_row=header_row)
        rows = table.data_rows(include_totals=True, skip_notes=False)
        page["header_row"] = table.header_row
        if len(table.header_rows) > 1:
            page["header_rows"] = list(table.header_rows)
    else:
        rows = source
    for rownum, values in rows:
        if offset <= count < offset + limit:
            raw.append((rownum, values))
        count += 1
        if table is None and not count % 5000:         # (a Table reports its own rows)
            rt.progress(rownum, None, "已读 %d 行" % rownum)
        if count >= offset + limit:
            if entry is not None:
                break
            if not count & 0x3FF and rt.deadline.expired():
                exact = False
                break
    if merges is None:
        merges = book.merges(info.name) or []
    if entry is not None:
        count = entry.count
        if table is not None:        # the rows above the data (title, header) are not data rows
            count -= sum(1 for _ in itertools.takewhile(lambda item: item[0] < table.data_start, entry.rows(0)))
    elif recorder is not None:
        if exact and count > offset + limit:
            uncached = book.formula_without_value_in(info.name) if hasattr(book, "formula_without_value_in") else None
            recorder.finish(merges, [w for w in book.warnings if w not in before], uncached)
        else:
            recorder.abandon()
    if not exact:
        dims = book.dimensions(info.name)
        if dims and dims[0] > count:
            count = dims[0] - (table.data_start - 1 if table is not None else 0)
        page["total_rows_exact"] = False
    page["total_rows"] = count
    page["offset"] = offset
    if table is not None:
        page["columns"] = table.names
        shown = [show.record(v, table.columns) for _, v in raw]
    else:
        shown = [show.row(v) for _, v in raw]
    if merges:
        page["merged"] = [tio.range_ref(*m) for m in merges[:MAX_MERGED_LISTED]]
        if len(merges) > MAX_MERGED_LISTED:
            page["merged_count"] = len(merges)
    return page, raw, shown


def _row_cost(row, rownum):
    return rt.text_size(row) + len(str(rownum)) + 2


def _allocate(needs, budget):
    """Budget per sheet: everyone gets a fair floor, the earlier sheets get what is left."""
    if sum(needs) <= budget:
        return list(needs)
    floor = budget // (2 * len(needs))
    alloc = [min(n, floor) for n in needs]
    left = budget - sum(alloc)
    for i, need in enumerate(needs):
        extra = min(need - alloc[i], left)
        alloc[i] += extra
        left -= extra
    return alloc


def main(params):
    path = paths.resolve_read(params.get("path"), "path")
    limit = rt.clamp(params, "limit", MAX_LIMIT, 1) or 200
    offset = max(0, int(params.get("offset") or 0))
    header_row = params.get("header_row") or None      # 0 = no header: plain rows, as when omitted
    book = tio.open_book(path, password=params.get("password"))
    try:
        return read(book, params.get("sheet"), offset, int(limit), header_row)
    finally:
        book.close()


def read(book, sheet, offset, limit, header_row):
    hidden = [s.name for s in book.sheets if s.hidden]
    if sheet not in (None, ""):
        targets = [tio.pick_sheet(book, sheet)]
    else:
        targets = [s for s in book.sheets if not s.hidden] or list(book.sheets)
        if len(targets) > MAX_SHEETS:
            rt.warn("共 %d 个工作表，只读了前 %d 个；其余请用 sheet 参数指定" % (len(targets), MAX_SHEETS))
            targets = targets[:MAX_SHEETS]
        if hidden:
            rt.warn("隐藏的工作表没有读取：%s；需要时用 sheet 参数指定" % "、".join(hidden))
    show = tio.CellShow()
    pages = []
    notes = {"warnings": [], "formula_without_value": []}
    for info in targets:
        try:
            pages.append(read_sheet(book, info, offset, limit, header_row, show, notes))
        except ToolError as exc:
            if len(targets) == 1:
                raise
            pages.append(({"name": info.name, "error": str(exc)}, [], []))
    # the reader's own notes (encoding used, formulas without cached values...) exist after reading
    for note in book.warnings + notes["warnings"]:
        rt.warn(note)
    result = {"format": book.kind, "sheet_names": [s.name for s in book.sheets], "hidden_sheets": hidden,
              "sheets": [p[0] for p in pages]}
    if getattr(book, "delimiter", None):          # csv/txt: how the text was read (issue 20)
        result["encoding"] = getattr(book, "encoding_label", None) or book.encoding
        result["delimiter"] = book.delimiter
    uncached = _merge_uncached([getattr(book, "formula_without_value", None)] + notes["formula_without_value"])
    if uncached:            # formulas the file stores without results: read as empty, said so
        result["formula_without_value"] = uncached
    for page, _raw, _shown in pages:
        page.update({"returned": 0, "next_offset": None, "truncated": False, "row_numbers": [], "rows": []})
    budget = max(rt.budget(result), 0)
    costs = [[_row_cost(row, raw[i][0]) for i, row in enumerate(shown)] for _p, raw, shown in pages]
    alloc = _allocate([sum(c) for c in costs], budget)
    for (page, raw, shown), cost, room in zip(pages, costs, alloc):
        if "error" in page:
            continue
        used, k = 0, 0
        for c in cost:
            if used + c > room:
                break
            used += c
            k += 1
        rows = shown[:k]
        if k == 0 and shown and page is pages[0][0]:
            rows = [show.squeeze(shown[0], max(room, budget // 2) - 20, rt.text_size)]
            k = 1
        page["rows"] = rows
        page["row_numbers"] = [r for r, _ in raw[:k]]
        _set_paging(page, k, len(shown), offset)
    for note in show.notes():
        rt.warn(note)
    short = [p[0]["name"] for p in pages if p[0].get("returned", 0) < len(p[2])]
    if short:
        rt.warn("受输出字数上限限制，工作表%s少返回了一些行；请用 next_offset 继续读，或指定 sheet、减小 limit" % "、".join(
            "「%s」" % n for n in short))
    for page, _raw, _shown in pages:
        if "error" not in page and offset and offset >= page["total_rows"] and page.get("total_rows_exact", True):
            rt.warn("工作表「%s」只有 %d 行，offset=%d 已超出，没有返回数据" % (page["name"], page["total_rows"], offset))
    _fit_final(result, pages, offset)
    return result


def _merge_uncached(found):
    """One ``formula_without_value`` from the book's and the page cache's (per sheet)."""
    found = [f for f in found if f]
    if not found:
        return None
    sheets = {}
    for f in found:
        sheets.update(f["sheets"])
    return {"count": sum(sheets.values()), "sheets": sheets, "example": found[0]["example"]}


def _set_paging(page, k, available, offset):
    page["returned"] = k
    end = offset + k
    more = end < page["total_rows"] or k < available or not page.get("total_rows_exact", True)
    page["next_offset"] = end if more else None
    page["truncated"] = bool(more)


def _fit_final(result, pages, offset):
    """Warnings added after the pages were cut (many sheet names) may not fit the room the runtime
    keeps for them: measured as printed, rows go until the whole answer fits."""
    while rt.text_size(dict(result, ok=True, warnings=rt.warnings())) > rt.OUTPUT_LIMIT:
        candidates = [p for p in pages if len(p[0].get("rows", [])) > 1]
        if not candidates:
            break
        page = max(candidates, key=lambda p: len(p[0]["rows"]))[0]
        page["rows"].pop()
        page["row_numbers"].pop()
        _set_paging(page, len(page["rows"]), len(page["rows"]) + 1, offset)


if __name__ == "__main__":
    rt.run(main)
