"""The grouping pass of calc_table: group specs and metrics parsed against a table's columns,
and one streaming pass that fills an accumulator list per group.

Why its own module: the same pass runs in a second process on the other half of a big csv
(``tables.split_pass``), which rebuilds the specs from the column names and the tool's
parameters and sends its groups back to be merged; both processes must parse the parameters and
add the rows exactly alike, so the code exists once, here.
"""
import datetime
from operator import itemgetter

from ..errors import ToolError
from .aggregate import BUCKET_NAMES, Bucketer, RowCount, SkipLog, check_bucket, check_func, make_metric
from .values import key_value
from .where import compile_where

MAX_GROUPS = 200000          # beyond this the grouping column is an ID, not a category
FUNC_LABELS = {"sum": "求和", "avg": "平均", "max": "最大", "min": "最小", "count": "计数",
               "count_rows": "行数", "distinct_count": "去重计数"}


def _unique(name, taken):
    base, n = name, 2
    while name in taken:
        name = "%s_%d" % (base, n)
        n += 1
    taken.add(name)
    return name


def parse_groups(table, group_by, taken):
    """[(column, bucket or None, output name)] from the group_by parameter."""
    if group_by is None:
        return []
    if not isinstance(group_by, list):
        group_by = [group_by]
    out = []
    for i, item in enumerate(group_by):
        where = "group_by[%d]" % i
        bucket, alias = None, None
        if isinstance(item, dict):
            column = table.column(item.get("column"), where + ".column")
            if item.get("date_bucket") not in (None, ""):
                bucket = check_bucket(item.get("date_bucket"), where + ".date_bucket")
            alias = item.get("as")
        else:
            column = table.column(item, where)
        if not alias:
            alias = column.name if bucket is None else "%s_%s" % (column.name, BUCKET_NAMES[bucket].split("（")[0])
        out.append((column, bucket, _unique(str(alias), taken)))
    return out


def parse_metrics(table, metrics, taken):
    """[(column or None, func, alias)]; no metrics -> one row count."""
    if metrics is None or metrics == []:
        return [(None, "count_rows", _unique("行数", taken))]
    if not isinstance(metrics, list):
        metrics = [metrics]
    out = []
    for i, item in enumerate(metrics):
        where = "metrics[%d]" % i
        if isinstance(item, str):
            item = {"column": item, "func": "sum"}
        if not isinstance(item, dict):
            raise ToolError("%s 应是对象，例如 {\"column\":\"金额\",\"func\":\"sum\",\"as\":\"总金额\"}，收到的是 %r" % (
                where, item))
        func = check_func(item.get("func", "sum"), where + ".func")
        if item.get("column") in (None, ""):
            if func == "count":
                func = "count_rows"         # count with no column: the rows, and the answer says so
            if func != "count_rows":
                raise ToolError("%s：func=%s 需要指定 column（要统计哪一列）。%s" % (where, func, table.columns_hint()),
                                   available_columns=table.names[:60])
            column = None
        else:
            column = table.column(item.get("column"), where + ".column")
        alias = item.get("as")
        if not alias:
            alias = "行数" if column is None else "%s_%s" % (column.name, FUNC_LABELS[func])
        out.append((column, func, _unique(str(alias), taken)))
    return out


def _key_maker(groups):
    """A function row -> group key, specialised for the common shapes (speed matters per row)."""
    kv = key_value
    specs = []
    for column, bucket, _name in groups:
        specs.append((column.index, Bucketer(bucket) if bucket else None))
    if not specs:
        return (lambda values, rn: None), specs
    if len(specs) == 1:                     # one group column: the key is the value itself, no tuple
        i0, bucketer = specs[0]
        if bucketer is None:
            return (lambda values, rn: kv(values[i0]) if i0 < len(values) else None), specs
        return (lambda values, rn: bucketer(values[i0] if i0 < len(values) else None, rn)), specs
    if len(specs) == 2 and specs[0][1] is None and specs[1][1] is None:
        i0, i1 = specs[0][0], specs[1][0]

        def two(values, rn):
            n = len(values)
            return (kv(values[i0]) if i0 < n else None, kv(values[i1]) if i1 < n else None)
        return two, specs

    def general(values, rn):
        n = len(values)
        key = []
        for idx, bucketer in specs:
            value = values[idx] if idx < n else None
            key.append(bucketer(value, rn) if bucketer is not None else kv(value))
        return tuple(key)
    return general, specs


