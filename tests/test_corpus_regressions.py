"""Surprises found by running the readers on public corpora (bench/corpus_tables.py), each turned
into a small file made here that shows the same thing.

- calamine's tests/OOM_alloc2.xls (MIT): an xls whose size is not a whole number of sectors made
  xlrd print warnings to stdout, ahead of the JSON answer: the host saw broken output.
- calamine's tests/date_quoted_format.xlsx (MIT): the Japanese-era date format
  ``[$-411]ggge"年"m"月"d"日";@`` was read as a plain number (44197 instead of 2021-01-01).
"""
import datetime

import openpyxl
import xlwt

from conftest import ok


def test_xls_with_a_ragged_tail_still_answers_one_json(run, tmp_path):
    target = tmp_path / "系统导出.xls"
    book = xlwt.Workbook()
    sheet = book.add_sheet("Sheet1")
    for i, row in enumerate([["部门", "金额"], ["销售", 100], ["财务", 250]]):
        for j, value in enumerate(row):
            sheet.write(i, j, value)
    book.save(str(target))
    with open(str(target), "ab") as fh:
        fh.write(b"\x00" * 100)                      # not a multiple of 512: xlrd warns
    data = ok(run("read_spreadsheet", {"path": str(target)}))
    assert data["sheets"][0]["rows"][1] == ["销售", 100]


def test_japanese_era_date_format_is_a_date(run, tmp_path):
    target = tmp_path / "和暦.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["日期"])
    ws.append([datetime.datetime(2021, 1, 1)])
    ws["A2"].number_format = '[$-411]ggge"年"m"月"d"日";@'
    wb.save(str(target))
    data = ok(run("read_spreadsheet", {"path": str(target)}))
    assert data["sheets"][0]["rows"][1] == ["2021-01-01"]
