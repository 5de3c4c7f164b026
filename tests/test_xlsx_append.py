"""Appending to an existing xlsx by editing the package (xlakit/tables/xlsx_append.py).

The direct edit runs for every append and every new sheet of an existing workbook (openpyxl's
load + save would lose parts such as charts and pivot tables, and take minutes on a big ledger). What the user must be able to trust, and so
what is checked here with independent readers (zipfile, openpyxl, LibreOffice):

- every part but the edited ones is byte for byte the original (charts, pivot caches, drawings,
  shared strings), the zip is valid, and the appended rows read back with their types (dates are
  dates, ID numbers and leading-zero codes are text);
- ``dimension``, Excel table ranges, the sheet's auto-filter and the hidden filter name follow the
  new last row; empty merged areas in the appended block are unmerged; formatted empty rows after
  the data are filled, not duplicated; a repeated header is dropped; a 1904-date workbook gets the
  right serials;
- what still needs openpyxl (replacing a sheet, an empty sheet) is refused up front when the
  re-save would not fit in the time left, and the original is untouched.

The size logic runs with a lowered re-save rate (a real 1M-row ledger is left to
bench/bench_append.py: making one takes longer than this whole file should).
"""
import csv
import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import FIXTURES, ROOT, assert_contract

import openpyxl
from openpyxl.styles import Border, PatternFill, Side
from openpyxl.worksheet.table import Table

sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

PIVOT = os.path.join(FIXTURES, "append_chart_pivot_lo.xlsx")   # saved by LibreOffice: chart, pivot, shared strings
ID_CARD = "110101199003071234"


def digest(path):
    with open(str(path), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def parts(path):
    with zipfile.ZipFile(str(path)) as zf:
        assert zf.testzip() is None
        return {n: zf.read(n) for n in zf.namelist()}


def changed_parts(before, after):
    a, b = parts(before), parts(after)
    return sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))


@pytest.fixture
def write(run):
    def _write(args, expect_ok=True):
        data = assert_contract(run("write_spreadsheet", args))
        assert data["ok"] is expect_ok, data
        return data
    return _write


@pytest.fixture
def lib(tmp_path, monkeypatch):
    """The writer in-process with openpyxl's re-save estimated as hopelessly slow, so what would
    need it is refused (appending and adding a sheet never need it)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    from xlakit.tables import target as table_target, write as table_write
    monkeypatch.setattr(table_target, "RESAVE_CELLS_PER_SECOND", 0.001)
    return table_write


def lo_csv(path, tmp_path, sheet_count=1):
    """LibreOffice's reading of every sheet as csv rows ({sheet file stem: rows}); skips without Calc."""
    if not shutil.which("soffice"):
        pytest.skip("LibreOffice not installed")
    out = tmp_path / "lo_out"
    filt = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"
    subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                    "--convert-to", filt, "--outdir", str(out), str(path)], capture_output=True, timeout=180)
    found = {}
    for name in sorted(os.listdir(str(out))) if out.exists() else []:
        with open(str(out / name), encoding="utf-8", newline="") as fh:
            found[os.path.splitext(name)[0]] = list(csv.reader(fh))
    if not found:
        pytest.skip("LibreOffice Calc is not installed (only other LibreOffice parts are)")
    return found


# ---------------------------------------------------------------------------------------------
# Through the tool: a workbook openpyxl would damage

