"""clean_table: a cleaned copy of a table, saved as a new file, with an account of every change.

Why a tool: exports from ERP, bank and e-commerce systems come with trailing and full-width
spaces, zero-width characters and non-breaking spaces pasted from web pages, amounts stored as
text, three ways of writing a date and merged cells that leave blanks behind; sums and lookups on
such a table silently miss rows. The model must not retype the table; this tool cleans it by
fixed, conservative rules (``xlakit.tables.clean``: identifiers, codes with leading zeros,
percents and accounting negatives are never turned into numbers; dates are only unified in the
columns named), writes the result through the shared writer (atomic, never over an existing file
by default) and says, per column, how many cells each rule changed with one example each, so the
user can trust the copy.

Parameters: path, trim, to_number, remove_invisible, date_columns, text_columns, number_columns
(columns whose name looks like codes but that hold amounts), fill_merged,
drop_empty_rows, drop_empty_cols (header and data both empty), drop_totals, sheet, header_row
(0 = no header), out_path (default ``~/.xla/workspace/<源名>_清洗.xlsx``, csv sources -> .csv),
out_sheet (default 清洗结果).

Returns ``path``, ``rows_read``, ``rows_written``, ``columns``, ``column_count``, ``changed``
(totals per kind: trimmed, invisible, to_number, to_date, merged_filled, kept_text, not_date),
``changed_cells`` (the cells whose written value differs from the source, one cell counted once even
when several rules touched it; ISO date text turned into a date cell counts), ``changes`` (per
column: ``changed_cells``, counts per kind, reasons for text kept as text, examples),
``dropped`` (empty rows, footnote rows, totals rows, empty columns), ``preview`` /
``preview_rows``, ``summary`` (one Chinese sentence), ``complete`` (false when the time budget
ended the pass: the file then holds the rows before ``stopped_at``) and ``warnings``.
"""

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.tables import write as table_write  # noqa: E402
from xlakit.tables.clean import Cleaner, Options, empty_header  # noqa: E402
import table_io as tio  # noqa: E402

DEFAULT_SHEET = "清洗结果"
SUMMARY_KINDS = (("trimmed", "去首尾空格 %d 处"), ("invisible", "去不可见字符 %d 处"), ("to_number", "文本转数字 %d 处"),
                 ("to_date", "统一日期 %d 处"), ("merged_filled", "填充合并单元格 %d 格"))

SHORT_REASONS = {"identifier": "编号", "code_column": "编号列", "percent": "百分数", "accounting": "会计负数",
                 "unit": "带万/千/亿", "other": "科学计数等", "text_column": "指定保持文本的列"}


def _columns(table, specs, param):
    if specs in (None, [], ""):
        return []
    if not isinstance(specs, list):
        specs = [specs]
    out, seen = [], set()
    for i, spec in enumerate(specs):
        column = table.column(spec, "%s[%d]" % (param, i))
        if column.index >= len(table.columns):
            raise ToolError("%s[%d]「%s」超出了表格的列范围（共 %d 列）。%s" % (
                param, i, spec, len(table.columns), table.columns_hint()))
        if column.index not in seen:
            seen.add(column.index)
            out.append(column)
    return out


def _open(source, params):
    return tio.open_table(source, sheet=params.get("sheet") or None, header_row=params.get("header_row"),
                          password=params.get("password"))


def _options(table, params, target=None):
    dates = _columns(table, params.get("date_columns"), "date_columns")
    taken = set(d.index for d in dates)
    texts = [c for c in _columns(table, params.get("text_columns"), "text_columns") if c.index not in taken]
    taken.update(c.index for c in texts)
    numbers = [c for c in _columns(table, params.get("number_columns"), "number_columns") if c.index not in taken]
    return Options(trim=params.get("trim", True) is not False, to_number=params.get("to_number", True) is not False,
                   remove_invisible=params.get("remove_invisible", True) is not False, date_columns=dates,
                   text_columns=texts, number_columns=numbers, drop_empty_rows=params.get("drop_empty_rows", True) is not False,
                   drop_totals=bool(params.get("drop_totals")),
                   text_output=str(target or "").lower().endswith((".csv", ".txt", ".tsv")))


def _empty_columns(source, params):
    """First pass for drop_empty_cols: (indexes to keep, names dropped) or None when time ran out."""
    table = _open(source, params)
    try:
        if not params.get("fill_merged", True):
            table.merged_data = []
        # at most 40% of the time left: the cleaning pass that follows also reads and writes everything
        job = Cleaner(table, _options(table, params), deadline=rt.deadline.sub(rt.deadline.remaining() * 0.4))
        found = job.nonempty_columns()
        if job.stopped_at is not None:
            return None
        drop = [c for c in table.columns if c.index not in found and empty_header(c)]
        gone = set(c.index for c in drop)
        return [c.index for c in table.columns if c.index not in gone], [c.name for c in drop]
    finally:
        table.close()


