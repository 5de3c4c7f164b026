"""Old and damaged .xls files (issue 27), through the real read_spreadsheet/calc_table: Excel
2.x-4.0 worksheets, 8-bit text without (or with a wrong) CODEPAGE record, a shared-string table
whose count is wrong or zero, a damaged comment, a damaged OLE container. Every recovery says
what was damaged in a warning; nothing comes back silently wrong. Fixtures: tests/fixtures/xls_old
(sources and licences in its README.md)."""
import os
import struct

import pytest

from conftest import FIXTURES, ok

OLD = os.path.join(FIXTURES, "xls_old")


def _rows(data):
    return data["sheets"][0]["rows"]


def _warnings(data):
    return " ".join(data.get("warnings") or [])


def test_biff2_to_biff4_worksheets_are_read(run):
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "biff2_gbk.xls")}))
    assert _rows(data) == [["部门", "项目", "金额"], ["销售部", "差旅费", 1234.5], ["财务部", "办公用品", 300],
                           ["合计", None, 1534.5]]
    calc = ok(run("calc_table", {"path": os.path.join(OLD, "biff2_gbk.xls"),
                                 "metrics": [{"func": "sum", "column": "金额"}]}))
    assert "1534.5" in str(calc)                      # the 合计 row is not counted twice
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "testEXCEL_3.xls")}))
    assert _rows(data)[0] == ["Table C-13--Lemons: Utilization of production, by State, 1977/78 to date"]
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "testEXCEL_4.xls")}))
    assert _rows(data)[0][0].startswith("Table 10 -- Examination Coverage")
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "biff4_no_format_no_window2.xls")}))
    assert _rows(data)[:2] == [["ID", "TOTAL", "MAIN", "SUB"], ["A", "DOG & CAT PRODUCTS", "Dog & Cat Product"]]


@pytest.mark.parametrize("name,first,warned", [
    ("biff2_cp1251_no_codepage.xls", "Универсальный", "没有记录文字用的编码"),
    ("biff2_cp1251_says_1252.xls", "Универсальный", "Windows-1252"),
    ("biff2_gbk_no_codepage.xls", "销售部", "GBK"),
    ("biff2_cp1252_no_codepage.xls", "Äpfel grün", None),
])
def test_8bit_text_is_scored_when_the_code_page_is_missing_or_wrong(run, name, first, warned):
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, name)}))
    assert _rows(data)[1][0] == first
    if warned:
        assert warned in _warnings(data) and "按内容判断" in _warnings(data)
    else:
        assert "编码" not in _warnings(data)


def _xlwt_with_sst_count(tmp_path, count):
    """An xlwt workbook whose SST record claims ``count`` unique strings (xlwt wrote the truth)."""
    xlwt = pytest.importorskip("xlwt")
    path = str(tmp_path / ("sst_%d.xls" % count))
    wb = xlwt.Workbook()
    ws = wb.add_sheet("明细")
    names = ["部门", "金额"] + ["客户%d" % i for i in range(30)]
    ws.write(0, 0, "部门")
    ws.write(0, 1, "金额")
    for i in range(30):
        ws.write(i + 1, 0, "客户%d" % i)
        ws.write(i + 1, 1, 100 + i)
    wb.save(path)
    raw = bytearray(open(path, "rb").read())
    true = struct.pack("<II", len(names), len(names))
    at = raw.find(b"\xfc\x00")
    while at >= 0 and raw[at + 4:at + 12] != true:
        at = raw.find(b"\xfc\x00", at + 1)
    assert at >= 0, "SST record not found"
    raw[at + 8:at + 12] = struct.pack("<I", count)
    with open(path, "wb") as fh:
        fh.write(bytes(raw))
    return path


@pytest.mark.parametrize("count", [0, 5, 500])
def test_shared_string_count_wrong_or_zero(run, tmp_path, count):
    path = _xlwt_with_sst_count(tmp_path, count)
    data = ok(run("read_spreadsheet", {"path": path}))
    rows = _rows(data)
    assert rows[0] == ["部门", "金额"] and rows[1] == ["客户0", 100] and rows[30] == ["客户29", 129]
    assert "共享字符串表已损坏" in _warnings(data) and ("%d 个" % count) in _warnings(data)


def test_damaged_comment_and_container_are_recovered_with_a_warning(run):
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "47251_1.xls")}))
    assert len(_rows(data)) > 3 and "批注" in _warnings(data)
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "41139.xls")}))
    assert _rows(data)[0] == [None, None, "TTTTTTT"] and "Print_Titles" in _warnings(data)
    data = ok(run("read_spreadsheet", {"path": os.path.join(OLD, "45290.xls")}))
    assert _rows(data)[0][:3] == ["Auction Date", "Type", "County"] and len(_rows(data)) == 46
    assert "OLE 容器有损坏" in _warnings(data)


