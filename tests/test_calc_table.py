"""calc_table, spawned as the assistant does, on real files: the 1,000-row messy export (title rows,
two-row merged header, money text, merged cells, a 合计 row) in xlsx / xls / fake-html xls / GBK
csv / UTF-8-BOM csv and through the openpyxl reader path, checked against totals computed here
with Decimal from what the generator wrote; plus the LibreOffice-resaved ledger, exactness, sorting,
truncation and the Chinese errors."""
import datetime
import os
from collections import defaultdict
from decimal import Decimal

import openpyxl
import pytest

from xlakit.collate import text_key

from conftest import FIXTURES, assert_contract, ok, fail
import tio_data

D = Decimal


def dec(value):
    """A JSON number from the tool as an exact decimal (its shortest repr is the exact cents)."""
    return D(repr(value)) if isinstance(value, float) else D(value)


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows, ("xlsx", "xls", "html", "gbk", "bom"))
    return rows, paths


def by_dept(rows, field="amount"):
    sums = defaultdict(lambda: D(0))
    for r in rows:
        v = r[field]
        if isinstance(v, float):
            v = D(repr(v))
        if isinstance(v, D):
            sums[r["dept"]] += v
    return sums


def test_group_sum_matches_independent_decimal_totals(run, messy):
    rows, paths = messy
    data = ok(run("calc_table", {"path": paths["xlsx"], "group_by": ["部门"], "metrics": [
        {"column": "金额", "func": "sum", "as": "金额合计"}, {"column": "2024年-1月", "func": "sum"},
        {"func": "count", "as": "笔数"}, {"column": "经办人", "func": "distinct_count", "as": "经办人数"}]}))
    assert data["header_row"] == 5 and data["header_rows"] == [5, 6]
    assert data["rows_used"] == 1000 and data["rows_filtered_out"] == 0
    assert data["totals_rows_excluded"] == 1
    expected, expected_m1 = by_dept(rows), by_dept(rows, "m1")
    groups = {g["部门"]: g for g in data["groups"]}
    assert set(groups) == set(tio_data.DEPTS)                          # "销售部 " trimmed into 销售部
    for dept, g in groups.items():
        assert dec(g["金额合计"]) == expected[dept], dept
        assert dec(g["2024年-1月_求和"]) == expected_m1[dept], dept
        assert g["笔数"] == sum(1 for r in rows if r["dept"] == dept)
        assert g["经办人数"] == len(set(r["person"] for r in rows if r["dept"] == dept))
    assert [g["部门"] for g in data["groups"]] == sorted(groups, key=text_key)   # default: keys ascending, by pinyin
    bad = [r for r in rows if r["amount"] == "bad"]
    skipped = data["skipped"]["金额合计"]
    assert skipped["count"] == len(bad)
    assert skipped["examples"] == [{"row": r["row"], "value": "待定"} for r in bad[:3]]
    warn = " ".join(data["warnings"])
    assert "第 1007 行是合计/小计行，已排除" in warn
    assert "「金额」有 %d 个单元格不是数字" % len(bad) in warn
    assert "C100:C102" in warn                                          # merged 部门 filled and reported
    assert "第 1008 行是表尾说明" in warn


def test_same_answer_from_every_format_and_reader(run, messy):
    rows, paths = messy
    args = {"group_by": ["部门", {"column": "日期", "date_bucket": "quarter"}],
            "metrics": [{"column": "金额", "func": "sum"}, {"column": "2024年-2月", "func": "max"},
                        {"column": "金额", "func": "avg"}, {"func": "count"}]}
    base = ok(run("calc_table", dict(args, path=paths["xlsx"])))
    assert base["group_count"] == 10
    for kind in ("xls", "html", "gbk", "bom"):
        other = ok(run("calc_table", dict(args, path=paths[kind])))
        assert other["groups"] == base["groups"], kind
        shift = 1 if kind in ("gbk", "bom") else 0          # csv has a one-row header: rows move up by one
        for alias, skip in base["skipped"].items():
            assert other["skipped"][alias]["count"] == skip["count"], kind
            assert other["skipped"][alias]["examples"] == [dict(e, row=e["row"] - shift) for e in skip["examples"]]
        assert other["totals_rows_excluded"] == 1, kind
    slow = ok(run("calc_table", dict(args, path=paths["xlsx"]), extra_env={"XLA_XLSX_READER": "openpyxl"}))
    assert slow["groups"] == base["groups"]


