"""write_spreadsheet: write a 2-D array into an xlsx / xls / csv file.

Why a tool and not "the model writes a file": the cells must come out as an office worker expects
(numbers as numbers, ISO dates as real Excel dates, ID-card numbers as exact text, a bold frozen
header) and the user's existing workbook must survive: other sheets are kept, every change is atomic
and backed up to ~/.xla/backup/, and a workbook with charts, pictures, pivot tables or macros that
openpyxl would silently drop is refused unless ``allow_lossy_resave`` is set. All of that lives in
the shared writer ``xlakit.tables.write``, which the other table tools use for their results too.

Parameters:
    path     target file; the suffix (.xlsx / .xls / .csv; an existing .xlsm) decides the format.
             A bare file name goes to the workspace ~/.xla/workspace.
    rows     2-D array, first row usually the header.
    sheet    worksheet name (default Sheet1; ignored for csv).
    mode     "overwrite" (default: xlsx replaces that sheet only, xls/csv the whole file) or
             "append" (not possible for .xls).
    position for append: "auto" (default) puts the rows above the table's totals block (合计 rows,
             注：/制表人： footer lines), which moves down with its sums kept true; "end" always
             after the last row holding a value.
    allow_lossy_resave  true = write even though the workbook has parts openpyxl cannot keep.
    chart    optional {"type": "bar"|"line"|"pie", "title", "categories", "values"}: a native,
             editable Excel chart beside the rows (xlsx only; categories/values are column names,
             column letters or ranges such as "A2:A13"; by default the first column against every
             number column, 合计 rows and columns left out). See xlakit.tables.xlsx_chart.

Returns path, format, sheet, mode, action, rows_written, start_row, total_rows, columns, backup,
sheets, header_skipped, warnings, (csv: encoding, delimiter), for append position and, when rows
went above a totals block, totals_updated ([{cell, kind: formula|value, old, new}]) and
totals_moved ({from, to}), with a chart its ranges (chart: {type, title, categories, values}), and a
short Chinese message.
"""
import os
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.tables import write as table_write, xlsx_new  # noqa: E402
from xlakit.tables.xlsx_chart import KINDS as CHART_NAMES  # noqa: E402

ACTIONS = {
    "new_file": "新建文件",
    "new_sheet": "新建工作表",
    "replaced_sheet": "覆盖了原工作表",
    "replaced_file": "覆盖了整个文件",
    "appended": "追加到末尾",
    "inserted_above_totals": "插在合计行/表尾上方",
}


def _message(res):
    where = "「%s」" % os.path.basename(res["path"])
    if res["sheet"]:
        where += "的工作表「%s」" % res["sheet"]
    if res["rows_written"]:
        end = res["start_row"] + res["rows_written"] - 1
        span = "第 %d 行" % end if end == res["start_row"] else "第 %d–%d 行" % (res["start_row"], end)
        text = "已写入 %d 行到%s%s（%s）" % (res["rows_written"], where, span, ACTIONS.get(res["action"], res["action"]))
    else:
        text = "没有新行需要写入%s（只有与原表头相同的一行，已跳过）" % where
    if res["header_skipped"] and res["rows_written"]:
        text += "，与原表头相同的第一行已跳过"
    if res["action"] == "replaced_sheet" and res["format"] in ("xlsx", "xlsm") and len(res["sheets"] or []) > 1:
        text += "，其他工作表保持不变"
    moved = res.get("totals_moved")
    if moved:
        text += "，原合计行和表尾从第 %d 行下移到第 %d 行" % (moved["from"], moved["to"])
        updated = res.get("totals_updated") or []
        if updated:
            text += "，已更新合计：%s" % "、".join(_total_text(u) for u in updated[:6])
            if len(updated) > 6:
                text += " 等 %d 处" % len(updated)
    if res.get("chart"):
        c = res["chart"]
        text += "，并在数据旁加了一张%s（分类 %s，数据 %s），在 Excel/WPS 里可直接编辑" % (
            CHART_NAMES[c["type"]], c["categories"], "、".join(v["range"] for v in c["values"]))
    text += "；现共 %d 行" % res["total_rows"]
    if res["backup"]:
        text += "；原文件已备份到 %s" % res["backup"]
    return text + "。"


def _total_text(update):
    if update["kind"] == "formula":
        shown = update["new"]
        if update.get("value") is not None:
            shown += " = %s" % update["value"]
        return "%s %s" % (update["cell"], shown)
    return "%s %s → %s" % (update["cell"], update["old"], update["new"])


def main(params):
    result = table_write.write_rows(
        params.get("path"),
        params.get("rows"),
        sheet=params.get("sheet") or None,
        mode=params.get("mode") or "overwrite",
        allow_lossy=bool(params.get("allow_lossy_resave")),
        position=params.get("position") or "auto",
        deadline=rt.deadline,
        chart=params.get("chart"),
        styles=xlsx_new.AUTO_MONEY,      # a new table's money columns #,##0.00, 合计 rows bold
    )
    result["message"] = _message(result)
    for note in result.pop("warnings", None) or []:
        rt.warn(note)
    return result


if __name__ == "__main__":
    rt.run(main)
