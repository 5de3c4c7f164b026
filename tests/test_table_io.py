"""table_io: values, money parsing, dates and buckets, header detection, column names, merged
cells, totals rows, conditions and exact aggregation — in process, over in-memory grids
(GridBook) and over real files written by openpyxl, xlwt, LibreOffice and the csv module."""
import datetime
import os
from decimal import Decimal

import pytest

from conftest import FIXTURES
import table_io as tio
import tio_data
from xlakit import runtime as rt

D = Decimal


# ---------------------------------------------------------------------------------------------
# Column letters and display

def test_column_letters_round_trip():
    for i, letters in ((0, "A"), (25, "Z"), (26, "AA"), (27, "AB"), (701, "ZZ"), (702, "AAA"), (16383, "XFD")):
        assert tio.col_letter(i) == letters
        assert tio.letter_index(letters) == i
        assert tio.letter_index(letters.lower()) == i
    assert tio.letter_index("XFE") is None
    assert tio.letter_index("金额") is None
    assert tio.letter_index("A1") is None
    assert tio.range_ref(1, 1, 2, 28) == "A1:AB2"


def test_display_values_as_a_person_reads_them():
    assert tio.display(datetime.date(2024, 3, 5)) == "2024-03-05"
    assert tio.display(datetime.datetime(2024, 3, 5, 14, 30, 0)) == "2024-03-05 14:30:00"
    assert tio.display(datetime.datetime(2024, 3, 5)) == "2024-03-05"
    assert tio.display(datetime.time(8, 5, 9)) == "08:05:09"
    assert tio.display(3.0) == 3 and isinstance(tio.display(3.0), int)
    assert tio.display(0.1 + 0.2) == 0.3
    assert tio.display(1234.5) == 1234.5
    assert tio.display("110101199003071234") == "110101199003071234"
    assert tio.display("007") == "007"
    assert tio.display(True) is True
    assert tio.display(None) is None
    assert tio.display_text(12.5) == "12.5"
    assert tio.display_text(None) == ""
    assert tio.shorten("字" * 600) == ("字" * 500 + "…", True)


# ---------------------------------------------------------------------------------------------
# Numbers

@pytest.mark.parametrize("text,expected", [
    ("123", D("123")), ("-4.5", D("-4.5")), ("+7", D("7")), (" 12 ", D("12")),
    ("￥1,234.50", D("1234.50")), ("¥1,234.50", D("1234.50")), ("$1,000.5", D("1000.5")),
    ("1,234元", D("1234")), ("1，234.5", D("1234.5")), ("12.5%", D("0.125")), ("１２％", D("0.12")),
    ("(1,234.00)", D("-1234.00")), ("（1,234.00）", D("-1234.00")), ("(¥5)", D("-5")), ("¥(5)", D("-5")),
    ("-￥5", D("-5")), ("¥-5", D("-5")), ("123-", D("-123")), ("－5", D("-5")), ("−5", D("-5")),
    ("１２３．５", D("123.5")), ("1.2万", D("12000")), ("1.2万元", D("12000")), ("3亿", D("300000000")),
    ("5千", D("5000")), ("1 234 567", D("1234567")), ("1\u3000234", D("1234")), ("RMB 88", D("88")),
    ("1.5E+3", D("1500")), (".5", D("0.5")),
])
def test_money_text_parses(text, expected):
    assert tio.to_decimal(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "-", "--", "—", "——", "－", "\u3000"])
def test_empty_markers_are_empty_not_zero(text):
    assert tio.to_decimal(text) is None
    assert tio.parse_number(text) is None


@pytest.mark.parametrize("value", ["待定", "abc", "1,2", "12.3.4", "5%)", "(5", "nan", "inf", "1-2", "-5-",
                                   True, datetime.date(2024, 1, 1), datetime.time(1, 2), float("nan")])
def test_unparsable_is_invalid_never_zero(value):
    assert tio.to_decimal(value) is tio.INVALID
    assert not tio.INVALID            # falsy, but distinct from None and 0
    assert tio.to_decimal(value) != 0