def test_include_totals_would_double_the_sum(run, messy):
    rows, paths = messy
    total = tio_data.totals(rows)[2]
    plain = ok(run("calc_table", {"path": paths["xlsx"], "metrics": [{"column": "金额", "func": "sum", "as": "s"}]}))
    assert plain["groups"] == [{"s": plain["groups"][0]["s"]}] and dec(plain["groups"][0]["s"]) == total
    doubled = ok(run("calc_table", {"path": paths["xlsx"], "include_totals": True,
                                    "metrics": [{"column": "金额", "func": "sum", "as": "s"}]}))
    assert dec(doubled["groups"][0]["s"]) == 2 * total
    assert doubled["totals_rows_excluded"] == 0
    assert any("include_totals=true 也计入" in w for w in doubled["warnings"])


@pytest.mark.parametrize("bucket,label", [
    ("month", lambda d: "%04d-%02d" % (d.year, d.month)),
    ("week", lambda d: "%04d-W%02d" % d.isocalendar()[:2]),
    ("year", lambda d: str(d.year)),
    ("day", lambda d: d.isoformat()),
])
def test_date_buckets(run, messy, bucket, label):
    rows, paths = messy
    data = ok(run("calc_table", {"path": paths["xlsx"], "group_by": [{"column": "日期", "date_bucket": bucket, "as": "期间"}],
                                 "metrics": [{"column": "金额", "func": "sum", "as": "金额"}, {"func": "count", "as": "n"}]}))
    expected, counts = defaultdict(lambda: D(0)), defaultdict(int)
    for r in rows:
        counts[label(r["date"])] += 1
        if isinstance(r["amount"], D):
            expected[label(r["date"])] += r["amount"]
    if bucket == "day":
        assert data["group_count"] == len(counts) and data["truncated"] == (len(counts) > 100)
        got = data["groups"]
        assert len(got) == min(100, len(counts))
    else:
        got = data["groups"]
        assert len(got) == len(counts)
    for g in got:
        assert g["n"] == counts[g["期间"]] and dec(g["金额"]) == expected[g["期间"]]
    assert [g["期间"] for g in got] == sorted(g["期间"] for g in got)