def test_chart_and_pivot_kept_byte_for_byte(write, tmp_path):
    target = tmp_path / "透视台账.xlsx"
    shutil.copy(PIVOT, str(target))
    before = digest(target)
    rows = [["d", 4], ["e", 5.25], [ID_CARD, 6], ["0012", 7], ["2024-03-05", 8], [True, None]]
    data = write({"path": str(target), "sheet": "数据", "mode": "append", "rows": rows})
    assert data["action"] == "appended" and data["start_row"] == 5 and data["rows_written"] == 6
    assert data["total_rows"] == 10 and data["sheets"] == ["数据", "透视"]
    assert digest(data["backup"]) == before
    # only the sheet (and styles, for the date and text formats) changed, and the chart's series,
    # which ended on the old last row, takes the new rows in; drawing, pivot table and cache,
    # shared strings are the original bytes
    assert changed_parts(data["backup"], target) == ["xl/charts/chart1.xml", "xl/styles.xml",
                                                     "xl/worksheets/sheet1.xml"]
    chart = parts(target)["xl/charts/chart1.xml"].decode("utf-8")
    assert "<c:f>数据!$B$2:$B$10</c:f>" in chart and "<c:f>数据!B1</c:f>" in chart
    assert chart.replace("$B$10", "$B$4") == parts(data["backup"])["xl/charts/chart1.xml"].decode("utf-8")
    kept = parts(target)
    assert any(n.startswith("xl/pivotCache/") for n in kept) and any(n.startswith("xl/charts/") for n in kept)

    wb = openpyxl.load_workbook(str(target))
    ws = wb["数据"]
    got = [list(r) for r in ws.iter_rows(values_only=True)]
    assert got[:4] == [["名称", "数量"], ["a", 1], ["b", 2], ["c", 3]]
    assert got[4:] == [["d", 4], ["e", 5.25], [ID_CARD, 6], ["0012", 7],
                       [datetime.datetime(2024, 3, 5), 8], [True, None]]
    assert ws["A7"].data_type == "s" and ws["A8"].number_format == "@" and ws["A9"].is_date
    assert ws.dimensions == "A1:B10"
    assert [p.name for p in wb["透视"]._pivots] == ["透视表1"]    # openpyxl still finds the pivot

    sheets = lo_csv(target, tmp_path)
    lo = next(v for k, v in sheets.items() if k.endswith("数据"))
    assert lo[4:9] == [["d", "4"], ["e", "5.25"], [ID_CARD, "6"], ["0012", "7"], ["2024-03-05", "8"]]
    assert lo[9][0] == "TRUE"


def test_new_sheet_added_without_touching_the_others(write, tmp_path):
    target = tmp_path / "加表.xlsx"
    shutil.copy(PIVOT, str(target))
    rows = [["日期", "身份证", "金额"], ["2024-12-31", ID_CARD, 99.5], ["2025-01-01 08:30", "007", 1]]
    data = write({"path": str(target), "sheet": "十二月", "rows": rows})
    assert data["action"] == "new_sheet" and data["sheets"] == ["数据", "透视", "十二月"]
    changed = changed_parts(data["backup"], target)
    assert changed == sorted(["[Content_Types].xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml",
                              "xl/workbook.xml", "xl/worksheets/sheet3.xml"])
    wb = openpyxl.load_workbook(str(target))
    assert wb.sheetnames == ["数据", "透视", "十二月"]
    ws = wb["十二月"]
    assert [list(r) for r in ws.iter_rows(values_only=True)] == [
        ["日期", "身份证", "金额"], [datetime.datetime(2024, 12, 31), ID_CARD, 99.5],
        [datetime.datetime(2025, 1, 1, 8, 30), "007", 1]]
    assert ws["A1"].font.b and ws.freeze_panes == "A2" and not ws["A2"].font.b
    assert ws["B3"].number_format == "@" and ws["A3"].number_format == "yyyy-mm-dd hh:mm:ss"
    assert [list(r) for r in wb["数据"].iter_rows(values_only=True)][-1] == ["c", 3]

    sheets = lo_csv(target, tmp_path)
    lo = next(v for k, v in sheets.items() if k.endswith("十二月"))
    assert lo[1] == ["2024-12-31", ID_CARD, "99.5"] and lo[2][1] == "007"


def test_replacing_a_sheet_of_a_chart_workbook_still_refused(write, tmp_path):
    target = tmp_path / "透视.xlsx"
    shutil.copy(PIVOT, str(target))
    before = digest(target)
    data = write({"path": str(target), "sheet": "数据", "rows": [["x", 1]]}, expect_ok=False)
    assert "图表" in data["error"] and "allow_lossy_resave" in data["error"]
    assert digest(target) == before


