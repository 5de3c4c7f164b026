"""write_spreadsheet and the shared writer table_write: every check spawns the real script the way
the assistant does (JSON in, one JSON object out) and reads the result back with independent
readers (openpyxl, xlrd, the csv module with explicit encodings).

What matters to the user and is therefore tested: values keep their types (numbers, real dates,
exact ID-card text); other sheets survive an overwrite; append lands right after the last value
even when formatted empty rows follow; a csv keeps its own encoding and delimiter; workbooks with
parts openpyxl would drop are refused and left byte-for-byte untouched; limits fail before writing;
every existing file is backed up before it changes."""
import csv
import datetime
import hashlib
import io
import json
import os
import shutil
import zipfile
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, assert_contract, fail

import openpyxl
import xlrd
import xlwt
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Border, PatternFill, Side

TOOL = "write_spreadsheet"
ID_CARD = "110101199003071234"


@pytest.fixture
def write(run):
    """``write(args)`` -> parsed answer; asserts the host contract on every call."""
    def _write(args, expect_ok=True, **kwargs):
        res = run(TOOL, args, **kwargs)
        data = assert_contract(res)
        assert data["ok"] is expect_ok, data
        return data
    return _write


def digest(path):
    with open(str(path), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def leftovers(folder):
    """Temp files of an interrupted atomic write (there must never be any)."""
    return [n for n in os.listdir(str(folder)) if n.startswith(".xla-")]


def parts(path):
    with zipfile.ZipFile(str(path)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def sheet_values(path, sheet=None):
    wb = openpyxl.load_workbook(str(path))
    ws = wb[sheet] if sheet else wb.active
    return [list(r) for r in ws.iter_rows(values_only=True)]


MIXED = [["姓名", "身份证号", "金额", "日期", "时间", "在职", "备注", "编号"],
         ["张三", ID_CARD, 1280.5, "2024-03-05", "2024-03-05 14:30", True, None, "007"],
         ["李四", "6222021234567890123", 3, "2024/3/5", "2024-03-05T14:30:15", False, {"k": [1, 2]}, "=SUM(A1:A2)"]]


# ---------------------------------------------------------------------------------------------
# Writing each format

def test_new_xlsx_types_header_freeze_widths(write, tmp_path):
    target = tmp_path / "out" / "新表.xlsx"        # parent folder does not exist yet
    long_text = "很长的说明" * 30
    data = write({"path": str(target), "rows": MIXED + [["中文中文中文", "x", 1, "2024-02-30", "", 0, long_text, ""]]})
    assert data["path"] == str(target) and data["format"] == "xlsx" and data["sheet"] == "Sheet1"
    assert data["rows_written"] == 4 and data["start_row"] == 1 and data["total_rows"] == 4
    assert data["backup"] is None and data["sheets"] == ["Sheet1"] and data["action"] == "new_file"
    assert "4 行" in data["message"]

    wb = openpyxl.load_workbook(str(target))
    ws = wb["Sheet1"]
    row2 = [c.value for c in ws[2]]
    assert row2[0] == "张三"
    assert row2[1] == ID_CARD and ws["B2"].data_type == "s" and ws["B2"].number_format == "@"
    assert row2[2] == 1280.5 and isinstance(row2[2], float)
    assert row2[3] == datetime.datetime(2024, 3, 5) and ws["D2"].is_date and ws["D2"].number_format == "yyyy-mm-dd"
    assert row2[4] == datetime.datetime(2024, 3, 5, 14, 30) and ws["E2"].number_format == "yyyy-mm-dd hh:mm:ss"
    assert row2[5] is True and row2[6] is None and row2[7] == "007"
    row3 = [c.value for c in ws[3]]
    assert row3[1] == "6222021234567890123"
    assert row3[3] == datetime.datetime(2024, 3, 5)
    assert row3[4] == datetime.datetime(2024, 3, 5, 14, 30, 15)
    assert row3[5] is False and json.loads(row3[6]) == {"k": [1, 2]}
    assert row3[7] == "=SUM(A1:A2)" and ws["H3"].data_type == "s"      # text, never a formula
    assert ws["D4"].value == "2024-02-30"                                  # not a real date: stays text
    assert ws["C4"].value == 1 and isinstance(ws["C4"].value, int)

    assert all(c.font.b for c in ws[1]) and not any(c.font.b for c in ws[2])
    assert ws.freeze_panes == "A2"
    widths = {k: v.width for k, v in ws.column_dimensions.items()}
    assert widths["A"] == 14                # "中文中文中文": 6 CJK characters count 12, plus 2
    assert widths["B"] >= len("6222021234567890123")
    assert widths["G"] == 60                # long text capped
    assert leftovers(target.parent) == []


def test_new_xls_values_dates_and_style(write, tmp_path):
    target = tmp_path / "旧格式.xls"
    data = write({"path": str(target), "sheet": "明细", "rows": MIXED})
    assert data["format"] == "xls" and data["sheet"] == "明细" and data["rows_written"] == 3
    book = xlrd.open_workbook(str(target), formatting_info=True)
    sh = book.sheet_by_name("明细")
    assert sh.cell_value(1, 0) == "张三"
    assert sh.cell(1, 1).ctype == xlrd.XL_CELL_TEXT and sh.cell_value(1, 1) == ID_CARD
    assert sh.cell(1, 2).ctype == xlrd.XL_CELL_NUMBER and sh.cell_value(1, 2) == 1280.5
    assert sh.cell(1, 3).ctype == xlrd.XL_CELL_DATE
    assert xlrd.xldate_as_datetime(sh.cell_value(1, 3), book.datemode) == datetime.datetime(2024, 3, 5)
    assert xlrd.xldate_as_datetime(sh.cell_value(2, 4), book.datemode) == datetime.datetime(2024, 3, 5, 14, 30, 15)
    assert sh.cell(1, 5).ctype == xlrd.XL_CELL_BOOLEAN and sh.cell_value(1, 5) == 1
    assert sh.cell_value(1, 7) == "007"
    header_font = book.font_list[book.xf_list[sh.cell_xf_index(0, 0)].font_index]
    body_font = book.font_list[book.xf_list[sh.cell_xf_index(1, 0)].font_index]
    assert header_font.bold and not body_font.bold
    assert sh.horz_split_pos == 1           # frozen below the header


def test_new_csv_is_utf8_bom_text(write, tmp_path):
    target = tmp_path / "导出.csv"
    data = write({"path": str(target), "sheet": "被忽略", "rows": MIXED})
    assert data["format"] == "csv" and data["sheet"] is None and data["encoding"] == "utf-8-sig"
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    assert rows[0][0] == "姓名"
    assert rows[1] == ["张三", ID_CARD, "1280.5", "2024-03-05", "2024-03-05 14:30", "TRUE", "", "007"]
    assert rows[2][6] == '{"k": [1, 2]}' and rows[2][7] == "=SUM(A1:A2)"
    assert data["total_rows"] == 3


def test_libreoffice_opens_written_xlsx(write, tmp_path):
    """An independent application reads our file: dates are dates, text stays text, no formula."""
    if not shutil.which("soffice"):
        pytest.skip("LibreOffice not installed")
    target = tmp_path / "lo.xlsx"
    write({"path": str(target), "rows": MIXED})
    out = tmp_path / "lo_out"
    subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                    "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76", "--outdir", str(out), str(target)],
                   capture_output=True, timeout=180)
    if not (out / "lo.csv").exists():
        pytest.skip("LibreOffice Calc is not installed (only other LibreOffice parts are)")
    with open(str(out / "lo.csv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][1] == ID_CARD and rows[1][3] == "2024-03-05" and rows[1][7] == "007"
    assert rows[2][7] == "=SUM(A1:A2)"

    # LibreOffice re-saves it (shared strings, its own styles); appending to that file still works
    subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                    "--convert-to", "xlsx", "--outdir", str(out), str(target)], capture_output=True, timeout=180)
    resaved = out / "lo.xlsx"
    data = write({"path": str(resaved), "mode": "append", "rows": [["王五", "440301199912310011", 7, "2024-12-31"]]})
    assert data["start_row"] == 4 and data["sheet"] == "Sheet1"
    values = sheet_values(resaved)
    assert values[1][3] == datetime.datetime(2024, 3, 5) and values[3][:4] == ["王五", "440301199912310011", 7,
                                                                               datetime.datetime(2024, 12, 31)]


