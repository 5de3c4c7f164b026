"""Pivot tables (交叉表): one value aggregated over row keys x column keys, with row and column
totals, computed from a ``Table`` in one streaming pass. Pure: no runtime import, the time budget
comes in as ``deadline``.

Why a module of its own: a pivot is not calc_table's group-by laid out sideways. Its totals for
avg / max / min / distinct_count are NOT sums of the cells (the average of averages is wrong, the
distinct count of a row is not the sum of its cells), and the rows and columns beyond the top N
must be folded into one 其他 line rather than dropped, or the grand total would lie. So every cell
keeps its accumulator (``aggregate.make_metric``: exact Decimal sums, skipped cells counted, never
read as 0) and totals are *merged* accumulators, built from the same cells: Σ of the row totals is
the grand total to the cent.

Layout of ``Pivot.grid()``:
    corner  | col 1 | ... | col N | 其他 | 合计
    row 1   |  ...                       | row total
    ...
    其他    |  (rows beyond the top N, merged)
    合计    | column totals              | grand total
Empty row/column keys are shown as （空白）; cells of a date axis that are not dates as （非日期）.
Date buckets: ``2024`` / ``2024Q3`` / ``2024-09`` / ``2024-W36`` (ISO week) / ``2024-09-05``.
"""
import datetime

from ..errors import ToolError
from .aggregate import (BUCKET_NAMES, Bucketer, RowCount, SkipLog, same_places, check_bucket, check_func, count_meaning,
                        make_metric, sort_key)
from .values import Decimal, as_datetime, key_value

MAX_ROWS = 100
MAX_COLS = 60
MAX_CELLS = 500000           # (row key, column key) pairs held in memory before we refuse
MAX_PAIRS = 200000           # distinct (row cell, column cell) pairs remembered by run()
STOP_MARGIN = 3.0            # seconds left when the pass stops: totals, 其他 and the file still fit
OTHER = "其他"
TOTAL = "合计"
BLANK = "（空白）"
NOT_DATE = "（非日期）"
FUNC_LABELS = {"sum": "求和", "avg": "平均值", "max": "最大值", "min": "最小值", "count": "计数",
               "count_rows": "行数", "distinct_count": "去重计数"}
_SPECIAL_ORDER = {BLANK: 1, NOT_DATE: 2}
_MEMO_CLASSES = frozenset([str, type(None), datetime.date, datetime.datetime])


def _fresh(func, counting_rows, skip):
    """An empty accumulator for a total or 其他 cell; it shares the cells' SkipLog so a count
    total counts what its cells count (numbers, or filled cells when the column has none)."""
    return RowCount() if counting_rows else make_metric(func, skip)


def merge_into(dst, src, func):
    """Fold accumulator ``src`` into ``dst`` (same metric): what makes totals and 其他 exact."""
    if func in ("sum", "avg"):
        dst.total += src.total
        dst.n += src.n
        if func == "avg":
            dst.places = max(dst.places, src.places)
    elif func == "count":
        dst.n += src.n
        dst.filled += src.filled
    elif func == "count_rows":
        dst.n += src.n
    elif func == "distinct_count":
        dst.seen |= src.seen
    else:                                   # max / min over numbers, or over dates
        if src.best is not None and (dst.best is None or (src.best - dst.best) * dst.sign > 0):
            dst.best = src.best
        if src.date_key is not None and (dst.date_key is None or (
                (src.date_key > dst.date_key) - (src.date_key < dst.date_key)) * dst.sign > 0):
            dst.date_key, dst.best_date = src.date_key, src.best_date
    return dst


def rank_value(acc, func):
    """A number to order rows/columns "by total" (bigger first); None when the total is empty."""
    if func == "sum":
        return acc.total if acc.n else None
    if func == "avg":
        return acc.total / acc.n if acc.n else None
    if func in ("count", "count_rows"):
        return acc.result()
    if func == "distinct_count":
        return len(acc.seen)
    if acc.best is not None:
        return acc.best
    if acc.date_key is not None:
        return Decimal(as_datetime(acc.date_key).toordinal())
    return None