# ---------------------------------------------------------------------------------------------
# In-process, with the size threshold lowered: the big-ledger path on small files

def test_shared_string_ledger_keeps_its_table(lib, tmp_path):
    import bench_readers
    target = tmp_path / "sst.xlsx"
    bench_readers.write_xlsx(str(target), 50, shared=True)
    before = tmp_path / "before.xlsx"
    shutil.copy(str(target), str(before))
    rows = [["2024-12-01", "华东", "上海1号店", "饮料", "饮料-001", 3, 2.5, 7.5, "门店", "促销"],
            ["2024-12-02", "华南", "广州1号店", "零食", "零食-002", 1, 9.9, 9.9, "美团", None]]
    res = lib.write_rows(str(target), [list(bench_readers.HEADER)] + rows, mode="append")
    assert res["action"] == "appended" and res["start_row"] == 52 and res["total_rows"] == 53
    assert res["header_skipped"]            # the header row is found through the shared strings
    assert "xl/sharedStrings.xml" not in changed_parts(before, target)
    ws = openpyxl.load_workbook(str(target)).active
    assert ws.dimensions == "A1:J53"
    assert [c.value for c in ws[52]] == [datetime.datetime(2024, 12, 1)] + rows[0][1:]
    assert ws["A52"].number_format == ws["A51"].number_format       # the style of the row above
    assert ws["J53"].value is None


def test_inline_string_file_and_repeated_header(lib, tmp_path):
    target = tmp_path / "inline.xlsx"
    lib.write_rows(str(target), [["编号", "姓名", "日期"], ["001", "张三", "2024-01-05"]])   # our own new-file writer
    res = lib.write_rows(str(target), [["编号", "姓名", "日期"], ["002", "李四", "2024-01-06"]], mode="append")
    assert res["header_skipped"] and res["start_row"] == 3 and res["rows_written"] == 1
    ws = openpyxl.load_workbook(str(target)).active
    assert [[c.value for c in r] for r in ws.iter_rows()] == [
        ["编号", "姓名", "日期"], ["001", "张三", datetime.datetime(2024, 1, 5)],
        ["002", "李四", datetime.datetime(2024, 1, 6)]]
    assert ws["A3"].number_format == "@" and not ws["A3"].font.b


def test_table_filter_and_dimension_grow(lib, tmp_path):
    target = tmp_path / "表格.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "清单"
    for row in (["名称", "数量"], ["a", 1], ["b", 2]):
        ws.append(row)
    ws.add_table(Table(displayName="清单表", ref="A1:B3"))
    ws2 = wb.create_sheet("筛选")
    for row in (["项目", "金额"], ["x", 1], ["y", 2]):
        ws2.append(row)
    ws2.auto_filter.ref = "A1:B3"
    wb.save(str(target))
    before = tmp_path / "before.xlsx"
    shutil.copy(str(target), str(before))

    lib.write_rows(str(target), [["c", 3], ["d", 4]], sheet="清单", mode="append")
    lib.write_rows(str(target), [["z", 3]], sheet="筛选", mode="append")
    assert "xl/tables/table1.xml" in changed_parts(before, target)
    wb = openpyxl.load_workbook(str(target))
    table = wb["清单"].tables["清单表"]
    assert table.ref == "A1:B5" and (table.autoFilter is None or table.autoFilter.ref == "A1:B5")
    assert wb["清单"].dimensions == "A1:B5" and wb["筛选"].auto_filter.ref == "A1:B4"
    assert [c.value for c in wb["清单"][5]] == ["d", 4] and [c.value for c in wb["筛选"][4]] == ["z", 3]