# ---------------------------------------------------------------------------------------------
# Overwrite

def make_workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "封面"
    ws["A1"] = "年度报表"
    ws2 = wb.create_sheet("明细")
    for r in range(1, 21):
        ws2.append(["旧%d" % r, r])
    ws3 = wb.create_sheet("备注")
    ws3["A1"] = "保留我"
    ws3["B1"] = "=1+1"
    wb.active = 2
    wb.save(str(path))


def test_overwrite_replaces_only_the_named_sheet(write, tmp_path, home):
    target = tmp_path / "报表.xlsx"
    make_workbook(target)
    before = digest(target)
    data = write({"path": str(target), "sheet": "明细", "rows": [["项目", "金额"], ["房租", 3000]]})
    assert data["action"] == "replaced_sheet" and data["sheets"] == ["封面", "明细", "备注"]
    assert data["rows_written"] == 2 and data["total_rows"] == 2
    assert sheet_values(target, "明细") == [["项目", "金额"], ["房租", 3000]]     # old 20 rows gone
    assert sheet_values(target, "封面") == [["年度报表"]]
    wb = openpyxl.load_workbook(str(target))
    assert wb["备注"]["B1"].value == "=1+1" and wb.active.title == "备注"
    # the previous file is in the backup folder, byte for byte
    assert data["backup"] and data["backup"].startswith(str(home / ".xla" / "backup"))
    assert digest(data["backup"]) == before
    assert "其他工作表保持不变" in data["message"] and "备份" in data["message"]


