"""probe_table: what is in an unfamiliar table, before anyone reads or totals it.

Why: business exports rarely start at A1 with a clean header. The model should not guess which row
is the header or whether 金额 holds numbers or text like ``￥1,234.50``; this tool looks, explains
what it found in Chinese, and hands back a ready ``calc_table`` call with real column names.

Parameters:
    path        spreadsheet (any format table_formats reads, found by content).
    sheet       worksheet name; default the first visible one.
    sample      how many data rows to preview (default 5; more than 20 is clamped with a note).
    header_row  1-based header row to use instead of detection; 0 = the table has no header.

Returns ``sheet``, ``sheet_names``, ``hidden_sheets``, ``header_row`` (+ ``header_rows`` for a
two-row header), ``header_reason``, ``combined_header``, ``data_rows`` (all data rows, counted by
streaming; ``rows_exact`` false if a huge sheet had to be estimated), ``column_count``,
``sampled_rows`` (the column statistics cover the first 5,000 data rows), ``totals_rows`` (row
numbers of 合计/小计 rows), ``merged_in_data``, per column ``name``, ``letter``, ``type``
(number/text/date/mixed/empty), ``non_empty``, ``empty``, ``numeric_rate``, ``money_text``,
``id_text``, ``date_formats``, ``distinct``, ``min``/``max``, ``examples``, ``near_duplicates``
(values that differ only by spaces or full/half width, ``"C001 "`` vs ``"C001"``, with row
counts); ``encoding`` and ``delimiter`` for csv/txt; ``preview``
(+ ``preview_rows``: Excel row numbers), ``next_call`` and ``warnings``. Counting stops at
``rt.deadline`` (``rows_exact`` false); the answer is fitted to ``rt.budget``.
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.tables.derive import row_notes  # noqa: E402
from xlakit.tables.keys import spelling_key  # noqa: E402
import table_io as tio  # noqa: E402

STATS_ROWS = 5000            # column statistics are computed over this many data rows
MAX_SAMPLE = 20
PREVIEW_CELL = 100           # preview cells are cut shorter than read_spreadsheet's
DISTINCT_CAP = 200
EXAMPLES = 3
SPELLINGS_CAP = 5000         # distinct texts per column looked at for near_duplicates
NEAR_GROUPS = 5              # near-duplicate groups listed per column

# Names that mark a column of codes, not amounts: never suggested as the column to sum.
ID_WORDS = tio.CODE_NAME_WORDS
# How strongly a column name says "money": amounts first, prices and sales words after.
MONEY_WORDS = ("金额", "额", "收入", "支出", "费", "款", "成本", "利润", "工资", "薪", "余额", "amount", "total")
WEAK_MONEY_WORDS = ("价", "销售", "price", "sales")


class ColumnStats(object):
    __slots__ = ("number", "money", "plain", "ident", "date", "text", "other", "empty", "formats", "distinct",
                 "examples", "nmin", "nmax", "dmin", "dmax", "text_len", "spellings")

    def __init__(self):
        self.number = self.money = self.plain = self.ident = self.date = self.text = self.other = self.empty = 0
        self.formats = {}
        self.spellings = {}        # text as written -> rows (first SPELLINGS_CAP texts), for near_duplicates
        self.distinct = set()
        self.examples = []
        self.nmin = self.nmax = self.dmin = self.dmax = None
        self.text_len = 0

    def add(self, value):
        kind = tio.number_kind(value)
        if kind == "empty":
            self.empty += 1
            return
        if len(self.distinct) <= DISTINCT_CAP:
            self.distinct.add(tio.key_value(value))
        shown = tio.display(value)
        if len(self.examples) < EXAMPLES and shown not in self.examples:
            self.examples.append(tio.shorten(shown, 40)[0] if isinstance(shown, str) else shown)
        if kind in ("number", "plain_text", "money_text"):
            if kind == "money_text":
                self.money += 1
            elif kind == "plain_text":
                self.plain += 1
            self.number += 1
            n = tio.to_decimal(value)
            if self.nmin is None or n < self.nmin:
                self.nmin = n
            if self.nmax is None or n > self.nmax:
                self.nmax = n
            return
        if kind == "identifier":
            self.ident += 1
            self.text_len += len(value.strip())
            return
        label = tio.date_format_label(value)
        if label is not None:
            self.date += 1
            self.formats[label] = self.formats.get(label, 0) + 1
            day = tio.parse_date(value)
            key = tio.as_datetime(day)
            if self.dmin is None or key < self.dmin[0]:
                self.dmin = (key, day)
            if self.dmax is None or key > self.dmax[0]:
                self.dmax = (key, day)
            return
        if value.__class__ is str:
            self.text += 1
            self.text_len += len(value.strip())
            self._spelled(value)
            return
        self.other += 1            # booleans, times

    def _spelled(self, value):
        n = self.spellings.get(value)
        if n is not None:
            self.spellings[value] = n + 1
        elif len(self.spellings) < SPELLINGS_CAP:
            self.spellings[value] = 1

    def near_duplicates(self):
        """[{"key", "values": [{"value", "count"}]}]: category values that differ only by spaces or
        full/half width (``"C001 "`` and ``"C001"``), biggest groups first; [] when none."""
        groups = {}
        for text, n in self.spellings.items():
            key = spelling_key(text)
            if key:
                groups.setdefault(key, []).append((text, n))
        out = []
        for key, forms in groups.items():
            if len(forms) > 1:
                forms.sort(key=lambda f: -f[1])
                out.append({"key": key, "rows": sum(n for _t, n in forms),
                            "values": [{"value": t, "count": n} for t, n in forms[:5]]})
        out.sort(key=lambda g: -g["rows"])
        return out[:NEAR_GROUPS]

    def summary(self, column):
        non_empty = self.number + self.ident + self.date + self.text + self.other
        out = {"name": column.name, "letter": column.letter}
        if non_empty == 0:
            kind = "empty"
        elif self.number >= 0.9 * non_empty:
            kind = "number"
        elif self.date >= 0.9 * non_empty:
            kind = "date"
        elif self.text + self.ident >= 0.9 * non_empty:
            kind = "text"
        else:
            kind = "mixed"
        out["type"] = kind
        out["non_empty"] = non_empty
        out["empty"] = self.empty
        if non_empty:
            out["numeric_rate"] = round(self.number / float(non_empty), 3)
        if self.money:
            out["money_text"] = self.money
        if self.plain:
            out["number_text"] = self.plain
        if self.ident:
            out["id_text"] = self.ident
        if self.formats:
            out["date_formats"] = self.formats
        if non_empty:
            out["distinct"] = len(self.distinct - {None}) if len(self.distinct) <= DISTINCT_CAP else "%d+" % DISTINCT_CAP
        if kind == "number" and self.nmin is not None:
            out["min"], out["max"] = tio.decimal_out(self.nmin), tio.decimal_out(self.nmax)
        elif kind == "date" and self.dmin is not None:
            out["min"], out["max"] = tio.display(self.dmin[1]), tio.display(self.dmax[1])
        if self.examples:
            out["examples"] = self.examples
        near = self.near_duplicates() if kind in ("text", "mixed") else []
        if near:
            out["near_duplicates"] = near
        return out


def suggest(columns, summaries, rows):
    """A ready calc_table call: group by a low-cardinality text column, sum a money column."""
    group = None
    for s in summaries:
        distinct = s.get("distinct")
        if s["type"] != "text" or not isinstance(distinct, int) or s.get("id_text"):
            continue
        if any(w in s["name"].lower() for w in ID_WORDS):
            continue
        if 2 <= distinct <= 50 and distinct <= max(2, 0.5 * s["non_empty"]):
            group = {"column": s["name"]}
            break
    if group is None:
        for s in summaries:
            if s["type"] == "date":
                group = {"column": s["name"], "date_bucket": "month"}
                break
    numbers = [s for s in summaries if s["type"] == "number" and not any(w in s["name"].lower() for w in ID_WORDS)]
    def money_score(s):
        name = s["name"].lower()
        if any(w in name for w in MONEY_WORDS):
            return 3
        if s.get("money_text"):
            return 2
        return 1 if any(w in name for w in WEAK_MONEY_WORDS) else 0
    metric = None
    if numbers:
        best = max(money_score(s) for s in numbers)
        metric = next(s for s in numbers if money_score(s) == best)
    args = {}
    if group:
        args["group_by"] = [group if "date_bucket" in group else group["column"]]
    if metric:
        alias = "%s合计" % metric["name"]
        args["metrics"] = [{"column": metric["name"], "func": "sum", "as": alias}, {"func": "count", "as": "行数"}]
        if group:
            args["sort_by"] = alias
    else:
        args["metrics"] = [{"func": "count", "as": "行数"}]
    return args


def main(params):
    path = paths.resolve_read(params.get("path"), "path")
    sample = rt.clamp(params, "sample", MAX_SAMPLE, 0)
    sample = 5 if sample is None else int(sample)
    header_row = params.get("header_row")
    book = tio.open_book(path, password=params.get("password"))
    try:
        table = tio.Table(book, sheet=params.get("sheet") or None, header_row=header_row)
        return probe(book, table, path, params, sample)
    finally:
        book.close()


def probe(book, table, path, params, sample):
    stats = [ColumnStats() for _ in table.columns]
    preview, preview_rows = [], []
    count = 0
    exact = True
    show = tio.CellShow(PREVIEW_CELL)
    width = len(table.columns)
    for rownum, values in table.data_rows():
        count += 1
        if count <= STATS_ROWS:
            for i, value in enumerate(values[:width]):
                stats[i].add(value)
            for i in range(len(values), width):
                stats[i].empty += 1
            if count <= sample:
                preview.append(show.row(values, width))
                preview_rows.append(rownum)
        elif not count & 0x3FF and rt.deadline.expired():
            exact = False
            break
    if not exact:
        dims = book.dimensions(table.sheet_name)
        if dims and dims[0] - table.data_start + 1 > count:
            count = dims[0] - table.data_start + 1
    summaries = [s.summary(c) for s, c in zip(stats, table.columns)]
    args = {"path": params.get("path")}
    if params.get("sheet"):
        args["sheet"] = table.sheet_name
    if params.get("header_row") is not None:
        args["header_row"] = params.get("header_row")
    args.update(suggest(table.columns, summaries, count))
    result = {
        "format": book.kind,
        "sheet": table.sheet_name,
        "sheet_names": [s.name for s in book.sheets],
        "hidden_sheets": [s.name for s in book.sheets if s.hidden],
        "header_row": table.header_row,
        "header_reason": table.header_reason,
        "data_rows": count,
        "rows_exact": exact,
        "column_count": width,
        "sampled_rows": min(count, STATS_ROWS),
        "totals_rows": table.totals_rows[:50],
    }
    if getattr(book, "delimiter", None):          # csv/txt: how the text was read
        result["encoding"] = getattr(book, "encoding_label", None) or book.encoding
        result["delimiter"] = book.delimiter
    if len(table.header_rows) > 1:
        result["header_rows"] = list(table.header_rows)
    if table.combined:
        result["combined_header"] = table.combined[:20]
    if table.merged_data:
        result["merged_in_data"] = [tio.range_ref(*m) for m in table.merged_data[:20]]
    if getattr(book, "formula_without_value", None):     # formulas stored without results (read as empty)
        result["formula_without_value"] = book.formula_without_value
    for note in list(table.warnings) + row_notes(table, "第 %s 行是合计/小计行：calc_table、pivot_table 统计时默认不计入"):
        rt.warn(note)
    for s in summaries:
        for group in s.get("near_duplicates", [])[:1]:
            edges_only = len(set(v["value"].strip() for v in group["values"])) == 1
            rt.warn("「%s」里有看起来一样、只差空格或全角/半角的取值：%s（Excel 的筛选和数据透视表会把它们分开）%s" % (
                s["name"], "、".join("「%s」%d 行" % (v["value"], v["count"]) for v in group["values"]),
                "；可用 clean_table 去掉首尾空格" if edges_only else ""))
    if count > STATS_ROWS:
        rt.warn("列统计基于前 %d 行数据（共 %s 行）" % (STATS_ROWS, count if exact else "约 %d" % count))
    if not exact:
        rt.warn("表格很大，行数是按工作表范围估算的")
    result["columns"] = summaries
    result["preview_rows"] = preview_rows
    result["preview"] = preview
    result["next_call"] = {"tool": "calc_table", "args": args}
    _fit(result)
    return result


def _fit(result):
    """Wide tables: drop examples, then preview rows, then columns, until the answer fits the
    room the runtime measures (``rt.budget``: the cap less the warnings and their reserve)."""
    limit = rt.budget()
    if rt.text_size(result) <= limit:
        return
    for s in result["columns"]:
        s.pop("examples", None)
        s.pop("date_formats", None)
    while rt.text_size(result) > limit and result["preview"]:
        result["preview"].pop()
        result["preview_rows"].pop()
    if rt.text_size(result) <= limit:
        return
    cols = result["columns"]
    keep = len(cols)
    note = "列太多，只列出前 %d 列的统计（共 %d 列）；可用 read_spreadsheet 看其余列" % (len(cols), len(cols))
    while keep > 1 and rt.text_size(dict(result, columns=cols[:keep])) > limit - len(note):
        keep = max(1, int(keep * 0.8))
    result["columns"] = cols[:keep]
    rt.warn("列太多，只列出前 %d 列的统计（共 %d 列）；可用 read_spreadsheet 看其余列" % (keep, len(cols)))


if __name__ == "__main__":
    rt.run(main)
