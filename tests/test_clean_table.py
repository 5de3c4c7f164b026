"""clean_table, spawned as the assistant does, on the 1,000-row messy export (title rows, two-row
merged header, money text, merged cells, a 合计 row) in xlsx / xls / GBK csv, and on small
hand-made files (xlsx from openpyxl, xls from xlwt, GBK and UTF-8 csv) holding every kind of dirt
the tool is for: trailing and full-width spaces, zero-width characters, non-breaking spaces,
number text next to codes with leading zeros, phone numbers, percents and accounting negatives,
mixed date writings, merged cells, blank rows and a blank column.

Expectations are written out by hand (small files) or derived from the generator's intent
(tio_data: which amount writings are plain money, which rows carry a trailing space), never
from the module under test. The output files are read back with openpyxl / xlrd / csv."""
import csv
import datetime
import os
import shutil
import subprocess
from decimal import Decimal

import openpyxl
import pytest

from conftest import assert_contract, ok, fail
import tio_data

from xlakit.errors import Deadline
from xlakit.tables.book import GridBook, Table
from xlakit.tables.clean import Cleaner, Options, amount_from_text, date_from_cell, is_code_column, visible


D = datetime.date
DT = datetime.datetime


# =============================================================================================
# The rules, directly (no process)

@pytest.mark.parametrize("text, number, reason", [
    ("1234", 1234, None), ("-4.5", -4.5, None), ("1,234.50", 1234.5, None), ("￥1,234", 1234, None),
    ("-￥1,234.00", -1234, None), ("$ 1,234.00", 1234, None), ("１２３．５", 123.5, None), ("100元", 100, None),
    ("0", 0, None), ("0.5", 0.5, None), ("+5", 5, None), ("12345678901", 12345678901, None),
    ("007", None, "identifier"), ("0012", None, "identifier"), ("110101199001011234", None, "identifier"),
    ("123456789012", None, "identifier"), ("3.14159265358979323", None, "identifier"),
    ("12.5%", None, "percent"), ("５０％", None, "percent"), ("(300.00)", None, "accounting"),
    ("（1，234）", None, "accounting"), ("300-", None, "accounting"), ("1.2万", None, "unit"), ("3千", None, "unit"),
    ("1E5", None, "other"), ("1,2,3", None, None), ("12,34", None, None), ("abc12", None, None), ("A-001", None, None),
])
def test_amount_rule(text, number, reason):
    got_number, got_reason = amount_from_text(text)
    assert got_reason == reason
    assert got_number == number and type(got_number) is type(number)


def test_code_columns_and_dates():
    for name in ("订单号", "身份证号", "手机", "联系电话", "客户ID", "SKU", "商品编码", "邮编", "银行卡号", "Order No"):
        assert is_code_column(name), name
    for name in ("序号", "金额", "数量", "Valid", "单价", "Notes", "备注"):
        assert not is_code_column(name), name
    assert date_from_cell("2024/3/5") == D(2024, 3, 5)
    assert date_from_cell("2024年3月6日") == D(2024, 3, 6)
    assert date_from_cell("2024.3.7") == D(2024, 3, 7)
    assert date_from_cell("20240308") == D(2024, 3, 8) == date_from_cell(20240308)
    assert date_from_cell(45352) == D(2024, 3, 1) == date_from_cell("45352")      # Excel's day number
    assert date_from_cell(DT(2024, 3, 9)) == D(2024, 3, 9)
    assert date_from_cell("2024-03-09 14:30") == DT(2024, 3, 9, 14, 30)          # a time of day is kept
    for value in ("不详", "2024-02-30", 12.5, 123, "3/5"):
        assert date_from_cell(value) is None, value
    assert visible("张三\u200b\xa0") == "张三[U+200B][U+00A0]"