def test_formatted_empty_rows_are_filled_not_duplicated(lib, tmp_path):
    """The same ledger as write_spreadsheet's openpyxl test: the direct path must give the same cells."""
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
    for r in range(11, 13):             # formatted, empty rows prepared for the next entries
        for c in range(1, 4):
            ws.cell(row=r, column=c).fill = PatternFill("solid", fgColor="FFFF00")
    for r in range(20, 23):
        for c in range(1, 4):
            ws.cell(row=r, column=c).border = Border(top=thin, bottom=thin)
    ws.merge_cells("A14:C15")
    wb.save(str(target))

    res = lib.write_rows(str(target), [["2024-01-10", "第10笔", 100], ["2024-01-11", "第11笔", 110.5],
                                       ["2024-01-12", "第12笔", 120], ["2024-01-13", "第13笔", 130],
                                       ["2024-01-14", "第14笔\x07", 140]], mode="append")
    assert res["start_row"] == 11 and res["total_rows"] == 15
    assert any("A14:C15" in w for w in res["warnings"]) and any("控制字符" in w for w in res["warnings"])
    wb = openpyxl.load_workbook(str(target))
    ws = wb["流水"]
    assert ws["A11"].value == datetime.datetime(2024, 1, 10) and ws["A11"].is_date
    assert ws["A13"].number_format == "yyyy/m/d" and ws["C13"].number_format == "#,##0.00"
    assert ws["A11"].fill.fgColor.rgb.endswith("FFFF00")    # the prepared row kept its fill
    assert ws["B15"].value == "第14笔" and ws["C15"].value == 140
    assert ws["A16"].value is None and ws["A20"].border.top.style == "thin"
    assert not ws.merged_cells.ranges
    rows = [r for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)]
    assert len(rows) == 15


def test_totals_row_warns_and_1904_dates(lib, tmp_path):
    target = tmp_path / "带合计.xlsx"
    wb = openpyxl.Workbook()
    for row in (["项目", "金额"], ["房租", 3000], ["合计", "=SUM(B2:B2)"]):
        wb.active.append(row)
    wb.save(str(target))
    res = lib.write_rows(str(target), [["网费", 100]], mode="append", position="end")
    assert res["start_row"] == 4 and any("合计" in w and "第 3 行" in w for w in res["warnings"])
    target = tmp_path / "带合计2.xlsx"
    wb.save(str(target))
    res = lib.write_rows(str(target), [["水费", 50]], mode="append")       # auto: above the totals
    assert res["start_row"] == 3 and res["totals_updated"][0]["new"] == "=SUM(B2:B3)"
    assert not any("合计" in w for w in res["warnings"])

    target = tmp_path / "1904.xlsx"
    shutil.copy(os.path.join(FIXTURES, "dates_1904.xlsx"), str(target))
    wb = openpyxl.load_workbook(str(target))
    assert wb.epoch.year == 1904
    sheet = wb.sheetnames[0]
    lib.write_rows(str(target), [["2024-03-05", 1]], sheet=sheet, mode="append")
    ws = openpyxl.load_workbook(str(target))[sheet]
    last = [r for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)][-1]
    assert last[:2] == (datetime.datetime(2024, 3, 5), 1)


def test_what_needs_openpyxl_is_still_refused(lib, tmp_path):
    from xlakit.errors import ToolError
    target = tmp_path / "大.xlsx"
    lib.write_rows(str(target), [["a", 1], ["b", 2]])
    lib.write_rows(str(target), [["说明"]], sheet="说明")     # a lone sheet is rewritten as a new file
    before = digest(target)
    with pytest.raises(ToolError) as err:                   # replacing one of two sheets: openpyxl's job
        lib.write_rows(str(target), [["x", 1]], mode="overwrite")
    assert "秒时限" in str(err.value) and "新工作表" in str(err.value) and digest(target) == before
    assert "缩小范围" not in str(err.value)

    wb = openpyxl.Workbook()
    wb.active.cell(row=1048575, column=1, value="最后")
    wb.save(str(target))
    before = digest(target)
    with pytest.raises(ToolError) as err:                   # past Excel's last row: nothing written
        lib.write_rows(str(target), [["a"], ["b"], ["c"]], mode="append")
    assert "1,048,576" in str(err.value) and digest(target) == before
    assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".xla-")] == []