def test_overwrite_sheet_matches_case_insensitively_and_new_sheet_is_added(write, tmp_path):
    target = tmp_path / "a.xlsx"
    make_workbook(target)
    data = write({"path": str(target), "sheet": "新汇总", "rows": [["类别", "合计"], ["餐饮", 10]]})
    assert data["action"] == "new_sheet" and data["sheets"] == ["封面", "明细", "备注", "新汇总"]
    wb = openpyxl.load_workbook(str(target))
    assert wb["新汇总"]["A1"].font.b and wb["新汇总"].freeze_panes == "A2"
    wb2 = openpyxl.Workbook()
    wb2.active.title = "Sheet1"
    wb2.save(str(tmp_path / "b.xlsx"))
    data = write({"path": str(tmp_path / "b.xlsx"), "sheet": "sheet1", "rows": [["x"]]})
    assert data["sheet"] == "Sheet1" and data["sheets"] == ["Sheet1"]


def test_sheet_required_when_ambiguous(write, tmp_path, home):
    target = tmp_path / "多表.xlsx"
    make_workbook(target)
    before = digest(target)
    data = write({"path": str(target), "rows": [["a"]]}, expect_ok=False)
    assert "多个工作表" in data["error"] and "封面" in data["error"] and "sheet" in data["error"]
    assert data["sheets"] == ["封面", "明细", "备注"]
    assert digest(target) == before
    assert not os.path.isdir(str(home / ".xla" / "backup"))       # refused before any copy was made


def test_single_sheet_workbook_default_sheet(write, tmp_path):
    target = tmp_path / "单表.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "数据"
    wb.active.append(["旧"])
    wb.save(str(target))
    data = write({"path": str(target), "rows": [["新"]]})
    assert data["sheet"] == "数据" and sheet_values(target) == [["新"]]


def test_xls_overwrite_other_sheets_need_flag_then_kept_as_values(write, tmp_path):
    target = tmp_path / "台账.xls"
    book = xlwt.Workbook()
    s1 = book.add_sheet("一月")
    s1.write(0, 0, "日期")
    s1.write(1, 0, datetime.date(2024, 1, 31), xlwt.easyxf(num_format_str="yyyy-mm-dd"))
    s1.write(1, 1, 42.5)
    book.add_sheet("二月").write(0, 0, "旧")
    book.save(str(target))
    before = digest(target)
    data = write({"path": str(target), "sheet": "二月", "rows": [["日期", "金额"], ["2024-02-29", 8]]}, expect_ok=False)
    assert "一月" in data["error"] and "allow_lossy_resave" in data["error"] and ".xlsx" in data["error"]
    assert digest(target) == before
    data = write({"path": str(target), "sheet": "二月", "rows": [["日期", "金额"], ["2024-02-29", 8]],
                  "allow_lossy_resave": True})
    assert data["sheets"] == ["一月", "二月"] and data["backup"] and digest(data["backup"]) == before
    assert any("一月" in w for w in data["warnings"])
    bk = xlrd.open_workbook(str(target))
    jan = bk.sheet_by_name("一月")
    assert jan.cell(1, 0).ctype == xlrd.XL_CELL_DATE
    assert xlrd.xldate_as_datetime(jan.cell_value(1, 0), bk.datemode).date() == datetime.date(2024, 1, 31)
    assert jan.cell_value(1, 1) == 42.5
    feb = bk.sheet_by_name("二月")
    assert xlrd.xldate_as_datetime(feb.cell_value(1, 0), bk.datemode) == datetime.datetime(2024, 2, 29)


def test_xls_single_sheet_overwrite_without_flag(write, tmp_path):
    target = tmp_path / "单.xls"
    book = xlwt.Workbook()
    book.add_sheet("Sheet1").write(0, 0, "旧")
    book.save(str(target))
    data = write({"path": str(target), "rows": [["新"], [1]]})
    assert data["backup"] and data["action"] == "replaced_sheet"
    assert xlrd.open_workbook(str(target)).sheet_by_index(0).cell_value(0, 0) == "新"