class Axis(object):
    """One side of the pivot: a column, optionally bucketed by date, and how its keys are made."""

    def __init__(self, table, spec, param):
        bucket = None
        if isinstance(spec, dict):
            column = spec.get("column")
            if spec.get("date_bucket") not in (None, ""):
                bucket = check_bucket(spec.get("date_bucket"), param + ".date_bucket")
            alias = spec.get("as")
        else:
            column, alias = spec, None
        if column in (None, "") or (isinstance(column, str) and not column.strip()):
            raise ToolError("%s 需要指定列，例如 {\"column\":\"部门\"} 或 {\"column\":\"日期\",\"date_bucket\":\"month\"}。%s" % (
                param, table.columns_hint()), available_columns=table.names[:60])
        self.column = table.column(column, param + ".column")
        self.bucket = bucket
        if alias:
            self.name = str(alias)
        elif bucket:
            self.name = "%s（%s）" % (self.column.name, BUCKET_NAMES[bucket].split("（")[0])
        else:
            self.name = self.column.name
        self.bucketer = Bucketer(bucket) if bucket else None
        self._labels = {}

    def key_fn(self):
        """values, row number -> key (None for an empty cell, NOT_DATE for a non-date on a date axis)."""
        idx = self.column.index
        if self.bucketer is None:
            def plain(values, rn):
                return key_value(values[idx]) if idx < len(values) else None
            return plain
        bucketer, labels, quarter = self.bucketer, self._labels, self.bucket == "quarter"

        def dated(values, rn):
            value = values[idx] if idx < len(values) else None
            before = bucketer.bad
            label = bucketer(value, rn)
            if label is None:
                return NOT_DATE if bucketer.bad > before else None
            if quarter:
                short = labels.get(label)
                if short is None:
                    short = labels[label] = label.replace("-Q", "Q")     # 2024Q3, as people write it
                return short
            return label
        return dated


def label_sort_key(key, mode="pinyin"):
    """Row/column order: the keys by ``sort_key`` (pinyin, digits by value), then （空白）, （非日期）."""
    if key is None:
        return (4, 1, 0, ())
    if key in _SPECIAL_ORDER:
        return (4, _SPECIAL_ORDER[key], 0, ())
    return (0,) + sort_key(key, mode)


