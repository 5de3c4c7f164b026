"""Writing tables to xlsx / xls / csv: the one entry point behind write_spreadsheet and every table
tool that saves a result (filter_table, pivot_table, lookup_table, dedupe_table, clean_table).

Why one shared writer: the user must get the same cells whichever tool wrote them (numbers stay
numbers, ISO date text becomes a real Excel date, an ID-card number never turns into 1.10101E+17),
and the same safety rules must hold everywhere:

- never damage the user's file: the target is locked (``xlakit.fs.files.locked``) around the whole
  read-inspect-write cycle, the new content goes to a temp file beside it and replaces it in one
  step (``files.atomic_write``), a copy of the previous file goes to ``~/.xla/backup`` first, and
  any error (a limit, a bad row, a full disk) leaves the original byte-for-byte intact;
- never lose parts of a workbook silently (``target.inspect_xlsx``: charts, pictures, pivot
  tables, macros... refused unless ``allow_lossy``);
- Excel's limits (rows, columns, 32,767 characters per cell, sheet-name rules) are checked before
  anything is written, with a message that says what to change;
- the path goes through ``paths.resolve_write`` (the deny list for every writer).

Layout: ``cells`` (value conversion, row checks), ``target`` (what the file is, what a re-save
loses and how long it takes), ``xlsx_new`` (fast streaming SpreadsheetML writer), ``xlsx_append``
(+ ``xlsx_parts``, ``xlsx_rows``, ``xlsx_shift``: appends and new sheets by editing an existing
package directly, rows above a totals block), ``xlsx_existing`` (openpyxl, for replacing a sheet),
``xls_write`` (xlwt), ``csv_write``; this module only dispatches.

API:
    write_rows(path, rows, sheet=None, mode="overwrite", allow_lossy=False, styles=None) -> dict
    default_output_path(source_path, label, ext=None) -> str
    to_cell(value) -> the Python value that will be stored in an xlsx/xls cell

``rows`` may be any iterable of rows (a generator is fine): csv and new xlsx files are written
streaming in constant memory.
"""
import itertools
import os
import re

from ..fs import files, paths
from ..errors import ToolError
from . import csv_write, xls_write, xlsx_append, xlsx_chart, xlsx_existing, xlsx_new
from .cells import LIMITS, WIDTH_SAMPLE_ROWS, excel_serial, looks_like_header, prepare_rows, to_cell  # noqa: F401
from .target import DEFAULT_SHEET, RESAVE_RESERVE, check_sheet_name, detect_format, inspect_xlsx, lossy_error, \
    pick_sheet, resave_seconds, too_big_to_resave

__all__ = ["write_rows", "default_output_path", "to_cell", "excel_serial"]
TOOL_BUDGET = 50.0          # seconds a tool may work (runtime.BUDGET; this package never imports the runtime)


def _warnings(stats, info, path, fmt):
    out = []
    if "long_int" in stats:
        s = stats["long_int"]
        out.append("有 %d 个超过 15 位的整数（如 %s）按文本写入：Excel 只保留 15 位有效数字，存成数字会把末几位变成 0" % (
            s["count"], "、".join(s["examples"])))
    if "control_chars" in stats:
        out.append("有 %d 个单元格含不可见的控制字符，xlsx 无法保存，已去掉" % stats["control_chars"]["count"])
    if "unmerged" in stats:
        out.append("追加区域里的空合并单元格已取消合并：%s" % "、".join(stats["unmerged"]["examples"]))
    below = stats["after_totals"]["examples"][0] if "after_totals" in stats else info.get("after_totals")
    if below:
        # only when the rows went below a totals block (position=end, or a layout the writer could
        # not insert into); rows inserted above it are reported in totals_updated instead
        out.append("原表从第 %s 行起是合计行/表尾，新行接在了它们下面，合计不会包含新行。要让新行进入合计，"
                   "请用默认的 position=auto 写入（插在合计行上方并更新合计；原文件在备份里）" % below)
    stale = info.get("totals_stale") or []
    rows = ["第 %d 行「%s」" % (x["row"], x["label"]) for x in stale if "row" in x]
    cells = ["%s（%s）" % (x["cell"], x["text"]) for x in stale if "cell" in x]
    if rows:
        out.append("合计旁的汇总行 %s 是固定数值，没有随新行重新计算（平均、最高等无法按新行推算），请核对后手工更新"
                   "或改成公式" % "、".join(rows[:6]))
    if cells:
        out.append("合计行里的文字金额 %s 写法特殊（如带万、%%），没能随新行更新，现在已经不含新行，请手工更新" %
                   "、".join(cells[:6]))
    if info.get("others_kept_as_values"):
        out.append("其他工作表（%s）按 allow_lossy_resave 只保留了数值，公式和格式已丢失（原文件在备份里）" %
                   "、".join(info["others_kept_as_values"]))
    if info.get("lost"):
        out.append("按 allow_lossy_resave 重存了工作簿，这些内容可能已丢失或损坏：%s（原文件在备份里）" % "、".join(info["lost"]))
    if info.get("replaced_parts"):
        out.append("原工作表「%s」上的%s随工作表一起被替换了（原文件在备份里）" % (info.get("sheet"), "、".join(info["replaced_parts"])))
    if info.get("bom_added"):
        out.append("原 csv 是纯英文、没有编码标记，已在文件开头加上 UTF-8 BOM，Excel 才能正确显示中文")
    if fmt == "csv" and (info.get("total_rows") or 0) > LIMITS["xlsx"][0]:
        out.append("csv 共 %d 行，Excel 打开时只能显示前 1,048,576 行" % info["total_rows"])
    return out



