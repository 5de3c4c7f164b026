"""No wrong number on anyone's sheet (issue 35, first section): each case is a file made the way
the one that showed the bug was made (openpyxl, xlwt, hand-written records or XML), read through
the real tools as the assistant spawns them."""
import datetime

import openpyxl
import pytest

from conftest import ok
import xlsx_variants
from xlakit.tables.values import Duration, duration_text

READERS = ["fast", "openpyxl"]


def read_rows(run, path, reader="fast", **args):
    env = {"XLA_XLSX_READER": "openpyxl"} if reader == "openpyxl" else {}
    data = ok(run("read_spreadsheet", dict({"path": path}, **args), extra_env=env))
    return data["sheets"][0]["rows"]


# ---------------------------------------------------------------------------------------------
# 3. General with a bracket prefix is General, not a date

BRACKETED_GENERAL = ["[$-804]General", "[DBNum1][$-804]General", "[Red]General", "[BLUE]GENERAL",
                     "[$-1010409]General", '[$-804]General"元"']


@pytest.mark.parametrize("reader", READERS)
def test_bracketed_general_is_a_number(run, tmp_path, reader):
    path = str(tmp_path / "大写金额.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["格式", "金额"])
    for code in BRACKETED_GENERAL:
        ws.append([code, 12323])
        ws.cell(ws.max_row, 2).number_format = code
    wb.save(path)
    rows = read_rows(run, path, reader)
    assert [r[1] for r in rows[1:]] == [12323] * len(BRACKETED_GENERAL), rows


def test_bracketed_general_in_xls(run, tmp_path):
    xlwt = pytest.importorskip("xlwt")
    path = str(tmp_path / "大写金额.xls")
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Sheet1")
    ws.write(0, 0, "格式")
    ws.write(0, 1, "金额")
    for i, code in enumerate(BRACKETED_GENERAL[:5]):
        ws.write(i + 1, 0, code)
        ws.write(i + 1, 1, 12323, xlwt.easyxf(num_format_str=code))
    wb.save(path)
    rows = read_rows(run, path)
    assert [r[1] for r in rows[1:]] == [12323] * 5, rows


# ---------------------------------------------------------------------------------------------
# 4. Elapsed durations read as the person sees them, summed as numbers

def test_duration_text_patterns():
    days = 10.632060185185185          # 255:10:10
    assert duration_text(days, "h:mm:ss") == "255:10:10"
    assert duration_text(days, "h:mm") == "255:10"
    assert duration_text(days, "mm:ss") == "15310:10"
    assert duration_text(days, "s") == "918610"
    assert duration_text(0.5, "hh:mm:ss") == "12:00:00"
    assert duration_text(-1.5, "h:mm") == "-36:00"
    assert duration_text(1 / 86400 * 1.25, "h:mm:ss.00") == "0:00:01.25"


@pytest.mark.parametrize("reader", READERS)
def test_elapsed_durations_read_and_sum(run, tmp_path, reader):
    path = str(tmp_path / "工时.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["姓名", "工时", "通话"])
    for name, hours, call in (("张三", 10.632060185185185, 0.0123), ("李四", 1.25, 0.5)):
        ws.append([name, hours, call])
        ws.cell(ws.max_row, 2).number_format = "[h]:mm:ss"
        ws.cell(ws.max_row, 3).number_format = "[mm]:ss"
    wb.save(path)
    rows = read_rows(run, path, reader)
    assert rows[1] == ["张三", "255:10:10", "17:43"]
    assert rows[2] == ["李四", "30:00:00", "720:00"]
    env = {"XLA_XLSX_READER": "openpyxl"} if reader == "openpyxl" else {}
    data = ok(run("calc_table", {"path": path, "metrics": [{"column": "工时", "func": "sum"}]}, extra_env=env))
    assert abs(data["groups"][0]["工时_求和"] - 11.882060185185185) < 1e-9, data


def test_elapsed_in_ods_and_spreadsheetml():
    from xlakit.tables.formats.ods_cells import parse_duration
    value = parse_duration("PT255H10M10S")
    assert isinstance(value, Duration) and value.text() == "255:10:10"
    assert parse_duration("PT10H30M00S") == datetime.time(10, 30)
    from xlakit.tables.formats.spreadsheetml import parse_datetime
    value = parse_datetime("1900-01-10T15:10:10.000", "elapsed")      # how Excel 2003 XML writes 255:10:10
    assert isinstance(value, Duration) and value.text() == "255:10:10"
    assert parse_datetime("1900-03-01T00:00:00.000", "elapsed:h:mm").text() == "1464:00"   # serial 61


# ---------------------------------------------------------------------------------------------
# 6b. An inline string that also carries a <v> reads its <is> text

def test_inline_string_with_a_stale_v(run, tmp_path):
    path = str(tmp_path / "导出.xlsx")
    rows = ('<row r="1"><c r="A1" t="inlineStr"><is><t>客户</t></is></c>'
            '<c r="B1" t="inlineStr"><is><t>金额</t></is></c></row>'
            '<row r="2"><c r="A2" t="inlineStr"><v>0</v><is><t>华东贸易</t></is></c><c r="B2"><v>12.5</v></c></row>'
            '<row r="3"><c r="A3" t="inlineStr"><is><r><t>华南</t></r><r><t>实业</t></r></is><v>7</v></c>'
            '<c r="B3"><v>7</v></c></row>')
    xlsx_variants.make(path, xlsx_variants.sheet(rows), xlsx_variants.SST)
    for reader in READERS:
        got = read_rows(run, path, reader)
        assert got == [["客户", "金额"], ["华东贸易", 12.5], ["华南实业", 7]], (reader, got)


# ---------------------------------------------------------------------------------------------
# 1. A 合计 kept as text is updated as text, in its own style

def test_text_total_follows_appended_rows(run, tmp_path):
    path = str(tmp_path / "报销台账.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["日期", "项目", "金额"])
    ws.append(["2024-03-01", "差旅", "￥12,566,775.33"])
    ws.append(["2024-03-02", "餐饮", 100])
    ws.append(["合计", None, "￥12,566,875.33"])
    ws.append(["注：金额含税", None, None])
    wb.save(path)
    data = ok(run("write_spreadsheet", {"path": path, "mode": "append", "rows": [["2024-03-03", "打车", 1000.5]]}))
    assert data["action"] == "inserted_above_totals", data
    assert data["totals_updated"] == [{"cell": "C5", "kind": "value", "old": "￥12,566,875.33",
                                       "new": "￥12,567,875.83"}], data
    rows = read_rows(run, path)
    assert rows[4] == ["合计", None, "￥12,567,875.83"] and rows[3][1] == "打车", rows
    for reader in READERS:                         # the rewritten cell is a plain inline string
        assert read_rows(run, path, reader)[4][2] == "￥12,567,875.83"


def test_text_total_written_with_units_is_warned_about(run, tmp_path):
    path = str(tmp_path / "万元.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["项目", "金额"])
    ws.append(["甲", 100])
    ws.append(["合计", "1.2万"])
    wb.save(path)
    data = ok(run("write_spreadsheet", {"path": path, "mode": "append", "rows": [["乙", 50]]}))
    assert data["action"] == "inserted_above_totals"
    assert any("1.2万" in w and "没能随新行更新" in w for w in data.get("warnings", [])), data


# ---------------------------------------------------------------------------------------------
# 2. 平均 / 最高 / 最低 rows with the 合计 are footer everywhere

def _footer_book(path, above=False):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "费用"
    ws.append(["项目", "金额", "备注"])
    ws.append(["差旅", 100, "出差北京"])
    ws.append(["餐饮", 200.5, None])
    ws.append(["办公", 50, None])
    if above:
        ws.append(["平均值：", 116.83, None])
        ws.append(["合计", 350.5, None])
    else:
        ws.append(["合计", 350.5, None])
        ws.append(["平均", 116.83, None])
        ws.append(["最高", 200.5, None])
        ws.append(["最低", 50, None])
        ws.append(["占比(%)", 100, None])
    wb.save(path)
    return path


@pytest.mark.parametrize("above", [False, True])
def test_summary_rows_are_not_data(run, tmp_path, above):
    path = _footer_book(str(tmp_path / "费用.xlsx"), above)
    data = ok(run("calc_table", {"path": path, "metrics": [{"column": "金额", "func": "sum"},
                                                           {"column": "金额", "func": "max"}]}))
    assert data["groups"][0]["金额_求和"] == 350.5 and data["rows_used"] == 3, data
    probe = ok(run("probe_table", {"path": path}))
    assert probe["data_rows"] == 3
    assert probe["totals_rows"] == ([5, 6] if above else [5, 6, 7, 8, 9]), probe


def test_summary_word_amid_data_stays_data(run, tmp_path):
    path = str(tmp_path / "风险.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["等级", "数量"])
    for row in (["最高", 3], ["中", 5], ["最低", 7]):
        ws.append(row)
    ws.append(["合计", 15])
    wb.save(path)
    data = ok(run("calc_table", {"path": path, "metrics": [{"column": "数量", "func": "sum"}]}))
    # 最高 followed by data is data; 最低 right above the 合计 is in the footer run (FooterRun)
    assert data["groups"][0]["数量_求和"] == 8, data
    data = ok(run("calc_table", {"path": path, "group_by": ["等级"], "metrics": [{"column": "数量", "func": "sum"}]}))
    assert {"等级": "最高", "数量_求和": 3} in data["groups"], data


def test_append_goes_above_the_whole_footer(run, tmp_path):
    path = _footer_book(str(tmp_path / "费用.xlsx"))
    data = ok(run("write_spreadsheet", {"path": path, "mode": "append", "rows": [["打车", 30, None]]}))
    assert data["action"] == "inserted_above_totals" and data["start_row"] == 5, data
    assert data["totals_updated"] == [{"cell": "B6", "kind": "value", "old": 350.5, "new": 380.5}]
    assert any("平均" in w and "没有随新行重新计算" in w for w in data.get("warnings", [])), data
    rows = read_rows(run, path)
    assert [r[0] for r in rows] == ["项目", "差旅", "餐饮", "办公", "打车", "合计", "平均", "最高", "最低", "占比(%)"]


def test_csv_summary_rows_below_total(run, tmp_path):
    path = str(tmp_path / "费用.csv")
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        fh.write("项目,金额\r\n差旅,100\r\n餐饮,200.5\r\n办公,50\r\n合计,350.5\r\n平均,116.83\r\n")
    data = ok(run("calc_table", {"path": path, "metrics": [{"column": "金额", "func": "sum"}]}))
    assert data["groups"][0]["金额_求和"] == 350.5, data
    data = ok(run("write_spreadsheet", {"path": path, "mode": "append", "rows": [["打车", 30]]}))
    assert data["action"] == "inserted_above_totals", data
    assert any("平均" in w for w in data.get("warnings", [])), data
    with open(path, encoding="utf-8-sig") as fh:
        assert fh.read().splitlines() == ["项目,金额", "差旅,100", "餐饮,200.5", "办公,50", "打车,30", "合计,380.5",
                                          "平均,116.83"]


# ---------------------------------------------------------------------------------------------
# 5. A BIFF5 file's declared code page wins over a guess

def test_biff5_declared_code_page_wins(run, tmp_path):
    import biff5
    path = biff5.make(tmp_path / "prices.xls", [["Item", "Sum", "Unit"], ["OOО Vega", 100, "р."],
                                                ["Service", 250.5, "МВт·ч"], ["Box", 3, "р."]], "cp1251", 1251)
    data = ok(run("read_spreadsheet", {"path": path}))
    assert data["sheets"][0]["rows"][1:] == [["OOО Vega", 100, "р."], ["Service", 250.5, "МВт·ч"], ["Box", 3, "р."]]
    assert "编码" not in " ".join(data.get("warnings") or [])


# ---------------------------------------------------------------------------------------------
# 6a. Stray NUL bytes do not make a csv UTF-16

def _nul_csv(path, codec="utf-8"):
    """A ledger export whose writer padded a few fields with NUL bytes, all at odd offsets (the
    pattern that once read as UTF-16 without a BOM)."""
    lines = ["日期,客户,金额"] + ["2024-03-%02d,客户%d,%d.50" % (i % 28 + 1, i, 100 + i) for i in range(200)]
    raw = bytearray()
    nuls = 0
    for i, line in enumerate(lines):
        data = line.encode(codec)
        if i % 40 == 7:
            # after the line's last (ASCII) character, on an odd offset
            data += b"\x00" if (len(raw) + len(data)) % 2 == 1 else b" \x00"
            nuls += 1
        raw += data + b"\r\n"
    with open(str(path), "wb") as fh:
        fh.write(bytes(raw))
    assert nuls >= 4 and bytes(raw)[0::2].count(0) == 0
    return str(path)


@pytest.mark.parametrize("codec", ["utf-8", "gb18030"])
def test_csv_with_stray_nuls_is_not_utf16(run, tmp_path, codec):
    path = _nul_csv(tmp_path / "导出.csv", codec)
    data = ok(run("read_spreadsheet", {"path": path, "limit": 3}))
    sheet = data["sheets"][0]
    assert sheet["total_rows"] == 201, data
    assert sheet["rows"][:2] == [["日期", "客户", "金额"], ["2024-03-01", "客户0", "100.50"]], data
    assert data["encoding"] != "UTF-16LE" and any("NUL" in w for w in data["warnings"]), data
    calc = ok(run("calc_table", {"path": path, "metrics": [{"column": "金额", "func": "sum"}]}))
    assert calc["groups"][0]["金额_求和"] == sum(100.5 + i for i in range(200)), calc


def test_utf16_without_bom_still_read(run, tmp_path):
    path = str(tmp_path / "导出16.csv")
    text = "姓名\t部门\t工资\r\n" + "".join("员工%d\t财务部\t%d\r\n" % (i, 5000 + i) for i in range(50))
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-16-le"))
    data = ok(run("read_spreadsheet", {"path": path, "limit": 2}))
    assert data["sheets"][0]["rows"] == [["姓名", "部门", "工资"], ["员工0", "财务部", "5000"]], data
    from xlakit import text as xtext
    chinese = "".join("会计科目明细账簿凭证审核记录" for _ in range(40)) + "\r\n"
    assert xtext.detect(chinese.encode("utf-16-le"))[0] == "utf-16-le"


# ---------------------------------------------------------------------------------------------
# 7. One amount parser for every tool; a derived file says what it left out

ZWSP = "\u200b"


def _amounts_book(path):
    """A ledger pasted from a chat/web page: amounts as text with a trailing zero-width space,
    NBSP thousands separators, ￥ and 元, one (负数) and two cells that are no amounts."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["部门", "月份", "金额"])
    amounts = []
    for i in range(40):
        amount = 1000 + i * 10.25
        amounts.append(amount)
        text = ["%.2f" % amount + ZWSP, "￥{:,.2f}".format(amount), "{:,.2f}元".format(amount),
                "{:,.2f}".format(amount).replace(",", "\xa0")][i % 4]
        ws.append(["华东" if i % 2 else "华南", "%d月" % (i % 3 + 1), text])
    ws.append(["华南", "1月", "(500.00)"])
    amounts.append(-500)
    ws.append(["华东", "2月", "待定"])
    ws.append(["华南", "3月", "见附件"])
    wb.save(path)
    return path, amounts


def test_amount_text_with_invisible_characters_counts_everywhere(run, tmp_path):
    path, amounts = _amounts_book(str(tmp_path / "台账.xlsx"))
    expected = round(sum(amounts), 2)
    calc = ok(run("calc_table", {"path": path, "metrics": [{"column": "金额", "func": "sum"}]}))
    assert calc["groups"][0]["金额_求和"] == expected and calc["skipped"]["金额_求和"]["count"] == 2, calc
    pivot = ok(run("pivot_table", {"path": path, "row": {"column": "部门"}, "col": {"column": "月份"}, "value": "金额"}))
    assert pivot["grand_total"] == expected, pivot
    rows = read_rows(run, pivot["path"])
    assert rows[-1][0].startswith("注：") and "2 个单元格不是数字" in rows[-1][0] and "待定" in rows[-1][0], rows
    probe = ok(run("probe_table", {"path": path}))
    amount = [c for c in probe["columns"] if c["name"] == "金额"][0]
    assert amount["numeric_rate"] >= 0.95, amount


def test_filter_file_notes_rows_it_could_not_compare(run, tmp_path):
    path, amounts = _amounts_book(str(tmp_path / "台账.xlsx"))
    data = ok(run("filter_table", {"path": path, "where": [{"column": "金额", "op": ">", "value": 1200}]}))
    assert data["written"] == sum(1 for a in amounts if a > 1200), data
    rows = read_rows(run, data["path"])
    assert rows[-1][0].startswith("注：") and "无法比较" in rows[-1][0], rows
    again = ok(run("calc_table", {"path": data["path"], "metrics": [{"column": "金额", "func": "count"}]}))
    assert again["rows_used"] == data["written"], again          # the note is no data row


def test_reconcile_file_notes_skipped_amounts(run, tmp_path):
    left = str(tmp_path / "账面.xlsx")
    right = str(tmp_path / "银行.xlsx")
    for path, rows in ((left, [["单号", "金额"], ["A1", "1,200.00" + ZWSP], ["A2", "待定"], ["A3", "300元"]]),
                       (right, [["单号", "金额"], ["A1", 1200], ["A2", 50], ["A3", 300]])):
        wb = openpyxl.Workbook()
        for row in rows:
            wb.active.append(row)
        wb.save(path)
    data = ok(run("lookup_table", {"mode": "reconcile", "left_path": left, "right_path": right, "left_key": "单号",
                                   "right_key": "单号", "left_value": "金额", "right_value": "金额"}))
    rows = read_rows(run, data["path"])
    assert rows[-1][0].startswith("注：左表金额列「金额」有 1 个单元格不是数字"), rows
    assert data["rows_written"] == len(rows) - 2, (data["rows_written"], rows)


def test_elapsed_durations_in_xls(run, tmp_path):
    xlwt = pytest.importorskip("xlwt")
    path = str(tmp_path / "工时.xls")
    wb = xlwt.Workbook()
    ws = wb.add_sheet("工时")
    ws.write(0, 0, "姓名")
    ws.write(0, 1, "工时")
    ws.write(1, 0, "张三")
    ws.write(1, 1, 10.632060185185185, xlwt.easyxf(num_format_str="[h]:mm:ss"))
    wb.save(path)
    assert read_rows(run, path) == [["姓名", "工时"], ["张三", "255:10:10"]]