def test_excellibrary_small_book_in_regular_sectors(run, tmp_path):
    """Issue 35: an ExcelLibrary-made .xls (a workbook stream under 4,096 bytes kept in ordinary
    sectors, against the specification) was refused as "目录结构损坏"; Excel, LibreOffice and
    calamine read it by the sector chain the directory gives, and so do we (with a note)."""
    import io
    import olefile
    import xlwt
    import biff5
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Sheet1")
    for r, row in enumerate([["名称", "金额"], ["甲", 1.5], ["乙", 2]]):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    buf = io.BytesIO()
    wb.save(buf)
    ole = olefile.OleFileIO(buf.getvalue())
    stream = ole.openstream("Workbook").read()
    ole.close()
    end = stream.rfind(b"\x0a\x00\x00\x00") + 4           # the last EOF record: xlwt pads after it
    path = tmp_path / "exlib.xls"
    path.write_bytes(biff5.small_in_regular_sectors(stream[:end]))
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert data["sheets"][0]["rows"] == [["名称", "金额"], ["甲", 1.5], ["乙", 2]]
    assert any("扇区链" in w for w in data.get("warnings", []))


def _xlwt_stream(rows):
    """The Workbook stream xlwt writes for ``rows`` (up to its last EOF record)."""
    import io
    import olefile
    import xlwt
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Sheet1")
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    buf = io.BytesIO()
    wb.save(buf)
    ole = olefile.OleFileIO(buf.getvalue())
    stream = ole.openstream("Workbook").read()
    ole.close()
    return stream[:stream.rfind(b"\x0a\x00\x00\x00") + 4]


def test_excellibrary_mini_stream_with_a_wrong_sector_count(run, tmp_path):
    """Issue 35 corpus run: ExcelDataReader's ExcelLibrary_newdoc.xls keeps its stream in the
    mini stream but counts the mini-FAT sectors wrong (17 for one); xlrd stopped on a bare
    assertion and we answered "已损坏", while calamine and LibreOffice read it. The stream is read
    by its chain (olefile), with a note."""
    import biff5
    rows = [["名称", "金额"], ["甲", 1.5], ["乙", 2]]
    path = tmp_path / "exlib_mini.xls"
    path.write_bytes(biff5.mini_stream_with_wrong_count(_xlwt_stream(rows)))
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert _rows(data) == rows
    assert "OLE 容器有损坏" in _warnings(data) and "AssertionError" not in str(data)


@pytest.mark.parametrize("kind", ["biff8", "biff5"])
def test_sheet_position_recorded_past_its_bof(run, tmp_path, kind):
    """Issue 35's "BOF quirk" (ExcelDataReader's Test_git_issue624.xls): the workbook records
    each sheet's position just past the sheet's BOF record. xlrd expects a BOF there and refused
    the sheet ("开头不是能识别的工作簿记录"); Excel, LibreOffice and calamine read it. The position is
    moved back onto the BOF (same bytes otherwise), with a note."""
    import biff5
    rows = [["名称", "金额"], ["甲", 1.5], ["乙", 2]]
    if kind == "biff8":
        stream = _xlwt_stream(rows)
        body = biff5.sheet_position_past_bof(stream).ljust(4096, b"\0")
        raw = biff5.compound_file(body, name="Workbook")
    else:
        raw = biff5.compound_file(biff5.sheet_position_past_bof(biff5.book_stream(rows, "gbk", 936)))
    path = tmp_path / ("bof_%s.xls" % kind)
    path.write_bytes(raw)
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert _rows(data) == rows
    assert "工作表位置有偏差" in _warnings(data)
    calc = ok(run("calc_table", {"path": str(path), "metrics": [{"func": "sum", "column": "金额"}]}))
    assert "3.5" in str(calc)


@pytest.mark.parametrize("tail", ["phonetic", "short_runs"])
def test_biff5_rich_string_with_phonetic_data(run, tmp_path, tail):
    """Issue 35: a Far-East Excel 95 (BIFF5) file whose rich-string cell (RSTRING) carries
    phonetic data after its formatting runs: xlrd asserts against it and the sheet was refused.
    The text is read (as a plain label), with a note. ``short_runs``: the run count says more
    runs than the record holds (SheetJS's biff5/phonetic_text.xls, read by calamine), where xlrd
    fails to unpack instead of asserting."""
    import biff5
    stream = biff5.book_stream([["名称", "金额"], ["甲", 1.5]], "gbk", 936)
    records, pos = [], 0
    while pos + 4 <= len(stream):
        size = struct.unpack_from("<H", stream, pos + 2)[0]
        records.append(stream[pos:pos + 4 + size])
        pos += 4 + size
    raw = "乙".encode("gbk")
    body = struct.pack("<HHHH", 2, 0, 0, len(raw)) + raw + struct.pack("<BBB", 1, 0, 0) + b"\x01\x00\x05\x00abc"
    if tail == "short_runs":
        body = struct.pack("<HHHH", 2, 0, 0, len(raw)) + raw + struct.pack("<BBB", 4, 0, 0) + b"\x01"
    rstring = struct.pack("<HH", 0x00D6, len(body)) + body
    path = tmp_path / "远东95.xls"
    path.write_bytes(biff5.compound_file(b"".join(records[:-1]) + rstring + records[-1]))
    data = ok(run("read_spreadsheet", {"path": str(path)}))
    assert data["sheets"][0]["rows"] == [["名称", "金额"], ["甲", 1.5], ["乙"]]
    assert any("注音" in w for w in data["warnings"])
