"""dedupe_table: find duplicate rows of a table (report) or save the table with one row per key
(remove), as a new table file.

Why a tool: "这张名单里有没有重复的人" must not mean the model eyeballing 3,000 rows, and Excel's
删除重复项 misses ``张三`` vs ``张三 `` or ``1001`` vs ``"1001"``. Keys are normalised exactly as in
lookup_table (``xlakit.tables.keys``: spaces incl. full-width and NBSP trimmed, invisible
characters removed, full-width = half-width, case ignored unless ``case_sensitive``, numbers =
number text, long IDs compared as text). Row numbers are Excel's (1-based, as the user sees them).

Modes:
- ``remove`` (default): one row per key, ``keep`` first (default) or last, rows in table order;
  default output ``<源名>_去重``. Rows whose key cells are all empty are kept (never duplicates).
- ``report``: the duplicate groups (key, count, row numbers) in the answer, paged with
  ``offset`` / ``limit``, and a file ``<源名>_重复`` with every row of every group (``重复组``,
  ``原行号`` first) so the user can look at them in Excel.

Parameters: path, keys (column names/letters; none = the whole row), mode, keep, case_sensitive,
sheet, header_row, out_path, out_sheet, offset, limit, keep_text (true: money text is written as it
was; by default money/number columns become number cells, listed in ``converted_columns``).

Returns ``path``, ``rows_before``, ``rows_after`` and ``removed`` (remove), ``duplicate_groups``,
``duplicate_rows`` (rows a remove would drop), ``rows_in_groups``, ``groups`` (a page),
``empty_key_rows``, ``preview``, ``complete`` and ``warnings``.
"""

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.tables import write as table_write  # noqa: E402
from xlakit.tables.dedupe import Groups, Remover, ReportRows  # noqa: E402
from xlakit.tables.derive import row_notes  # noqa: E402
from xlakit.tables.keys import KeyMaker  # noqa: E402
import table_io as tio  # noqa: E402

SHEETS = {"remove": "去重结果", "report": "重复行"}
LABELS = {"remove": "去重", "report": "重复"}
MAX_GROUPS = 200
STORE_ROWS = 150000          # report, keep=last: rows kept from the first pass (beyond that, a second pass)


def _key_columns(table, specs):
    if specs in (None, [], ""):
        return None
    if not isinstance(specs, list):
        specs = [specs]
    out, seen = [], set()
    for i, spec in enumerate(specs):
        column = table.column(spec, "keys[%d]" % i)
        if column.index not in seen:
            seen.add(column.index)
            out.append(column)
    return out


def _open(source, params):
    return tio.open_table(source, sheet=params.get("sheet") or None, header_row=params.get("header_row"),
                          password=params.get("password"))


def _write(target, rows, sheet, params=None, result=None, tables=()):
    """Write the derived rows through the shared derived-table writer (number cells unless
    keep_text, in the number formats of the source ``tables``); ``result["converted_columns"]``
    says which columns were converted."""
    saved = table_write.write_derived(target, rows, sheet, keep_text=(params or {}).get("keep_text"),
                                      deadline=rt.deadline, sources=tables)
    if result is not None:
        result["converted_columns"] = saved["converted_columns"]
    for note in saved.get("warnings") or []:
        rt.warn(note)
    return saved


def _page(result, groups, keep, params):
    offset = max(0, int(params.get("offset") or 0))
    limit = int(rt.clamp(params, "limit", MAX_GROUPS, 1) or 20)
    items = groups.listing(keep=keep, offset=0, limit=offset + limit)
    page = rt.page_items(items, offset=offset, limit=limit, key="groups", base=result)
    end = offset + page["returned"]
    page["total"] = groups.group_count
    page["next_offset"] = end if end < groups.group_count else None
    page["truncated"] = page["next_offset"] is not None
    return page