def _summary(job, rows_written, dropped_cols, changed, changed_cells):
    parts = [text % changed[k] for k, text in SUMMARY_KINDS if changed.get(k)]
    drops = []
    if job.empty_rows:
        drops.append("空行 %d 行" % job.empty_rows)
    if job.note_rows:
        drops.append("表尾说明 %d 行" % job.note_rows)
    if job.totals_dropped:
        drops.append("合计/小计行 %d 行" % job.totals_dropped)
    if dropped_cols:
        drops.append("空列 %d 列" % len(dropped_cols))
    text = "写出 %d 行数据" % rows_written
    if parts:
        text += "；改动 %d 个单元格（%s）" % (changed_cells, "、".join(parts))
    else:
        text += "；单元格内容无需改动"
    if drops:
        text += "；删除" + "、".join(drops)
    if changed.get("kept_text"):
        why = sorted(job.reasons().items(), key=lambda kv: -kv[1])
        text += "；另有 %d 处像数字的文本按规则保持原样（%s）" % (changed["kept_text"], "、".join(
            "%s %d 处" % (SHORT_REASONS.get(k, k), n) for k, n in why))
    if changed.get("not_date"):
        text += "；日期列里有 %d 处不是日期，保持原样" % changed["not_date"]
    return text + "。"


def main(params):
    source = paths.resolve_read(params.get("path"), "path")
    keep, dropped_cols = None, []
    target = table_write.output_path(params.get("out_path"), source, "清洗")
    if params.get("drop_empty_cols"):
        first = _empty_columns(source, params)
        if first is None:
            rt.warn("表格太大，没来得及检查哪些列是空的，这次没有删除空列")
        else:
            keep, dropped_cols = first
    table = _open(source, params)
    try:
        options = _options(table, params, target)
        if not params.get("fill_merged", True):
            table.merged_data = []
        job = Cleaner(table, options, deadline=rt.deadline)
        rows = job.rows(keep)
        saved = table_write.write_rows(target, _nonempty(rows, table), sheet=params.get("out_sheet") or DEFAULT_SHEET)
        for note in saved.get("warnings") or []:
            rt.warn(note)
        kept = keep if keep is not None else list(range(len(table.columns)))
        header = job.header()
        columns = [header[i] for i in kept]
        totals = job.totals()
        changed_cells = totals.pop("changed_cells")
        changed = {k: n for k, n in totals.items() if n}
        dropped = {"empty_rows": job.empty_rows, "note_rows": job.note_rows, "totals_rows": job.totals_dropped,
                   "empty_columns": dropped_cols}
        result = {"source": source, "sheet": table.sheet_name, "header_row": table.header_row,
                  "header_reason": table.header_reason, "path": saved["path"], "out_sheet": saved["sheet"],
                  "format": saved["format"], "backup": saved.get("backup"), "rows_read": job.rows_in,
                  "rows_written": job.rows_out, "columns": columns, "column_count": len(columns),
                  "complete": job.stopped_at is None, "summary": _summary(job, job.rows_out, dropped_cols, changed, changed_cells),
                  "changed": changed, "changed_cells": changed_cells, "dropped": dropped,
                  "totals_rows_kept": job.totals_rows - job.totals_dropped,
                  "code_columns": [n for n in job.code_columns if n in columns],
                  "preview": job.preview, "preview_rows": job.preview_rows}
        if job.stopped_at is not None:
            result["stopped_at"] = job.stopped_at
            rt.warn("表格太大，时间用完时只清洗到第 %d 行；新文件只含这之前的行（complete=false）。可以把表格拆开后分别清洗" %
                    job.stopped_at)
        _warnings(table, job, options, params)
        changes = job.changes(kept)
        base = dict(result, changes=[], changes_truncated=True)
        room = rt.budget(base)
        n = rt.fit_items(changes, room)
        result["changes"] = changes[:n]
        if n < len(changes):
            result["changes_truncated"] = True
            rt.warn("有改动的列共 %d 列，回答里放得下前 %d 列的明细；各类改动的合计见 changed" % (len(changes), n))
        return result
    finally:
        table.close()


def _nonempty(rows, table):
    """The writer refuses an empty row list: a table with neither a header nor data rows left gets
    one empty row, and the answer says nothing was left."""
    got = False
    for row in rows:
        got = True
        yield row
    if not got:
        rt.warn("清洗后表格里没有任何内容（工作表「%s」）" % table.sheet_name)
        yield []


def _warnings(table, job, options, params):
    for note in table.warnings:
        rt.warn(note)
    if job.totals_rows and not options.drop_totals:
        rt.warn("表里有 %d 行合计/小计行，已原样保留（单元格同样清洗）；不需要时传 drop_totals=true" % job.totals_rows)
    guarded = job.guarded_columns()
    if guarded:
        rt.warn("这些列的列名像编号，里面的数字文本保持了文本：%s；如果其实是数值，把列名放进 number_columns 再清洗一次" %
                "、".join(guarded[:10]))
    if job.wide_cells:
        rt.warn("第 %s 行在表头范围右边还有 %d 个单元格，没有列名，未写入新表；请检查表头或用 header_row 指定表头行" % (
            "、".join(str(r) for r in job.wide_rows), job.wide_cells))
    if job.header_changed:
        rt.warn("表头里有不可见字符，已去掉：%s" % "、".join("%s → %s" % (h["column"], h["now"]) for h in job.header_changed[:5]))
    if table.header_rows and table.header_rows[0] > 1:
        rt.warn("表头在第 %d 行，上面的标题/说明行没有写入新表" % table.header_rows[0])


if __name__ == "__main__":
    rt.run(main)