def test_cleaner_on_a_grid_counts_every_change_and_stops_on_the_deadline():
    grid = [["编号", "姓名", "金额"], ["001", " 张\u200b三", "1,000"], [None, "\u3000", None], ["002", "李四", "(5)"],
            ["合计", None, "995"]] + [["%03d" % i, "x", str(i)] for i in range(3, 3000)]
    table = Table(GridBook({"S": grid}))
    job = Cleaner(table, Options())
    rows = list(job.rows())
    assert rows[0] == ["编号", "姓名", "金额"]
    assert rows[1] == ["001", "张三", 1000] and rows[2] == ["002", "李四", "(5)"] and rows[3] == ["合计", None, 995]
    assert job.empty_rows == 1 and job.rows_out == 3000 and job.totals_rows == 1
    by = {c["column"]: c for c in job.changes()}
    assert by["姓名"]["invisible"] == 1 and by["姓名"]["trimmed"] == 1      # the "\u3000" row was dropped, not counted
    assert by["金额"]["to_number"] == 2999 and by["金额"]["kept_text"] == 1
    assert by["编号"]["kept_text"] == 2999                                   # 编号 column: text whatever the digits
    expired = Deadline(0.0)
    job = Cleaner(Table(GridBook({"S": grid})), Options(), deadline=expired)
    rows = list(job.rows())
    assert job.stopped_at is not None and 1000 < len(rows) < 3000


# =============================================================================================
# The messy export

@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy_clean")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows)
    return rows, paths


def money_kind(i):
    """The generator's amount writings (tio_data._amount, by i % 17) that are plain money text:
    ￥/-￥ with thousands (0), full-width digits (7), "$ 1,234.00" (8). Numbers are 11 and 12+."""
    return i % 17 in (0, 7, 8)


def expected_amount(i, r):
    if money_kind(i):
        return r["amount"]
    cell = r["amount_cell"]
    if isinstance(cell, (int, float)):
        return Decimal(repr(cell)) if isinstance(cell, float) else Decimal(cell)
    return cell                          # accounting negatives, 万/千, "-", "待定", None: as written


@pytest.mark.parametrize("kind", ["xlsx", "xls", "html", "gbk"])
def test_messy_export_cleaned_faithfully(run, messy, kind, home):
    rows, paths = messy
    result = run("clean_table", {"path": paths[kind], "date_columns": ["日期"]})
    data = ok(result)
    assert_contract(result)
    out = data["path"]
    assert out.startswith(str(home)) and os.path.basename(out).startswith("费用明细")
    assert "_清洗" in os.path.basename(out)
    assert data["complete"] is True
    assert data["rows_written"] == tio_data.N_ROWS + 1                 # + the 合计 row, kept
    assert data["totals_rows_kept"] == 1 and data["dropped"]["note_rows"] == 1
    assert data["columns"] == tio_data.FLAT_HEADER
    by = {c["column"]: c for c in data["changes"]}
    n_money = sum(1 for i in range(tio_data.N_ROWS) if money_kind(i))
    n_spaced = sum(1 for r in rows if r["dept_cell"].endswith(" "))
    if kind == "html":
        assert "trimmed" not in by["部门"]       # the HTML reader already drops edge spaces, as a browser shows it
    else:
        assert by["部门"]["trimmed"] == n_spaced
    # text exports (csv, the HTML "xls"): plain number text too, and the 合计 row's sum
    text_export = kind in ("gbk", "html")
    assert by["金额"]["to_number"] == n_money + (0 if not text_export else sum(
        1 for r in rows if isinstance(r["amount_cell"], (int, float))) + 1)
    assert by["身份证号"]["kept_text"] == tio_data.N_ROWS and by["订单号"]["kept_text"] == tio_data.N_ROWS
    assert "to_number" not in by["身份证号"] and "to_number" not in by["订单号"]
    assert "身份证号" in data["code_columns"]
    # every date text becomes a date cell (ISO text too, issue 20); in a csv result ISO text is unchanged
    text_dates = sum(1 for r in rows if isinstance(r["date_cell"], str) and (
        kind != "gbk" or r["date_cell"] != r["date"].isoformat()) or kind == "html")   # html: all text
    assert by["日期"]["to_date"] == text_dates and "not_date" not in by["日期"]
    if kind != "gbk":
        assert by["部门"]["merged_filled"] == tio_data.MERGED_DEPT_ROWS[1] - tio_data.MERGED_DEPT_ROWS[0]
    assert "文本转数字" in data["summary"] and "编号" in data["summary"]

    if kind == "gbk":
        assert out.endswith(".csv")
        with open(out, encoding="utf-8-sig", newline="") as fh:
            got = list(csv.reader(fh))
        assert got[0] == tio_data.FLAT_HEADER and len(got) == tio_data.N_ROWS + 2
        for i, (r, line) in enumerate(zip(rows, got[1:])):
            assert line[1] == r["date"].isoformat()
            assert line[2] == r["dept"] and line[4] == r["id"] and line[8] == r["order"]
            want = expected_amount(i, r)
            if isinstance(want, Decimal):
                assert Decimal(line[7]) == want, (i, line[7])
            else:
                assert line[7] == (want or ""), i
        return
    wb = openpyxl.load_workbook(out)
    got = list(wb["清洗结果"].iter_rows(values_only=True))
    assert list(got[0]) == tio_data.FLAT_HEADER and len(got) == tio_data.N_ROWS + 2
    for i, (r, line) in enumerate(zip(rows, got[1:])):
        assert line[0] == r["seq"]
        assert isinstance(line[1], datetime.datetime) and line[1].date() == r["date"], (i, line[1])
        assert line[2] == r["dept"], i                                          # trimmed, merged block filled
        assert line[4] == r["id"] and line[8] == r["order"]                    # IDs and 007… codes stay text
        want = expected_amount(i, r)
        if isinstance(want, Decimal):
            assert isinstance(line[7], (int, float)) and Decimal(repr(line[7])) == want, (i, line[7], want)
        else:
            assert line[7] == want, (i, line[7], want)
    total = got[-1]
    assert total[1] == ("合 计" if kind == "html" else "合  计")          # inner spaces are never touched