def write_rows(path, rows, sheet=None, mode="overwrite", allow_lossy=False, styles=None, position="auto",
               deadline=None, chart=None):
    """Write ``rows`` (an iterable of lists) to ``path``; the suffix decides the format.

    mode "overwrite": xlsx replaces the one sheet (others kept, same order), xls and csv replace the
    file; "append": xlsx and csv, with ``position`` "auto" above the table's totals block (totals
    rows, footer lines: they move down and their sums are updated, ``totals_updated``) when there
    is one, else after the last row holding a value (xlsx) / at the end of the file (csv);
    ``position`` "end" always after the last row. An existing xlsx is appended to (or given a new
    sheet) by editing its package directly, whatever its size; a workbook that is just the one
    sheet being replaced is written like a new file; only replacing a sheet of another existing
    workbook re-saves it through openpyxl, refused up front when that would not fit in
    the time left (``deadline``: the tool's ``rt.deadline``; without one, a fresh tool's budget).
    ``styles`` (optional: ``bold_rows``, ``bold_cols``, ``number_format``, ``freeze``; see
    ``xlsx_new``) dresses a NEW xlsx file (pivot_table's bold totals); other targets ignore it.
    ``chart`` (``{"type", "title", "categories", "values"}``, see ``xlsx_chart``) adds a native
    Excel chart beside the rows (xlsx: a new workbook, an append, a new sheet).
    Returns path, format, sheet, mode, action, rows_written, start_row, total_rows, columns, backup,
    sheets, header_skipped, warnings (+ encoding/delimiter for csv; ``chart`` with its ranges).
    Raises ToolError.
    """
    if mode not in ("overwrite", "append"):
        raise ToolError("mode 只能是 overwrite（覆盖，默认）或 append（追加到末尾），收到的是 %r" % (mode,))
    if position not in ("auto", "end"):
        raise ToolError("position 只能是 auto（默认：有合计行/表尾时插在它们上方）或 end（一律接在最后一行之后），"
                        "收到的是 %r" % (position,))
    path = paths.resolve_write(path)
    files.check_not_open(path)          # before reading: an office program would save over us
    fmt = detect_format(path)
    if fmt == "csv":
        sheet = None
    elif sheet is not None:
        check_sheet_name(sheet)
    exists = os.path.isfile(path) and os.path.getsize(path) > 0
    if fmt == "xls" and mode == "append":
        raise ToolError("老格式 .xls 不支持追加（mode=append）。请改用 .xlsx：可以把新数据追加到一个 .xlsx 文件；"
                           "或先用 read_spreadsheet 读出原表，把新旧数据合在一起，用 mode=overwrite 写成新的 .xlsx")
    if fmt == "xlsm" and not exists:
        raise ToolError("不能新建 .xlsm（启用宏的工作簿需要由 Excel 生成）。请把 path 的后缀改成 .xlsx")

    job = xlsx_chart.ChartJob(chart, fmt) if chart is not None else None
    stats = {}
    shape = {"cols": 0}

    def tracked(prepared_rows):
        for row in prepared_rows:
            if len(row) > shape["cols"]:
                shape["cols"] = len(row)
            yield row

    prepared = prepare_rows(rows, fmt, stats)
    row_count = None
    if isinstance(rows, (list, tuple)):
        prepared = list(prepared)       # lists are checked completely before any file is touched
        row_count = len(prepared)
        prepared = iter(prepared)
    prepared = tracked(prepared)
    if job is not None:
        prepared = job.track(prepared)
    head = list(itertools.islice(prepared, WIDTH_SAMPLE_ROWS))
    if not head:
        raise ToolError("rows 是空数组，没有可写的内容。请传二维数组，例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]")

    info = {"row_count": row_count}
    counter = [0]
    direct = None
    fresh_title = None
    try:
        lock = files.locked(path)
        lock.acquire()
    except TimeoutError:
        raise ToolError("另一个工具正在写入「%s」，等待超时。请稍后重试" % os.path.basename(path))
    try:
        if fmt in ("xlsx", "xlsm") and exists:
            # a chart written over the sheet's old one supersedes it: what hangs only off that sheet
            # is replaced with it, not lost (without a new chart, an old one would be: refused)
            found = inspect_xlsx(path, replacing=(sheet or "") if mode == "overwrite" and job is not None else None)
            lost = found["lost"]
            if fmt == "xlsm" and "宏（VBA 代码）" in lost:
                # keep_vba carries the macro code over, but openpyxl still rewrites the rest
                lost = [x for x in lost if x != "宏（VBA 代码）"] + ["宏相关的按钮、控件与部分设置"]
            # appending and adding a sheet edit the package directly (fast at any size, nothing
            # lost); None = the write needs openpyxl (replacing a sheet, an unusual package)
            direct = xlsx_append.plan(path, fmt, sheet, mode, info, position)
            if direct is not None and job is not None:
                direct.chart = job
                if direct.kind == "append":
                    job.check_names(direct.first_values if looks_like_header(direct.first_values) else None)
            lone = found.get("lone_sheet")
            if direct is None and mode == "overwrite" and fmt == "xlsx" and not lost and lone is not None \
                    and pick_sheet([lone], sheet, path) == lone:
                # the workbook is that one sheet: replacing it is writing a new file (the fast
                # writer), not loading and re-saving the old rows through openpyxl
                fresh_title = lone
            elif direct is None:
                if lost and not allow_lossy:
                    raise lossy_error(path, lost)
                seconds = resave_seconds(found["cells"])
                left = deadline.remaining() if deadline is not None else TOOL_BUDGET
                if seconds > left - RESAVE_RESERVE:
                    raise too_big_to_resave(path, found["cells"], mode, seconds, left, sheet)
                info["lost"] = lost
                if found["replaced"]:
                    info["replaced_parts"] = found["replaced"]
            info["rich_text"] = found["rich_text"]
        if job is not None and (direct is None and mode == "overwrite" or direct is not None and direct.kind in ("new_sheet", "fill")
                                or not exists):
            job.check_names(head[0] if looks_like_header(head[0]) else None)
        # Everything that can refuse the write runs here, before the backup copy and the temp file.
        if fmt == "csv":
            plan = csv_write.inspect(path, mode, position) if exists else csv_write.CsvTarget()
        elif fmt == "xls":
            plan = xls_write.plan(path, sheet, allow_lossy, info)
        elif exists and direct is None and fresh_title is None:
            plan = xlsx_existing.plan(path, fmt, sheet, mode, info)

        def write(tmp):
            if fmt == "csv":
                csv_write.write(path, tmp, mode, exists, plan, head, prepared, counter, info)
            elif fmt == "xls":
                xls_write.write(tmp, plan, head, prepared, counter, info)
            elif direct is not None:
                xlsx_append.write(tmp, direct, head, prepared, stats, counter, info)
            elif exists and fresh_title is None:
                xlsx_existing.write(tmp, fmt, plan, sheet, mode, head, prepared, stats, counter, info, chart=job)
            else:
                title = fresh_title or sheet or DEFAULT_SHEET
                xlsx_new.write_new(tmp, title, head, prepared, stats, counter, styles=styles, chart=job)
                info.update(action="replaced_sheet" if fresh_title else "new_file", sheet=title, sheets=[title],
                            start_row=1, total_rows=counter[0])

        backup = files.atomic_write(path, write, backup=exists, lock=False)
    finally:
        lock.release()

    result = {
        "path": path,
        "format": fmt,
        "sheet": info.get("sheet"),
        "mode": mode,
        "action": info.get("action"),
        "rows_written": counter[0],
        "start_row": info.get("start_row", 1),
        "total_rows": info.get("total_rows", counter[0]),
        "columns": shape["cols"],
        "backup": backup,
        "sheets": info.get("sheets"),
        "header_skipped": bool(info.get("header_skipped")),
        "warnings": _warnings(stats, info, path, fmt),
    }
    if job is not None and job.chart is not None:
        result["chart"] = job.chart.answer()
    if fmt == "csv":
        result["encoding"] = info.get("encoding")
        result["delimiter"] = info.get("delimiter")
    if mode == "append":
        result["position"] = position
        if "totals_updated" in info:
            result["totals_updated"] = info["totals_updated"]
            result["totals_moved"] = info.get("totals_moved")
    return result



