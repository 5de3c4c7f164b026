"""Spreadsheets as other programs write them (issue 27), spawned as the assistant does: rows split
into one ``<row>`` element per cell, short csv files whose encoding is easy to mistake, time-of-day
serials under a date format."""
import os

import openpyxl
import pytest

from conftest import ok
import xlsx_variants


def _rows(data):
    return data["sheets"][0]["rows"]


@pytest.mark.parametrize("reader", ["fast", "openpyxl"])
def test_row_element_per_cell_is_one_row(tmp_path, run, reader):
    sheet_xml, sst_xml = xlsx_variants.VARIANTS["row_element_per_cell"]
    path = xlsx_variants.make(tmp_path / "逐格.xlsx", sheet_xml, sst_xml)
    env = {"XLA_XLSX_READER": reader}
    assert _rows(ok(run("read_spreadsheet", {"path": str(path)}, extra_env=env))) == [
        ["类别", "金额"], ["餐饮", 12.5], ["交通 & 出行", 7]]
    data = ok(run("calc_table", {"path": str(path), "metrics": [{"func": "sum", "column": "金额"}]}, extra_env=env))
    assert "19.5" in str(data)


def test_short_ascii_csv_with_spaces_and_empty_fields(tmp_path, run):
    path = tmp_path / "short.csv"
    path.write_bytes(b"name, city, note\nab, , x\ncd,,\n, e f, \n")
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert data["encoding"] in ("UTF-8", "ASCII") and data["delimiter"] == ","
    assert _rows(data)[0] == ["name", " city", " note"] and _rows(data)[3][1] == " e f"
    probe = ok(run("probe_table", {"path": str(path)}))
    assert probe["encoding"] == data["encoding"] and [c["name"] for c in probe["columns"]][0] == "name"


def test_cp1252_nordic_letters_are_not_gb18030(tmp_path, run):
    path = tmp_path / "nordic.csv"
    path.write_bytes("navn;by;beløb\nSøren;Århus;12\nÆble;København;7\nblå;grøn;3\n".encode("cp1252"))
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert "1252" in data["encoding"] and data["delimiter"] == ";"
    assert _rows(data)[1][:2] == ["Søren", "Århus"] and _rows(data)[2][1] == "København"
    probe = ok(run("probe_table", {"path": str(path)}))
    assert "1252" in probe["encoding"] and [c["name"] for c in probe["columns"]] == ["navn", "by", "beløb"]


def test_time_of_day_serial_under_date_formats(tmp_path, run):
    path = str(tmp_path / "时刻.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["h:mm", "d-mmm", "yyyy-mm-dd h:mm"])
    ws.append([0.6667, 0.6667, 0.25])
    for cell, fmt in zip(ws[2], ("h:mm", "d-mmm", "yyyy-mm-dd h:mm")):
        cell.number_format = fmt
    wb.save(path)
    for reader in ("fast", "openpyxl"):
        row = _rows(ok(run("read_spreadsheet", {"path": path}, extra_env={"XLA_XLSX_READER": reader})))[1]
        assert row[0].startswith("16:00") and row[1].startswith("16:00") and row[2].startswith("06:00"), row
        assert not any("1899" in str(v) for v in row)


def test_time_of_day_serial_in_xls(tmp_path, run):
    xlwt = pytest.importorskip("xlwt")
    path = str(tmp_path / "时刻.xls")
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Sheet1")
    ws.write(0, 0, "时刻")
    ws.write(1, 0, 0.6667, xlwt.easyxf(num_format_str="h:mm"))
    wb.save(path)
    row = _rows(ok(run("read_spreadsheet", {"path": path})))[1]
    assert str(row[0]).startswith("16:00"), row