# =============================================================================================
# Hand-made files with every kind of dirt

HEADER = ["编号", "姓名", "手机", "金额", "比例", "日期", None, "备注", "城市", "备用"]
DIRTY = [
    # row 2
    ["1001", " 张三 ", "13800138000", "1,234.50", "12.5%", "2024/3/5", None, "a\u200bb", "北京"],
    ["0012", "李四\u3000", "13900139000", "￥2,000", "50%", "2024年3月6日", None, None, "上海\xa0"],
    [],                                                        # row 4: blank
    ["  ", "\u3000", None, None, None, None, None, " "],        # row 5: only spaces
    ["1003", "王\xa0五", None, "(300.00)", None, "20240307", None, "  x  ", "广州"],     # I6:I8 merged
    ["1004", "赵六\ufeff", None, "１２３．５", None, 45352, None, None, None],
    ["1005", "钱七", None, "-45", None, "不详", None, "备注", None],
    ["合计", None, None, "3,057.50", None, None, None, None, None],
]
# what the cleaned table must hold (header row 1 kept; G has no header, so it is 列G)
CLEAN_HEADER = ["编号", "姓名", "手机", "金额", "比例", "日期", "列G", "备注", "城市", "备用"]
CLEAN = [
    ["1001", "张三", "13800138000", 1234.5, "12.5%", D(2024, 3, 5), None, "ab", "北京", None],
    ["0012", "李四", "13900139000", 2000, "50%", D(2024, 3, 6), None, None, "上海", None],
    ["1003", "王 五", None, "(300.00)", None, D(2024, 3, 7), None, "x", "广州", None],
    ["1004", "赵六", None, 123.5, None, D(2024, 3, 1), None, None, "广州", None],
    ["1005", "钱七", None, -45, None, "不详", None, "备注", "广州", None],
    ["合计", None, None, 3057.5, None, None, None, None, None, None],
]
COUNTS = {
    "编号": {"kept_text": 5}, "姓名": {"invisible": 2, "trimmed": 2}, "手机": {"kept_text": 2},
    "金额": {"to_number": 5, "kept_text": 1}, "比例": {"kept_text": 2}, "日期": {"to_date": 4, "not_date": 1},
    "备注": {"invisible": 1, "trimmed": 1}, "城市": {"invisible": 1, "trimmed": 1, "merged_filled": 2},
}