def note_cell(note):
    """A derived sheet's own note (``注：…``) for what its numbers leave out: a lone text cell
    starting with 注：, which every table reader takes for a footnote, not for data."""
    return note if note.startswith("注：") else "注：" + note


def write_derived(target, rows, sheet, keep_text=False, deadline=None, sources=(), notes=None):
    """Write a derived table (filter/lookup/dedupe): money and number text becomes number cells
    unless ``keep_text`` (``derive.NumberCells``). Returns :func:`write_rows`' answer plus
    ``converted_columns``; the conversion's note joins its ``warnings``. One place, so the three
    tools convert and report alike. ``sources`` (the source ``Table``s, the first one's names
    first) give converted columns their money/number format (``Table.number_formats``).
    ``notes`` (a callable, asked once the rows are written) gives the Chinese notes about values
    the result left out (cells that were no numbers, rows that could not be compared): each goes
    under the table as a ``注：`` row, so the file says so itself, not only the answer; the
    answer's ``rows_written`` does not count them, ``notes_on_sheet`` lists them."""
    from .derive import NumberCells
    formats = {}
    for table in reversed(list(sources)):
        formats.update(table.number_formats())
    numbers = NumberCells(keep_text=keep_text, source_formats=formats)
    written = []
    wrapped = numbers.wrap(rows)        # now: it samples the rows and chooses the columns styles() formats

    def with_notes():
        for row in wrapped:
            yield row
        for note in (notes() if notes is not None else ()):
            written.append(note)
            yield [note_cell(note)]
    saved = write_rows(target, with_notes(), sheet=sheet, styles=numbers.styles(), deadline=deadline)
    if written:
        saved["rows_written"] = saved["rows_written"] - len(written)
        saved["notes_on_sheet"] = written
    saved["converted_columns"] = numbers.converted_columns()
    if numbers.note():
        saved["warnings"] = list(saved.get("warnings") or []) + [numbers.note()]
    return saved