def test_numbers_keep_their_shortest_repr_and_types():
    assert tio.to_decimal(0.1) == D("0.1")
    assert tio.to_decimal(2 ** 60) == D(2 ** 60)
    assert tio.parse_number("1.2万") == 12000 and isinstance(tio.parse_number("1.2万"), int)
    assert tio.parse_number("12.5%") == 0.125
    assert tio.decimal_out(D("1234.50")) == 1234.5
    assert tio.decimal_out(D("100.00")) == 100 and isinstance(tio.decimal_out(D("100.00")), int)


def test_identifiers_parse_as_numbers_but_are_recognised():
    for text in ("110101199003071234", "6222020200112233445", "007", "000123"):
        assert tio.is_identifier_text(text)
        assert tio.number_kind(text) == "identifier"
    assert tio.to_decimal("110101199003071234") == D("110101199003071234")      # exact, no float
    for text in ("123", "0", "0.5", "12345678901", "￥007"):
        assert not tio.is_identifier_text(text)
    assert tio.number_kind("￥1,234") == "money_text"
    assert tio.number_kind("123") == "plain_text"
    assert tio.number_kind(12.5) == "number"
    assert tio.number_kind("-") == "empty"
    assert tio.number_kind("待定") == "invalid"


# ---------------------------------------------------------------------------------------------
# Dates and buckets

@pytest.mark.parametrize("text,expected", [
    ("2024-03-01", datetime.date(2024, 3, 1)), ("2024/3/1", datetime.date(2024, 3, 1)),
    ("2024.3.1", datetime.date(2024, 3, 1)), ("2024年3月1日", datetime.date(2024, 3, 1)),
    ("2024年03月01号", datetime.date(2024, 3, 1)), (" 2024-3-1 ", datetime.date(2024, 3, 1)),
    ("2024-03-01 10:30", datetime.datetime(2024, 3, 1, 10, 30)),
    ("2024/3/1 10:30:05", datetime.datetime(2024, 3, 1, 10, 30, 5)),
    ("2024-03-01T10:30:05", datetime.datetime(2024, 3, 1, 10, 30, 5)),
    ("2024年3月1日 10时30分", datetime.datetime(2024, 3, 1, 10, 30)),
    ("2024年3月1日10:30", datetime.datetime(2024, 3, 1, 10, 30)),
])
def test_date_text_parses(text, expected):
    assert tio.parse_date(text) == expected


def test_dates_that_are_not():
    for value in ("2024-13-01", "2024-02-30", "abc", "12345", 20240301, "20240301", 45000, None):
        assert tio.parse_date(value) is None
    assert tio.parse_date("20240301", compact=True) == datetime.date(2024, 3, 1)
    assert tio.parse_date(20240301, compact=True) == datetime.date(2024, 3, 1)
    assert tio.parse_date(20241301, compact=True) is None
    assert tio.parse_date(datetime.datetime(2024, 1, 2, 3, 4)) == datetime.datetime(2024, 1, 2, 3, 4)
    assert tio.date_format_label("2024/3/1") == "YYYY/M/D"
    assert tio.date_format_label("2024年3月1日") == "YYYY年M月D日"
    assert tio.date_format_label("2024-03-01 10:00") == "YYYY-MM-DD 时:分"
    assert tio.date_format_label(datetime.date(2024, 1, 1)) == "日期单元格"
    assert tio.date_format_label("20240301") == "YYYYMMDD"


def test_bucket_labels():
    day = datetime.date(2024, 3, 5)
    assert [tio.bucket_label(day, b) for b in tio.BUCKETS] == ["2024", "2024-Q1", "2024-03", "2024-W10", "2024-03-05"]
    assert tio.bucket_label(datetime.date(2021, 1, 3), "week") == "2020-W53"       # ISO week-year
    assert tio.bucket_label(datetime.date(2024, 12, 30), "week") == "2025-W01"
    assert tio.bucket_label(datetime.datetime(2024, 10, 1, 23, 59), "quarter") == "2024-Q4"
    assert tio.check_bucket("月") == "month" and tio.check_bucket("Week") == "week"
    with pytest.raises(rt.ToolError) as err:
        tio.check_bucket("fortnight")
    assert "year / quarter / month / week / day" in str(err.value)


