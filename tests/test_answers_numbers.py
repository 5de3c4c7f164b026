"""Issue 20, numbers a demanding user checks: count × avg = sum (placeholders are empty values),
count_rows says it counts rows, derived tables keep money as real numbers, clean_table's report
adds up to the cells that changed. Real files (xlwt .xls, openpyxl .xlsx), real tool processes."""
import datetime
import os
from decimal import Decimal

import pytest

from conftest import ok

xlwt = pytest.importorskip("xlwt")
openpyxl = pytest.importorskip("openpyxl")

DEPTS = ["财务部", "销售部", "研发部"]
PLACEHOLDERS = ["-", "—", "/", "无", "N/A", " "]


def _ledger_xls(path):
    """部门费用.xls: each department has 8 amounts and one placeholder row per kind of placeholder."""
    book = xlwt.Workbook(encoding="utf-8")
    ws = book.add_sheet("费用")
    for c, name in enumerate(["部门", "月份", "金额"]):
        ws.write(0, c, name)
    expected = {}
    r = 1
    for d, dept in enumerate(DEPTS):
        amounts = [Decimal(1000 + 137 * d + 11 * i) + Decimal(i) / 100 for i in range(8)]
        expected[dept] = amounts
        for i, amount in enumerate(amounts):
            ws.write(r, 0, dept)
            ws.write(r, 1, "%d月" % (i % 2 + 1))
            ws.write(r, 2, float(amount) if i % 2 else "￥{:,.2f}".format(amount))
            r += 1
        for p in PLACEHOLDERS:
            ws.write(r, 0, dept)
            ws.write(r, 1, "1月")
            ws.write(r, 2, p)
            r += 1
    book.save(str(path))
    return expected


def test_count_is_the_values_sum_and_avg_use(run, tmp_path):
    src = tmp_path / "部门费用.xls"
    expected = _ledger_xls(src)
    data = ok(run("calc_table", {"path": str(src), "group_by": ["部门"], "metrics": [
        {"column": "金额", "func": "sum", "as": "合计"}, {"column": "金额", "func": "avg", "as": "平均"},
        {"column": "金额", "func": "count", "as": "笔数"}, {"column": "金额", "func": "count_rows", "as": "行数"}]}))
    groups = {g["部门"]: g for g in data["groups"]}
    for dept, amounts in expected.items():
        g = groups[dept]
        assert g["笔数"] == 8, g
        assert g["行数"] == 8 + len(PLACEHOLDERS), g
        assert Decimal(str(g["合计"])) == sum(amounts)
        exact = g.get("平均_精确值", g["平均"])      # the average is shown rounded; count × exact = sum
        assert abs(Decimal(str(exact)) * g["笔数"] - sum(amounts)) < Decimal("0.01")
    meta = {m["as"]: m for m in data["metrics"]}
    assert "数值个数" in meta["笔数"]["counts"] and "占位符" in meta["笔数"]["counts"]
    assert meta["行数"]["func"] == "count_rows" and "行数" in meta["行数"]["counts"]
    assert "skipped" not in data            # placeholders are empty values, not unparsable text
    # count with no column is the row count, and the answer says so
    data = ok(run("calc_table", {"path": str(src), "metrics": [{"func": "count", "as": "n"}]}))
    assert data["groups"][0]["n"] == 3 * (8 + len(PLACEHOLDERS))
    assert data["metrics"][0]["func"] == "count_rows" and "行数" in data["metrics"][0]["counts"]


def test_count_of_a_text_column_counts_filled_cells(run, tmp_path):
    src = tmp_path / "名单.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["姓名", "备注"])
    for name, note in [("张三", "迟到"), ("李四", "-"), ("王五", None), ("赵六", "无"), ("钱七", "早退")]:
        ws.append([name, note])
    wb.save(str(src))
    data = ok(run("calc_table", {"path": str(src), "metrics": [{"column": "备注", "func": "count", "as": "n"}]}))
    assert data["groups"][0]["n"] == 2
    assert "非空单元格" in data["metrics"][0]["counts"]


