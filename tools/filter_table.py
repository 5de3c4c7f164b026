"""filter_table: the rows of a table that meet every condition, saved as a new table file.

Why a tool: "挑出金额大于 100 的记录" must not mean the model reading 3,000 rows and copying some of
them by hand. The conditions are table_io's ``where`` (numbers compared as numbers, money text such
as ``￥1,234`` parsed, dates as dates, text trimmed and case-folded), the header is found the same
way as in calc_table, 合计/小计 rows are left out unless ``include_totals``, merged cells are filled,
and the result goes through the shared writer (``xlakit.tables.write``: atomic, backed up, never
over an existing file by default). Cells stay faithful: ID numbers stay text, dates stay dates.

Parameters: path, where (all must hold), columns (keep only these, in this order), out_path
(default ``~/.xla/workspace/<源名>_筛选.xlsx``, csv sources -> .csv), out_sheet (default 筛选结果),
sheet, header_row (0 = no header), limit (rows written, default 100,000), include_totals, keep_text
(true: money text such as ``￥2,903.88`` is written as it was; by default the money and number
columns are written as number cells, see ``derive.NumberCells``, and listed in ``converted_columns``).

Returns ``path`` (the new file; null when nothing matched), ``match_count`` (all matching rows),
``written`` (at most ``limit``), ``rows_scanned``, ``columns``, ``column_count``, ``preview`` with
``preview_rows`` (source row numbers), ``complete`` (false when the time budget ended the pass),
``suggestions`` when nothing matched (the closest values of the filtered column: a typo in
``value`` is the usual cause) and ``warnings``.
"""

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.tables import write as table_write  # noqa: E402
from xlakit.tables.derive import Filtered  # noqa: E402
import table_io as tio  # noqa: E402

MAX_LIMIT = 1048575          # one xlsx sheet, less the header row
DEFAULT_SHEET = "筛选结果"


def _columns(table, specs):
    if specs in (None, []):
        return None
    if not isinstance(specs, list):
        specs = [specs]
    out, seen = [], set()
    for i, spec in enumerate(specs):
        column = table.column(spec, "columns[%d]" % i)
        if column.index not in seen:
            seen.add(column.index)
            out.append(column)
    return out


def main(params):
    source = paths.resolve_read(params.get("path"), "path")
    where_spec = params.get("where")
    if not where_spec:
        raise ToolError("where 至少要有一个条件，例如 [{\"column\":\"金额\",\"op\":\"gt\",\"value\":100}]；"
                        "只想复制整张表请用 read_spreadsheet + write_spreadsheet")
    limit = int(rt.clamp(params, "limit", MAX_LIMIT, 1) or 100000)
    table = tio.open_table(source, sheet=params.get("sheet") or None, header_row=params.get("header_row"),
                          password=params.get("password"))
    try:
        where = tio.compile_where(table, where_spec)
        columns = _columns(table, params.get("columns"))
        target = table_write.output_path(params.get("out_path"), source, "筛选")
        job = Filtered(table, where, columns, limit=limit, include_totals=bool(params.get("include_totals")),
                       deadline=rt.deadline)
        rows = job.rows()
        header = next(rows)
        first = next(rows, None)            # nothing matched: no file, say so and suggest values
        result = {"source": source, "sheet": table.sheet_name, "header_row": table.header_row,
                  "header_reason": table.header_reason}
        if first is None:
            result.update(path=None, match_count=0, written=0, rows_scanned=job.scanned, columns=header,
                          column_count=len(header), complete=job.stopped_at is None, preview=[], preview_rows=[])
            suggestions = job.suggestions()
            if suggestions:
                result["suggestions"] = suggestions
            rt.warn("没有符合条件的行（共检查 %d 行）。%s" % (job.scanned, (
                "条件里的值可能有错字，表里最接近的值见 suggestions" if suggestions else
                "请用 probe_table 看一下列的取值，或放宽条件")))
        else:
            def stream():
                yield header
                yield first
                for row in rows:
                    yield row
            saved = table_write.write_derived(target, stream(), params.get("out_sheet") or DEFAULT_SHEET,
                                              keep_text=params.get("keep_text"), deadline=rt.deadline,
                                              sources=(table,), notes=where.warnings)
            for note in saved.get("warnings") or []:
                rt.warn(note)
            result["converted_columns"] = saved["converted_columns"]
            result.update(path=saved["path"], out_sheet=saved["sheet"], format=saved["format"],
                          match_count=job.match_count, written=job.written, rows_scanned=job.scanned,
                          columns=header, column_count=len(header), complete=job.stopped_at is None,
                          preview=job.preview, preview_rows=job.preview_rows, backup=saved.get("backup"))
            if job.match_count > job.written:
                rt.warn("共 %d 行符合条件，按 limit=%d 只写出了前 %d 行" % (job.match_count, limit, job.written))
        for note in list(table.warnings) + table.row_warnings(bool(params.get("include_totals"))) + where.warnings():
            rt.warn(note)
        for note in job.show.notes():
            rt.warn(note)
        if job.stopped_at is not None:
            rt.warn("表格太大，时间用完时只检查到第 %d 行；结果只含这之前的行（complete=false）。可加条件缩小范围，"
                    "或把表格拆开后分别筛选" % job.stopped_at)
        return result
    finally:
        table.close()


if __name__ == "__main__":
    rt.run(main)