def test_bucketer_counts_cells_that_are_not_dates():
    b = tio.Bucketer("month")
    assert b(datetime.date(2024, 3, 5), 2) == "2024-03"
    assert b("2024年4月1日", 3) == "2024-04"
    assert b(20240501, 4) == "2024-05"
    assert b(None, 5) is None and b("  ", 6) is None
    assert b("待定", 7) is None and b("待定", 8) is None
    assert b.bad == 2 and b.bad_examples == [{"row": 7, "value": "待定"}, {"row": 8, "value": "待定"}]


# ---------------------------------------------------------------------------------------------
# Totals and notes

@pytest.mark.parametrize("label", ["合计", "合  计", "合\u3000计", " 总计 ", "小计", "总计：", "Total", "TOTAL:",
                                   "Grand Total", "Subtotal", "总和", "累计", "本月合计", "本年累计"])
def test_total_labels(label):
    assert tio.is_total_label(label)


@pytest.mark.parametrize("label", ["张三", "合计金额说明很长的一段文字内容", "计划", "统计部", "", None, 12])
def test_not_total_labels(label):
    assert not tio.is_total_label(label)


def test_totals_detector_looks_at_first_three_columns_and_first_non_empty_cell():
    det = tio.TotalsDetector()
    assert det(["合计", None, 5])
    assert det([1, "合 计", 5])
    assert det([None, None, "小计", 5])
    assert det([None, None, None, None, "Total", 5])          # the first non-empty cell
    assert not det(["销售部", "张三", "李四", "合计"])          # 4th column, not first non-empty
    assert not det(["销售部", 12, 3])


# ---------------------------------------------------------------------------------------------
# Header detection

def table_of(rows, merges=(), **kw):
    return tio.Table(tio.GridBook({"Sheet1": rows}, merges={"Sheet1": list(merges)}), **kw)


def test_header_under_title_note_and_blank_rows():
    rows = [["2024年3月工资表"], ["单位：元", None, None, "制表日期：2024-04-01"], [],
            ["工号", "姓名", "部门", "实发"], ["0001", "张三", "销售部", 5000], ["0002", "李四", "财务部", 6000.5]]
    t = table_of(rows, merges=[(1, 1, 1, 4)])
    assert t.header_row == 4 and t.header_rows == (4,)
    assert t.names == ["工号", "姓名", "部门", "实发"]
    assert "第 4 行" in t.header_reason and "1、2" in t.header_reason
    assert [r for r, _ in t.data_rows()] == [5, 6]


def test_a_sheet_without_header_keeps_its_first_row_as_data():
    rows = [["A0", 0, 0.5], ["A1", 1, 2.5], ["A2", 2, 5], ["A3", 3, 7.5]]
    t = table_of(rows)
    assert t.header_rows == () and t.names == ["列A", "列B", "列C"]
    assert [r for r, _ in t.data_rows()] == [1, 2, 3, 4]          # nothing lost from the totals
    assert "header_row=1" in t.header_reason
    forced = table_of(rows, header_row=1)
    assert forced.names == ["A0", "0", "0.5"] and [r for r, _ in forced.data_rows()] == [2, 3, 4]


def test_year_and_period_headers_stay_headers():
    years = table_of([["部门", 2022, 2023, 2024], ["销售部", 100.5, 200, 300], ["财务部", 1, 2, 3]])
    assert years.header_row == 1 and years.names == ["部门", "2022", "2023", "2024"]
    periods = table_of([["门店", 1, 2, 3], ["一店", 10.5, 20, 30], ["二店", 11, 21, 31]])
    assert periods.header_row == 1 and periods.names[1:] == ["1", "2", "3"]
    titled = table_of([["年度对比"], ["部门", 7, 3, 9], ["销售部", 1.5, 2, 3], ["财务部", 1, 2, 3]])
    assert titled.header_row == 2