def write_dirty_xlsx(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "名单"
    ws.append(HEADER)
    for line in DIRTY:
        ws.append(line)
    ws.merge_cells("I6:I8")
    wb.save(path)


def write_dirty_xls(path):
    import xlwt
    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("名单")
    for c, v in enumerate(HEADER):
        if v is not None:
            ws.write(0, c, v)
    for r, line in enumerate(DIRTY, start=1):
        for c, v in enumerate(line):
            if v is None or (c == 8 and r in (5, 6, 7)):
                continue
            ws.write(r, c, v)
    ws.write_merge(5, 7, 8, 8, "广州")
    wb.save(path)


def normalise(value):
    if isinstance(value, datetime.datetime) and value.time() == datetime.time(0):
        return value.date()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_back(path, sheet=None):
    if path.endswith(".xls"):
        import xlrd
        book = xlrd.open_workbook(path)
        ws = book.sheet_by_name(sheet) if sheet else book.sheet_by_index(0)
        out = []
        for r in range(ws.nrows):
            line = []
            for c in range(ws.ncols):
                cell = ws.cell(r, c)
                if cell.ctype == xlrd.XL_CELL_EMPTY or (cell.ctype == xlrd.XL_CELL_TEXT and cell.value == ""):
                    line.append(None)
                elif cell.ctype == xlrd.XL_CELL_DATE:
                    line.append(normalise(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode)))
                else:
                    line.append(normalise(cell.value))
            out.append(line)
        return out
    wb = openpyxl.load_workbook(path)
    ws = wb[sheet] if sheet else wb.active
    return [[normalise(v) for v in line] for line in ws.iter_rows(values_only=True)]


def padded(rows, width):
    return [list(r) + [None] * (width - len(r)) for r in rows]


def check_counts(data, counts=COUNTS):
    by = {c["column"]: c for c in data["changes"]}
    assert set(by) == set(counts), sorted(by)
    for name, want in counts.items():
        got = {k: v for k, v in by[name].items() if k in ("invisible", "trimmed", "to_number", "to_date",
                                                             "merged_filled", "kept_text", "not_date")}
        assert got == want, (name, got)


@pytest.fixture
def dirty(tmp_path):
    path = str(tmp_path / "客户名单.xlsx")
    write_dirty_xlsx(path)
    return path


def test_hand_made_xlsx_every_rule(run, dirty, tmp_path):
    out = str(tmp_path / "干净.xlsx")
    data = ok(run("clean_table", {"path": dirty, "date_columns": ["日期"], "out_path": out}))
    assert data["path"] == out and data["out_sheet"] == "清洗结果" and data["format"] == "xlsx"
    assert data["rows_read"] == 7 and data["rows_written"] == 6
    assert data["dropped"] == {"empty_rows": 2, "note_rows": 0, "totals_rows": 0, "empty_columns": []}
    assert data["columns"] == CLEAN_HEADER
    check_counts(data)
    totals = {}
    for counts in COUNTS.values():
        for k, n in counts.items():
            totals[k] = totals.get(k, 0) + n
    assert data["changed"] == totals
    by = {c["column"]: c for c in data["changes"]}
    assert by["编号"]["kept_text_reasons"] == {"编号列（按列名）": 4, "编号（前导 0、12 位以上或超过 15 位有效数字）": 1}
    assert by["比例"]["kept_text_reasons"] == {"百分数": 2}
    assert {"kind": "去不可见字符", "row": 2, "before": "a[U+200B]b", "after": "ab"} in by["备注"]["examples"]
    assert set(data["code_columns"]) == {"编号", "手机"}
    got = read_back(out, "清洗结果")
    assert got[0] == CLEAN_HEADER
    assert padded(got[1:], 10) == CLEAN
    assert isinstance(got[1][0], str) and isinstance(got[1][2], str)