def output_path(out_path, sources, label, ext=None, param="out_path"):
    """The file a derived table is written to: ``out_path`` when given (through the deny list),
    else :func:`default_output_path` beside nothing in the workspace. A result never replaces one
    of its own ``sources`` (a path or a list of paths): that would destroy the table it came from."""
    if isinstance(sources, str):
        sources = [sources]
    if out_path in (None, ""):
        return default_output_path(sources[0], label, ext=ext)
    target = paths.resolve_write(out_path, param)
    for source in sources:
        if files.same_file(target, source):     # also through a linked folder or a hard link
            raise ToolError("%s 不能和源文件相同（「%s」：%s结果会覆盖原表）。请换一个文件名，或不传 %s 存到工作空间" % (
                param, os.path.basename(source), label, param))
    return target


def default_output_path(source_path, label, ext=None):
    """Where a derived table goes by default: the workspace, ``<source name>_<label><ext>``, with
    ``_2``, ``_3``... so an existing file is never overwritten.

    ``ext`` defaults to .csv for text sources (fast, same kind of file) and .xlsx otherwise (an .xls
    source gets .xlsx: no 65,536-row limit, and .xlsm would need macros)."""
    stem, src_ext = os.path.splitext(os.path.basename(str(source_path)))
    if ext:
        ext = "." + ext.lstrip(".").lower()
    else:
        ext = ".csv" if src_ext.lower() in (".csv", ".tsv", ".txt") else ".xlsx"
    label = re.sub(r'[\\/:*?"<>|\s]+', "_", str(label or "")).strip("_")
    name = "%s_%s%s" % (stem or "结果", label, ext) if label else "%s%s" % (stem or "结果", ext)
    return files.unique_path(os.path.join(paths.workspace_dir(create=True), name))