def test_csv_overwrite_keeps_encoding_and_delimiter(write, tmp_path):
    target = tmp_path / "gbk.csv"
    target.write_bytes("名称;数量\r\n旧;1\r\n".encode("gbk"))
    data = write({"path": str(target), "rows": [["名称", "数量"], ["新", 2]]})
    assert data["encoding"] == "gb18030" and data["delimiter"] == ";" and data["action"] == "replaced_file"
    assert target.read_bytes().decode("gbk") == "名称;数量\r\n新;2\r\n"
    assert data["backup"]


# ---------------------------------------------------------------------------------------------
# Append

def test_xlsx_append_after_last_value_skips_styled_empty_rows(write, tmp_path):
    target = tmp_path / "台账.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "流水"
    ws.append(["日期", "摘要", "金额"])
    for i in range(1, 10):
        ws.append([datetime.date(2024, 1, i), "第%d笔" % i, i * 10])
        ws.cell(row=i + 1, column=3).number_format = "#,##0.00"
        ws.cell(row=i + 1, column=1).number_format = "yyyy/m/d"
    thin = Side(style="thin")
    for r in range(20, 31):             # formatted, empty rows prepared for later entries
        for c in range(1, 4):
            cell = ws.cell(row=r, column=c)
            cell.border = Border(top=thin, bottom=thin, left=thin, right=thin)
            cell.fill = PatternFill("solid", fgColor="FFFF00")
    assert ws.max_row == 30
    wb.create_sheet("其他")["A1"] = "不动"
    wb.save(str(target))
    before = digest(target)

    data = write({"path": str(target), "sheet": "流水", "mode": "append",
                  "rows": [["2024-01-10", "第10笔", 100], ["2024-01-11", "第11笔", 110.5]]})
    assert data["start_row"] == 11 and data["rows_written"] == 2 and data["total_rows"] == 12
    assert data["action"] == "appended" and data["sheets"] == ["流水", "其他"]
    assert digest(data["backup"]) == before
    wb = openpyxl.load_workbook(str(target))
    ws = wb["流水"]
    assert ws["A11"].value == datetime.datetime(2024, 1, 10) and ws["A11"].is_date
    assert ws["A11"].number_format == "yyyy/m/d"           # took the format of the rows above
    assert ws["C12"].value == 110.5 and ws["C12"].number_format == "#,##0.00"
    assert not ws["A11"].font.b                           # appended rows are not styled as a header
    assert ws["A13"].value is None and ws["A20"].value is None
    assert ws["A20"].fill.fgColor.rgb.endswith("FFFF00")  # the prepared rows keep their formatting
    assert wb["其他"]["A1"].value == "不动"


def test_xlsx_append_skips_repeated_header_and_fills_styled_rows(write, tmp_path):
    target = tmp_path / "合并.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["月份", "金额"])
    ws.append(["1月", 5])
    for c in (1, 2):
        ws.cell(row=3, column=c).fill = PatternFill("solid", fgColor="DDDDDD")
    wb.save(str(target))
    data = write({"path": str(target), "mode": "append", "rows": [[" 月份", "金额 "], ["2月", 7], ["3月", 9]]})
    assert data["header_skipped"] and data["rows_written"] == 2 and data["start_row"] == 3
    assert sheet_values(target) == [["月份", "金额"], ["1月", 5], ["2月", 7], ["3月", 9]]
    ws = openpyxl.load_workbook(str(target)).active
    assert ws["A3"].fill.fgColor.rgb.endswith("DDDDDD")
    assert "跳过" in data["message"]


def test_xlsx_append_extends_excel_table(write, tmp_path):
    from openpyxl.worksheet.table import Table
    target = tmp_path / "表格.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["名称", "数量"])
    ws.append(["a", 1])
    ws.append(["b", 2])
    ws.add_table(Table(displayName="清单", ref="A1:B3"))
    wb.save(str(target))
    write({"path": str(target), "mode": "append", "rows": [["c", 3]]})
    ws = openpyxl.load_workbook(str(target)).active
    assert ws.tables["清单"].ref == "A1:B4"


def test_append_to_missing_sheet_or_file_writes_whole(write, tmp_path):
    target = tmp_path / "新.xlsx"
    data = write({"path": str(target), "mode": "append", "rows": [["名称"], ["x"]]})
    assert data["action"] == "new_file" and data["start_row"] == 1
    data = write({"path": str(target), "mode": "append", "sheet": "第二页", "rows": [["名称"], ["y"]]})
    assert data["action"] == "new_sheet" and data["sheets"] == ["Sheet1", "第二页"]
    ws = openpyxl.load_workbook(str(target))["第二页"]
    assert ws["A1"].font.b and ws.freeze_panes == "A2"