def test_drop_empty_cols_rows_kept_and_totals(run, dirty, tmp_path):
    out = str(tmp_path / "a.xlsx")
    data = ok(run("clean_table", {"path": dirty, "date_columns": ["F"], "drop_empty_cols": True,
                                  "drop_totals": True, "out_path": out, "out_sheet": "结果"}))
    assert data["dropped"]["empty_columns"] == ["列G"]            # 备用 has a header: kept
    assert data["dropped"]["totals_rows"] == 1 and data["rows_written"] == 5
    keep = [i for i in range(10) if i != 6]
    assert read_back(out, "结果") == [[CLEAN_HEADER[i] for i in keep]] + [[r[i] for i in keep] for r in CLEAN[:5]]

    out = str(tmp_path / "b.xlsx")
    data = ok(run("clean_table", {"path": dirty, "drop_empty_rows": False, "out_path": out}))
    assert data["dropped"]["empty_rows"] == 0 and data["rows_written"] == 8
    got = padded(read_back(out), 10)
    assert got[3] == [None] * 10 and got[4] == [None] * 10          # rows 4 and 5 stay, empty
    # no date_columns: 20240307 is plain number text and the day number stays a number
    assert got[5][5] == 20240307 and got[6][5] == 45352 and got[7][5] == "不详"


def test_switches_off_and_text_columns(run, dirty, tmp_path):
    out = str(tmp_path / "c.xlsx")
    data = ok(run("clean_table", {"path": dirty, "to_number": False, "trim": False, "remove_invisible": False,
                                  "fill_merged": False, "out_path": out}))
    assert data["changes"] == [] and "无需改动" in data["summary"]
    got = padded(read_back(out), 10)
    assert got[1][1] == " 张三 " and got[1][3] == "1,234.50" and got[1][7] == "a\u200bb"
    assert got[3][:2] == ["  ", "\u3000"]                            # not trimmed: not an empty row
    assert got[4][8] == "广州" and got[5][8] is None and got[6][8] is None  # merged block not filled
    out = str(tmp_path / "d.xlsx")
    data = ok(run("clean_table", {"path": dirty, "text_columns": ["金额"], "out_path": out}))
    by = {c["column"]: c for c in data["changes"]}
    assert "to_number" not in by["金额"] and by["金额"]["kept_text"] == 6
    assert padded(read_back(out), 10)[1][3] == "1,234.50"
    assert any("编号" in w and "number_columns" in w for w in data["warnings"])
    out = str(tmp_path / "e.xlsx")
    data = ok(run("clean_table", {"path": dirty, "number_columns": ["编号"], "out_path": out}))
    by = {c["column"]: c for c in data["changes"]}
    assert by["编号"]["to_number"] == 4 and by["编号"]["kept_text"] == 1         # 0012 is still a code
    assert [r[0] for r in read_back(out)[1:]] == [1001, "0012", 1003, 1004, 1005, "合计"]
    assert "编号" not in data["code_columns"]


def test_xls_in_and_xls_out(run, tmp_path):
    src = str(tmp_path / "客户名单.xls")
    write_dirty_xls(src)
    out = str(tmp_path / "干净.xls")
    data = ok(run("clean_table", {"path": src, "date_columns": ["日期"], "out_path": out}))
    assert data["format"] == "xls" and data["rows_written"] == 6
    check_counts(data)
    got = read_back(out)
    assert got[0] == CLEAN_HEADER
    want = [list(r) for r in CLEAN]
    want[3][5] = D(2024, 3, 1)
    assert padded(got[1:], 10) == want


def soffice_convert(src, fmt, folder):
    """``src`` converted by LibreOffice (a private profile, so a running instance does not interfere)."""
    exe = shutil.which("soffice") or shutil.which("libreoffice")
    if not exe:
        pytest.skip("LibreOffice is not installed")
    profile = "file://" + str(folder / "lo_profile")
    proc = subprocess.run([exe, "--headless", "--norestore", "-env:UserInstallation=" + profile, "--convert-to", fmt,
                           "--outdir", str(folder / "lo_out"), src], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=180)
    out = str(folder / "lo_out" / (os.path.splitext(os.path.basename(src))[0] + "." + fmt))
    if proc.returncode != 0 or not os.path.isfile(out):
        pytest.skip("LibreOffice could not convert: %s" % proc.stderr.decode("utf-8", "replace")[-300:])
    return out


