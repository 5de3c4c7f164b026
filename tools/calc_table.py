"""calc_table: group a sheet by some columns and total others (分类汇总), without the model ever
touching the numbers.

Why a tool: a model adding up 3,000 amounts is wrong; a tool streaming the file is right, fast and
cheap. Everything that decides *which* numbers are added lives in ``table_io`` (header detection
under title rows, merged headers, money text such as ``￥1,234.50`` / ``(300.00)`` / ``1.2万``,
合计 rows held back, merged cells filled), so calc_table, filter_table and pivot_table agree.

Parameters:
    path            spreadsheet (xlsx/xlsm/xls/csv/txt, fake-html .xls...), opened by content.
    sheet           worksheet name; default the first visible one.
    header_row      1-based header row; omitted = detected; 0 = no header (columns are 列A, 列B...).
    group_by        list of columns (name or letter) or {"column", "date_bucket", "as"} with
                    date_bucket year / quarter / month / week (ISO) / day. Omitted = one total row.
    metrics         list of {"column", "func", "as"}; func sum / avg / max / min / count /
                    count_rows / distinct_count. count counts the values sum/avg use (``-``, ``无``,
                    ``N/A`` are empty), so count x avg = sum; count_rows (or count without column)
                    counts rows whatever the column holds; the answer's metrics[].counts says which.
    where           list of {"column", "op", "value"} (see table_io.OPS_HELP), all must hold.
    sort_by         a metric alias or group column; order asc/desc (default desc with sort_by,
                    otherwise groups ascend by their keys); top N keeps the first N after sorting.
    sort            how text keys are ordered: pinyin (default: Chinese by pinyin, digits by value,
                    ``第2组`` before ``第10组``) or codepoint.
    include_totals  false (default) leaves 合计/小计/Total rows out, since they would double sums.

Returns groups (objects keyed by group names and metric aliases; at most 100, one ``rt.page_items``
page sized by the output budget: returned, total, next_offset, truncated), group_count, rows_used,
rows_filtered_out, totals_rows_excluded, header_row, header_reason, skipped (per metric: count + 3
examples with row numbers), warnings, complete. At ``rt.deadline`` the pass stops and the answer
holds the rows before ``stopped_at`` (complete=false, with a warning), like the other table tools.

Sums are exact decimals: each float cell enters through its shortest repr, so 0.1 + 0.2 is 0.3 and
the total matches Excel's SUM to the cent. The loop is written for speed (one pass, precomputed
column indexes, number fast paths) because a 1,000,000-row sheet must finish inside 60 s.
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import collate, runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.tables import group_pass, split_pass  # noqa: E402
import table_io as tio  # noqa: E402

MAX_GROUPS_RETURNED = 100
def resolve_sort_by(sort_by, group_names, metrics):
    """The output field to sort by: a metric alias, a group name, or the column of exactly one
    metric (``"金额"`` when the metric is called ``金额_求和``). Checked before the long pass."""
    if not sort_by:
        return None
    aliases = [m[2] for m in metrics]
    if sort_by in aliases or sort_by in group_names:
        return sort_by
    same_column = [m[2] for m in metrics if m[0] is not None and m[0].name == sort_by]
    if len(same_column) == 1:
        return same_column[0]
    raise ToolError("sort_by 只能是统计结果的别名或分组列：%s；收到的是「%s」" % ("、".join(aliases + group_names), sort_by))


def order_groups(records, sort_by, order, group_names, collation="pinyin"):
    """Sort records in place: by sort_by (None values last) or by the group keys ascending.
    Text keys follow ``collation`` (pinyin with digits by value by default, ``xlakit.collate``)."""
    if sort_by:
        desc = (order or "desc") == "desc"
        present = [r for r in records if r.get(sort_by) is not None]
        missing = [r for r in records if r.get(sort_by) is None]
        present.sort(key=lambda r: tio.sort_key(r[sort_by], collation), reverse=desc)
        records[:] = present + missing
        return
    desc = order == "desc"
    records.sort(key=lambda r: tuple(tio.sort_key(r[g], collation) for g in group_names), reverse=desc)

EXACT_SUFFIX = "_精确值"


def _metric_entry(column, func, alias, skip):
    """One entry of the answer's ``metrics``; a count says what it counted (``counts``)."""
    entry = {"as": alias, "func": func, "column": column.name if column is not None else None}
    meaning = tio.count_meaning(func, skip, column is not None)
    if meaning:
        entry["counts"] = meaning
    return entry


def main(params):
    path = paths.resolve_read(params.get("path"), "path")
    try:
        return _open_and_calc(path, params, split=True)
    except split_pass.Restart:          # the two-process pass could not be exact: one pass, from the top
        return _open_and_calc(path, params, split=False)


def _open_and_calc(path, params, split):
    table = tio.open_table(path, sheet=params.get("sheet") or None, header_row=params.get("header_row"),
                           password=params.get("password"))
    try:
        return calc(table, params, split)
    finally:
        table.close()