class Pivot(object):
    """Build with ``Pivot(table, row, col, value=None, func="sum", where=None, ...)`` then
    ``run()``. After it: ``grid()`` (the sheet as rows), ``rows_used``, ``rows_filtered``,
    ``row_keys_total`` / ``col_keys_total`` (distinct keys before the top-N cut),
    ``rows_other`` / ``cols_other`` (how many were folded into 其他), ``stopped_at``
    (row number where the deadline ended the pass, None when complete), ``skip`` (value cells
    the metric could not use), ``grand`` (the grand total as a JSON number)."""

    def __init__(self, table, row, col, value=None, func="sum", where=None, include_totals=False,
                 max_rows=MAX_ROWS, max_cols=MAX_COLS, order="label", deadline=None, collation="pinyin"):
        self.table = table
        self.func = check_func(func or "sum", "func")
        self.row = Axis(table, row, "row")
        self.col = Axis(table, col, "col")
        if self.row.column.index == self.col.column.index and self.row.bucket == self.col.bucket:
            raise ToolError("row 和 col 用的是同一列「%s」，交叉表会只有对角线。请换一列作列维度，或给其中一个加 "
                            "date_bucket（如行按 year、列按 month）" % self.row.column.name)
        if value in (None, "") and self.func == "count":
            self.func = "count_rows"        # count with no value column: the rows, and the answer says so
        if value in (None, ""):
            if self.func != "count_rows":
                raise ToolError("func=%s 需要 value（要汇总的数值列，如 \"金额\"）；只数行数时用 func=count_rows。%s" % (
                    self.func, table.columns_hint()), available_columns=table.names[:60])
            self.value = None
        else:
            self.value = table.column(value, "value")
        if order not in ("label", "total"):
            raise ToolError("order 只能是 label（按行/列的名称或日期排列，默认）或 total（按合计从大到小），收到的是 %r" % (order,))
        self.order = order
        self.collation = collation
        self.where = where
        self.include_totals = include_totals
        self.max_rows = max(1, int(max_rows))
        self.max_cols = max(1, int(max_cols))
        self.deadline = deadline
        self.skip = SkipLog()
        self.cells = {}              # row key -> {col key -> accumulator}
        self.rows_used = 0
        self.rows_filtered = 0
        self.stopped_at = None
        self.n_cells = 0
        self._built = None

    @property
    def counting_rows(self):
        return self.value is None or self.func == "count_rows"

    @property
    def value_label(self):
        if self.counting_rows:
            return "行数"
        return "%s%s" % (self.value.name, FUNC_LABELS[self.func])

    @property
    def counts(self):
        """What a count pivot counted (None for sum/avg/...), in the answer's words."""
        return count_meaning(self.func, self.skip, self.value is not None)

    def run(self):
        row_key, col_key = self.row.key_fn(), self.col.key_fn()
        ridx, cidx = self.row.column.index, self.col.column.index
        vidx = self.value.index if self.value is not None else -1
        match = self.where.test if self.where is not None and self.where.conditions else None
        cells, skip, func = self.cells, self.skip, self.func
        counting = self.counting_rows or vidx < 0
        deadline = self.deadline
        # (row cell, column cell) as read -> the accumulator of their pivot cell: most rows repeat
        # a pair already seen, so the two key functions (trim, date bucket) run once per pair.
        # Only pairs of text, date and empty cells are remembered: 1 == 1.0 == True as dict keys,
        # but they are not the same label; and a bucket's "not a date" cells are never remembered,
        # so every one of them is still counted (with its row) by the bucketer.
        pairs = {}
        memo_ok = _MEMO_CLASSES
        bad_row, bad_col = self.row.bucketer, self.col.bucketer
        seen = 0
        project = getattr(self.table, "project", None)
        if project is not None:     # an xlsx reader then builds only these columns (same answer)
            project([ridx, cidx, vidx] + [c[0] for c in (self.where.conditions if self.where is not None else [])])
        for rownum, values in self.table.data_rows(include_totals=self.include_totals):
            seen += 1
            if deadline is not None and not seen & 0x3FF and deadline.remaining() < STOP_MARGIN:
                self.stopped_at = rownum
                break
            if match is not None and not match(values):
                self.rows_filtered += 1
                continue
            self.rows_used += 1
            n = len(values)
            rv = values[ridx] if ridx < n else None
            cv = values[cidx] if cidx < n else None
            pair = (rv, cv)
            acc = pairs.get(pair)
            if acc is None:
                before = (bad_row.bad if bad_row is not None else 0, bad_col.bad if bad_col is not None else 0)
                rk = row_key(values, rownum)
                ck = col_key(values, rownum)
                line = cells.get(rk)
                if line is None:
                    line = cells[rk] = {}
                acc = line.get(ck)
                if acc is None:
                    if self.n_cells >= MAX_CELLS:
                        raise ToolError("交叉表的格子超过 %d 个：行维度「%s」或列维度「%s」的取值太多（像编号一类的唯一值）。"
                                        "请换一个维度（如类别、部门，日期加 date_bucket 按月），或先用 where 缩小范围" % (
                                            MAX_CELLS, self.row.name, self.col.name))
                    self.n_cells += 1
                    acc = line[ck] = RowCount() if counting else make_metric(func, skip)
                if rv.__class__ in memo_ok and cv.__class__ in memo_ok and len(pairs) < MAX_PAIRS and before == (
                        bad_row.bad if bad_row is not None else 0, bad_col.bad if bad_col is not None else 0):
                    pairs[pair] = acc
            if counting:
                acc.n += 1
            else:
                acc.add(values[vidx] if vidx < n else None, rownum)
        return self

    # -- layout --------------------------------------------------------------------------
    def _pick(self, totals, limit):
        """(kept keys in display order, folded keys) for one axis given key -> total accumulator."""
        keys = list(totals)
        if len(keys) > limit:
            def by_total(k):
                v = rank_value(totals[k], self.func)
                return (v is None, -(v if v is not None else 0), label_sort_key(k, self.collation))
            ranked = sorted(keys, key=by_total)
            kept, folded = ranked[:limit], ranked[limit:]
        else:
            kept, folded = keys, []
        if self.order == "total":
            kept.sort(key=lambda k: (rank_value(totals[k], self.func) is None,
                                     -(rank_value(totals[k], self.func) or 0), label_sort_key(k, self.collation)))
        else:
            kept.sort(key=lambda k: label_sort_key(k, self.collation))
        return kept, folded

    def build(self):
        """Compute totals, choose the top rows/columns, fold the rest into 其他 (cached)."""
        if self._built is not None:
            return self._built
        func, counting = self.func, self.counting_rows
        row_tot, col_tot = {}, {}
        grand = _fresh(func, counting, self.skip)
        for rk, line in self.cells.items():
            rt_acc = row_tot[rk] = _fresh(func, counting, self.skip)
            for ck, acc in line.items():
                merge_into(rt_acc, acc, func)
                ct = col_tot.get(ck)
                if ct is None:
                    ct = col_tot[ck] = _fresh(func, counting, self.skip)
                merge_into(ct, acc, func)
            merge_into(grand, rt_acc, func)
        rows, rows_folded = self._pick(row_tot, self.max_rows)
        cols, cols_folded = self._pick(col_tot, self.max_cols)
        folded_cols = set(cols_folded)
        other_row_label = self._other_label(rows)
        other_col_label = self._other_label(cols)
        # row key -> {col key or OTHER_COL -> acc}; the 其他 row merges the folded rows
        OTHER_COL = object()

        def fold_line(line):
            if not folded_cols:
                return line
            out = {}
            for ck, acc in line.items():
                if ck in folded_cols:
                    o = out.get(OTHER_COL)
                    if o is None:
                        o = out[OTHER_COL] = _fresh(func, counting, self.skip)
                    merge_into(o, acc, func)
                else:
                    out[ck] = acc
            return out

        body = [(rk, fold_line(self.cells[rk]), row_tot[rk]) for rk in rows]
        if rows_folded:
            merged, merged_total = {}, _fresh(func, counting, self.skip)
            for rk in rows_folded:
                for ck, acc in fold_line(self.cells[rk]).items():
                    m = merged.get(ck)
                    if m is None:
                        m = merged[ck] = _fresh(func, counting, self.skip)
                    merge_into(m, acc, func)
                merge_into(merged_total, row_tot[rk], func)
            body.append((other_row_label, merged, merged_total))
        col_order = list(cols) + ([OTHER_COL] if cols_folded else [])
        foot = {ck: col_tot[ck] for ck in cols}
        if cols_folded:
            o = _fresh(func, counting, self.skip)
            for ck in cols_folded:
                merge_into(o, col_tot[ck], func)
            foot[OTHER_COL] = o
        self._built = {
            "body": body, "col_order": col_order, "foot": foot, "grand": grand,
            "col_labels": [other_col_label if ck is OTHER_COL else self._label(ck) for ck in col_order],
            "rows_folded": rows_folded, "cols_folded": cols_folded, "row_tot": row_tot, "col_tot": col_tot,
            "other_row": other_row_label if rows_folded else None,
            "other_col": other_col_label if cols_folded else None,
        }
        return self._built

    @staticmethod
    def _other_label(kept):
        label = OTHER
        while label in kept:                 # the data has its own 其他 among the kept keys
            label = "%s（合并）" % label if label == OTHER else label + "*"
        return label

    @staticmethod
    def _label(key):
        return BLANK if key is None else key

    def result_of(self, acc, exact=False):
        if acc is None:
            return None
        return acc.exact() if exact and hasattr(acc, "exact") else acc.result()

    @property
    def corner(self):
        return "%s：%s ＼ %s" % (self.value_label, self.row.name, self.col.name)

    def grid(self, exact=False):
        """The pivot sheet as rows: header, body rows, the 合计 row (values ready for write_rows).
        Averages are rounded for display (the answer's preview); ``exact`` keeps them unrounded
        (the saved sheet, whose number format does the rounding, so Excel sums stay exact). One
        value column is rounded alike everywhere (``same_places``)."""
        b = self.build()
        every = [line.get(ck) for _rk, line, _t in b["body"] for ck in b["col_order"]]
        every += [t for _rk, _l, t in b["body"]] + [b["foot"][ck] for ck in b["col_order"]] + [b["grand"]]
        same_places([a for a in every if a is not None])
        r = lambda acc: self.result_of(acc, exact)   # noqa: E731
        out = [[self.corner] + list(b["col_labels"]) + [TOTAL]]
        for rk, line, total in b["body"]:
            label = self._label(rk)
            out.append([label] + [r(line.get(ck)) for ck in b["col_order"]] + [r(total)])
        out.append([TOTAL] + [r(b["foot"][ck]) for ck in b["col_order"]] + [r(b["grand"])])
        return out

    @property
    def grand(self):
        return self.build()["grand"].result()

    def top(self, axis="row", n=5):
        """The ``n`` biggest keys of an axis by total, as [{"key", "total"}] (before the 其他 cut)."""
        tot = self.build()["row_tot" if axis == "row" else "col_tot"]
        ranked = sorted(tot, key=lambda k: (rank_value(tot[k], self.func) is None,
                                            -(rank_value(tot[k], self.func) or 0), label_sort_key(k, self.collation)))
        return [{"key": self._label(k), "total": tot[k].result()} for k in ranked[:n]]

    def bucket_notes(self):
        """Chinese notes about cells of a date axis that were not dates."""
        out = []
        for axis, param in ((self.row, "row"), (self.col, "col")):
            b = axis.bucketer
            if b is not None and b.bad:
                examples = "、".join("第 %d 行「%s」" % (e["row"], e["value"]) for e in b.bad_examples)
                out.append("%s 维度「%s」按日期归类，有 %d 个单元格不是日期（如 %s），归到「%s」" % (
                    param, axis.column.name, b.bad, examples, NOT_DATE))
        if self.skip.count:
            examples = "、".join("第 %d 行「%s」" % (e["row"], e["value"]) for e in self.skip.examples)
            out.append("value 列「%s」有 %d 个单元格不是数字（如 %s），没有计入（不按 0 算）" % (
                self.value.name, self.skip.count, examples))
        return out


def number_format_for(grid, func):
    """Excel number format for the pivot's numbers: thousands separators, 2 decimals when any value
    has cents (sum/avg/max/min of money), integers otherwise (counts)."""
    if func in ("count", "count_rows", "distinct_count"):
        return "#,##0"
    for row in grid[1:]:
        for v in row[1:]:
            if isinstance(v, float):
                return "#,##0.00"
    return "#,##0"


__all__ = ["Pivot", "merge_into", "number_format_for", "OTHER", "TOTAL", "BLANK", "NOT_DATE", "MAX_ROWS", "MAX_COLS",
           "FUNC_LABELS"]