def test_two_row_header_whose_merges_were_lost_is_still_combined():
    # what a csv export of a merged header looks like: the group title only in its first cell
    rows = [["门店", "2024年", None, None, "2025年", None], [None, "1月", "2月", "3月", "1月", "2月"],
            ["一店", 10, 20, 30, 40, 50], ["二店", 1, 2, 3, 4, 5]]
    t = table_of(rows)
    assert t.header_rows == (1, 2)
    assert t.names == ["门店", "2024年-1月", "2024年-2月", "2024年-3月", "2025年-1月", "2025年-2月"]
    assert [r for r, _ in t.data_rows()] == [3, 4]


def test_plain_header_with_a_blank_cell_over_text_rows_is_not_a_group_header():
    rows = [["姓名", "部门", None, "备注"], ["张三", "销售部", "北京", "无"], ["李四", "财务部", "上海", "有"]]
    t = table_of(rows)
    assert t.header_rows == (1,) and t.names == ["姓名", "部门", "列C", "备注"]
    assert [r for r, _ in t.data_rows()] == [2, 3]


def test_key_value_notes_above_a_narrow_table_are_not_the_header():
    rows = [["单位：某某公司", "日期：2024-05-01"], ["项目", "金额"], ["房租", 3000], ["水电", 200.5]]
    t = table_of(rows)
    assert t.header_row == 2 and t.names == ["项目", "金额"]


def test_two_row_merged_header_is_combined():
    rows = [["序号", "姓名", "2024年", None, "备注"], [None, None, "1月", "2月", None], [1, "张三", 10, 20, "x"]]
    merges = [(1, 1, 2, 1), (1, 2, 2, 2), (1, 3, 1, 4), (1, 5, 2, 5)]
    t = table_of(rows, merges)
    assert t.header_rows == (1, 2)
    assert t.names == ["序号", "姓名", "2024年-1月", "2024年-2月", "备注"]
    assert t.combined == ["2024年 + 1月 → 2024年-1月", "2024年 + 2月 → 2024年-2月"]
    assert t.column("2024年-2月").letter == "D"
    assert list(t.data_rows()) == [(3, [1, "张三", 10, 20, "x"])]


def test_wide_merged_group_over_many_months_still_finds_the_top_row():
    months = ["%d月" % m for m in range(1, 13)]
    rows = [["地区", "2024年"] + [None] * 11, [None] + months, ["华东"] + list(range(12))]
    merges = [(1, 1, 2, 1), (1, 2, 1, 13)]
    t = table_of(rows, merges)
    assert t.header_rows == (1, 2)
    assert t.names[0] == "地区" and t.names[1] == "2024年-1月" and t.names[12] == "2024年-12月"


def test_blank_and_duplicate_header_names():
    rows = [["日期", "金额", None, "金额", "金额", " 备注\n（选填） "], ["2024-01-01", 1, 2, 3, 4, "a"]]
    t = table_of(rows)
    assert t.names == ["日期", "金额", "列C", "金额_2", "金额_3", "备注 （选填）"]
    assert t.column("C").name == "列C" and t.column("列C").index == 2


def test_no_header_when_the_top_is_all_numbers():
    rows = [[1, 2.5, datetime.date(2024, 1, 1)], [2, 3.5, datetime.date(2024, 1, 2)]]
    t = table_of(rows)
    assert t.header_row is None and t.names == ["列A", "列B", "列C"]
    assert [r for r, _ in t.data_rows()] == [1, 2]
    assert "无表头" in t.header_reason


def test_all_text_table_takes_the_first_full_row():
    rows = [["姓名", "城市", "爱好"], ["张三", "北京", "篮球"], ["李四", "上海", "音乐"]]
    assert table_of(rows).header_row == 1


