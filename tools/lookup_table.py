"""lookup_table: join two tables on a key column, saved as a new table file.

Why a tool: "把表二的电话带到表一" (VLOOKUP) and "两张表对一下账" go wrong in Excel for reasons a
person cannot see: a trailing space, a full-width digit, a zero-width character pasted from a web
page, ``1001`` stored as a number on one side and as text on the other. Here keys are matched the
way people mean them (``xlakit.tables.keys``), long ID numbers are compared as text, never through
floats, and the answer says how many rows matched, which keys did not, and which right-hand keys
appear more than once (and which row was used).

Modes:
- ``merge`` (default): every left row, plus the ``bring`` columns of the first right row with the
  same key (all right columns except the key when ``bring`` is not given). Default output
  ``<左表名>_关联``.
- ``reconcile``: one row per key with its status: 仅左表 / 仅右表, and with ``left_value`` +
  ``right_value`` the per-key sums compared: 一致 (difference within ``tolerance``, default 0.005),
  不一致, 缺少金额 (a side has the key but no amount); without values: 两表都有. Problems first.
  Default output ``<左表名>_对账``.

Parameters: left_path, right_path, left_key, right_key (default: the same name as left_key), mode,
bring, left_value, right_value, tolerance, case_sensitive, left_sheet, right_sheet,
left_header_row, right_header_row, out_path, out_sheet, keep_text (true: money text is written as it
was; by default money/number columns become number cells, listed in ``converted_columns``).

Returns ``path``, ``rows_written``, ``columns``, ``preview``; merge: ``matched``,
``unmatched_left`` (+ examples), ``unmatched_right`` (+ examples), ``right_duplicate_keys`` with
``right_duplicates`` ({key, count, rows, used_row}); reconcile: ``status_counts``, ``tolerance``,
``left_total`` / ``right_total`` / ``total_difference`` / ``mismatch_difference``, ``examples`` per
problem status; both: ``complete`` and ``warnings``.
"""

import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.tables import write as table_write  # noqa: E402
from xlakit.tables import lookup  # noqa: E402
from xlakit.tables.derive import row_notes  # noqa: E402
import table_io as tio  # noqa: E402

SHEETS = {"merge": "关联结果", "reconcile": "对账结果"}
LABELS = {"merge": "关联", "reconcile": "对账"}
RECONCILE_RESERVE = 8.0        # seconds kept for writing the reconcile file after both reads


def _open(params, side):
    path = paths.resolve_read(params.get("%s_path" % side), "%s_path" % side)
    table = tio.open_table(path, sheet=params.get("%s_sheet" % side) or None,
                           header_row=params.get("%s_header_row" % side), password=params.get("password"))
    return path, table


def _describe(path, table, rows):
    return {"path": path, "sheet": table.sheet_name, "header_row": table.header_row, "rows": rows}


def _table_notes(label, table):
    for note in list(table.warnings) + row_notes(table, "第 %s 行是合计/小计行，没有参与关联或对账，也没有写进新表"):
        rt.warn("%s：%s" % (label, note))


def _bring(params, right, right_key):
    specs = params.get("bring")
    if specs in (None, [], ""):
        cols = [c for c in right.columns if c.index != right_key.index]
        if not cols:
            raise ToolError("右表除了主键列「%s」没有别的列可带过来。请检查 right_path / right_sheet 是否选对了表" %
                            right_key.name)
        return cols
    if not isinstance(specs, list):
        specs = [specs]
    out, seen = [], set()
    for i, spec in enumerate(specs):
        col = right.column(spec, "bring[%d]" % i)
        if col.index not in seen:
            seen.add(col.index)
            out.append(col)
    return out


def _write(target, rows, sheet, params=None, result=None, tables=(), notes=None):
    """Write the derived rows through the shared derived-table writer (number cells unless
    keep_text, in the number formats of the source ``tables``; ``notes`` under the table, see
    ``write_derived``); ``result["converted_columns"]`` says which columns were converted."""
    saved = table_write.write_derived(target, rows, sheet, keep_text=(params or {}).get("keep_text"),
                                      deadline=rt.deadline, sources=tables, notes=notes)
    if result is not None:
        result["converted_columns"] = saved["converted_columns"]
    for note in saved.get("warnings") or []:
        rt.warn(note)
    return saved


