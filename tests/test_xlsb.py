""".xlsb (Excel binary workbook) reader: files from two real writers (tests/fixtures/xlsb/README.md),
read through the book API and through the tools as the host spawns them; damaged parts give a
warning and the cells before the damage, never a traceback or silently wrong cells."""
import datetime
import os
import shutil
import zipfile

import pytest

from conftest import FIXTURES, ok
from xlakit.tables import formats as tf

XLSB = os.path.join(FIXTURES, "xlsb")
D = datetime.date


def fx(name):
    return os.path.join(XLSB, name)


def read_all(book, sheet=None):
    return list(book.rows(sheet))


@pytest.mark.quick
def test_sheetjs_xlsb_reads_like_its_xlsx_twin():
    with tf.open_book(fx("ledger_sheetjs.xlsb")) as b, tf.open_book(fx("ledger_sheetjs.xlsx")) as x:
        assert b.kind == "xlsb" and x.kind == "xlsx"
        assert b.sheets == x.sheets
        assert [s.hidden for s in b.sheets] == [False, False, True]
        for info in b.sheets:
            assert read_all(b, info.name) == read_all(x, info.name), info.name
            assert b.merges(info.name) == x.merges(info.name)
        rows = dict(read_all(b, "台账"))
        assert rows[3] == [D(2024, 1, 5), "苹果", 10, 3.5, 35, True, "首批", "007"]
        assert rows[5][-1] == "110101199003071234"
        assert rows[8] == ["大数", 1234567890123, -17, 0.30000000000000004, 1e-07]
        assert rows[9] == ["公式", 21, "#DIV/0!", datetime.time(18, 0), datetime.datetime(2024, 1, 5, 12, 0), 0.5]
        assert b.merges("台账") == [(1, 1, 1, 8)]
        assert b.dimensions("台账") == (9, 8)
        assert b.warnings == []


def test_pyxlsbwriter_full_cell_records():
    with tf.open_book(fx("ledger_pyxlsbwriter.xlsb")) as b:
        assert [(s.name, s.hidden) for s in b.sheets] == [("流水", False), ("隐藏", True)]
        rows = read_all(b)
        assert rows[0] == (1, ["日期", "时间", "品名", "数量", "金额", "已付"])
        assert rows[1] == (2, [D(2024, 1, 1), datetime.datetime(2024, 1, 1, 8, 30), "品名0", 0, 0.25, True])
        assert rows[-1] == (302, ["合计", None, None, 44850, 67350])
        assert len(rows) == 302
        assert read_all(b, "隐藏") == [(1, ["x", 1])]


def test_content_decides_not_the_name(tmp_path):
    for name in ("改名.xlsx", "改名.xls", "无后缀"):
        path = tmp_path / name
        shutil.copy(fx("ledger_pyxlsbwriter.xlsb"), str(path))
        assert tf.sniff(str(path)) == "xlsb"


@pytest.mark.quick
def test_read_spreadsheet_on_xlsb(run):
    data = ok(run("read_spreadsheet", {"path": fx("ledger_sheetjs.xlsb")}))
    assert data["format"] == "xlsb"
    assert data["hidden_sheets"] == ["底稿"]
    page = data["sheets"][0]
    assert page["name"] == "台账" and page["merged"] == ["A1:H1"]
    assert page["rows"][2] == ["2024-01-05", "苹果", 10, 3.5, 35, True, "首批", "007"]
    data = ok(run("read_spreadsheet", {"path": fx("ledger_pyxlsbwriter.xlsb"), "header_row": 1, "limit": 2}))
    assert data["sheets"][0]["rows"][0]["日期"] == "2024-01-01"
    assert data["sheets"][0]["total_rows"] == 301


def test_table_tools_on_xlsb_find_header_and_totals(run):
    data = ok(run("calc_table", {"path": fx("ledger_pyxlsbwriter.xlsb"), "metrics": [{"column": "金额", "func": "sum"}]}))
    assert data["groups"][0]["金额_求和"] == 67350          # the 合计 row is held back, not counted twice
    assert any("合计" in w for w in data["warnings"])
    data = ok(run("probe_table", {"path": fx("ledger_sheetjs.xlsb")}))
    assert data["format"] == "xlsb" and data["header_row"] == 2


def rewrite(src, dst, part, change):
    """A copy of ``src`` with one part's bytes changed by ``change(bytes) -> bytes``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == part:
                data = change(data)
            zout.writestr(item, data)


def test_truncated_sheet_keeps_the_rows_before_and_says_so(tmp_path, run):
    path = str(tmp_path / "截断.xlsb")
    rewrite(fx("ledger_pyxlsbwriter.xlsb"), path, "xl/worksheets/sheet1.bin", lambda d: d[:len(d) // 2])
    with tf.open_book(path) as b:
        rows = read_all(b)
        assert 100 < len(rows) < 250
        assert rows[1] == (2, [D(2024, 1, 1), datetime.datetime(2024, 1, 1, 8, 30), "品名0", 0, 0.25, True])
        assert any("截断" in w for w in b.warnings)
    data = ok(run("read_spreadsheet", {"path": path, "limit": 5}))
    assert any("截断" in w for w in data["warnings"])


def test_damaged_shared_strings_and_workbook(tmp_path):
    path = str(tmp_path / "坏字符串.xlsb")
    rewrite(fx("ledger_sheetjs.xlsb"), path, "xl/sharedStrings.bin", lambda d: d[:60])
    with tf.open_book(path) as b:
        rows = dict(read_all(b))
        assert rows[1] == ["2024年一季度销售台账"]          # strings before the damage are kept
        assert rows[3][2:6] == [10, 3.5, 35, True]            # numbers do not depend on the table
        assert any("共享字符串表有损坏" in w for w in b.warnings)
    path = str(tmp_path / "坏工作簿.xlsb")
    rewrite(fx("ledger_sheetjs.xlsb"), path, "xl/workbook.bin", lambda d: d[:len(d) - 30])
    with pytest.raises(tf.FormatError) as err:
        tf.open_book(path)
    assert "xlsb 文件已损坏" in str(err.value)