def test_date_bucket_reports_cells_that_are_not_dates(run, tmp_path):
    path = str(tmp_path / "d.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["日期", "金额"], [datetime.date(2024, 1, 5), 1], ["2024/2/1", 2], ["未知", 3], [None, 4]):
        ws.append(row)
    wb.save(path)
    data = ok(run("calc_table", {"path": path, "group_by": [{"column": "日期", "date_bucket": "month"}],
                                 "metrics": [{"column": "金额", "func": "sum", "as": "s"}]}))
    assert data["groups"] == [{"日期_月": "2024-01", "s": 1}, {"日期_月": "2024-02", "s": 2}, {"日期_月": None, "s": 7}]
    assert any("「日期」有 1 个单元格不是日期" in w and "第 4 行「未知」" in w for w in data["warnings"])


def test_where_sort_top_and_order(run, messy):
    rows, paths = messy
    where = [{"column": "部门", "op": "ne", "value": "销售部"}, {"column": "日期", "op": "gte", "value": "2024年4月1日"},
             {"column": "金额", "op": "not_empty"}]
    data = ok(run("calc_table", {"path": paths["xlsx"], "group_by": ["部门"], "where": where,
                                 "metrics": [{"column": "金额", "func": "sum", "as": "总额"}],
                                 "sort_by": "总额", "top": 2}))
    kept = [r for r in rows if r["dept"] != "销售部" and r["date"] >= datetime.date(2024, 4, 1)
            and r["amount_cell"] is not None]
    sums = by_dept(kept)
    best = sorted(sums.items(), key=lambda kv: kv[1], reverse=True)[:2]
    assert [(g["部门"], dec(g["总额"])) for g in data["groups"]] == best
    assert data["group_count"] == 4 and data["returned"] == 2 and data["truncated"] is False
    assert data["rows_used"] == len(kept) and data["rows_filtered_out"] == 1000 - len(kept)
    asc = ok(run("calc_table", {"path": paths["xlsx"], "group_by": ["部门"], "where": where,
                                "metrics": [{"column": "金额", "func": "sum", "as": "总额"}],
                                "sort_by": "总额", "order": "asc"}))
    assert [g["部门"] for g in asc["groups"]] == [d for d, _ in sorted(sums.items(), key=lambda kv: kv[1])]


def test_where_on_amount_numbers_and_identifiers(run, messy):
    rows, paths = messy
    data = ok(run("calc_table", {"path": paths["xlsx"], "where": [{"column": "金额", "op": "gt", "value": "￥10,000"}]}))
    assert data["groups"] == [{"行数": sum(1 for r in rows if isinstance(r["amount"], D) and r["amount"] > 10000)}]
    assert any("无法比较" in w for w in data["warnings"])                  # the 待定 cells
    first = rows[0]
    assert first["order"].startswith("007")
    data = ok(run("calc_table", {"path": paths["xlsx"], "where": [{"column": "订单号", "op": "eq", "value": first["order"]}],
                                 "metrics": [{"column": "序号", "func": "max", "as": "序号"}]}))
    assert data["groups"] == [{"序号": 1}]


def test_libreoffice_resaved_ledger_with_formulas_and_merged_regions(run):
    data = ok(run("calc_table", {"path": os.path.join(FIXTURES, "tio_lo_ledger.xlsx"), "group_by": ["区域"],
                                 "metrics": [{"column": "销售-金额", "func": "sum", "as": "金额"},
                                             {"column": "日期", "func": "max", "as": "最后日期"},
                                             {"column": "日期", "func": "min", "as": "最早日期"}]}))
    got = {g["区域"]: g for g in data["groups"]}
    assert dec(got["华东"]["金额"]) == D("59.7") + D("1") + D("86.45")
    assert dec(got["华南"]["金额"]) == D("999.99") + D("1.2")
    assert dec(got["华北"]["金额"]) == D("105.6") + D("2469") + D("199.98")
    assert got["华北"]["最后日期"] == "2024-03-06" and got["华东"]["最早日期"] == "2024-01-05"
    assert data["totals_rows_excluded"] == 1


def test_exact_decimal_sums_and_empty_averages(run, tmp_path):
    path = str(tmp_path / "cents.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["类别", "金额", "备注"])
    ws.append(["a", 0.1, "x"])
    ws.append(["a", 0.2, "y"])
    for _ in range(1000):
        ws.append(["b", 0.01, None])
    wb.save(path)
    data = ok(run("calc_table", {"path": path, "group_by": ["类别"], "metrics": [
        {"column": "金额", "func": "sum", "as": "s"}, {"column": "备注", "func": "avg", "as": "avg"}]}))
    assert data["groups"] == [{"类别": "a", "s": 0.3, "avg": None}, {"类别": "b", "s": 10, "avg": None}]
    assert data["skipped"]["avg"]["count"] == 2


def test_many_groups_are_truncated_to_100(run, tmp_path):
    path = str(tmp_path / "many.csv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("编号,金额\n")
        for i in range(250):
            fh.write("K%03d,%d\n" % (i, i))
    data = ok(run("calc_table", {"path": path, "group_by": ["编号"], "metrics": [{"column": "金额", "func": "sum"}]}))
    assert data["group_count"] == 250 and data["returned"] == 100 and data["truncated"] is True
    assert len(data["groups"]) == 100 and data["groups"][0] == {"编号": "K000", "金额_求和": 0}
    assert any("只返回了前 100 组" in w for w in data["warnings"])


def test_no_group_by_and_no_metrics_counts_rows(run, messy):
    rows, paths = messy
    data = ok(run("calc_table", {"path": paths["gbk"]}))
    assert data["groups"] == [{"行数": 1000}] and data["group_count"] == 1


def test_errors_are_chinese_and_actionable(run, messy, tmp_path):
    _rows, paths = messy
    err = fail(run("calc_table", {"path": paths["xlsx"], "group_by": ["科室"]}))
    assert "找不到列「科室」" in err and "序号、日期、部门、经办人、身份证号、2024年-1月" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "metrics": [{"column": "金额", "func": "median"}]}))
    assert "metrics[0].func" in err and "distinct_count" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "where": [{"column": "金额", "op": "between", "value": 1}]}))
    assert "where[0].op" in err and "gte" in err and "not_empty" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "group_by": [{"column": "日期", "date_bucket": "hour"}]}))
    assert "year / quarter / month / week / day" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "group_by": ["部门"], "sort_by": "总额"}))
    assert "sort_by" in err and "行数" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "metrics": [{"func": "sum"}]}))
    assert "需要指定 column" in err
    err = fail(run("calc_table", {"path": os.path.join(FIXTURES, "tio_encrypted.xlsx")}))
    assert "加密" in err and "密码" in err
    err = fail(run("calc_table", {"path": str(tmp_path / "没有.xlsx")}))
    assert "找不到" in err
    err = fail(run("calc_table", {"path": paths["xlsx"], "sheet": "不存在"}))
    assert "费用明细" in err