_MEMO_CLASSES = frozenset([str, type(None), datetime.date, datetime.datetime])
MAX_MEMO = 200000            # distinct raw group cells remembered by aggregate()


def aggregate(table, groups, metrics, where, include_totals, deadline=None):
    """One streaming pass. Returns (group dict key -> accumulators, counters, skip logs, bucketers,
    the row the time budget stopped the pass at or None).

    The group cells as read -> their accumulators are remembered, so the key function (trim,
    date bucket) runs once per distinct cells, not per row. Only text, date and empty cells are
    remembered (1 == 1.0 == True as dict keys, but not as labels), and never cells a bucket found
    not to be a date, so each of those is still counted with its row."""
    make_key, specs = _key_maker(groups)
    skips = [SkipLog() for _ in metrics]
    plan = [(m[0].index if m[0] is not None else -1, m[1]) for m in metrics]
    single = plan[0] if len(plan) == 1 else None
    match = where.test if where.conditions else None
    buckets = {}
    memo = {}
    idxs = [idx for idx, _b in specs]
    bucketers = [b for _i, b in specs if b is not None]
    memo_ok = _MEMO_CLASSES
    top = max(idxs) if idxs else -1
    pick = itemgetter(*idxs) if len(idxs) >= 2 else None    # the group cells of a full row in one C call
    used = filtered = 0
    stopped_at = None
    for rownum, values in table.data_rows(include_totals=include_totals):
        if not (used + filtered) & 0x3FFF and (used or filtered) and deadline is not None \
                and deadline.expired():
            stopped_at = rownum       # this row and the rest are not counted: the answer says so
            break
        if match is not None and not match(values):
            filtered += 1
            continue
        used += 1
        n = len(values)
        if pick is not None and n > top:
            raw = pick(values)
        else:
            raw = tuple([values[i] if i < n else None for i in idxs])
        accs = memo.get(raw)
        if accs is None:
            bad = sum(b.bad for b in bucketers)
            key = make_key(values, rownum)
            accs = buckets.get(key)
            if accs is None:
                if len(buckets) >= MAX_GROUPS:
                    raise too_many_groups()
                accs = [RowCount() if idx < 0 else make_metric(func, skips[i])
                        for i, (idx, func) in enumerate(plan)]
                buckets[key] = accs
            if len(memo) < MAX_MEMO and bad == sum(b.bad for b in bucketers) and all(
                    v.__class__ in memo_ok for v in raw):
                memo[raw] = accs
        if single is not None:
            idx = single[0]
            accs[0].add(values[idx] if 0 <= idx < n else None, rownum)
        else:
            for acc, (idx, _func) in zip(accs, plan):
                acc.add(values[idx] if 0 <= idx < n else None, rownum)
    return buckets, used, filtered, skips, specs, stopped_at


def too_many_groups():
    return ToolError("分组超过 %d 组，分组列看起来是编号一类的唯一值，不适合分组。请换一个分组列（如类别、部门、"
                     "日期按月），或先用 where 缩小范围" % MAX_GROUPS)


def plan(table, params):
    """``(groups, metrics, where)`` of the tool's parameters against the table's columns (the
    worker of ``split_pass`` rebuilds them from the same parameters and column names)."""
    taken = set()
    groups = parse_groups(table, params.get("group_by"), taken)
    metrics = parse_metrics(table, params.get("metrics"), taken)
    return groups, metrics, compile_where(table, params.get("where"))
