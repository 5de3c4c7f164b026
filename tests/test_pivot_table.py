"""pivot_table, spawned as the assistant does, on the 1,000-row messy export (title rows, two-row
merged header, money text, merged cells, a 合计 row) in xlsx / xls / GBK csv and on small csv files
made here; every cell, row total, column total and the grand total checked against a pivot
computed independently in the test with Decimal from the generator's intent. Also: the written
sheet's bold header/total row/total column and number formats (read back with openpyxl, and the
file opened by LibreOffice where it runs), 其他 folding that keeps every number, totals of
avg/max/distinct_count taken from the data (not from the cells), date buckets, paths, the output
cap and the Chinese errors."""
import csv
import os
import shutil
import subprocess
from collections import defaultdict
from decimal import Decimal

import openpyxl
import pytest

from xlakit.collate import text_key

from conftest import assert_contract, ok, fail
import tio_data



def D(value):
    """A cell as read back (float/int) as an exact decimal, the way Excel shows it."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy_pivot")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows, ("xlsx", "xls", "gbk"))
    return rows, paths


def independent(rows, row_of, col_of):
    """{(row key, col key): Decimal sum} of the parsable amounts, computed from the generator."""
    cells = defaultdict(Decimal)
    for r in rows:
        if isinstance(r["amount"], Decimal):
            cells[(row_of(r), col_of(r))] += r["amount"]
    return cells


def month(r):
    return "%04d-%02d" % (r["date"].year, r["date"].month)


def quarter(r):
    return "%04dQ%d" % (r["date"].year, (r["date"].month - 1) // 3 + 1)


def read_sheet(path, sheet=None, notes=False):
    wb = openpyxl.load_workbook(path)
    ws = wb[sheet] if sheet else wb.active
    rows = [list(r) for r in ws.iter_rows(values_only=True)]
    return ws, rows if notes else without_notes(rows)


def without_notes(rows):
    """A derived sheet's rows without its trailing ``注：`` rows (what its numbers left out, see
    write.write_derived), which the tests check on their own."""
    rows = list(rows)
    while rows and isinstance(rows[-1][0], str) and rows[-1][0].startswith("注：") and \
            not any(v not in (None, "") for v in rows[-1][1:]):
        rows.pop()
    return rows


def check_grid(got, cells, row_keys, col_keys):
    """The pivot read back equals the independent one: cells, row totals, column totals, grand."""
    assert got[0][1:-1] == col_keys and got[0][-1] == "合计"
    assert [r[0] for r in got[1:-1]] == row_keys and got[-1][0] == "合计"
    for line in got[1:-1]:
        for ck, v in zip(col_keys, line[1:-1]):
            want = cells.get((line[0], ck))
            assert (v is None) if want is None else D(v) == want, (line[0], ck, v, want)
        assert D(line[-1]) == sum((cells.get((line[0], ck), Decimal(0)) for ck in col_keys), Decimal(0))
    for i, ck in enumerate(col_keys):
        assert D(got[-1][i + 1]) == sum((v for (rk, c), v in cells.items() if c == ck), Decimal(0))
    assert D(got[-1][-1]) == sum(cells.values(), Decimal(0))


@pytest.mark.parametrize("kind", ["xlsx", "xls", "gbk"])
def test_dept_by_month_matches_independent_pivot(run, messy, kind, home):
    rows, paths = messy
    cells = independent(rows, lambda r: r["dept"], month)
    row_keys = sorted({k[0] for k in cells}, key=text_key)      # pinyin order (issue 20)
    col_keys = sorted({k[1] for k in cells}, key=text_key)
    result = run("pivot_table", {"path": paths[kind], "row": {"column": "部门"},
                                 "col": {"column": "日期", "date_bucket": "month"}, "value": "金额"})
    data = ok(result)
    assert data["row_count"] == len(row_keys) and data["column_count"] == len(col_keys) == 6
    grand = sum(cells.values(), Decimal(0))
    assert D(data["grand_total"]) == grand
    assert data["complete"] is True and data["rows_used"] == tio_data.N_ROWS
    assert data["rows_other"] == data["cols_other"] == 0
    best = max(row_keys, key=lambda k: sum((v for (rk, _c), v in cells.items() if rk == k), Decimal(0)))
    assert data["top_rows"][0]["key"] == best
    assert data["preview"][0][1:] == col_keys + ["合计"] and data["total_row"][0] == "合计"
    assert D(data["total_row"][-1]) == grand
    assert any("合计" in w and "已排除" in w for w in data["warnings"])
    assert any("待定" in w and "不是数字" in w for w in data["warnings"])       # skipped, never read as 0
    out = data["path"]
    assert out.startswith(str(home)) and os.path.basename(out).startswith("费用明细")
    assert "_透视" in os.path.basename(out)
    assert out.endswith(".xlsx")                        # a report: a workbook even from a csv source
    ws, got = read_sheet(out, "透视表")
    check_grid(got, cells, row_keys, col_keys)
    # readable: header row, 合计 row and 合计 column bold; numbers with separators; labels frozen
    last_row, last_col = len(got), len(got[0])
    assert all(ws.cell(1, c).font.b for c in range(1, last_col + 1))
    assert all(ws.cell(last_row, c).font.b for c in range(1, last_col + 1))
    assert all(ws.cell(r, last_col).font.b for r in range(1, last_row + 1))
    assert all(ws.cell(r, 1).font.b for r in range(1, last_row + 1))
    assert not ws.cell(2, 2).font.b
    assert ws.cell(2, 2).number_format == "#,##0.00" and ws.cell(last_row, last_col).number_format == "#,##0.00"
    assert ws.freeze_panes == "B2"


def test_quarter_and_week_labels_and_blank_and_non_dates(run, tmp_path):
    src = tmp_path / "流水.csv"
    lines = ["日期,门店,金额",
             "2024-09-02,南京路,10.10", "2024-09-08,南京路,0.20", "2024/9/9,淮海路,5",
             "2024年7月1日,淮海路,1,000.05", "待定,南京路,7", ",南京路,3", "2024-12-30,,2.5"]
    # "1,000.05" needs quoting in a csv
    lines[4] = '2024年7月1日,淮海路,"1,000.05"'
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "门店"}, "sort": "codepoint",
                                  "col": {"column": "日期", "date_bucket": "quarter"}, "value": "金额",
                                  "out_path": str(tmp_path / "季度.xlsx")}))
    ws, got = read_sheet(data["path"])
    assert got[0] == ["金额求和：门店 ＼ 日期（季度）", "2024Q3", "2024Q4", "（空白）", "（非日期）", "合计"]
    assert got[1] == ["南京路", 10.3, None, 3, 7, 20.3]
    assert got[2] == ["淮海路", 1005.05, None, None, None, 1005.05]
    assert got[3] == ["（空白）", None, 2.5, None, None, 2.5]
    assert got[4] == ["合计", 1015.35, 2.5, 3, 7, 1027.85]
    assert D(data["grand_total"]) == Decimal("1027.85")
    assert any("不是日期" in w and "待定" in w for w in data["warnings"])
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "日期", "date_bucket": "week", "as": "周"},
                                  "col": {"column": "门店"}, "func": "count", "sort": "codepoint",
                                  "out_path": str(tmp_path / "周.xlsx")}))
    ws, got = read_sheet(data["path"])
    # 2024-12-30 (a Monday) is in ISO week 2025-W01; 2024-09-08 (a Sunday) still belongs to W36
    assert [r[0] for r in got[1:-1]] == ["2024-W27", "2024-W36", "2024-W37", "2025-W01", "（空白）", "（非日期）"]
    assert got[0] == ["行数：周 ＼ 门店", "南京路", "淮海路", "（空白）", "合计"]
    assert got[2] == ["2024-W36", 2, None, None, 2] and got[4] == ["2025-W01", None, None, 1, 1]
    assert got[-1] == ["合计", 4, 2, 1, 7] and data["grand_total"] == 7     # count without value: rows
    assert ws.cell(2, 5).number_format == "#,##0"


def test_totals_of_avg_max_distinct_come_from_the_data(run, tmp_path):
    src = tmp_path / "订单.csv"
    src.write_text("区域,渠道,客户,金额\n华东,线上,A,100\n华东,线上,B,300\n华东,门店,A,50\n"
                   "华北,线上,C,10\n华北,门店,A,20\n华北,门店,A,30\n", encoding="utf-8")
    base = {"path": str(src), "row": {"column": "区域"}, "col": {"column": "渠道"}, "sort": "codepoint"}
    data = ok(run("pivot_table", dict(base, value="金额", func="avg", out_path=str(tmp_path / "均.xlsx"))))
    _ws, got = read_sheet(data["path"])
    assert got[0][1:] == ["线上", "门店", "合计"]
    assert got[1] == ["华东", 200, 50, 150]
    assert got[2] == ["华北", 10, 25, 20]                 # (10+20+30)/3, not the mean of 10 and 25
    assert got[3] == ["合计", pytest.approx(410 / 3), pytest.approx(100 / 3), 85]
    assert data["preview"][-1] == ["合计", 136.67, 33.33, 85]     # the answer rounds, the sheet keeps it exact
    data = ok(run("pivot_table", dict(base, value="客户", func="distinct_count", out_path=str(tmp_path / "客.xlsx"))))
    _ws, got = read_sheet(data["path"])
    assert got[1] == ["华东", 2, 1, 2] and got[2] == ["华北", 1, 1, 2] and got[3] == ["合计", 3, 1, 3]
    data = ok(run("pivot_table", dict(base, value="金额", func="max", out_path=str(tmp_path / "大.xlsx"))))
    _ws, got = read_sheet(data["path"])
    assert got[3] == ["合计", 300, 50, 300] and got[2][-1] == 30
    data = ok(run("pivot_table", dict(base, value="金额", func="min", out_path=str(tmp_path / "小.xlsx"))))
    assert data["grand_total"] == 10 and data["total_row"] == ["合计", 10, 20, 10]


def test_top_n_folds_the_rest_into_other_and_keeps_every_number(run, messy, tmp_path):
    rows, paths = messy
    cells = independent(rows, lambda r: r["person"], lambda r: r["dept"])
    row_tot = defaultdict(Decimal)
    col_tot = defaultdict(Decimal)
    for (rk, ck), v in cells.items():
        row_tot[rk] += v
        col_tot[ck] += v
    top_rows = sorted(row_tot, key=lambda k: -row_tot[k])[:3]
    top_cols = sorted(col_tot, key=lambda k: -col_tot[k])[:2]
    data = ok(run("pivot_table", {"path": paths["xlsx"], "row": {"column": "经办人"}, "col": {"column": "部门"},
                                  "value": "金额", "max_rows": 3, "max_cols": 2, "order": "total",
                                  "out_path": str(tmp_path / "其他.xlsx")}))
    assert data["row_count"] == 4 and data["column_count"] == 3
    assert data["rows_other"] == 3 and data["cols_other"] == 3
    assert any("合并成「其他」行" in w for w in data["warnings"])
    _ws, got = read_sheet(data["path"])
    assert [r[0] for r in got[1:-1]] == top_rows + ["其他"]           # order=total: biggest first
    assert got[0][1:] == top_cols + ["其他", "合计"]
    grand = sum(cells.values(), Decimal(0))
    assert D(got[-1][-1]) == grand == D(data["grand_total"])
    assert sum((D(r[-1]) for r in got[1:-1]), Decimal(0)) == grand      # Σ row totals, 其他 included
    assert sum((D(v) for v in got[-1][1:-1]), Decimal(0)) == grand      # Σ column totals
    other = [r for r in got if r[0] == "其他"][0]
    folded = [k for k in row_tot if k not in top_rows]
    assert D(other[-1]) == sum((row_tot[k] for k in folded), Decimal(0))
    want_corner = sum((v for (rk, ck), v in cells.items() if rk in folded and ck not in top_cols), Decimal(0))
    assert D(other[-2]) == want_corner


def test_where_output_formats_and_default_names(run, messy, tmp_path):
    rows, paths = messy
    cells = independent([r for r in rows if r["person"] == "张三"], lambda r: r["dept"], quarter)
    args = {"path": paths["xls"], "row": {"column": "部门"}, "col": {"column": "日期", "date_bucket": "quarter"},
            "value": "金额", "where": [{"column": "经办人", "op": "eq", "value": "张三"}]}
    first = ok(run("pivot_table", args))
    second = ok(run("pivot_table", args))
    assert first["path"] != second["path"] and second["path"].endswith("_透视_2.xlsx")
    assert first["rows_filtered_out"] == tio_data.N_ROWS - first["rows_used"]
    _ws, got = read_sheet(first["path"])
    check_grid(got, cells, sorted({k[0] for k in cells}, key=text_key), ["2024Q1", "2024Q2"])
    data = ok(run("pivot_table", dict(args, out_path=str(tmp_path / "老格式.xls"), out_sheet="张三")))
    import xlrd
    sheet = xlrd.open_workbook(data["path"]).sheet_by_name("张三")
    last = sheet.nrows - 1
    while sheet.cell_value(last, 0).startswith("注："):          # what the pivot left out (待定 amounts)
        last -= 1
    assert sheet.cell_value(0, 1) == "2024Q1" and sheet.cell_value(last, 0) == "合计"
    assert D(sheet.cell_value(last, sheet.ncols - 1)) == sum(cells.values(), Decimal(0))
    data = ok(run("pivot_table", dict(args, out_path=str(tmp_path / "文本.csv"))))
    assert data["format"] == "csv"
    with open(data["path"], encoding="utf-8-sig", newline="") as fh:
        lines = without_notes(csv.reader(fh))
    got = [lines[0]] + [[line[0]] + [None if c == "" else Decimal(c) for c in line[1:]] for line in lines[1:]]
    check_grid(got, cells, sorted({k[0] for k in cells}, key=text_key), ["2024Q1", "2024Q2"])


def test_wide_pivot_stays_within_the_output_cap_and_libreoffice_opens_it(run, tmp_path):
    src = tmp_path / "宽表.csv"
    lines = ["客户编号,商品,金额"]
    want = Decimal(0)
    for i in range(300):
        for j in range(0, 80, 7):
            amount = Decimal(i * 100 + j) / 100
            want += amount
            lines.append("%012d,商品%02d,%s" % (i, (i + j) % 80, amount))
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("pivot_table", {"path": str(src), "row": {"column": "客户编号"}, "col": {"column": "商品"},
                                 "value": "金额", "out_path": str(tmp_path / "宽.xlsx")})
    data = ok(result)
    assert_contract(result)
    assert data["row_count"] == 101 and data["column_count"] == 61     # 100 + 其他, 60 + 其他
    assert D(data["grand_total"]) == want
    assert data["preview"][0][0].startswith("金额求和") and data["total"] == 103
    assert data["returned"] <= data["total"]
    _ws, got = read_sheet(data["path"])
    assert len(got) == 103 and len(got[0]) == 63
    assert all(isinstance(r[0], str) and len(r[0]) == 12 for r in got[1:-2])   # IDs stay text, zeros kept
    if not shutil.which("soffice"):
        return
    outdir = tmp_path / "lo"
    proc = subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                           "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76", "--outdir", str(outdir), data["path"]],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(str(outdir / "宽.csv"), encoding="utf-8", newline="") as fh:
        lo = list(csv.reader(fh))
    assert lo[-1][0] == "合计" and lo[1][0] == got[1][0]
    assert Decimal(lo[-1][-1].replace(",", "")) == want


def test_errors_are_chinese_and_actionable(run, messy, tmp_path):
    _rows, paths = messy
    base = {"path": paths["xlsx"], "row": {"column": "部门"}, "col": {"column": "经办人"}}
    msg = fail(run("pivot_table", dict(base, func="sum")))
    assert "需要 value" in msg and "count" in msg
    msg = fail(run("pivot_table", dict(base, value="金额1")))
    assert "找不到列" in msg and "金额" in msg
    msg = fail(run("pivot_table", dict(base, col={"column": "部门"}, value="金额")))
    assert "同一列" in msg
    msg = fail(run("pivot_table", dict(base, col={"column": "日期", "date_bucket": "fortnight"}, value="金额")))
    assert "year" in msg and "month" in msg
    msg = fail(run("pivot_table", dict(base, value="金额", func="median")))
    assert "不支持" in msg
    msg = fail(run("pivot_table", dict(base, value="金额", out_path=paths["xlsx"])))
    assert "不能和源文件相同" in msg
    msg = fail(run("pivot_table", dict(base, value="金额", where=[{"column": "部门", "op": "eq", "value": "没有这个部门"}])))
    assert "过滤掉了全部" in msg
    refused = run("pivot_table", dict(base, row="部门", value="金额"))      # the host checks the schema
    assert not refused.ok and "row" in refused.error and "对象" in refused.error
    assert "找不到" in fail(run("pivot_table", dict(base, path=str(tmp_path / "没有.xlsx"), value="金额")))


def test_deadline_gives_a_partial_pivot_that_says_so(run, tmp_path):
    src = tmp_path / "大表.csv"
    lines = ["日期,类别,金额"] + ["2024-%02d-01,类%d,%d.25" % (i % 12 + 1, i % 3, i) for i in range(5000)]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "类别"},
                                  "col": {"column": "日期", "date_bucket": "month"}, "value": "金额",
                                  "out_path": str(tmp_path / "部分.xlsx")}, extra_env={"XLA_DEADLINE": "0.001"}))
    assert data["complete"] is False and 0 < data["rows_used"] < 5000
    assert any("时间用完" in w and "不完整" in w for w in data["warnings"])
    used = data["rows_used"]                           # the first rows, in file order
    assert D(data["grand_total"]) == sum((Decimal("%d.25" % i) for i in range(used)), Decimal(0))
    _ws, got = read_sheet(data["path"], notes=True)
    assert any(r[0].startswith("注：") and "不完整" in r[0] for r in got[-2:])       # the file says so too
    assert got[-2][0] == "合计"


def test_pure_pivot_on_a_grid_other_label_and_dates():
    """The domain module directly (no process): a data key called 其他 never merges with the
    folded rows, and max over a date column gives the latest date, per cell and in the totals."""
    import datetime as dt
    from xlakit.tables.book import GridBook, Table
    from xlakit.tables.pivot import Pivot
    grid = [["类别", "地区", "日期"],
            ["其他", "东", dt.date(2024, 3, 1)], ["其他", "西", dt.date(2024, 5, 2)],
            ["甲", "东", dt.date(2024, 1, 9)], ["乙", "西", dt.date(2024, 2, 1)], ["丙", "东", dt.date(2024, 6, 30)]]
    job = Pivot(Table(GridBook(grid)), {"column": "类别"}, {"column": "地区"}, value="日期", func="count",
                max_rows=1).run()
    out = job.grid()
    assert [r[0] for r in out[1:]] == ["其他", "其他（合并）", "合计"]
    assert out[1][1:] == [1, 1, 2] and out[2][1:] == [2, 1, 3] and out[3][1:] == [3, 2, 5]
    job = Pivot(Table(GridBook(grid)), {"column": "地区"}, {"column": "类别"}, value="日期", func="max").run()
    out = job.grid()
    assert out[-1][-1] == "2024-06-30" and out[1][-1] == "2024-06-30" and out[2][-1] == "2024-05-02"
