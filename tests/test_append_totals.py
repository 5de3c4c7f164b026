"""Appending to a ledger that ends with a totals block (issue 19): the new rows go above the 合计
row and the footer (注：…, 制表人：…), which move down, and the totals stay true.

Checked through the real tool script on files made by openpyxl, re-saved by LibreOffice where the
cached formula values matter (LibreOffice writes them, openpyxl does not), and read back by
openpyxl and by LibreOffice headless (its csv export shows what a user sees on open):

- rows, merged areas, the filter, conditional formats, data validations, the print area, named
  ranges and another sheet's formulas follow the moved rows; a SUM over the data column grows and gets the right cached
  value; a plain-number total is recomputed; a formula in the data that points at the total
  follows it and is recomputed on open (fullCalcOnLoad);
- an Excel table grows over the new rows; the calculation chain (a cache of formula addresses)
  is dropped instead of left pointing at moved cells;
- ``position="end"`` keeps the old placement, with a warning;
- csv: the same above the totals record, encodings kept, the footer bytes unchanged;
- a 95,000-row ledger (the size that used to time out) is appended to well inside the limit.
"""
import codecs
import csv
import datetime
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, assert_contract

import openpyxl
from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import PatternFill
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.table import Table
from openpyxl.workbook.defined_name import DefinedName

sys.path.insert(0, ROOT)


@pytest.fixture
def write(run):
    def _write(args, expect_ok=True):
        data = assert_contract(run("write_spreadsheet", args))
        assert data["ok"] is expect_ok, data
        return data
    return _write


def lo_rows(path, tmp_path):
    """LibreOffice's reading of the first sheet as csv rows; skips without Calc."""
    if not shutil.which("soffice"):
        pytest.skip("LibreOffice not installed")
    out = tmp_path / "lo_out"
    filt = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"
    subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                    "--convert-to", filt, "--outdir", str(out), str(path)], capture_output=True, timeout=180)
    names = sorted(os.listdir(str(out))) if out.exists() else []
    if not names:
        pytest.skip("LibreOffice Calc is not installed")
    with open(str(out / names[0]), encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def lo_resave(path, tmp_path):
    """The workbook saved again by LibreOffice (which stores every formula's cached value)."""
    if not shutil.which("soffice"):
        pytest.skip("LibreOffice not installed")
    out = tmp_path / "lo_saved"
    subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"),
                    "--convert-to", "xlsx", "--outdir", str(out), str(path)], capture_output=True, timeout=180)
    saved = out / os.path.basename(str(path))
    if not saved.exists():
        pytest.skip("LibreOffice Calc is not installed")
    shutil.copy(str(saved), str(path))
    return path