def test_csv_append_keeps_gbk_and_delimiter(write, tmp_path):
    target = tmp_path / "银行流水.csv"
    original = "交易日期;摘要;金额\r\n2024-01-01;工资;8000\r\n2024-01-02;房租;-3000".encode("gbk")  # no final newline
    target.write_bytes(original)
    data = write({"path": str(target), "mode": "append",
                  "rows": [["交易日期", "摘要", "金额"], ["2024-01-03", "超市购物；日用", -88.5], ["2024-01-04", "含;分号", 1]]})
    assert data["encoding"] == "gb18030" and data["delimiter"] == ";"
    assert data["header_skipped"] and data["rows_written"] == 2 and data["start_row"] == 4 and data["total_rows"] == 5
    raw = target.read_bytes()
    assert raw.startswith(original)
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    text = raw.decode("gbk")
    assert text.endswith("2024-01-04;\"含;分号\";1\r\n")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
    assert rows[3] == ["2024-01-03", "超市购物；日用", "-88.5"] and rows[4] == ["2024-01-04", "含;分号", "1"]
    assert digest(data["backup"]) == hashlib.sha256(original).hexdigest()


def test_csv_append_utf8_bom_no_second_bom_and_ascii_file_gets_bom(write, tmp_path):
    target = tmp_path / "bom.csv"
    target.write_bytes("名称,数量\n苹果,1\n".encode("utf-8-sig"))
    data = write({"path": str(target), "mode": "append", "rows": [["香蕉", 2]]})
    raw = target.read_bytes()
    assert raw.count(b"\xef\xbb\xbf") == 1 and raw.decode("utf-8-sig") == "名称,数量\n苹果,1\n香蕉,2\n"
    assert data["encoding"] == "utf-8-sig" and data["total_rows"] == 3

    ascii_file = tmp_path / "ascii.csv"
    ascii_file.write_bytes(b"name,qty\napple,1\n")
    data = write({"path": str(ascii_file), "mode": "append", "rows": [["香蕉", 2]]})
    assert ascii_file.read_bytes() == "\ufeffname,qty\napple,1\n香蕉,2\n".encode("utf-8")
    assert any("BOM" in w for w in data["warnings"])


def test_csv_append_tab_utf16(write, tmp_path):
    """Excel's "Unicode text" export: UTF-16 with BOM, tab separated."""
    target = tmp_path / "unicode.csv"
    target.write_bytes("名称\t数量\r\n苹果\t1\r\n".encode("utf-16"))
    write({"path": str(target), "mode": "append", "rows": [["香蕉", 2]]})
    raw = target.read_bytes()
    assert raw.decode("utf-16") == "名称\t数量\r\n苹果\t1\r\n香蕉\t2\r\n"


def test_xls_append_refused(write, tmp_path):
    target = tmp_path / "老.xls"
    book = xlwt.Workbook()
    book.add_sheet("Sheet1").write(0, 0, "a")
    book.save(str(target))
    before = digest(target)
    data = write({"path": str(target), "mode": "append", "rows": [["b"]]}, expect_ok=False)
    assert ".xls" in data["error"] and "xlsx" in data["error"] and "追加" in data["error"]
    assert digest(target) == before


# ---------------------------------------------------------------------------------------------
# Workbooks that openpyxl cannot re-save faithfully

def make_chart_workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "数据"
    for row in [["月份", "销量"], ["1月", 10], ["2月", 20], ["3月", 15]]:
        ws.append(row)
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    ws.add_chart(chart, "D2")
    wb.create_sheet("汇总")
    wb.save(str(path))


def test_chart_workbook_empty_sheet_written_directly_and_refused_for_a_resave(write, tmp_path, home):
    target = tmp_path / "图表.xlsx"
    make_chart_workbook(target)
    before = parts(target)
    # the empty 汇总 sheet is filled by editing the package: the chart on 数据 keeps its bytes
    for mode in ("overwrite", "append"):
        data = write({"path": str(target), "sheet": "汇总", "mode": mode, "rows": [["a", 1]]})
        assert data["action"] == ("replaced_sheet" if mode == "overwrite" else "appended")
        assert sheet_values(target, "汇总") == [["a", 1]]
        now = parts(target)
        assert all(now[n] == before[n] for n in before if n.startswith(("xl/charts/", "xl/drawings/")))
        shutil.copy(data["backup"], str(target))
    # replacing the sheet that holds values needs openpyxl, which would drop the chart: refused
    before = digest(target)
    backups = sorted(os.listdir(str(home / ".xla" / "backup")))   # one: both writes backed up the same bytes
    data = write({"path": str(target), "sheet": "数据", "rows": [["a", 1]]}, expect_ok=False)
    assert "图表" in data["error"] and "allow_lossy_resave" in data["error"] and "新文件" in data["error"]
    assert "图表" in data["would_lose"] and digest(target) == before
    assert sorted(os.listdir(str(home / ".xla" / "backup"))) == backups   # the refused write took no backup

    data = write({"path": str(target), "sheet": "数据", "rows": [["a", 1]], "allow_lossy_resave": True})
    assert data["backup"] and digest(data["backup"]) == before
    assert any("图表" in w for w in data["warnings"])
    assert sheet_values(target, "数据") == [["a", 1]]