def test_header_row_parameter_and_header_row_zero():
    rows = [["a", "b"], ["x", "y"], [1, 2]]
    t = table_of(rows, header_row=2)
    assert t.names == ["x", "y"] and [r for r, _ in t.data_rows()] == [3]
    t0 = table_of(rows, header_row=0)
    assert t0.names == ["列A", "列B"] and [r for r, _ in t0.data_rows()] == [1, 2, 3]
    with pytest.raises(rt.ToolError) as err:
        table_of([["a"], [], ["b"]], header_row=2)
    assert "第 2 行" in str(err.value) and "probe_table" in str(err.value)


# ---------------------------------------------------------------------------------------------
# Column resolution

def test_column_resolution_by_name_letter_and_forgiving_match():
    t = table_of([["日期", "Amount", "客户 名称", "ＡＢＣ"], ["2024-01-01", 1, "x", 2]])
    assert t.column("日期").index == 0
    assert t.column(" amount ").index == 1
    assert t.column("客户名称").index == 2
    assert t.column("ABC").index == 3                 # full-width header, ASCII request
    assert t.column("b").index == 1 and t.column("AB").index == 27
    assert t.column({"column": "日期"}).index == 0


def test_unknown_column_lists_available_names_and_close_matches():
    t = table_of([["日期", "金额(元)", "部门"], ["2024-01-01", 1, "x"]])
    with pytest.raises(rt.ToolError) as err:
        t.column("金额", "metrics[0].column")
    msg = str(err.value)
    assert "找不到列「金额」" in msg and "metrics[0].column" in msg
    assert "日期、金额(元)、部门" in msg and "你可能想找：金额(元)" in msg
    assert err.value.extra["available_columns"] == ["日期", "金额(元)", "部门"]


def test_unknown_column_list_is_truncated_for_wide_tables():
    header = ["字段%d" % i for i in range(100)]
    t = table_of([header, list(range(100))])
    with pytest.raises(rt.ToolError) as err:
        t.column("不存在")
    assert "共 100 列，只列出前 40 个" in str(err.value)
    assert len(str(err.value)) < 1500


# ---------------------------------------------------------------------------------------------
# Merged cells, totals and notes in the data

def test_merged_block_value_is_visible_in_every_covered_cell():
    rows = [["区域", "门店", "金额"], ["华东", "上海", 1], [None, "杭州", 2], [None, "南京", 3], ["华南", "广州", 4],
            ["合并", None, None], [None, None, 5]]
    merges = [(2, 1, 4, 1), (6, 1, 7, 2)]
    t = table_of(rows, merges)
    data = list(t.data_rows())
    assert [v[0] for _, v in data] == ["华东", "华东", "华东", "华南", "合并", "合并"]
    assert data[-1] == (7, ["合并", "合并", 5])
    assert "A2:A4" in " ".join(t.row_warnings())


def test_totals_rows_held_back_and_reported():
    rows = [["部门", "金额"], ["销售部", 1], ["小计", 1], ["财务部", 2], ["合  计", 3], ["注：单位元"]]
    t = table_of(rows)
    assert [r for r, _ in t.data_rows()] == [2, 4]
    assert t.totals_rows == [3, 5] and t.note_rows == [6]
    notes = " ".join(t.row_warnings())
    assert "第 3、5 行是合计/小计行" in notes and "include_totals" in notes
    t2 = table_of(rows)
    assert [r for r, _ in t2.data_rows(include_totals=True)] == [2, 3, 4, 5]


# ---------------------------------------------------------------------------------------------
# Conditions

ROWS = [["日期", "部门", "金额", "编号", "备注"],
        [datetime.date(2024, 3, 1), "销售部", "￥1,200.00", "007", "加急"],
        ["2024/3/15", " 财务部 ", 80, "7", None],
        ["2024年4月2日", "销售部", "(50.00)", "110101199003071234", "普通"],
        [datetime.datetime(2024, 3, 31, 18, 0), "研发部", "待定", "0070", ""],
        ["不详", "Sales", 100.5, "8", "VIP客户"]]


