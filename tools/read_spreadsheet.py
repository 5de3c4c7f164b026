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
                (empty cells left out, merged blocks filled); without it rows are plain lists.

Returns ``format``, ``sheet_names``, ``hidden_sheets`` and per sheet ``name``, ``total_rows``
(non-empty rows; ``total_rows_exact`` false when a huge sheet could not be counted in time),
``offset``, ``returned``, ``next_offset`` (null when done), ``truncated`` (more rows remain),
``row_numbers`` (the Excel row of each returned row), ``rows``, ``merged`` (``A1:B2`` ranges),
plus ``warn``. When no sheet is named, the 20k budget is shared: each sheet gets a fair minimum
and the first sheets get the rest.
"""
import os
import sys
import time

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
import table_io as tio  # noqa: E402

STARTED = time.monotonic()
COUNT_BUDGET = 40            # seconds after start we may spend counting rows of huge sheets
MAX_SHEETS = 20              # sheets read when none is named
MAX_MERGED_LISTED = 30
CELL_LIMIT = tio.MAX_TEXT
SAFETY = 400                 # characters kept free below the output cap


def _show_cell(value, limit, stats):
    shown = tio.display(value)
    if shown.__class__ is str and len(shown) > limit:
        stats["cut"] += 1
        return shown[:limit] + "…"
    return shown


def _show_list(values, limit, stats):
    out = [_show_cell(v, limit, stats) for v in values]
    while out and (out[-1] is None or out[-1] == ""):
        out.pop()
    return out


def _show_record(values, columns, limit, stats):
    record = {}
    for i, value in enumerate(values):
        if tio.is_empty(value):
            continue
        name = columns[i].name if i < len(columns) else "列%s" % tio.col_letter(i)
        record[name] = _show_cell(value, limit, stats)
    return record


def read_sheet(book, info, offset, limit, header_row, deadline, stats):
    """One sheet's page (rows displayed) and its row count."""
    page = {"name": info.name}
    if info.hidden:
        page["hidden"] = True
    raw = []            # (row_number, source values) of the page, displayed later
    count = 0
    exact = True
    table = None
    if header_row:
        table = tio.Table(book, info.name, header_row=header_row)
        rows = table.data_rows(include_totals=True, skip_notes=False)
        page["header_row"] = table.header_row
        if len(table.header_rows) > 1:
            page["header_rows"] = list(table.header_rows)
    else:
        rows = book.rows(info.name)
    for rownum, values in rows:
        if offset <= count < offset + limit:
            raw.append((rownum, values))
        count += 1
        if count >= offset + limit and not count & 0x3FF and deadline.passed():
            exact = False
            break
    if not exact:
        dims = book.dimensions(info.name)
        if dims and dims[0] > count:
            count = dims[0] - (table.data_start - 1 if table is not None else 0)
        page["total_rows_exact"] = False
    page["total_rows"] = count
    page["offset"] = offset
    if table is not None:
        page["columns"] = table.names
        shown = [_show_record(v, table.columns, CELL_LIMIT, stats) for _, v in raw]
    else:
        shown = [_show_list(v, CELL_LIMIT, stats) for _, v in raw]
    merges = book.merges(info.name) or []
    if merges:
        page["merged"] = [tio.range_ref(*m) for m in merges[:MAX_MERGED_LISTED]]
        if len(merges) > MAX_MERGED_LISTED:
            page["merged_count"] = len(merges)
    return page, raw, shown, table


def _row_cost(row, rownum):
    return len(rt.json_text(row)) + len(str(rownum)) + 2


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


def _squeeze(row, budget, stats):
    """A single row bigger than the whole budget: shorten its cells harder, then drop columns."""
    for limit in (200, 50, 20):
        if isinstance(row, dict):
            smaller = {k: (v[:limit] + "…" if isinstance(v, str) and len(v) > limit else v) for k, v in row.items()}
        else:
            smaller = [v[:limit] + "…" if isinstance(v, str) and len(v) > limit else v for v in row]
        if len(rt.json_text(smaller)) <= budget:
            stats["squeezed"] += 1
            return smaller
        row = smaller
    items = list(row.items()) if isinstance(row, dict) else list(row)
    keep = max(1, rt.fit_items(items, budget - 60))
    stats["squeezed"] += 1
    if isinstance(row, dict):
        out = dict(items[:keep])
        out["…"] = "本行共 %d 列，后 %d 列放不下已省略" % (len(items), len(items) - keep)
        return out
    return items[:keep] + ["…（本行共 %d 列，后 %d 列放不下已省略）" % (len(items), len(items) - keep)]


MAX_LIMIT = 2000


