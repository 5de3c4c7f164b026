"""Writing into an existing xlsx/xlsm through openpyxl: replace one sheet (the others kept, same
order), add a sheet, or append after the last row holding a value.

Only what truly needs a whole re-save comes here: replacing a sheet, and the rare append the
direct package edit (``xlsx_append``) cannot do (an empty sheet, an unusual package). Every other
append and new sheet is written directly; ``write.py`` estimates the re-save time first
(``target.resave_seconds``) and refuses up front when it would not fit in the time left.

Appended rows look like the rows above (their style copied, date formats kept), an Excel table
or auto-filter that ended at the old last row grows with them, a repeated header row is dropped,
and a totals row at the bottom is reported (its formula will not include the new rows). Only
:func:`plan` may refuse (before the backup and the temp file); :func:`write` then fills the temp
file. The caller has already run ``target.inspect_xlsx`` (lossy parts, size).
"""
import datetime
import itertools
import os

from ..errors import ToolError, what_broke
from .cells import (DATE_FORMAT, DATETIME_FORMAT, LIMITS, TEXT_FORMAT, TIME_FORMAT, clean_xml_row, column_widths,
                    is_digit_text, is_repeated_header, looks_like_header, note, too_many_rows)
from .target import DEFAULT_SHEET, pick_sheet
from .values import col_letter, is_summary_label, is_total_label


def _style_cell(cell, value, header, bold, keep_date_format=False):
    """Number formats that make the stored value display as intended; bold for a header cell.

    A date cell that already carries a date format (appending under rows formatted ``yyyy/m/d``)
    keeps it, so the new rows look like the old ones."""
    if isinstance(value, str):
        # text stays text: without this, openpyxl would store "=..." as a formula and "#N/A" as an error
        cell.data_type = "s"
        if is_digit_text(value) and cell.number_format == "General":
            cell.number_format = TEXT_FORMAT
    elif isinstance(value, (datetime.date, datetime.time)):
        if not keep_date_format:
            if isinstance(value, datetime.datetime):
                cell.number_format = DATETIME_FORMAT
            elif isinstance(value, datetime.date):
                cell.number_format = DATE_FORMAT
            else:
                cell.number_format = TIME_FORMAT
    if header:
        cell.font = bold



def _last_valued_row(ws):
    """The last row holding a value. ``ws.max_row`` also counts rows that only carry formatting
    (borders, fills prepared for future entries), which would leave a gap before appended rows."""
    last = 0
    for r, values in enumerate(ws.iter_rows(values_only=True), start=1):
        for v in values:
            if v is not None and v != "":
                last = r
                break
    return last


def _first_valued_row(ws, last):
    for r, values in enumerate(ws.iter_rows(max_row=last, values_only=True), start=1):
        if any(v is not None and v != "" for v in values):
            return r, list(values)
    return 0, []


def _unmerge_block(ws, start_row, ncols, stats):
    """Empty merged cells in the area being filled would refuse values: unmerge them (they hold
    nothing, only layout) and say so."""
    for rng in list(ws.merged_cells.ranges):
        if rng.max_row >= start_row and rng.min_col <= max(ncols, 1):
            if rng.min_row >= start_row:
                ws.unmerge_cells(str(rng))
                note(stats, "unmerged", str(rng))


def _extend_tables(ws, old_last, new_last, ncols):
    """An Excel table (套用表格格式) or auto-filter that ended at the old last row grows with the
    appended rows, so filters, banding and structured references keep covering all the data."""
    from openpyxl.utils import range_boundaries
    for table in ws.tables.values():
        try:
            c1, r1, c2, r2 = range_boundaries(table.ref)
        except (TypeError, ValueError):
            continue
        if r2 == old_last and not table.totalsRowCount and ncols <= c2:
            table.ref = "%s%d:%s%d" % (col_letter(c1 - 1), r1, col_letter(c2 - 1), new_last)
            if table.autoFilter is not None:
                table.autoFilter.ref = table.ref
    ref = ws.auto_filter.ref
    if ref:
        try:
            c1, r1, c2, r2 = range_boundaries(ref)
        except (TypeError, ValueError):
            return
        if r2 == old_last:
            ws.auto_filter.ref = "%s%d:%s%d" % (col_letter(c1 - 1), r1, col_letter(c2 - 1), new_last)


def _write_cells(ws, rows, start_row, header, stats, counter, copy_from=None):
    """Write converted rows into a normal (loaded) worksheet from ``start_row``.

    ``copy_from``: the last data row above; appended cells without their own formatting take its
    font/border/alignment and a fitting number format, so new rows look like the rows above."""
    from copy import copy
    from openpyxl.styles import Font
    from openpyxl.styles.numbers import is_date_format
    bold = Font(bold=True)
    r = start_row - 1
    for i, row in enumerate(rows):
        r = start_row + i
        clean_xml_row(row, stats)
        for c, v in enumerate(row, start=1):
            if v is None and copy_from is None:
                continue
            cell = ws.cell(row=r, column=c)
            if copy_from is not None and not cell.has_style:
                src = ws.cell(row=copy_from, column=c)
                if src.has_style:
                    cell._style = copy(src._style)     # openpyxl's documented way to copy a cell's style
            if v is None:
                continue
            had_date_format = is_date_format(cell.number_format)   # before openpyxl picks its own
            cell.value = v
            _style_cell(cell, v, header and i == 0, bold, keep_date_format=had_date_format)
            if not isinstance(v, (datetime.date, datetime.time, str)) and is_date_format(cell.number_format):
                cell.number_format = "General"      # a copied date format would show a number as a date
        counter[0] += 1
    return r