def _merge(params, lpath, left, rpath, right, lkey, rkey, keymaker, target):
    bring = _bring(params, right, rkey)
    try:
        index = lookup.RightIndex(right, rkey.index, [c.index for c in bring], keymaker, deadline=rt.deadline)
    except lookup.Stopped as stop:
        raise ToolError("右表太大，时间用完时只读到第 %d 行，无法完成关联（右表要完整读入才能查找）。"
                        "请先用 filter_table 缩小右表，或把右表拆小后再关联" % stop.rownum)
    job = lookup.Merged(left, lkey.index, index, [c.name for c in bring], keymaker, deadline=rt.deadline)
    converted = {}
    saved = _write(target, job.rows(), params.get("out_sheet") or SHEETS["merge"], params, converted, (left, right))
    unused = index.unused()
    result = {
        "mode": "merge", "path": saved["path"], "out_sheet": saved["sheet"], "format": saved["format"],
        "backup": saved.get("backup"), "rows_written": job.rows_written, "columns": job.header,
        "column_count": len(job.header), "left_key": lkey.name, "right_key": rkey.name,
        "brought_columns": job.brought,
        "matched": job.matched, "unmatched_left": job.unmatched, "left_empty_keys": job.empty_keys,
        "unmatched_right": len(unused), "right_keys": len(index.rows),
        "right_duplicate_keys": len(index.dups),
        "complete": job.stopped_at is None,
        "left": _describe(lpath, left, job.rows_written), "right": _describe(rpath, right, index.scanned),
    }
    result.update(converted)
    if job.unmatched_examples:
        result["unmatched_left_examples"] = job.unmatched_examples
    if unused:
        result["unmatched_right_examples"] = [
            {"key": tio.display(index.shown[k]), "row": index.rows[k][0]} for k in unused[:lookup.EXAMPLES]]
    if index.dups:
        result["right_duplicates"] = index.duplicates()
        rt.warn("右表有 %d 个主键出现不止一次，按第一条关联（每个重复键用的是哪一行见 right_duplicates 的 used_row）；"
                "需要先去重可用 dedupe_table" % len(index.dups))
    near = job.near_misses()
    if near:
        result["near_misses"] = near
        rt.warn("有的主键只差前导零（如左表「%s」、右表「%s」），没有算作匹配：多半是一边把编号存成了数字。"
                "确认是同一个编号的话，请先把那一列统一成文本" % (near[0]["left"], near[0]["right"]))
    if index.empty_keys:
        rt.warn("右表有 %d 行主键为空，已忽略" % index.empty_keys)
    if job.empty_keys:
        rt.warn("左表有 %d 行主键为空，带过来的列留空" % job.empty_keys)
    if job.matched == 0 and job.rows_written:
        rt.warn("左表没有一行匹配到右表。请确认两个主键列是同一种编号（可用 probe_table 看一下两列的取值）")
    if job.stopped_at is not None:
        rt.warn("表格太大，时间用完时左表只处理到第 %d 行；结果只含这之前的行（complete=false）。"
                "请把左表拆开后分别关联" % job.stopped_at)
    result["preview"] = job.preview
    result["preview_rows"] = job.preview_rows
    for note in job.show.notes():
        rt.warn(note)
    return result