@pytest.mark.parametrize("fmt", ["xls", "xlsx"])
def test_files_saved_by_libreoffice(run, tmp_path, fmt):
    """The same dirty table saved by LibreOffice (its own xls and xlsx writers: shared strings,
    styles, merged cells as LibreOffice stores them) cleans to the same cells and counts."""
    if fmt == "xls":
        src = str(tmp_path / "客户名单.xlsx")
        write_dirty_xlsx(src)
    else:
        src = str(tmp_path / "客户名单.xls")
        write_dirty_xls(src)
    converted = soffice_convert(src, fmt, tmp_path)
    out = str(tmp_path / "干净.xlsx")
    data = ok(run("clean_table", {"path": converted, "date_columns": ["日期"], "out_path": out}))
    assert data["rows_written"] == 6 and data["dropped"]["empty_rows"] == 2
    check_counts(data)
    got = read_back(out)
    assert got[0] == CLEAN_HEADER and padded(got[1:], 10) == CLEAN


def test_gbk_csv(run, tmp_path, home):
    src = tmp_path / "流水.csv"
    lines = ["银行流水导出", "", "交易日期,摘要,收入,账号,比例",
             "2024/3/5, 工资 ,\"8,000.00\",6222021234567890123,5%",
             "2024年3月6日,\u3000转账,１２３．５,0012,",
             ",,,,",
             "20240307,退款,(50.00),12345,",
             "2024-03-08,利息,0.35,,"]
    src.write_bytes(("\r\n".join(lines) + "\r\n").encode("gbk"))
    data = ok(run("clean_table", {"path": str(src), "date_columns": ["交易日期"]}))
    assert data["path"].endswith("流水_清洗.csv") and data["path"].startswith(str(home))
    assert data["header_row"] == 3 and data["rows_written"] == 4
    assert data["dropped"]["empty_rows"] == 1
    with open(data["path"], encoding="utf-8-sig", newline="") as fh:
        got = list(csv.reader(fh))
    assert got == [["交易日期", "摘要", "收入", "账号", "比例"],
                   ["2024-03-05", "工资", "8000", "6222021234567890123", "5%"],
                   ["2024-03-06", "转账", "123.5", "0012", ""],
                   ["2024-03-07", "退款", "(50.00)", "12345", ""],
                   ["2024-03-08", "利息", "0.35", "", ""]]
    by = {c["column"]: c for c in data["changes"]}
    assert by["交易日期"]["to_date"] == 3 and by["摘要"]["trimmed"] == 2
    assert by["收入"]["to_number"] == 3 and by["收入"]["kept_text"] == 1 and by["账号"]["kept_text"] == 3
    again = ok(run("clean_table", {"path": str(src)}))
    assert again["path"].endswith("流水_清洗_2.csv")                   # never over an existing file


def test_utf8_csv_invisible_characters_to_xlsx(run, tmp_path):
    src = tmp_path / "网页复制.csv"
    src.write_text("名称,数量,说明\n\ufeff苹果\u200b,\xa012\xa0,有\u200d货\n香蕉,1\u200b000,\"两行\n说明\"\n", encoding="utf-8")
    out = str(tmp_path / "网页复制.xlsx")
    data = ok(run("clean_table", {"path": str(src), "out_path": out}))
    got = read_back(out)
    assert got == [["名称", "数量", "说明"], ["苹果", 12, "有货"], ["香蕉", 1000, "两行\n说明"]]
    by = {c["column"]: c for c in data["changes"]}
    assert by["名称"]["invisible"] == 1 and by["数量"]["invisible"] == 2 and by["数量"]["to_number"] == 2