def matching(where):
    t = table_of(ROWS)
    w = tio.compile_where(t, where)
    return [r for r, v in t.data_rows() if w.match(v)], w


def test_where_numbers_compare_as_numbers():
    assert matching([{"column": "金额", "op": "gt", "value": 100}])[0] == [2, 6]
    assert matching([{"column": "金额", "op": "gte", "value": "100.5"}])[0] == [2, 6]
    assert matching([{"column": "金额", "op": "lt", "value": 0}])[0] == [4]
    assert matching([{"column": "金额", "op": "eq", "value": "1200"}])[0] == [2]
    rows, w = matching([{"column": "金额", "op": "lte", "value": 100}])
    assert rows == [3, 4]
    assert "有 1 行" in w.warnings()[0] and "不是数字" in w.warnings()[0]


def test_where_dates_compare_as_dates_in_any_format():
    assert matching([{"column": "日期", "op": "gte", "value": "2024-03-15"}])[0] == [3, 4, 5]
    assert matching([{"column": "日期", "op": "lte", "value": "2024/3/31"}])[0] == [2, 3, 5]   # whole day
    assert matching([{"column": "日期", "op": "eq", "value": "2024年3月1日"}])[0] == [2]
    assert matching([{"column": "日期", "op": "lt", "value": "2024-03-31 12:00"}])[0] == [2, 3]
    assert matching([{"column": "日期", "op": "gte", "value": 20240315}])[0] == [5]       # only real date cells
    assert matching([{"column": "日期", "op": "eq", "value": 20240301}])[0] == [2]


def test_where_text_and_identifiers():
    assert matching([{"column": "部门", "op": "eq", "value": "财务部"}])[0] == [3]          # trimmed
    assert matching([{"column": "部门", "op": "eq", "value": "sales"}])[0] == [6]           # case-insensitive
    assert matching([{"column": "部门", "op": "ne", "value": "销售部"}])[0] == [3, 5, 6]
    assert matching([{"column": "编号", "op": "eq", "value": "7"}])[0] == [3]               # "007" is not 7
    assert matching([{"column": "编号", "op": "eq", "value": "007"}])[0] == [2]
    assert matching([{"column": "编号", "op": "eq", "value": "110101199003071234"}])[0] == [4]
    assert matching([{"column": "备注", "op": "contains", "value": "vip"}])[0] == [6]
    assert matching([{"column": "备注", "op": "not_contains", "value": "加急"}])[0] == [3, 4, 5, 6]
    assert matching([{"column": "备注", "op": "starts_with", "value": "普"}])[0] == [4]
    assert matching([{"column": "备注", "op": "ends_with", "value": "客户"}])[0] == [6]
    assert matching([{"column": "备注", "op": "not_empty"}])[0] == [2, 4, 6]
    assert matching([{"column": "备注", "op": "empty"}])[0] == [3, 5]
    assert matching([{"column": "部门", "op": "in", "value": ["财务部", "研发部"]}])[0] == [3, 5]
    assert matching([{"column": "部门", "op": "not_in", "value": ["财务部", "研发部"]}])[0] == [2, 4, 6]
    assert matching([{"column": "部门", "op": "==", "value": "研发部"}, {"column": "金额", "op": "not_empty"}])[0] == [5]


def test_where_errors_name_the_valid_choices():
    t = table_of(ROWS)
    with pytest.raises(rt.ToolError) as err:
        tio.compile_where(t, [{"column": "金额", "op": "bigger", "value": 1}])
    assert "where[0].op" in str(err.value) and "gte 大于等于" in str(err.value) and "not_empty" in str(err.value)
    with pytest.raises(rt.ToolError) as err:
        tio.compile_where(t, [{"column": "单价", "op": "gt", "value": 1}])
    assert "找不到列「单价」" in str(err.value) and "日期、部门、金额、编号、备注" in str(err.value)
    with pytest.raises(rt.ToolError) as err:
        tio.compile_where(t, [{"column": "金额", "op": "gt"}])
    assert "需要一个 value" in str(err.value)
    with pytest.raises(rt.ToolError) as err:
        tio.compile_where(t, ["金额>1"])
    assert "应是对象" in str(err.value)