def main(params):
    path = rt.resolve_read(params.get("path"), "path")
    asked_limit = params.get("limit") or 200
    limit = max(1, min(int(asked_limit), MAX_LIMIT))
    offset = max(0, int(params.get("offset") or 0))
    header_row = params.get("header_row") or None
    sheet = params.get("sheet")
    book = tio.open_book(path)
    try:
        result = read(book, sheet, offset, limit, header_row)
    finally:
        book.close()
    if asked_limit > MAX_LIMIT:       # a too-large limit is clamped, not refused: the model gets data
        result["warn"].append("limit 最大 %d，已按 %d 读取；继续读请用 next_offset" % (MAX_LIMIT, MAX_LIMIT))
    return result


def read(book, sheet, offset, limit, header_row):
    warn = []
    hidden = [s.name for s in book.sheets if s.hidden]
    if sheet not in (None, ""):
        targets = [tio.pick_sheet(book, sheet)]
    else:
        targets = [s for s in book.sheets if not s.hidden] or list(book.sheets)
        if len(targets) > MAX_SHEETS:
            warn.append("共 %d 个工作表，只读了前 %d 个；其余请用 sheet 参数指定" % (len(targets), MAX_SHEETS))
            targets = targets[:MAX_SHEETS]
        if hidden:
            warn.append("隐藏的工作表没有读取：%s；需要时用 sheet 参数指定" % "、".join(hidden))
    deadline = tio.Deadline(COUNT_BUDGET - (time.monotonic() - STARTED))
    stats = {"cut": 0, "squeezed": 0}
    pages = []
    for info in targets:
        try:
            pages.append(read_sheet(book, info, offset, limit, header_row, deadline, stats))
        except rt.ToolError as exc:
            if len(targets) == 1:
                raise
            pages.append(({"name": info.name, "error": str(exc)}, [], [], None))
    # the reader's own notes (encoding used, formulas without cached values...) exist after reading
    warn[:0] = [note for note in book.warnings if note not in warn]
    result = {"format": book.kind, "sheet_names": [s.name for s in book.sheets], "hidden_sheets": hidden,
              "sheets": [p[0] for p in pages], "warn": warn}
    for page, _raw, _shown, _table in pages:
        page.update({"returned": 0, "next_offset": None, "truncated": False, "row_numbers": [], "rows": []})
    budget = rt.OUTPUT_LIMIT - SAFETY - rt.text_size(result) - 200   # 200: room for the notes below
    costs = [[_row_cost(row, raw[i][0]) for i, row in enumerate(shown)] for _p, raw, shown, _t in pages]
    alloc = _allocate([sum(c) for c in costs], max(budget, 0))
    for (page, raw, shown, _table), cost, room in zip(pages, costs, alloc):
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
            rows = [_squeeze(shown[0], max(room, budget // 2) - 20, stats)]
            k = 1
        page["rows"] = rows
        page["row_numbers"] = [r for r, _ in raw[:k]]
        _set_paging(page, k, len(shown), offset)
    _fit_final(result, pages, offset)
    if stats["cut"]:
        warn.append("有 %d 个单元格文字超过 %d 字，已截断（以 … 结尾）" % (stats["cut"], CELL_LIMIT))
    if stats["squeezed"]:
        warn.append("有一行内容太长，已进一步缩短单元格文字后返回")
    short = [p[0]["name"] for p in pages if p[0].get("returned", 0) < len(p[2])]
    if short:
        warn.append("受输出字数上限限制，工作表%s少返回了一些行；请用 next_offset 继续读，或指定 sheet、减小 limit" % "、".join(
            "「%s」" % n for n in short))
    for page, _raw, _shown, _table in pages:
        if "error" not in page and offset and offset >= page["total_rows"] and page.get("total_rows_exact", True):
            warn.append("工作表「%s」只有 %d 行，offset=%d 已超出，没有返回数据" % (page["name"], page["total_rows"], offset))
    return result


def _set_paging(page, k, available, offset):
    page["returned"] = k
    end = offset + k
    more = end < page["total_rows"] or k < available or not page.get("total_rows_exact", True)
    page["next_offset"] = end if more else None
    page["truncated"] = bool(more)


def _fit_final(result, pages, offset):
    """Last guard: estimates can be off by a few characters; drop rows until the JSON fits."""
    while rt.text_size(result) > rt.OUTPUT_LIMIT - SAFETY // 2:
        candidates = [p for p in pages if len(p[0].get("rows", [])) > 1]
        if not candidates:
            break
        page = max(candidates, key=lambda p: len(p[0]["rows"]))[0]
        page["rows"].pop()
        page["row_numbers"].pop()
        _set_paging(page, len(page["rows"]), len(page["rows"]) + 1, offset)


if __name__ == "__main__":
    rt.run(main)