def test_no_header_row(run, tmp_path):
    src = tmp_path / "无表头.csv"
    src.write_text("张三 ,,1,\n李四,, 2 ,\n", encoding="utf-8")
    out = str(tmp_path / "无表头_清洗.csv")
    data = ok(run("clean_table", {"path": str(src), "header_row": 0, "drop_empty_cols": True, "out_path": out}))
    assert data["header_row"] is None and data["dropped"]["empty_columns"] == ["列B"]
    with open(out, encoding="utf-8-sig", newline="") as fh:
        assert list(csv.reader(fh)) == [["张三", "1"], ["李四", "2"]]          # no invented header row


def test_deadline_gives_a_partial_file_that_says_so(run, tmp_path):
    src = tmp_path / "大表.csv"
    src.write_text("序号,金额\n" + "".join("%d, %d \n" % (i, i) for i in range(1, 5001)), encoding="utf-8")
    data = ok(run("clean_table", {"path": str(src), "out_path": str(tmp_path / "部分.csv")},
                  extra_env={"XLA_DEADLINE": "0.001"}))
    assert data["complete"] is False and data["stopped_at"] > 1000
    assert any("时间用完" in w for w in data["warnings"])
    with open(data["path"], encoding="utf-8-sig") as fh:
        got = list(csv.reader(fh))
    assert got[0] == ["序号", "金额"] and len(got) - 1 == data["rows_written"] < 5000
    assert got[1:4] == [["1", "1"], ["2", "2"], ["3", "3"]]
    src = tmp_path / "大表2.csv"         # column B is empty: the first pass must read to the end to know
    src.write_text("序号,,金额\n" + "".join("%d,,%d\n" % (i, i) for i in range(1, 5001)), encoding="utf-8")
    data = ok(run("clean_table", {"path": str(src), "drop_empty_cols": True, "out_path": str(tmp_path / "部分2.csv")},
                  extra_env={"XLA_DEADLINE": "0.001"}))
    assert data["complete"] is False and data["dropped"]["empty_columns"] == []
    assert any("没来得及检查哪些列是空的" in w for w in data["warnings"])


def test_errors_are_chinese_and_actionable(run, dirty, tmp_path):
    msg = fail(run("clean_table", {"path": dirty, "date_columns": ["下单时间"]}))
    assert "找不到列" in msg and "日期" in msg and "date_columns" in msg
    msg = fail(run("clean_table", {"path": dirty, "out_path": dirty}))
    assert "不能和源文件相同" in msg
    msg = fail(run("clean_table", {"path": dirty, "out_path": str(tmp_path / "x.pdf")}))
    assert ".xlsx" in msg
    assert "找不到" in fail(run("clean_table", {"path": str(tmp_path / "没有.xlsx")}))
    assert "工作表" in fail(run("clean_table", {"path": dirty, "sheet": "不存在"}))
    assert not os.path.exists(str(tmp_path / "x.pdf"))


def test_rerun_over_its_own_output_writes_a_new_file(run, tmp_path):
    """Issue 35: clean_table took 4-5 s when the output existed (1 s fresh): replacing the one
    sheet of a one-sheet workbook loaded and re-saved it through openpyxl. Such a workbook is now
    written like a new file (no openpyxl theme part in it); a workbook with a second sheet or a
    name of the user's still keeps them (openpyxl path)."""
    import zipfile
    src = tmp_path / "台账.csv"
    src.write_text('日期,名称,金额\n2024/1/2,甲,"￥1,200.50"\n2024/1/3,乙,300\n', encoding="utf-8")
    out = str(tmp_path / "台账_清洗.xlsx")
    first = ok(run("clean_table", {"path": str(src), "out_path": out}))
    again = ok(run("clean_table", {"path": str(src), "out_path": out}))
    assert again["rows_written"] == first["rows_written"] and again["backup"]
    with zipfile.ZipFile(out) as zf:
        assert "xl/theme/theme1.xml" not in zf.namelist()
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == [first["out_sheet"]] and wb.active["C2"].value == 1200.5
    wb.create_sheet("说明")["A1"] = "手写的说明"
    wb.save(out)
    ok(run("clean_table", {"path": str(src), "out_path": out}))
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == [first["out_sheet"], "说明"] and wb["说明"]["A1"].value == "手写的说明"