# ---------------------------------------------------------------------------------------------
# Aggregation

def test_sum_is_exact_to_the_cent():
    skip = tio.SkipLog()
    agg = tio.make_metric("sum", skip)
    for i, v in enumerate([0.1, 0.2, "0.3", "￥1,000.10", "(0.10)", None, "-", "待定", 5]):
        agg.add(v, i + 2)
    assert agg.result() == 1005.6
    assert skip.count == 1 and skip.examples == [{"row": 9, "value": "待定"}]
    many = tio.make_metric("sum", tio.SkipLog())
    for _ in range(1000):
        many.add(0.01, 1)
    assert many.result() == 10 and isinstance(many.result(), int)
    assert sum([0.01] * 1000) != 10                         # what a float loop would have said


def test_avg_max_min_count_distinct():
    skip = tio.SkipLog()
    avg = tio.make_metric("avg", skip)
    assert avg.result() is None
    for v in (1, 2, "3", "x"):
        avg.add(v, 1)
    assert avg.result() == 2
    hi, lo = tio.make_metric("max", tio.SkipLog()), tio.make_metric("min", tio.SkipLog())
    for v in ("1,000", 5, "(20)", None):
        hi.add(v, 1)
        lo.add(v, 1)
    assert hi.result() == 1000 and lo.result() == -20
    dmax, dmin = tio.make_metric("max", tio.SkipLog()), tio.make_metric("min", tio.SkipLog())
    for v in (datetime.date(2024, 3, 1), "2024/5/1", datetime.datetime(2023, 12, 31, 10, 0)):
        dmax.add(v, 1)
        dmin.add(v, 1)
    assert dmax.result() == "2024-05-01" and dmin.result() == "2023-12-31 10:00:00"
    cnt, dist = tio.make_metric("count", None), tio.make_metric("distinct_count", None)
    for v in ("a", "a ", "b", None, "", 1, 1.0):
        cnt.add(v, 1)
        dist.add(v, 1)
    # count gives the values sum/avg use: a column holding numbers counts its numbers (1 and 1.0)
    assert cnt.result() == 2 and dist.result() == 3
    names = tio.make_metric("count", None)
    for v in ("张三", "-", "李四", None, "N/A", "王五"):
        names.add(v, 1)
    assert names.result() == 3          # no number at all: the filled cells, placeholders empty
    assert tio.check_func("平均") == "avg"
    with pytest.raises(rt.ToolError) as err:
        tio.check_func("median")
    assert "distinct_count" in str(err.value)


# ---------------------------------------------------------------------------------------------
# Real files

def test_libreoffice_resaved_ledger_cached_formulas_and_merges():
    with tio.open_table(os.path.join(FIXTURES, "tio_lo_ledger.xlsx")) as t:
        assert t.header_rows == (4, 5)
        assert t.names == ["区域", "门店", "日期", "销售-数量", "销售-单价", "销售-金额", "备注"]
        data = list(t.data_rows())
        assert [v[0] for _, v in data] == ["华东"] * 3 + ["华南"] * 2 + ["华北"] * 3
        amounts = [tio.to_decimal(v[5]) for _, v in data]
        assert sum(amounts) == D("3922.92")
        assert [tio.display(v[2]) for _, v in data][:2] == ["2024-01-05", "2024-01-06"]
        assert t.totals_rows == [14]