def test_pivot_count_matches_sum_over_avg(run, tmp_path):
    src = tmp_path / "部门费用.xls"
    expected = _ledger_xls(src)
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "部门"}, "col": {"column": "月份"},
                                  "value": "金额", "func": "count", "out_path": str(tmp_path / "计数.xlsx")}))
    assert data["grand_total"] == 8 * len(DEPTS), data
    assert "数值个数" in data["counts"]
    wb = openpyxl.load_workbook(data["path"])
    rows = [[c.value for c in r] for r in wb.active.iter_rows()]
    by_dept = {r[0]: r for r in rows[1:]}
    for dept in expected:
        assert by_dept[dept][-1] == 8, by_dept[dept]
        assert by_dept[dept][1:3] == [4, 4]      # the placeholders sit in 1月 and are not counted
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "部门"}, "col": {"column": "月份"},
                                  "value": "金额", "func": "count_rows", "out_path": str(tmp_path / "行数.xlsx")}))
    assert data["grand_total"] == (8 + len(PLACEHOLDERS)) * len(DEPTS)
    assert data["func"] == "count_rows" and "行数" in data["counts"]


def _money_ledger(path, n=60):
    """A ledger whose 金额 is money text, 单价 plain numbers, 订单号 digit codes, 编码 with a leading zero."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["订单号", "编码", "客户", "金额", "单价", "备注"])
    expected = []
    for i in range(n):
        amount = Decimal(290388 + 1371 * i) / 100
        text = "￥{:,.2f}".format(amount) if i % 3 else ("-" if i % 2 else "{:,.2f}".format(amount))
        expected.append(None if text == "-" else amount)
        ws.append([str(202400000 + i), "0%03d" % i, "客户%d" % (i % 4), text, 12.5, "第%d笔" % i])
    wb.save(str(path))
    return expected


def _column(path, letter):
    wb = openpyxl.load_workbook(str(path))
    ws = wb.active
    return [c for c in ws[letter]][1:]


def _derived_args(tool, src, out, tmp_path, dedupe_key):
    """Arguments that make ``tool`` copy every row of ``src`` (a 客户 column) into ``out``."""
    if tool == "filter_table":
        return {"path": str(src), "where": [{"column": "客户", "op": "ne", "value": "无此人"}], "out_path": str(out)}
    if tool == "lookup_table":
        right = tmp_path / "客户.xlsx"
        wb = openpyxl.Workbook()
        wb.active.append(["客户", "电话"])
        for k in range(4):
            wb.active.append(["客户%d" % k, "1380000000%d" % k])
        wb.save(str(right))
        return {"left_path": str(src), "right_path": str(right), "left_key": "客户", "out_path": str(out)}
    return {"path": str(src), "keys": [dedupe_key], "out_path": str(out)}


@pytest.mark.parametrize("tool", ["filter_table", "lookup_table", "dedupe_table"])
def test_derived_tables_write_money_as_numbers(run, tmp_path, tool):
    src = tmp_path / "流水.xlsx"
    expected = _money_ledger(src)
    out = tmp_path / ("%s.xlsx" % tool)
    args = _derived_args(tool, src, out, tmp_path, "订单号")
    data = ok(run(tool, args))
    converted = {c["column"]: c for c in data["converted_columns"]}
    assert set(converted) == {"金额"}, data["converted_columns"]
    assert converted["金额"]["cells"] == sum(1 for e in expected if e is not None)
    assert converted["金额"]["number_format"] == "#,##0.00"
    cells = _column(out, "D")
    numbers = [c for c in cells if isinstance(c.value, (int, float))]
    assert len(numbers) == sum(1 for e in expected if e is not None)
    assert sum(Decimal(repr(c.value)) for c in numbers) == sum(e for e in expected if e is not None)
    assert all(c.number_format == "#,##0.00" for c in numbers), [(c.coordinate, c.value, c.number_format) for c in numbers if c.number_format != "#,##0.00"][:5]
    assert [c.value for c in cells if isinstance(c.value, str)] == ["-"] * expected.count(None)
    assert all(isinstance(c.value, str) for c in _column(out, "A"))     # 订单号: codes stay text
    assert [c.value for c in _column(out, "B")][:3] == ["0000", "0001", "0002"]
    assert any("keep_text" in w for w in data["warnings"])
    # keep_text: the text as it was
    args["out_path"] = str(tmp_path / ("%s_原样.xlsx" % tool))
    args["keep_text"] = True
    data = ok(run(tool, args))
    assert data["converted_columns"] == []
    texts = [c.value for c in _column(args["out_path"], "D")]
    assert texts[1] == "￥{:,.2f}".format(expected[1])


SOURCE_FORMAT = '"¥"#,##0.00;[Red]\\-"¥"#,##0.00'


@pytest.mark.parametrize("tool", ["filter_table", "lookup_table", "dedupe_table"])
def test_derived_tables_keep_the_source_number_format(run, tmp_path, tool):
    """金额 mixes number cells in the source's own currency format with money text: the converted
    column keeps that format; 折扣 (percent text, no format) gets 0.00%; 数量 (number text in a
    column whose cells are built-in #,##0) keeps #,##0."""
    src = tmp_path / "带格式.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["客户", "金额", "折扣", "数量"])
    for i in range(12):
        ws.append(["客户%d" % (i % 3), 1000.5 + i if i % 2 else "￥1,%03d.50" % i, "%d%%" % (5 + i),
                   1200 + i if i % 3 else "1,2%02d" % i])
        ws.cell(i + 2, 2).number_format = SOURCE_FORMAT
        ws.cell(i + 2, 4).number_format = "#,##0"
    wb.save(str(src))
    out = tmp_path / ("%s.xlsx" % tool)
    data = ok(run(tool, _derived_args(tool, src, out, tmp_path, "金额")))
    formats = {c["column"]: c["number_format"] for c in data["converted_columns"]}
    assert formats == {"金额": SOURCE_FORMAT, "折扣": "0.00%", "数量": "#,##0"}, formats
    for letter, fmt in (("B", SOURCE_FORMAT), ("C", "0.00%"), ("D", "#,##0")):
        cells = _column(out, letter)
        assert all(isinstance(c.value, (int, float)) and c.number_format == fmt for c in cells), letter


def test_clean_table_report_adds_up_to_the_cells_that_changed(run, tmp_path):
    """Every changed cell is in the report, once: input and output compared cell by cell."""
    src = tmp_path / "杂乱.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["日期", "部门", "客户", "金额", "编号", "备注"])
    dates = ["2024-03-05", "2024/3/6", datetime.datetime(2024, 3, 7), "2024年3月8日", "2024-03-09", "20240310",
             " 2024-03-11 ", "待定", "2024-03-12"]
    customers = [" 张三 ", "李\u200b四", "王五", "赵六\u3000", "钱七", "孙八", "周九", "吴十", "郑一"]
    amounts = ["￥1,234.50", "1,000", 12.5, "(300.00)", " 88 ", "-", "12%", "abc", "１２３"]
    codes = ["007", "1001", "A-01", "0012", "2002", "3003", "4004", "5005", "6006"]
    for i in range(9):
        ws.append([dates[i], "销售部" if i < 3 else ("财务部" if i == 3 else None), customers[i], amounts[i],
                   codes[i], "备注%d" % i])
    ws.merge_cells("B5:B7")            # 财务部 fills B6, B7 (merged cells in the data)
    ws["B5"] = "财务部"
    wb.save(str(src))
    data = ok(run("clean_table", {"path": str(src), "date_columns": ["日期"], "out_path": str(tmp_path / "净.xlsx")}))
    before = [[c.value for c in r] for r in openpyxl.load_workbook(str(src)).active.iter_rows()]
    after = [[c.value for c in r] for r in openpyxl.load_workbook(data["path"]).active.iter_rows()]
    assert len(before) == len(after) and data["rows_written"] == 9
    width = len(before[0])
    diff = [0] * width
    text_to_date = 0
    for b_row, a_row in zip(before[1:], after[1:]):
        b_row = b_row + [None] * (width - len(b_row))
        a_row = a_row + [None] * (width - len(a_row))
        for c in range(width):
            if (type(b_row[c]), b_row[c]) != (type(a_row[c]), a_row[c]):
                diff[c] += 1
                if c == 0 and isinstance(b_row[c], str) and isinstance(a_row[c], datetime.datetime):
                    text_to_date += 1
    by = {c["column"]: c for c in data["changes"]}
    for c, name in enumerate(before[0]):
        assert by.get(name, {}).get("changed_cells", 0) == diff[c], (name, diff[c], by.get(name))
    assert data["changed_cells"] == sum(diff) > 0
    assert by["日期"]["to_date"] == text_to_date == 7          # ISO text dates count too
    assert "统一日期 7 处" in data["summary"] and ("改动 %d 个单元格" % sum(diff)) in data["summary"]