def test_sort_by_a_metric_column_name_and_formula_warning_passed_through(run, tmp_path):
    path = str(tmp_path / "f.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["类别", "金额", "公式"])
    ws.append(["a", 5, "=B2*2"])
    ws.append(["b", 7, "=B3*2"])
    ws.append(["a", 1, "=B4*2"])
    wb.save(path)                                   # openpyxl writes formulas without cached values
    data = ok(run("calc_table", {"path": path, "group_by": ["类别"], "sort_by": "金额",
                                 "metrics": [{"column": "金额", "func": "sum"}, {"column": "公式", "func": "sum"}]}))
    assert [g["类别"] for g in data["groups"]] == ["b", "a"]
    assert [g["公式_求和"] for g in data["groups"]] == [0, 0]
    assert any("公式" in w and "缓存" in w for w in data["warnings"])


def test_deadline_gives_partial_groups_that_say_so(run, tmp_path):
    """Out of time (a million rows on a busy machine), calc_table answers with the groups of the rows
    read so far, complete=false, stopped_at and a warning — like pivot/filter/clean — not an error."""
    src = tmp_path / "大表.csv"
    lines = ["类别,金额"] + ["类%d,%d.25" % (i % 3, i) for i in range(40000)]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = run("calc_table", {"path": str(src), "group_by": ["类别"], "metrics": [{"column": "金额", "func": "sum"}]},
              extra_env={"XLA_DEADLINE": "0.001"})
    assert res.ok, res.error
    data = res.data
    assert data["complete"] is False and 0 < data["rows_used"] < 40000
    assert data["stopped_at"] == data["rows_used"] + 2          # header is row 1, the first data row row 2
    assert "不完整" in data["warnings"][0] and str(data["stopped_at"]) in data["warnings"][0]
    used = data["rows_used"]
    got = sum(Decimal(str(g["金额_求和"] if "金额_求和" in g else list(g.values())[-1])) for g in data["groups"])
    assert got == sum((Decimal("%d.25" % i) for i in range(used)), Decimal(0))
    whole = run("calc_table", {"path": str(src), "group_by": ["类别"], "metrics": [{"column": "金额", "func": "sum"}]})
    assert whole.ok and whole.data["complete"] is True and "stopped_at" not in whole.data


def test_averages_rounded_for_display_exact_beside(run, tmp_path):
    """Issue 35: an average came back as 1234.5666666667. It is shown to the column's own
    precision (at least 2 decimals, half up as Excel does), the exact value beside it in
    ``<alias>_精确值`` only where rounding changed it; one column is rounded alike in every group."""
    import openpyxl
    path = str(tmp_path / "报销.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["部门", "金额", "比率"])
    for row in (["A", 1234.5, 0.1234], ["A", 1234.57, 0.2], ["A", 1234.63, 0.3], ["B", 10, 0.5], ["B", 20, 0.25]):
        ws.append(row)
    wb.save(path)
    data = ok(run("calc_table", {"path": path, "group_by": ["部门"],
                                 "metrics": [{"column": "金额", "func": "avg"}, {"column": "比率", "func": "avg"}]}))
    a, b = data["groups"]
    assert a["金额_平均"] == 1234.57 and abs(a["金额_平均_精确值"] - 3703.7 / 3) < 1e-6
    assert a["比率_平均"] == 0.2078 and "比率_平均_精确值" not in a          # 0.6234 / 3 is exact at 4 places
    assert b["金额_平均"] == 15 and "金额_平均_精确值" not in b
    assert b["比率_平均"] == 0.375 and "比率_平均_精确值" not in b           # the column shows 4 places