def test_image_workbook_made_by_libreoffice_refused(write, tmp_path):
    target = tmp_path / "图片.xlsx"
    shutil.copy(os.path.join(FIXTURES, "write_spreadsheet_image.xlsx"), str(target))
    before = digest(target)
    data = write({"path": str(target), "sheet": "数据", "mode": "overwrite", "rows": [["梨", 4]]}, expect_ok=False)
    assert "图片" in data["error"]
    assert digest(target) == before and leftovers(tmp_path) == []


def test_encrypted_and_corrupt_xlsx_untouched(write, tmp_path):
    plain = tmp_path / "plain.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["机密", 1])
    wb.save(str(plain))
    target = tmp_path / "加密.xlsx"          # made by msoffcrypto-tool (tests/fixtures/make_fixtures.py)
    shutil.copy(os.path.join(FIXTURES, "encrypted.xlsx"), str(target))
    before = digest(target)
    for mode in ("overwrite", "append"):
        data = write({"path": str(target), "mode": mode, "rows": [["x"]]}, expect_ok=False)
        assert "密码" in data["error"] and "新文件" in data["error"]
        assert digest(target) == before

    broken = tmp_path / "坏.xlsx"
    broken.write_bytes(plain.read_bytes()[:600])
    before = digest(broken)
    data = write({"path": str(broken), "mode": "append", "rows": [["x"]]}, expect_ok=False)
    assert "损坏" in data["error"]
    assert digest(broken) == before and leftovers(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Limits and bad input: clear Chinese errors, nothing written

def test_xls_row_and_column_limits(write, tmp_path):
    target = tmp_path / "大.xls"
    data = write({"path": str(target), "rows": [[i] for i in range(65537)]}, expect_ok=False)
    assert "65,536" in data["error"] and ".xlsx" in data["error"]
    data = write({"path": str(target), "rows": [list(range(257))]}, expect_ok=False)
    assert "256" in data["error"] and ".xlsx" in data["error"]
    assert not target.exists()
    data = write({"path": str(target), "rows": [[i] for i in range(65536)]})
    assert data["rows_written"] == 65536


def test_xlsx_column_limit_and_cell_length(write, tmp_path):
    target = tmp_path / "x.xlsx"
    data = write({"path": str(target), "rows": [list(range(16385))]}, expect_ok=False)
    assert "16384" in data["error"]
    data = write({"path": str(target), "rows": [["a", "b"], ["ok", "字" * 32768]]}, expect_ok=False)
    assert "第 2 行第 2 列" in data["error"] and "32767" in data["error"]
    assert not target.exists()


def test_failed_write_leaves_original_untouched(write, tmp_path, home):
    target = tmp_path / "原件.xlsx"
    make_workbook(target)
    before = digest(target)
    data = write({"path": str(target), "sheet": "明细", "rows": [["a"], ["x" * 40000]]}, expect_ok=False)
    assert "32767" in data["error"]
    assert digest(target) == before and leftovers(tmp_path) == []
    assert not os.path.isdir(str(home / ".xla" / "backup"))          # checked before anything was copied


@pytest.mark.parametrize("sheet,needle", [
    ("这是一个非常非常非常非常非常非常非常非常长的工作表名字超过了三十一个字", "31"),
    ("2024/01", "/"),
    ("汇总[1]", "["),
    ("History", "保留"),
])
def test_bad_sheet_names(write, tmp_path, sheet, needle):
    data = write({"path": str(tmp_path / "s.xlsx"), "sheet": sheet, "rows": [["a"]]}, expect_ok=False)
    assert needle in data["error"] and "工作表名" in data["error"]


def test_bad_rows(write, run, tmp_path):
    target = tmp_path / "r.xlsx"
    # the host's argument check names the row
    res = run(TOOL, {"path": str(target), "rows": [["a"], "不是数组"]})
    assert not res.ok and "rows[1]" in res.error
    # the script itself, given the raw JSON, also refuses with the row index
    raw = json.dumps({"path": str(target), "rows": [["a"], ["b"], 5]}, ensure_ascii=False)
    data = assert_contract(run(TOOL, raw_input=raw))
    assert not data["ok"] and "rows[2]" in data["error"]
    data = write({"path": str(target), "rows": []}, expect_ok=False)
    assert "空" in data["error"]
    res = run(TOOL, {"path": str(target), "rows": "a,b"})
    assert not res.ok and "rows" in res.error
    assert not target.exists()


def test_bad_paths(write, tmp_path):
    folder = tmp_path / "文件夹.xlsx"
    folder.mkdir()
    data = write({"path": str(folder), "rows": [["a"]]}, expect_ok=False)
    assert "文件夹" in data["error"]
    data = write({"path": str(tmp_path / "a.ods"), "rows": [["a"]]}, expect_ok=False)
    assert ".ods" in data["error"] and ".xlsx" in data["error"]
    data = write({"path": str(tmp_path / "无后缀"), "rows": [["a"]]}, expect_ok=False)
    assert "后缀" in data["error"]
    data = write({"path": str(tmp_path / "宏.xlsm"), "rows": [["a"]]}, expect_ok=False)
    assert ".xlsx" in data["error"]


def test_relative_path_goes_to_workspace(write, home):
    data = write({"path": "汇总.xlsx", "rows": [["a", "b"], [1, 2]]})
    expected = home / ".xla" / "workspace" / "汇总.xlsx"
    assert data["path"] == str(expected) and expected.is_file()
    data = write({"path": "~/子目录/b.csv", "rows": [["a"]]})
    assert data["path"] == str(home / "子目录" / "b.csv")


# ---------------------------------------------------------------------------------------------
# The library API other tools use

def test_library_api(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    sys.path.insert(0, ROOT)
    from xlakit.tables import write as table_write
    ws = tmp_path / ".xla" / "workspace"
    first = table_write.default_output_path("/data/9月账单.xlsx", "筛选")
    assert first == str(ws / "9月账单_筛选.xlsx")
    open(first, "w").close()
    assert table_write.default_output_path("9月账单.xlsx", "筛选") == str(ws / "9月账单_筛选_2.xlsx")
    assert table_write.default_output_path("流水.csv", "去重") == str(ws / "流水_去重.csv")
    assert table_write.default_output_path("老.xls", "透视", ext="csv") == str(ws / "老_透视.csv")

    assert table_write.to_cell("2024-03-05") == datetime.date(2024, 3, 5)
    assert table_write.to_cell("2024年3月5日") == datetime.date(2024, 3, 5)
    assert table_write.to_cell(ID_CARD) == ID_CARD
    assert table_write.to_cell(123456789012345678) == "123456789012345678"
    assert table_write.to_cell(12.5) == 12.5 and table_write.to_cell(None) is None

    assert table_write.to_cell(datetime.date(1899, 12, 1)) == "1899-12-01"     # before Excel's calendar
    assert [table_write.excel_serial(datetime.date(*d)) for d in ((1900, 1, 1), (1900, 2, 28), (1900, 3, 1),
                                                                  (2024, 3, 5))] == [1, 59, 61, 45356]
    assert table_write.excel_serial(datetime.datetime(2024, 3, 5, 12)) == 45356.5

    # streaming: a generator of 100k rows to csv, and to a new xlsx
    gen = ([i, "行%d" % i, i * 0.5] for i in range(100000))
    res = table_write.write_rows(str(tmp_path / "big.csv"), gen)
    assert res["rows_written"] == 100000 and res["total_rows"] == 100000
    gen = ([i, "2024-01-01"] for i in range(5000))
    res = table_write.write_rows(str(tmp_path / "big.xlsx"), gen, sheet="结果")
    assert res["rows_written"] == 5000 and res["sheet"] == "结果"
    ws = openpyxl.load_workbook(str(tmp_path / "big.xlsx"), read_only=True)["结果"]
    last = list(ws.iter_rows(min_row=5000, max_row=5000, values_only=True))[0]
    assert last == (4999, datetime.datetime(2024, 1, 1))


# ---------------------------------------------------------------------------------------------
# Smaller cases

def test_append_into_empty_existing_sheet_styles_header(write, tmp_path):
    target = tmp_path / "空表.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "录入"
    wb.active["A5"].fill = PatternFill("solid", fgColor="00FF00")      # formatting only, no values
    wb.save(str(target))
    data = write({"path": str(target), "mode": "append", "rows": [["姓名", "电话"], ["王五", "13800138000"]]})
    assert data["start_row"] == 1 and data["total_rows"] == 2
    ws = openpyxl.load_workbook(str(target))["录入"]
    assert ws["A1"].font.b and ws.freeze_panes == "A2" and ws["B2"].value == "13800138000"


def test_xlsx_append_past_last_row_refused(write, tmp_path):
    target = tmp_path / "满.xlsx"
    wb = openpyxl.Workbook()
    wb.active.cell(row=1048575, column=1, value="最后")
    wb.save(str(target))
    before = digest(target)
    data = write({"path": str(target), "mode": "append", "rows": [["a"], ["b"], ["c"]]}, expect_ok=False)
    assert "1,048,576" in data["error"] and "第 1048576 行" in data["error"]
    assert digest(target) == before


def test_append_unmerges_empty_merged_area_and_cleans_control_chars(write, tmp_path):
    target = tmp_path / "合并格.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["名称", "数量"])
    ws.append(["a", 1])
    ws.merge_cells("A3:B4")
    wb.save(str(target))
    data = write({"path": str(target), "mode": "append", "rows": [["b\x07", 2], ["c", 3]]})
    assert data["start_row"] == 3
    assert sheet_values(target)[2:] == [["b", 2], ["c", 3]]
    assert any("A3:B4" in w for w in data["warnings"]) and any("控制字符" in w for w in data["warnings"])


def test_xlsm_without_macros_and_excel_lock_file(write, run, tmp_path):
    target = tmp_path / "宏表.xlsm"
    wb = openpyxl.Workbook()
    wb.active.append(["名称", "数量"])
    wb.save(str(target))
    owner = tmp_path / ("~$" + target.name)
    owner.write_bytes(b"owner")
    before = digest(target)
    # Open in Excel: Excel would later save its own copy over ours, so nothing is written.
    res = run("write_spreadsheet", {"path": str(target), "mode": "append", "rows": [["x", 1]]})
    assert "正在被" in fail(res) and digest(target) == before
    owner.unlink()
    data = write({"path": str(target), "mode": "append", "rows": [["x", 1]]})
    assert data["format"] == "xlsm" and data["start_row"] == 2


def test_append_same_data_row_to_headerless_csv_is_kept(write, tmp_path):
    target = tmp_path / "无表头.csv"
    target.write_bytes(b"1,apple,2024-01-01\r\n")
    data = write({"path": str(target), "mode": "append", "rows": [[1, "apple", "2024-01-01"]]})
    assert not data["header_skipped"] and data["rows_written"] == 1 and data["total_rows"] == 2


def test_existing_workbook_too_big_to_resave(tmp_path, monkeypatch):
    """The guard that keeps a huge workbook from running into the 60 s limit (threshold lowered)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    sys.path.insert(0, ROOT)
    from xlakit.tables import write as table_write
    from xlakit import runtime as xla_runtime
    target = tmp_path / "大台账.xlsx"
    table_write.write_rows(str(target), [[i, "x"] for i in range(60)])
    table_write.write_rows(str(target), [["说明"]], sheet="说明")      # two sheets: replacing one re-saves
    before = digest(target)
    from xlakit.tables import target as table_target
    monkeypatch.setattr(table_target, "RESAVE_CELLS_PER_SECOND", 1)      # 120 cells: 120 s
    with pytest.raises(xla_runtime.ToolError) as err:
        table_write.write_rows(str(target), [[1, "y"]], mode="overwrite")
    message = str(err.value)
    assert "新文件" in message and "新工作表" in message and "121 秒" in message and "缩小范围" not in message
    assert digest(target) == before
    # a new sheet and an append never re-save: they go through whatever the size
    res = table_write.write_rows(str(target), [[1, "y"]], sheet="新表")
    assert res["action"] == "new_sheet"
    res = table_write.write_rows(str(target), [[61, "z"]], sheet="Sheet1", mode="append")
    assert res["action"] == "appended" and res["start_row"] == 61


def test_append_below_totals_row_warns(write, tmp_path):
    target = tmp_path / "带合计.xlsx"
    wb = openpyxl.Workbook()
    for row in (["项目", "金额"], ["房租", 3000], ["水电", 200], ["合计", "=SUM(B2:B3)"]):
        wb.active.append(row)
    wb.save(str(target))
    data = write({"path": str(target), "mode": "append", "rows": [["网费", 100]], "position": "end"})
    assert data["start_row"] == 5 and any("合计" in w and "第 4 行" in w for w in data["warnings"])


def test_fake_html_xls_needs_flag(write, tmp_path):
    """Bank/ERP systems save HTML tables as .xls: overwriting it replaces the whole thing."""
    target = tmp_path / "网银导出.xls"
    target.write_bytes("<html><body><table><tr><td>日期</td><td>金额</td></tr></table></body></html>".encode("utf-8"))
    before = digest(target)
    data = write({"path": str(target), "rows": [["日期", "金额"], ["2024-05-01", 9.9]]}, expect_ok=False)
    assert "HTML" in data["error"] and "allow_lossy_resave" in data["error"]
    assert digest(target) == before
    data = write({"path": str(target), "rows": [["日期", "金额"], ["2024-05-01", 9.9]], "allow_lossy_resave": True})
    assert data["action"] == "replaced_file" and digest(data["backup"]) == before
    assert xlrd.open_workbook(str(target)).sheet_by_index(0).cell_value(1, 1) == 9.9