def _fill_fresh_sheet(ws, head, rows, stats, counter):
    """A sheet written whole: widths from the first rows, bold header frozen in place."""
    header = bool(head) and looks_like_header(head[0])
    for i, width in enumerate(column_widths(head)):
        ws.column_dimensions[col_letter(i)].width = width
    if header:
        ws.freeze_panes = "A2"
    return _write_cells(ws, rows, 1, header, stats, counter)


def plan(path, fmt, wanted, mode, info):
    """Before anything is written: load the workbook, choose the sheet, find where appended rows
    start and check they fit. Returns (workbook, target sheet name or None, last valued row)."""
    import pydeps_boot      # only an existing workbook needs openpyxl (a new file never does)
    openpyxl = pydeps_boot.ensure("openpyxl")
    from openpyxl.worksheet.worksheet import Worksheet
    try:
        wb = openpyxl.load_workbook(path, keep_vba=(fmt == "xlsm"), keep_links=True,
                                    rich_text=bool(info.get("rich_text", True)))
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many types for broken files
        raise ToolError("无法打开「%s」（%s），文件可能已损坏。请把数据写到一个新文件（换个 path），"
                           "或先用 Excel 打开修复后另存。原文件没有改动" % (
                               os.path.basename(path), what_broke(exc)))
    target = pick_sheet(wb.sheetnames, wanted, path)
    if target is not None and not isinstance(wb[target], Worksheet):
        raise ToolError("「%s」是图表工作表，不能写入数据。请换一个工作表名" % target)
    old_last = _last_valued_row(wb[target]) if target is not None and mode == "append" else 0
    count = info.get("row_count")
    if old_last and count is not None and old_last + count - 1 > LIMITS[fmt][0]:
        # count - 1: a repeated header row may still be dropped; the exact check runs while writing
        raise too_many_rows(fmt, count, old_last + 1)
    return wb, target, old_last


def write(tmp, fmt, plan, wanted, mode, head, rest, stats, counter, info, chart=None):
    wb, target, old_last = plan
    title = target or wanted or DEFAULT_SHEET
    rows = itertools.chain(head, rest)
    ncols = max([len(r) for r in head] or [0])
    if target is None or mode == "overwrite":
        if target is not None:
            # replace the sheet in place: same name and position, other sheets untouched
            old = wb[target]
            index = wb.sheetnames.index(target)
            active = wb.index(wb.active) if wb.active is not None else 0
            wb.remove(old)
            ws = wb.create_sheet(target, index)
            wb.active = active
            info["action"] = "replaced_sheet"
        else:
            ws = wb.create_sheet(title)
            info["action"] = "new_sheet"
        for sheet in wb.worksheets:       # exactly one selected tab, or Excel opens the sheets grouped
            if hasattr(sheet, "sheet_view"):
                sheet.sheet_view.tabSelected = sheet is wb.active
        last = _fill_fresh_sheet(ws, head, rows, stats, counter)
        info.update(start_row=1, total_rows=last)
    elif old_last == 0:
        # appending to an existing but empty sheet: written whole like a new one (its formatting stays)
        ws = wb[target]
        last = _fill_fresh_sheet(ws, head, rows, stats, counter)
        info.update(start_row=1, total_rows=last, action="appended")
    else:
        ws = wb[target]
        first_row, first_values = _first_valued_row(ws, old_last)
        if head and is_repeated_header(head[0], first_values):
            # the caller re-sent the header (common when merging monthly files): don't duplicate it
            head = head[1:]
            rows = itertools.chain(head, rest)
            info["header_skipped"] = True
        start = old_last + 1
        last_values = [c.value for c in ws[old_last]][:5]
        if old_last > first_row and any(is_total_label(v) or is_summary_label(v) for v in last_values):
            note(stats, "after_totals", str(old_last))
        max_rows = LIMITS[fmt][0]
        _unmerge_block(ws, start, ncols, stats)
        copy_from = old_last if old_last > first_row else None
        last = _write_cells(ws, _capped(rows, max_rows - start + 1, fmt, start), start, False, stats, counter,
                            copy_from=copy_from)
        if counter[0]:
            _extend_tables(ws, old_last, last, ncols)
        info.update(start_row=start, total_rows=max(last, old_last), action="appended")
    info["sheet"] = ws.title
    info["sheets"] = list(wb.sheetnames)
    if chart is not None:
        _add_chart(ws, chart, head, info, ncols)
    wb.save(tmp)
    if getattr(wb, "vba_archive", None) is not None:
        # openpyxl leaves the in-memory macro archive open over a closed buffer; closing it here
        # keeps "Exception ignored in ZipFile.__del__" noise off stderr at exit
        try:
            wb.vba_archive.close()
        except (ValueError, OSError):
            pass



def _add_chart(ws, job, head, info, ncols):
    """``xlsx_chart``'s chart on the sheet just written, saved by openpyxl with the workbook."""
    from .xlsx_chart import add_with_openpyxl
    header_row, header = 0, None
    for r in range(1, min(ws.max_row, 50) + 1):
        values = [c.value for c in ws[r]]
        if any(v is not None for v in values):
            header_row, header = r, (values if looks_like_header(values) else None)
            break
    first = header_row + 1 if header else max(header_row, 1)
    data = head[1:] if head and header is not None and info.get("start_row") == 1 else head
    chart = job.resolve(ws.title, header, first, info["total_rows"], data)
    add_with_openpyxl(ws, chart, max(ws.max_column, ncols) + 1, max(header_row - 1, 0))


def _capped(rows, room, fmt, start):
    """Stop with a clear error when a streamed block would run past the sheet's last row."""
    for i, row in enumerate(rows):
        if i >= room:
            raise too_many_rows(fmt, i + 1, start)
        yield row