def _reconcile(params, lpath, left, rpath, right, lkey, rkey, keymaker, target):
    lv_spec, rv_spec = params.get("left_value"), params.get("right_value")
    if (lv_spec in (None, "")) != (rv_spec in (None, "")):
        raise InputError("left_value 和 right_value 要成对给出（两边各自的金额列），或都不给（只比对主键）")
    lval = left.column(lv_spec, "left_value") if lv_spec not in (None, "") else None
    rval = right.column(rv_spec, "right_value") if rv_spec not in (None, "") else None
    tolerance = params.get("tolerance")
    tolerance = lookup.DEFAULT_TOLERANCE if tolerance is None else tolerance
    if tolerance < 0:
        raise InputError("tolerance 不能是负数（它是两边金额允许的最大差额，默认 0.005）")
    job = lookup.Reconciled(left, lkey.index, lval.index if lval else None, right, rkey.index,
                            rval.index if rval else None, keymaker, tolerance=tolerance, deadline=rt.deadline,
                            reserve=RECONCILE_RESERVE)
    converted = {}

    def skipped_notes():
        out = []
        for side, label, col in (("left", "左表", lval), ("right", "右表", rval)):
            count, samples = job.skipped[side]
            if count and col is not None:
                out.append("%s金额列「%s」有 %d 个单元格不是数字（%s），没有计入对账金额" % (
                    label, col.name, count, "、".join(samples[:3])))
        return out
    saved = _write(target, job.rows(), params.get("out_sheet") or SHEETS["reconcile"], params, converted, (left, right),
                   notes=skipped_notes)
    counts = job.counts
    result = {
        "mode": "reconcile", "path": saved["path"], "out_sheet": saved["sheet"], "format": saved["format"],
        "backup": saved.get("backup"), "rows_written": saved["rows_written"] - 1, "columns": job.header,
        "column_count": len(job.header), "left_key": lkey.name, "right_key": rkey.name,
        "status_counts": counts, "left_keys": len(job.left), "right_keys": len(job.right),
        "complete": job.stopped is None,
        "left": _describe(lpath, left, job.scanned["left"]), "right": _describe(rpath, right, job.scanned["right"]),
    }
    result.update(converted)
    if lval is not None:
        result.update(left_value=lval.name, right_value=rval.name, tolerance=float(job.tolerance))
        result.update(job.amounts())
    examples = {}
    for status in (lookup.S_DIFF, lookup.S_NOVALUE, lookup.S_LEFT, lookup.S_RIGHT):
        if job.results[status]:
            examples[status] = job.examples(status, 5)
    if examples:
        result["examples"] = examples
    result["preview"] = job.preview()
    if lval is not None:
        rt.warn("金额差的绝对值不超过 %s 算一致（tolerance，用来吸收导出数字的浮点误差）" % tio.display(float(job.tolerance)))
    for side, label in (("left", "左表"), ("right", "右表")):
        multi = sum(1 for e in (job.left if side == "left" else job.right).values() if e.count > 1)
        result["%s_duplicate_keys" % side] = multi
        if multi:
            rt.warn("%s有 %d 个主键出现不止一次%s" % (label, multi, "，金额已按主键合计后再比对" if lval else ""))
        if job.empty_keys[side]:
            rt.warn("%s有 %d 行主键为空，未参与对账" % (label, job.empty_keys[side]))
        count, samples = job.skipped[side]
        if count:
            rt.warn("%s金额列有 %d 个单元格不是数字（%s），未计入" % (label, count, "、".join(samples)))
    if job.stopped is not None:
        side, rownum = job.stopped
        rt.warn("表格太大，时间用完时%s只读到第 %d 行，对账结果不完整（complete=false），后面的行会被误判为缺失。"
                "请把表格拆开后分别对账" % ("左表" if side == "left" else "右表", rownum))
    return result


def main(params):
    mode = params.get("mode") or "merge"
    if mode not in SHEETS:
        raise InputError("mode 只能是 merge（关联，VLOOKUP 式）或 reconcile（对账），收到的是 %r" % (mode,))
    lpath, left = _open(params, "left")
    try:
        rpath, right = _open(params, "right")
        try:
            lkey = left.column(params.get("left_key"), "left_key")
            rkey_spec = params.get("right_key")
            if rkey_spec in (None, ""):
                rkey_spec = lkey.name
            rkey = right.column(rkey_spec, "right_key")
            target = table_write.output_path(params.get("out_path"), [lpath, rpath], LABELS[mode])
            keymaker = lookup.make_keymaker(bool(params.get("case_sensitive")))
            if mode == "merge":
                if params.get("left_value") or params.get("right_value"):
                    rt.warn("left_value / right_value 只在 mode=reconcile（对账）时使用，已忽略")
                result = _merge(params, lpath, left, rpath, right, lkey, rkey, keymaker, target)
            else:
                if params.get("bring"):
                    rt.warn("bring 只在 mode=merge（关联）时使用，已忽略")
                result = _reconcile(params, lpath, left, rpath, right, lkey, rkey, keymaker, target)
            note = keymaker.lossy_note("主键列")
            if note:
                rt.warn(note)
            _table_notes("左表", left)
            _table_notes("右表", right)
            rt.shrink_to_fit(result, ("preview", "unmatched_left_examples", "unmatched_right_examples", "right_duplicates",
                          "near_misses"))
            if isinstance(result.get("examples"), dict) and rt.budget(result) < 0:
                for rows in result["examples"].values():
                    del rows[1:]
                rt.shrink_to_fit(result, ("preview",))
            return result
        finally:
            right.close()
    finally:
        left.close()


if __name__ == "__main__":
    rt.run(main)