def main(params):
    source = paths.resolve_read(params.get("path"), "path")
    mode = params.get("mode") or "remove"
    keep = params.get("keep") or "first"
    if mode not in SHEETS:
        raise ToolError("mode 只能是 remove（去重并导出新表，默认）或 report（只报告重复），收到的是 %r" % (mode,))
    if keep not in ("first", "last"):
        raise ToolError("keep 只能是 first（保留第一条，默认）或 last（保留最后一条），收到的是 %r" % (keep,))
    table = _open(source, params)
    second = None
    try:
        columns = _key_columns(table, params.get("keys"))
        indexes = [c.index for c in columns] if columns else list(range(len(table.columns)))
        if not indexes:
            raise ToolError("这张表没有可比较的列（工作表「%s」是空的？）。请检查 sheet 参数，或先用 probe_table 看看表格内容" %
                            table.sheet_name)
        target = table_write.output_path(params.get("out_path"), source, LABELS[mode])
        maker = KeyMaker(case_sensitive=bool(params.get("case_sensitive")))
        result = {"source": source, "sheet": table.sheet_name, "header_row": table.header_row,
                  "header_reason": table.header_reason, "mode": mode,
                  "keys": [c.name for c in columns] if columns else "整行"}
        two_pass = mode == "report" or keep == "last"
        reserve = rt.deadline.remaining() * 0.45 if two_pass else 0
        if mode == "remove":
            result["keep"] = keep
            if keep == "first":
                job = Remover(table, indexes, maker, keep="first", deadline=rt.deadline)
                saved = _write(target, job.rows(), params.get("out_sheet") or SHEETS[mode], params, result, (table,))
                groups = job.groups
            else:
                groups = Groups(table, indexes, maker, deadline=rt.deadline, reserve=reserve, last_cap=STORE_ROWS)
                groups.scan()
                if groups.last_rows is None:         # more keys than it keeps: read the table again
                    second = _open(source, params)
                job = Remover(second or table, indexes, maker, keep="last", groups=groups, deadline=rt.deadline)
                saved = _write(target, job.rows(), params.get("out_sheet") or SHEETS[mode], params, result, (table,))
            stopped = job.stopped_at if job.stopped_at is not None else groups.stopped_at
            result.update(path=saved["path"], out_sheet=saved["sheet"], format=saved["format"],
                          backup=saved.get("backup"), rows_before=groups.scanned, rows_after=job.written,
                          removed=groups.scanned - job.written, duplicate_groups=groups.group_count,
                          rows_in_groups=groups.rows_in_groups, empty_key_rows=groups.empty_keys,
                          columns=job.header, column_count=len(job.header), complete=stopped is None,
                          preview=job.preview, preview_rows=job.preview_rows)
            if not groups.group_count:
                rt.warn("没有发现重复的行（共检查 %d 行），结果和原表相同" % groups.scanned)
            for note in job.show.notes():
                rt.warn(note)
        else:
            groups = Groups(table, indexes, maker, deadline=rt.deadline, reserve=reserve, store_cap=STORE_ROWS)
            groups.scan()
            stopped = groups.stopped_at
            result.update(duplicate_groups=groups.group_count, duplicate_rows=groups.removable,
                          rows_in_groups=groups.rows_in_groups, rows_scanned=groups.scanned,
                          empty_key_rows=groups.empty_keys)
            if groups.group_count:
                report = ReportRows(table, indexes, maker, groups, deadline=rt.deadline)
                collected = report.from_store()      # the rows the first pass kept: no second read
                if collected is None:
                    second = _open(source, params)
                    report = ReportRows(second, indexes, maker, groups, deadline=rt.deadline)
                    collected = report.collect()
                saved = _write(target, report.rows(collected), params.get("out_sheet") or SHEETS[mode], params, result, (table,))
                stopped = stopped if stopped is not None else report.stopped_at
                result.update(path=saved["path"], out_sheet=saved["sheet"], format=saved["format"],
                              backup=saved.get("backup"), rows_written=report.written, columns=report.header)
                if report.capped:
                    rt.warn("重复行太多，文件里只写了原表靠前的 %d 行重复行（靠后的组可能不全）；组数、条数和行号以 groups 为准"
                            % report.cap)
            else:
                result.update(path=None, rows_written=0)
                rt.warn("没有发现重复的行（共检查 %d 行），没有生成文件" % groups.scanned)
            result["complete"] = stopped is None
        if groups.empty_keys and columns:
            rt.warn("有 %d 行的判重列全是空的，不算重复，已原样保留" % groups.empty_keys)
        if stopped is not None:
            rt.warn("表格太大，时间用完时只检查到第 %d 行；结果只含这之前的行（complete=false）。"
                    "可先用 filter_table 缩小范围，或把表格拆开后分别去重" % stopped)
        note = maker.lossy_note("判重列")
        if note:
            rt.warn(note)
        for note in list(table.warnings) + row_notes(table, "第 %s 行是合计/小计行，没有参与判重，也没有写进新表"):
            rt.warn(note)
        rt.shrink_to_fit(result, ("preview",))
        return _page(result, groups, keep if mode == "remove" else None, params)
    finally:
        table.close()
        if second is not None:
            second.close()


if __name__ == "__main__":
    rt.run(main)