def calc(table, params, split=False):
    """The answer for an open table; ``split``: a big csv may be grouped on two processes
    (``xlakit.tables.split_pass``, same answer)."""
    groups, metrics, where = group_pass.plan(table, params)
    include_totals = bool(params.get("include_totals"))
    order = params.get("order")
    if order is not None and order not in ("asc", "desc"):
        raise ToolError("order 只能是 asc（从小到大）或 desc（从大到小），收到的是 %r" % order)
    top = params.get("top")
    if top is not None and (not isinstance(top, int) or top < 1):
        raise ToolError("top 应是大于 0 的整数，收到的是 %r" % top)
    sort_by = resolve_sort_by(params.get("sort_by"), [g[2] for g in groups], metrics)
    try:
        collation = collate.check_mode(params.get("sort"))
    except ValueError as exc:
        raise ToolError(str(exc))

    # only the grouped, summed and filtered columns are built from an xlsx sheet's rows
    table.project([g[0].index for g in groups] + [m[0].index for m in metrics if m[0] is not None]
                  + [c[0] for c in where.conditions])
    if split:
        buckets, used, filtered, skips, specs, stopped_at = split_pass.grouped(
            table, params, groups, metrics, where, include_totals, rt.deadline)
    else:
        buckets, used, filtered, skips, specs, stopped_at = group_pass.aggregate(
            table, groups, metrics, where, include_totals, rt.deadline)

    group_names = [g[2] for g in groups]
    aliases = [m[2] for m in metrics]
    if not groups and not buckets:
        # no rows at all: still one total line (sum 0, count 0, avg null) like Excel
        skips_empty = [tio.SkipLog() for _ in metrics]
        buckets[None] = [tio.RowCount() if m[0] is None else tio.make_metric(m[1], skips_empty[i])
                         for i, m in enumerate(metrics)]
    for i in range(len(metrics)):
        tio.same_places([accs[i] for accs in buckets.values()])
    records = []
    for key, accs in buckets.items():
        record = {}
        if len(groups) == 1:
            record[group_names[0]] = key
        elif groups:
            for name, part in zip(group_names, key):
                record[name] = part
        for alias, acc in zip(aliases, accs):
            record[alias] = acc.result()
            if isinstance(acc, tio.AvgAgg) and acc.rounded():   # shown rounded; the exact value beside it
                record[alias + EXACT_SUFFIX] = acc.exact()
        records.append(record)
    order_groups(records, sort_by, order, group_names, collation)
    group_count = len(records)
    if top:
        records = records[:top]

    warn = list(table.warnings)
    warn += table.row_warnings(include_totals)
    warn += where.warnings()
    skipped = {}
    for (column, func, alias), skip in zip(metrics, skips):
        if skip.count:
            skipped[alias] = {"count": skip.count, "examples": skip.examples}
            first = skip.examples[0]
            warn.append("「%s」有 %d 个单元格不是%s，已跳过未计入（如第 %d 行「%s」）" % (
                column.name, skip.count, "数字或日期" if func in ("max", "min") else "数字", first["row"], first["value"]))
    for (column, bucket, name), (_idx, bucketer) in zip(groups, specs):
        if bucketer is not None and bucketer.bad:
            first = bucketer.bad_examples[0]
            warn.append("「%s」有 %d 个单元格不是日期，无法按%s归类，归入空分组（如第 %d 行「%s」）" % (
                column.name, bucketer.bad, tio.BUCKET_NAMES[bucket], first["row"], first["value"]))
    if used == 0:
        warn.append("没有符合条件的数据行" if where.conditions else "表格里没有数据行")

    if stopped_at is not None:
        # like pivot/filter/clean: the rows read so far, labelled, rather than nothing at all
        warn.insert(0, "表格太大，时间用完时只统计到第 %d 行之前，结果不完整（complete=false）。可用 where 缩小范围，"
                       "或把表格拆成几个文件分别统计" % stopped_at)
    for note in warn:
        rt.warn(note)
    result = {
        "sheet": table.sheet_name,
        "header_row": table.header_row,
        "header_reason": table.header_reason,
        "group_by": group_names,
        "metrics": [_metric_entry(c, f, a, skip) for (c, f, a), skip in zip(metrics, skips)],
        "group_count": group_count,
        "rows_used": used,
        "rows_filtered_out": filtered,
        "totals_rows_excluded": 0 if include_totals else table.totals_count,
        "complete": stopped_at is None,
    }
    if stopped_at is not None:
        result["stopped_at"] = stopped_at
    if len(table.header_rows) > 1:
        result["header_rows"] = list(table.header_rows)
    if skipped:
        result["skipped"] = skipped
    # the groups as one page sized by the real output budget (returned, next_offset, truncated)
    note = "共 %d 组，只返回了前 %d 组（输出字数上限）。可用 sort_by + top 取前几名，或用 where 缩小范围" % (
        group_count, len(records))
    result = rt.page_items(records, limit=MAX_GROUPS_RETURNED, key="groups", base=result, reserve=len(note) + 4)
    if result["truncated"]:
        cap = "超过 %d 组" % MAX_GROUPS_RETURNED if result["returned"] == MAX_GROUPS_RETURNED else "输出字数上限"
        rt.warn("共 %d 组，只返回了前 %d 组（%s）。可用 sort_by + top 取前几名，或用 where 缩小范围" % (
            group_count, result["returned"], cap))
    return result


if __name__ == "__main__":
    rt.run(main)