def test_messy_export_in_every_format_gives_the_same_table(tmp_path):
    rows = tio_data.messy_rows()
    files = {"xlsx": tmp_path / "m.xlsx", "xls": tmp_path / "m.xls", "html": tmp_path / "m_html.xls",
             "gbk": tmp_path / "m_gbk.csv", "bom": tmp_path / "m_bom.csv"}
    tio_data.write_xlsx(str(files["xlsx"]), rows)
    tio_data.write_xls(str(files["xls"]), rows)
    tio_data.write_html_xls(str(files["html"]), rows)
    tio_data.write_csv(str(files["gbk"]), rows, "gbk")
    tio_data.write_csv(str(files["bom"]), rows, "utf-8-sig")
    expected_amount = tio_data.totals(rows)[2]
    for kind, path in files.items():
        with tio.open_table(str(path)) as t:
            assert t.names == tio_data.FLAT_HEADER, kind
            assert t.header_row == 5, kind
            total, bad, depts = D(0), 0, set()
            ids = []
            for _rownum, values in t.data_rows():
                n = tio.to_decimal(values[7] if len(values) > 7 else None)
                if n is tio.INVALID:
                    bad += 1
                elif n is not None:
                    total += n
                depts.add(tio.key_value(values[2]))
                ids.append(values[4])
            assert total == expected_amount, kind
            assert bad == sum(1 for r in rows if r["amount"] == "bad"), kind
            assert depts == set(tio_data.DEPTS), kind
            assert ids == [r["id"] for r in rows], kind                 # ID numbers stay exact text
            flat = kind in ("gbk", "bom")                                  # csv: one header row
            assert t.totals_rows == [tio_data.FIRST_DATA_ROW + len(rows) - (1 if flat else 0)], kind
            assert t.note_rows == [t.totals_rows[0] + 1], kind


def test_grid_book_duck_type():
    book = tio.GridBook({"A": [[1], [None], [2]], "B": [["x"]]}, hidden=("B",))
    assert [s.name for s in book.sheets] == ["A", "B"] and book.sheets[1].hidden
    assert list(book.rows()) == [(1, [1]), (3, [2])]
    with pytest.raises(rt.ToolError) as err:
        book.sheet("C")
    assert "A、B" in str(err.value)


@pytest.mark.parametrize("label", ["平均", "平均值：", "人均", "月平均", "最高", "最低", "占比(%)", "备注", "Average",
                                   "平均分"])
def test_summary_labels(label):
    from xlakit.tables.values import is_summary_label
    assert is_summary_label(label)


@pytest.mark.parametrize("label", ["最高学历", "合计", "张三", "平均工资说明文字很长很长"])
def test_not_summary_labels(label):
    from xlakit.tables.values import is_summary_label
    assert not is_summary_label(label)


def test_footer_run_rule():
    """合计 then 平均: footer at once; 平均 before 合计 or at the end: held, then footer; a
    summary word followed by data: data."""
    from xlakit.tables.values import FooterRun
    run = FooterRun()
    assert [run.feed(v) for v in (["甲", 1], ["最高", 3], ["乙", 2], ["平均", 2], ["合计", 6], ["最低", 1])] == \
        ["data", "hold", "data", "hold", "total", "summary"]
    table = tio.Table(tio.GridBook([["项目", "金额"], ["甲", 1], ["最高", 3], ["乙", 2], ["平均", 2], ["合计", 6],
                                    ["最低", 1]]))
    assert [v for _r, v in table.data_rows()] == [["甲", 1], ["最高", 3], ["乙", 2]]
    assert table.totals_rows == [5, 6, 7] and table.summary_rows == [5, 7]


@pytest.mark.parametrize("text,number", [("1,234.50\u200b", "1234.50"), ("\ufeff￥1,234", "1234"),
                                         ("1\xa0234.5元", "1234.5"), ("(300.00)\u200d", "-300.00"),
                                         ("１２３．５元", "123.5")])
def test_amounts_ignore_invisible_characters(text, number):
    assert tio.to_decimal(text) == Decimal(number)


def test_number_text_like():
    from xlakit.tables.values import number_text_like
    assert number_text_like("￥12,566,875.33", Decimal("12567875.83")) == "￥12,567,875.83"
    assert number_text_like("1,200元", Decimal("1250.5")) == "1,250.5元"
    assert number_text_like("1.2万", Decimal("13000")) is None
