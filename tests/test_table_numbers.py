"""No wrong number on anyone's sheet (issue 35, first section): each case is a file made the way
the one that showed the bug was made (openpyxl, xlwt, hand-written records or XML), read through
the real tools as the assistant spawns them."""
import datetime
import os
import struct
import zipfile

import openpyxl
import pytest

from conftest import ok
import xlsx_variants

import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from xlakit.tables import formats as table_formats  # noqa: E402
from xlakit.tables.values import Duration, duration_text  # noqa: E402

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


def test_elapsed_in_ods_and_spreadsheetml(tmp_path):
    from xlakit.tables.formats.ods import parse_duration
    value = parse_duration("PT255H10M10S")
    assert isinstance(value, Duration) and value.text() == "255:10:10"
    assert parse_duration("PT10H30M00S") == datetime.time(10, 30)


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