def ledger(path, with_extras=True):
    """台账: header, 20 data rows, a blank row, 合计 (merged label, SUM formula, plain number),
    注：and 制表人：lines; a ratio column pointing at the total, filter, conditional format, data
    validation, print area and a named range over the data."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "台账"
    ws.append(["日期", "项目", "金额", "数量", "占比"])
    for i in range(1, 21):
        ws.append([datetime.date(2024, 1, i), "项目%d" % i, 100 + i, i])
    ws.append([])
    ws.append(["合计", None, "=SUM(C2:C21)", 210])
    ws.merge_cells("A23:B23")
    ws.append(["注：金额单位为元"])
    ws.append(["制表人：张三"])
    ws["E2"] = "=C2/$C$23"
    if with_extras:
        ws.auto_filter.ref = "A1:D21"
        ws.conditional_formatting.add("C2:C21", CellIsRule(operator="greaterThan", formula=["115"],
                                                            fill=PatternFill("solid", fgColor="FFFF00")))
        dv = DataValidation(type="whole", operator="between", formula1="0", formula2="1000")
        dv.add("D2:D21")
        ws.add_data_validation(dv)
        ws.print_area = "A1:E25"
        wb.defined_names["金额列"] = DefinedName("金额列", attr_text="台账!$C$2:$C$21")
        wb.create_sheet("汇总")["A1"] = "=台账!C23*2"
    wb.save(str(path))
    return path


NEW = [["2024-02-01", "新一", 1000, 5], ["2024-02-02", "新二", 2000.5, 6], ["2024-02-03", "新三", 0.25, 7]]


def test_rows_go_above_the_totals_and_everything_follows(write, tmp_path):
    target = lo_resave(ledger(tmp_path / "台账.xlsx"), tmp_path)
    data = write({"path": str(target), "sheet": "台账", "mode": "append", "rows": NEW})
    assert data["action"] == "inserted_above_totals" and data["start_row"] == 22 and data["rows_written"] == 3
    assert data["totals_moved"] == {"from": 22, "to": 25} and data["total_rows"] == 28
    assert data["totals_updated"] == [
        {"cell": "C26", "kind": "formula", "old": "=SUM(C2:C21)", "new": "=SUM(C2:C24)", "value": 5210.75},
        {"cell": "D26", "kind": "value", "old": 210, "new": 228}]
    assert not any("合计" in w for w in data.get("warnings", [])), data
    assert "插在合计行/表尾上方" in data["message"] and "C26" in data["message"]

    wb = openpyxl.load_workbook(str(target))
    ws = wb["台账"]
    assert [c.value for c in ws[22]][:4] == [datetime.datetime(2024, 2, 1), "新一", 1000, 5]
    assert ws["C24"].value == 0.25 and ws["A25"].value is None
    assert ws["A26"].value == "合计" and ws["C26"].value == "=SUM(C2:C24)" and ws["D26"].value == 228
    assert ws["A27"].value == "注：金额单位为元" and ws["A28"].value == "制表人：张三"
    assert ws["E2"].value == "=C2/$C$26"
    assert [str(r) for r in ws.merged_cells.ranges] == ["A26:B26"]
    assert ws.auto_filter.ref == "A1:D24"
    assert [str(cf.sqref) for cf in ws.conditional_formatting] == ["C2:C24"]
    assert [str(dv.sqref) for dv in ws.data_validations.dataValidation] == ["D2:D24"]
    assert ws.max_row == 28
    assert "$A$1:$E$28" in str(ws.print_area)
    assert wb.defined_names["金额列"].attr_text == "台账!$C$2:$C$24"
    assert wb["汇总"]["A1"].value == "=台账!C26*2"   # another sheet's reference follows the total
    assert wb.calculation.fullCalcOnLoad          # E2 lost its cached value: computed on open

    cached = openpyxl.load_workbook(str(target), data_only=True)["台账"]
    assert cached["C26"].value == 5210.75 and cached["E2"].value is None

    lo = lo_rows(target, tmp_path)
    assert lo[25][:4] == ["合计", "", "5210.75", "228"]
    assert abs(float(lo[1][4]) - 101 / 5210.75) < 1e-12
    assert lo[26][0] == "注：金额单位为元" and lo[27][0] == "制表人：张三"


def test_openpyxl_ledger_without_cached_values_is_computed_on_open(write, tmp_path):
    """openpyxl stores formulas without results: the new SUM has no value to update, so the
    workbook asks for a full calculation and LibreOffice shows the right total."""
    target = ledger(tmp_path / "无缓存.xlsx", with_extras=False)
    data = write({"path": str(target), "mode": "append", "rows": NEW[:1]})
    assert data["totals_updated"][0] == {"cell": "C24", "kind": "formula", "old": "=SUM(C2:C21)",
                                         "new": "=SUM(C2:C22)", "value": None}
    assert openpyxl.load_workbook(str(target)).calculation.fullCalcOnLoad
    lo = lo_rows(target, tmp_path)
    assert lo[23][:4] == ["合计", "", "3210", "215"]


def test_position_end_keeps_the_old_placement_with_a_warning(write, run, tmp_path):
    target = ledger(tmp_path / "末尾.xlsx", with_extras=False)
    data = write({"path": str(target), "mode": "append", "rows": NEW[:1], "position": "end"})
    assert data["action"] == "appended" and data["start_row"] == 26 and "totals_updated" not in data
    assert any("第 22 行起是合计行/表尾" in w for w in data["warnings"]), data["warnings"]
    ws = openpyxl.load_workbook(str(target)).active
    assert ws["A23"].value == "合计" and ws["C23"].value == "=SUM(C2:C21)" and ws["B26"].value == "新一"

    bad = run("write_spreadsheet", {"path": str(target), "mode": "append", "rows": NEW[:1], "position": "top"})
    assert bad.exit_code == 2 and "position" in bad.error       # the schema's enum, checked by the host


def test_excel_table_grows_and_calc_chain_is_dropped(write, tmp_path):
    target = tmp_path / "表格.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["名称", "金额"], ["a", 1], ["b", 2], ["c", 3]):
        ws.append(row)
    ws.add_table(Table(displayName="明细", ref="A1:B4"))
    ws.append(["合计", "=SUM(B2:B4)"])
    wb.save(str(target))
    # a calculation chain as Excel writes one (openpyxl never does)
    with zipfile.ZipFile(str(target)) as zin:
        items = [(i, zin.read(i.filename)) for i in zin.infolist()]
    with zipfile.ZipFile(str(target), "w", zipfile.ZIP_DEFLATED) as zout:
        for info, body in items:
            if info.filename == "xl/_rels/workbook.xml.rels":
                body = body.replace(b"</Relationships>", b'<Relationship Id="rId99" Type="http://schemas.'
                                    b'openxmlformats.org/officeDocument/2006/relationships/calcChain" '
                                    b'Target="calcChain.xml"/></Relationships>')
            elif info.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", b'<Override PartName="/xl/calcChain.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/></Types>')
            zout.writestr(info, body)
        zout.writestr("xl/calcChain.xml", b'<?xml version="1.0" encoding="UTF-8"?><calcChain xmlns="http://'
                      b'schemas.openxmlformats.org/spreadsheetml/2006/main"><c r="B5" i="1"/></calcChain>')
    data = write({"path": str(target), "mode": "append", "rows": [["d", 4], ["e", 5]]})
    assert data["start_row"] == 5 and data["totals_updated"][0]["new"] == "=SUM(B2:B6)"
    with zipfile.ZipFile(str(target)) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert "xl/calcChain.xml" not in names
        assert b"calcChain" not in zf.read("xl/_rels/workbook.xml.rels")
        assert b"calcChain" not in zf.read("[Content_Types].xml")
    ws = openpyxl.load_workbook(str(target)).active
    assert ws.tables["明细"].ref == "A1:B6"
    assert [c.value for c in ws[7]] == ["合计", "=SUM(B2:B6)"]


def test_formula_references_move_like_excel():
    """The reference rules on their own: strings, other sheets, function names and numbers that
    look like cells are left alone; ranges ending on the last data row grow only where asked."""
    from xlakit.tables.xlsx_shift import Shift
    s = Shift(10, 3, "台账")
    assert s.formula("SUM(C2:C9)") == "SUM(C2:C9)"                       # a data row's formula
    assert s.formula("SUM(C2:C9)", grow=True) == "SUM(C2:C12)"           # the totals row's
    assert s.formula("C10*2+$D$11-E9") == "C13*2+$D$14-E9"
    assert s.formula('IF(A10="B10",LOG10(A10),1.5E10)') == 'IF(A13="B10",LOG10(A13),1.5E10)'
    assert s.formula("其他!C10+台账!C10+'台账'!D12") == "其他!C10+台账!C13+'台账'!D15"
    assert s.formula("SUM(C5:C20)") == "SUM(C5:C23)"                     # spans the insertion
    assert s.formula("明细[金额]+C10") == "明细[金额]+C13"
    assert s.formula("台账!$A$1:$E$25", grow=True, qualified_only=True) == "台账!$A$1:$E$28"
    assert s.formula("$A$1:$E$25", qualified_only=True) == "$A$1:$E$25"
    assert s.ranges("A10:B10 C2:C9", True) == "A13:B13 C2:C12"


# ---------------------------------------------------------------------------------------------
# csv

def test_csv_rows_go_above_the_totals_record(write, tmp_path):
    target = tmp_path / "台账.csv"
    body = ("日期,项目,金额,数量\r\n2024-01-01,房租,3000,1\r\n2024-01-02,水电,\"1,200.50\",2\r\n\r\n"
            "合计,,\"4,200.50\",3\r\n注：单位为元\r\n制表人：张三")
    target.write_bytes(body.encode("gbk"))
    data = write({"path": str(target), "mode": "append", "rows": [["2024-02-01", "网费", 99.5, 1]]})
    assert data["action"] == "inserted_above_totals" and data["start_row"] == 4 and data["encoding"] == "gb18030"
    assert data["totals_updated"] == [{"cell": "C5", "kind": "value", "old": 4200.5, "new": 4300},
                                      {"cell": "D5", "kind": "value", "old": 3, "new": 4}]
    text = target.read_bytes().decode("gbk")
    assert text == ("日期,项目,金额,数量\r\n2024-01-01,房租,3000,1\r\n2024-01-02,水电,\"1,200.50\",2\r\n"
                    "2024-02-01,网费,99.5,1\r\n\r\n合计,,\"4,300.00\",4\r\n注：单位为元\r\n制表人：张三")
    assert not any("合计" in w for w in data.get("warnings", []))

    end = write({"path": str(target), "mode": "append", "rows": [["2024-02-02", "话费", 50, 1]], "position": "end"})
    assert end["action"] == "appended" and any("合计" in w for w in end["warnings"])
    assert target.read_bytes().decode("gbk").endswith("制表人：张三\r\n2024-02-02,话费,50,1\r\n")


def test_csv_utf16_tab_ledger_with_a_footer(write, tmp_path):
    target = tmp_path / "导出.csv"
    body = "编号\t金额\n001\t10\n002\t20\n合计\t30\n注：系统导出\n"
    target.write_bytes(codecs.BOM_UTF16_LE + body.encode("utf-16-le"))
    data = write({"path": str(target), "mode": "append", "rows": [["003", 5.5], ["004", 4.5]]})
    assert data["start_row"] == 4 and data["totals_updated"][0] == {"cell": "B6", "kind": "value", "old": 30,
                                                                     "new": 40}
    raw = target.read_bytes()
    assert raw.startswith(codecs.BOM_UTF16_LE) and raw.count(codecs.BOM_UTF16_LE) == 1
    assert raw[2:].decode("utf-16-le") == "编号\t金额\n001\t10\n002\t20\n003\t5.5\n004\t4.5\n合计\t40\n注：系统导出\n"


def test_csv_without_totals_appends_at_the_end(write, tmp_path):
    target = tmp_path / "流水.csv"
    target.write_bytes("项目,金额\n房租,3000\n".encode("utf-8-sig"))
    data = write({"path": str(target), "mode": "append", "rows": [["网费", 100]]})
    assert data["action"] == "appended" and "totals_updated" not in data
    assert target.read_bytes().decode("utf-8-sig") == "项目,金额\n房租,3000\n网费,100\n"


# ---------------------------------------------------------------------------------------------
# Size: the 95,000 x 8 ledger that used to run into the 60 s limit

def test_95k_row_ledger_with_totals(write, tmp_path, monkeypatch):
    """Written by the toolbox's own new-file writer (openpyxl needs ~45 s on a busy machine for
    this size), with a plain-number total and a footer; one row appended through the tool."""
    from xlakit.tables import write as table_write
    n = 95000
    rows = [["日期", "门店", "品类", "商品", "数量", "单价", "金额", "备注"]]
    day = datetime.date(2024, 1, 1)
    for i in range(n):
        q = i % 50 + 1
        rows.append([(day + datetime.timedelta(days=i % 365)).isoformat(), "门店%d" % (i % 40), "品类%d" % (i % 8),
                     "商品%d" % (i % 300), q, 2.5, q * 2.5, "备注%d" % (i % 7)])
    total_q = sum(r[4] for r in rows[1:])
    rows.append(["合计", None, None, None, total_q, None, total_q * 2.5, None])
    rows.append(["制表人：张三"])
    target = tmp_path / "大台账.xlsx"
    monkeypatch.setenv("HOME", str(tmp_path / "maker_home"))
    table_write.write_rows(str(target), rows)
    data = write({"path": str(target), "mode": "append", "rows": [["2025-01-01", "门店1", "品类1", "商品1", 3, 2.5,
                                                                     7.5, "新"]]})
    assert data["action"] == "inserted_above_totals" and data["start_row"] == n + 2
    assert data["totals_updated"] == [
        {"cell": "E%d" % (n + 3), "kind": "value", "old": total_q, "new": total_q + 3},
        {"cell": "G%d" % (n + 3), "kind": "value", "old": total_q * 2.5, "new": total_q * 2.5 + 7.5}]
    tail = last_rows(target, n + 1)          # openpyxl read-only takes ~45 s to skip to these rows
    serial = str((datetime.date(2025, 1, 1) - datetime.date(1899, 12, 30)).days)
    assert tail[n + 2]["A"] == serial and tail[n + 2]["B"] == "门店1"
    assert tail[n + 3]["A"] == "合计" and tail[n + 3]["E"] == str(total_q + 3)
    assert tail[n + 4] == {"A": "制表人：张三"}


def last_rows(path, first):
    """{row number: {column letter: cell text}} of the rows from ``first`` on, read with ElementTree."""
    import xml.etree.ElementTree as ET
    ns = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    out = {}
    with zipfile.ZipFile(str(path)) as zf:
        strings = []
        if "xl/sharedStrings.xml" in zf.namelist():
            strings = ["".join(t.text or "" for t in si.iter(ns + "t"))
                       for si in ET.fromstring(zf.read("xl/sharedStrings.xml")).iter(ns + "si")]
        data = zf.read("xl/worksheets/sheet1.xml")
    # the rows from ``first`` on, parsed as a fragment (the million bytes before are skipped)
    start = data.index(b'<row r="%d"' % first)
    end = data.index(b"</sheetData>")
    root = ET.fromstring(b'<sheetData xmlns="%s">' % ns[1:-1].encode() + data[start:end] + b"</sheetData>")
    for el in root.iter(ns + "row"):
        cells = {}
        for c in el.iter(ns + "c"):
            v = c.find(ns + "v")
            text = "".join(t.text or "" for t in c.iter(ns + "t")) if c.get("t") == "inlineStr" else (
                v.text if v is not None else None)
            if c.get("t") == "s":
                text = strings[int(text)]
            cells["".join(ch for ch in c.get("r") if ch.isalpha())] = text
        out[int(el.get("r"))] = cells
    return out


def test_whole_column_formulas_are_recalculated_on_open(write, tmp_path):
    """SUM(B:B) keeps its text after the insertion but not its value: the stale cached value goes
    and the workbook is computed on open (LibreOffice shows the new numbers)."""
    target = tmp_path / "整列.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["项目", "金额", "占比"], ["a", 1, "=B2/SUM(B:B)*2"], ["b", 2], ["合计", "=SUM(B2:B3)", "=SUM(B:B)/2"]):
        ws.append(row)
    wb.save(str(target))
    lo_resave(target, tmp_path)
    write({"path": str(target), "mode": "append", "rows": [["c", 3]]})
    cached = openpyxl.load_workbook(str(target), data_only=True).active
    assert cached["B5"].value == 6 and cached["C2"].value is None and cached["C5"].value is None
    lo = lo_rows(target, tmp_path)
    assert lo[4] == ["合计", "6", "6"] and abs(float(lo[1][2]) - 1 / 6) < 1e-12
