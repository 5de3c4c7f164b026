"""The grouping pass of calc_table: group specs and metrics parsed against a table's columns,
and one streaming pass that fills an accumulator list per group.

Why its own module: the same pass runs in a second process on the other half of a big csv
(``tables.split_pass``), which rebuilds the specs from the column names and the tool's
parameters and sends its groups back to be merged; both processes must parse the parameters and
add the rows exactly alike, so the code exists once, here.
"""
import datetime
import os
from decimal import Decimal
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
    not to be a date, so each of those is still counted with its row. A csv's one summed column
    goes through :class:`_TextSums` (same answer, a third of the time)."""
    state = _Groups(groups, metrics)
    plan, skips, specs = state.plan, state.skips, state.specs
    single = plan[0] if len(plan) == 1 else None
    match = where.test if where.conditions else None
    rows = table.data_rows(include_totals=include_totals)
    if single is not None and single[1] == "sum" and single[0] >= 0 and match is None \
            and getattr(table.book, "kind", None) == "csv" and os.environ.get("XLA_CALC_TEXT_SUMS") != "0":
        used, stopped_at = _TextSums(state).run(rows, deadline)
        return state.buckets, used, 0, skips, specs, stopped_at
    idxs = state.idxs
    top = max(idxs) if idxs else -1
    pick = itemgetter(*idxs) if len(idxs) >= 2 else None    # the group cells of a full row in one C call
    memo = state.memo
    accs_for = state.accs_for
    used = filtered = 0
    stopped_at = None
    for rownum, values in rows:
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
            accs = accs_for(raw, values, rownum)
        if single is not None:
            idx = single[0]
            accs[0].add(values[idx] if 0 <= idx < n else None, rownum)
        else:
            for acc, (idx, _func) in zip(accs, plan):
                acc.add(values[idx] if 0 <= idx < n else None, rownum)
    return state.buckets, used, filtered, skips, specs, stopped_at


class _Groups(object):
    """The groups of one pass: key function, accumulators by key, and the memo of raw group cells
    (see ``aggregate``)."""

    def __init__(self, groups, metrics):
        self.make_key, self.specs = _key_maker(groups)
        self.skips = [SkipLog() for _ in metrics]
        self.plan = [(m[0].index if m[0] is not None else -1, m[1]) for m in metrics]
        self.buckets = {}
        self.memo = {}
        self.idxs = [idx for idx, _b in self.specs]
        self.bucketers = [b for _i, b in self.specs if b is not None]

    def accs_for(self, raw, values, rownum):
        """The accumulators of a row whose raw group cells are not remembered yet (new group, or
        cells never remembered); remembers them when allowed."""
        bucketers = self.bucketers
        bad = sum(b.bad for b in bucketers)
        key = self.make_key(values, rownum)
        accs = self.buckets.get(key)
        if accs is None:
            if len(self.buckets) >= MAX_GROUPS:
                raise too_many_groups()
            skips = self.skips
            accs = [RowCount() if idx < 0 else make_metric(func, skips[i]) for i, (idx, func) in enumerate(self.plan)]
            self.buckets[key] = accs
        if len(self.memo) < MAX_MEMO and bad == sum(b.bad for b in bucketers) and all(
                v.__class__ in _MEMO_CLASSES for v in raw):
            self.memo[raw] = accs
        return accs


class _TextSums(object):
    """The pass for one ``sum`` over a csv column: each group's cell texts are gathered in a list
    (one ``append`` per row) and added every 16,384 rows with C loops, instead of one
    ``SumAgg.add`` per row (a call, a regex and a Decimal: a third of a million-row pass).

    Same answer, exactly: a group's texts are added by ``SumAgg._total = sum(map(Decimal, texts),
    _total)``, the very additions, in the same order, that ``SumAgg.add`` makes for plain number
    texts (``[+-]?\\d+(\\.\\d+)?``); a batch is checked to be all plain first (ASCII digits, sign,
    dot; no dot without a digit either side, which ``Decimal`` would take and the rule not). A group
    whose batch holds anything else (empty cells, ``￥1,234``, ``待定``) is added by ``SumAgg.add``
    cell by cell, the batches of all such groups merged by row number so skipped cells are noted
    in row order; and every batch is added before any row goes to ``SumAgg.add`` directly. Two raw
    cells of one group (``华东`` and `` 华东``) have a list each, so that group's additions may come in
    another order: the same sum while it has at most 28 digits (``Decimal``'s precision; the merge
    of two processes in ``split_pass`` relies on the same)."""

    FLUSH = 0x3FFF

    def __init__(self, state):
        self.state = state
        self.bags = {}               # raw group cells -> [row, text, row, text, ...] of this batch
        self.pending = []            # (accumulator, bag) with rows in this batch

    def run(self, rows, deadline):
        state = self.state
        idxs, memo, bags, pending = state.idxs, state.memo, self.bags, self.pending
        col = state.plan[0][0]
        top = max(idxs + [col])
        if len(idxs) >= 2:
            pick = itemgetter(*idxs)
        elif idxs:
            i0 = idxs[0]
            pick = lambda values: (values[i0],)      # noqa: E731 - the memo's one-cell key
        else:
            pick = lambda values: ()                 # noqa: E731 - one total group
        used = 0
        stopped_at = None
        for rownum, values in rows:
            if not used & self.FLUSH and used:
                self.flush()
                if deadline is not None and deadline.expired():
                    stopped_at = rownum
                    break
            used += 1
            if len(values) <= top:                   # trailing empty cells were trimmed: they are None
                values = values + [None] * (top + 1 - len(values))
            raw = pick(values)
            bag = bags.get(raw)
            if bag is not None:
                bag.append(rownum)
                bag.append(values[col])
                continue
            accs = memo.get(raw)
            if accs is None:
                accs = state.accs_for(raw, values, rownum)
            if memo.get(raw) is accs:
                bag = bags[raw] = [rownum, values[col]]
                pending.append((accs[0], bag))
                continue
            self.flush()                             # cells never remembered: this row on its own
            accs[0].add(values[col], rownum)
        self.flush()
        return used, stopped_at

    def flush(self):
        """Add the gathered texts of every group (see the class docstring)."""
        if not self.pending:
            return
        odd = []
        for acc, bag in self.pending:
            texts = bag[1::2]
            if None in texts:                        # empty cells: SumAgg.add passes over them
                texts = [t for t in texts if t is not None]
            if _plain_texts(texts):
                try:
                    acc._total = sum(map(Decimal, texts), acc._total)
                    acc.n += len(texts)
                    continue
                except ArithmeticError:          # cannot happen for plain texts; the cell rule decides
                    pass
            odd.append((acc, bag))
        if odd:
            cells = []
            for acc, bag in odd:
                cells += [(bag[i], acc, bag[i + 1]) for i in range(0, len(bag), 2)]
            cells.sort(key=itemgetter(0))
            for rownum, acc, value in cells:
                acc.add(value, rownum)
        self.bags.clear()
        self.pending.clear()


_NOT_PLAIN = ("\n.", ".\n", "+.", "-.")


def _plain_texts(texts):
    """Whether every item is a text ``SumAgg.add`` reads as a plain number (``_PLAIN_NUMBER``):
    checked on the texts joined, in C. Items of ASCII digits, ``+-.`` that ``Decimal`` accepts are
    plain unless a dot lacks a digit on one side (``.5``, ``5.``, ``-.5``), which the joined text
    shows; items ``Decimal`` refuses (``1.2.3``, ``+``, ``""``) raise in the sum and are then
    added one by one."""
    try:
        joined = "\n" + "\n".join(texts) + "\n"
    except TypeError:                            # not text (cannot happen in a csv): cell by cell
        return False
    if not joined.isascii():
        return False
    if joined.encode("ascii").translate(None, b"0123456789.+-\n") or joined.count("\n") != len(texts) + 1:
        return False                             # another character, or a line break inside a cell
    return not any(bad in joined for bad in _NOT_PLAIN)


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
