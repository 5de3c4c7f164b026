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


def _repack(src, dst, rename):
    import zipfile
    with zipfile.ZipFile(str(src)) as zin, zipfile.ZipFile(str(dst), "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(rename(info.filename), zin.read(info))


def test_xlsx_written_with_backslash_part_names_is_read(run, tmp_path):
    """POI's 49609.xlsx and calamine's issue_530.xlsx: a Windows tool wrote ``xl\\workbook.xml``
    and ``[content_types].xml``; we said "a zip, not a table" while calamine read it."""
    src = tmp_path / "src.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["部门", "金额"])
    wb.active.append(["销售", 120.5])
    wb.save(str(src))
    odd = tmp_path / "导出.xlsx"
    _repack(src, odd, lambda n: n.replace("/", "\\").lower())
    data = ok(run("read_spreadsheet", {"path": str(odd)}))
    assert data["format"] in ("xlsx", "xlsm") and data["sheets"][0]["rows"] == [["部门", "金额"], ["销售", 120.5]]


def test_minimal_package_with_parts_at_the_root_is_read(run, tmp_path):
    """calamine's minimal_package.xlsx: workbook.xml and sheet1.xml at the package root, found
    through _rels/.rels and [Content_Types].xml."""
    import zipfile
    ct = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
          'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
          'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/'
          'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
          '<Override PartName="/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
          'spreadsheetml.worksheet+xml"/></Types>')
    rels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="workbook.xml"/></Relationships>')
    wbx = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
           '2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>'
           '<sheet name="数据" sheetId="1" r:id="rId1"/></sheets></workbook>')
    wbrels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
              '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
              '2006/relationships/worksheet" Target="sheet1.xml"/></Relationships>')
    sheet = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
             'spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>名称</t></is></c>'
             '<c r="B1" t="inlineStr"><is><t>数量</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is>'
             '<t>苹果</t></is></c><c r="B2"><v>3</v></c></row></sheetData></worksheet>')
    target = tmp_path / "最小.xlsx"
    with zipfile.ZipFile(str(target), "w") as zf:
        for name, text in (("[Content_Types].xml", ct), ("_rels/.rels", rels), ("workbook.xml", wbx),
                           ("_rels/workbook.xml.rels", wbrels), ("sheet1.xml", sheet)):
            zf.writestr(name, text)
    data = ok(run("read_spreadsheet", {"path": str(target)}))
    assert data["sheets"][0]["name"] == "数据" and data["sheets"][0]["rows"] == [["名称", "数量"], ["苹果", 3]]


def test_workbook_with_an_embedded_word_document_is_a_workbook(run):
    """POI's 60460.xls: the embedded document's WordDocument stream made sniff call it a .doc."""
    import os
    from conftest import FIXTURES
    from xlakit.sniff import sniff
    xls = os.path.join(FIXTURES, "poi_sheets", "60460.xls")
    doc = os.path.join(FIXTURES, "documents", "poi", "word_with_embeded.doc")
    assert sniff(xls).kind == "xls" and sniff(doc).kind == "doc"
    data = ok(run("read_spreadsheet", {"path": xls, "limit": 5}))
    assert data["format"] == "xls" and data["sheets"][0]["total_rows"] > 0


def test_stream_written_xlsx_with_single_quoted_attributes(run, tmp_path):
    """SheetJS's xlsx-stream-d-date-cell.xlsx (Apache-2.0), from its streaming writer: rows written
    ``<row r='1'>`` (single quotes, legal XML) made the fast reader give up, and the openpyxl
    fallback failed on its styles (cell formats without cell-style formats: "0 is out of range"),
    so the book was refused while calamine read it. The chunks are rewritten in double quotes."""
    import zipfile
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
        'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="%s/officeDocument" Target="xl/workbook.xml"/>'
        '</Relationships>' % rel,
        "xl/workbook.xml": '<?xml version="1.0" encoding="UTF-8"?><workbook %s xmlns:r="%s"><sheets><sheet name="明细" '
        'sheetId="1" r:id="rId1"/></sheets></workbook>' % (ns, rel),
        "xl/_rels/workbook.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="%s/worksheet" '
        'Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="%s/styles" Target="styles.xml"/>'
        '</Relationships>' % (rel, rel),
        "xl/styles.xml": '<?xml version="1.0" encoding="UTF-8"?><styleSheet %s><numFmts count="1"><numFmt numFmtId="0" '
        'formatCode="" /></numFmts><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
        '<fills count="1"><fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/></borders>'
        '<cellXfs count="3"><xf xfId="0" fontId="0" fillId="0" borderId="0" numFmtId="0"/><xf xfId="0" fontId="0" '
        'fillId="0" borderId="0" numFmtId="2"/><xf xfId="0" fontId="0" fillId="0" borderId="0" numFmtId="14"/>'
        '</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        '</styleSheet>' % ns,
        "xl/worksheets/sheet1.xml": '<?xml version="1.0" encoding="UTF-8"?><worksheet %s><sheetData>'
        "<row r='1'><c r='A1' t='inlineStr'><is><t>日期</t></is></c><c r=\"B1\" t=\"inlineStr\"><is><t>金额 a='b'</t>"
        "</is></c></row><row r='2'><c r='A2' t='d' s='2'><v>2024-03-05T00:00:00Z</v></c><c r='B2' s='1'>"
        "<v>1234.5</v></c></row><row r='3'><c r='A3' t='d' s='2'><v>2024-03-06T00:00:00Z</v></c>"
        "<c r='B3'><v>66</v></c></row></sheetData></worksheet>" % ns,
    }
    target = tmp_path / "流式导出.xlsx"
    with zipfile.ZipFile(str(target), "w") as zf:
        for name, text in parts.items():
            zf.writestr(name, text)
    data = ok(run("read_spreadsheet", {"path": str(target)}))
    assert data["sheets"][0]["rows"] == [["日期", "金额 a='b'"], ["2024-03-05", 1234.5], ["2024-03-06", 66]]
    calc = ok(run("calc_table", {"path": str(target), "metrics": [{"func": "sum", "column": "金额 a='b'"}]}))
    assert "1300.5" in str(calc)
