"""pivot_table: a cross table (透视表) of one value over row keys x column keys, with row and column
totals, saved as a new, readable workbook.

Why a tool: "各部门每个月花了多少" is a 2-D question; the model must not add up thousands of cells,
and calc_table's long list of groups is not what the user wants to open in Excel. The numbers come
from ``xlakit.tables.pivot`` (one streaming pass; exact Decimal sums; totals of avg/max/min/distinct
computed from the data, not from the cells; rows/columns beyond the top N folded into 其他, never
dropped, so the grand total is the whole table's). Header detection, money text, 合计 rows held
back, merged cells filled and ``where`` are the same as calc_table and filter_table. The sheet has
the header row, the 合计 row and the 合计 column in bold, thousands separators, frozen labels.

Parameters: path, row, col ({"column", "date_bucket" year/quarter/month/week/day, "as"}), value,
func (sum / avg / max / min / count / count_rows / distinct_count; count counts the values sum/avg
use, placeholders such as ``-`` are empty; count_rows, or count without value, counts rows; the
answer's ``counts`` says which), where,
include_totals, order (label | total), sort (pinyin: Chinese labels by pinyin and digits by value,
``第2组`` before ``第10组``, the default; codepoint), max_rows (100), max_cols (60), sheet, header_row, out_path
(default ``~/.xla/workspace/<源名>_透视.xlsx``), out_sheet (default 透视表), chart (a native Excel chart
beside the result: row labels against each column, the 合计 row and column left out; see
xlakit.tables.xlsx_chart).

Returns ``path``, ``row_count`` / ``column_count`` (data rows and columns of the pivot, 其他
included, 合计 not), ``grand_total``, ``top_rows`` / ``top_cols`` (biggest keys by total),
``rows_other`` / ``cols_other`` (keys folded into 其他), ``rows_used``, ``rows_filtered_out``,
``preview`` (the sheet's first rows, one output page), ``total_row`` (the 合计 row), ``complete``
and ``warnings``.
"""

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import collate, runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.tables import write as table_write  # noqa: E402
from xlakit.tables.pivot import MAX_COLS, MAX_ROWS, Pivot, number_format_for  # noqa: E402
import table_io as tio  # noqa: E402

DEFAULT_SHEET = "透视表"
ROWS_CAP, COLS_CAP = 1000, 200
PREVIEW_ROWS = 12


def _collation(params):
    try:
        return collate.check_mode(params.get("sort"))
    except ValueError as exc:
        raise ToolError(str(exc))


def main(params):
    source = paths.resolve_read(params.get("path"), "path")
    max_rows = int(rt.clamp(params, "max_rows", ROWS_CAP, 1) or MAX_ROWS)
    max_cols = int(rt.clamp(params, "max_cols", COLS_CAP, 1) or MAX_COLS)
    collation = _collation(params)
    table = tio.open_table(source, sheet=params.get("sheet") or None, header_row=params.get("header_row"),
                          password=params.get("password"))
    try:
        where = tio.compile_where(table, params.get("where")) if params.get("where") else None
        job = Pivot(table, params.get("row"), params.get("col"), value=params.get("value"),
                    func=params.get("func") or "sum", where=where,
                    include_totals=bool(params.get("include_totals")), max_rows=max_rows, max_cols=max_cols,
                    order=params.get("order") or "label", deadline=rt.deadline, collation=collation)
        target = table_write.output_path(params.get("out_path"), source, "透视", ext="xlsx")
        job.run()
        if not job.rows_used:
            raise ToolError("没有可透视的数据：%s。请检查 where 条件，或用 probe_table 看看表格内容" % (
                "where 条件过滤掉了全部 %d 行" % job.rows_filtered if job.rows_filtered else "表里没有数据行"))
        grid = job.grid(exact=True)       # the saved sheet: exact averages, its number format rounds
        shown = job.grid() if job.func == "avg" else grid
        built = job.build()
        note_rows = []
        if job.stopped_at is not None:
            note_rows.append(["注：表格太大，时间用完时只统计到源表第 %d 行，以上数字不完整" % job.stopped_at])
        if job.skip.count:
            # the saved sheet says itself which amounts it left out, not only the answer
            examples = "、".join("第 %d 行「%s」" % (e["row"], e["value"]) for e in job.skip.examples)
            note_rows.append(["注：源表「%s」列有 %d 个单元格不是数字（如 %s），没有计入上表" % (
                job.value.name, job.skip.count, examples)])
        rows_out = grid + note_rows
        styles = {"bold_rows": [0, len(grid) - 1], "bold_cols": [0, len(grid[0]) - 1],
                  "number_format": number_format_for(grid, job.func), "freeze": [1, 1]}
        saved = table_write.write_rows(target, rows_out, sheet=params.get("out_sheet") or DEFAULT_SHEET,
                                       styles=styles, chart=params.get("chart"))
        for note in saved.get("warnings") or []:
            rt.warn(note)

        show = tio.CellShow(60)
        preview = [show.row(r) for r in shown]
        result = {
            "path": saved["path"], "out_sheet": saved["sheet"], "format": saved["format"],
            "source": source, "sheet": table.sheet_name, "header_row": table.header_row,
            "row_field": job.row.name, "col_field": job.col.name, "value_field": job.value_label,
            "func": job.func,
            "row_count": len(built["body"]), "column_count": len(built["col_order"]),
            "grand_total": job.grand,
            "row_keys": len(built["row_tot"]), "col_keys": len(built["col_tot"]),
            "rows_other": len(built["rows_folded"]), "cols_other": len(built["cols_folded"]),
            "top_rows": job.top("row", 5), "top_cols": job.top("col", 5),
            "rows_used": job.rows_used, "rows_filtered_out": job.rows_filtered,
            "complete": job.stopped_at is None, "backup": saved.get("backup"),
        }
        if saved.get("chart"):
            result["chart"] = saved["chart"]
        if job.counts:
            result["counts"] = job.counts
        if built["rows_folded"]:
            rt.warn("行维度「%s」有 %d 个取值，按合计保留前 %d 个，其余 %d 个合并成「%s」行（数字没有丢）" % (
                job.row.name, len(built["row_tot"]), max_rows, len(built["rows_folded"]), built["other_row"]))
        if built["cols_folded"]:
            rt.warn("列维度「%s」有 %d 个取值，按合计保留前 %d 个，其余 %d 个合并成「%s」列（数字没有丢）" % (
                job.col.name, len(built["col_tot"]), max_cols, len(built["cols_folded"]), built["other_col"]))
        for note in job.bucket_notes():
            rt.warn(note)
        for note in list(table.warnings) + table.row_warnings(bool(params.get("include_totals"))) + (
                where.warnings() if where is not None else []):
            rt.warn(note)
        if job.stopped_at is not None:
            rt.warn("表格太大，时间用完时只统计到第 %d 行，结果不完整（complete=false，表格末尾也注明了）。可用 where "
                    "缩小范围，或把表格拆开后分别透视" % job.stopped_at)
        for note in show.notes():
            rt.warn(note)
        result["total_row"] = preview[-1]            # the 合计 row, whatever the preview shows
        if len(preview) > PREVIEW_ROWS + 2:
            rt.warn("preview 只列出透视表的前几行；完整的 %d 行在结果文件里（可用 read_spreadsheet 读取）" % len(preview))
        page = rt.page_items(preview, 0, PREVIEW_ROWS + 2, key="preview", base=result)
        return page
    finally:
        table.close()


if __name__ == "__main__":
    rt.run(main)