def test_prefixed_namespace_sheet(lib, tmp_path):
    """Some exporters (.NET's Open XML SDK) write every element with an ``x:`` prefix."""
    target = tmp_path / "prefixed.xlsx"
    lib.write_rows(str(target), [["名称", "数量"], ["a", 1]])
    data = parts(target)
    sheet = data["xl/worksheets/sheet1.xml"].decode("utf-8")
    main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    sheet = sheet.replace(main, main.replace("xmlns=", "xmlns:x="))
    import re
    sheet = re.sub(r"<(/?)(worksheet|sheetViews|sheetView|pane|selection|sheetFormatPr|cols|col|sheetData|row|c|is|t|v)\b",
                   r"<\1x:\2", sheet)
    data["xl/worksheets/sheet1.xml"] = sheet.encode("utf-8")
    with zipfile.ZipFile(str(target), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in data.items():
            zf.writestr(name, content)
    assert [[c.value for c in r] for r in openpyxl.load_workbook(str(target)).active.iter_rows()][-1] == ["a", 1]
    res = lib.write_rows(str(target), [["b", 2]], mode="append")
    assert res["start_row"] == 3
    assert "<x:row r=\"3\">" in parts(target)["xl/worksheets/sheet1.xml"].decode("utf-8")
    assert [[c.value for c in r] for r in openpyxl.load_workbook(str(target)).active.iter_rows()][-1] == ["b", 2]


def test_rows_go_below_a_merged_note(lib, tmp_path):
    """A note merged over two rows (LibreOffice/Excel layouts): with position=end new rows start
    under the merge instead of disappearing inside it, and the merge stays; by default the note
    is the table's footer and the rows go above it (the merge moves down with it)."""
    target = tmp_path / "备注.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["项目", "金额"], ["房租", 3000], ["备注：合并单元格"]):
        ws.append(row)
    ws.merge_cells("A3:B4")
    wb.save(str(target))
    shutil.copy(str(target), str(tmp_path / "备注2.xlsx"))
    res = lib.write_rows(str(target), [["网费", 100]], mode="append", position="end")
    assert res["start_row"] == 5 and res["total_rows"] == 5
    ws = openpyxl.load_workbook(str(target)).active
    assert [c.value for c in ws[5]] == ["网费", 100]
    assert [str(r) for r in ws.merged_cells.ranges] == ["A3:B4"]

    target = tmp_path / "备注2.xlsx"
    res = lib.write_rows(str(target), [["网费", 100]], mode="append")
    assert res["start_row"] == 3 and res["action"] == "inserted_above_totals" and res["totals_updated"] == []
    ws = openpyxl.load_workbook(str(target)).active
    assert [c.value for c in ws[3]] == ["网费", 100] and ws["A4"].value == "备注：合并单元格"
    assert [str(r) for r in ws.merged_cells.ranges] == ["A4:B5"]


def test_xlsm_macro_part_kept(write, tmp_path):
    """A macro workbook: the VBA project is copied as it is (openpyxl would rebuild the package)."""
    target = tmp_path / "宏.xlsm"
    wb = openpyxl.Workbook()
    wb.active.append(["名称", "数量"])
    wb.active.append(["a", 1])
    plain = tmp_path / "plain.xlsx"
    wb.save(str(plain))
    data = parts(plain)
    data["xl/vbaProject.bin"] = bytes(range(256)) * 40          # stands in for the macro project
    data["[Content_Types].xml"] = data["[Content_Types].xml"].replace(
        b"</Types>", b'<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/></Types>')
    with zipfile.ZipFile(str(target), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in data.items():
            zf.writestr(name, content)
    res = write({"path": str(target), "mode": "append", "rows": [["b", 2]]})
    assert res["format"] == "xlsm" and res["start_row"] == 3 and not res.get("warnings")
    assert changed_parts(res["backup"], target) == ["xl/worksheets/sheet1.xml"]
    assert [c.value for c in openpyxl.load_workbook(str(target))["Sheet"][3]] == ["b", 2]
