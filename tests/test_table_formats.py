"""table_formats: every reader path, every value rule, every error, on files real programs wrote.

The committed fixtures come from tests/fixtures/make_fixtures.py (openpyxl, LibreOffice, xlwt,
msoffcrypto-tool). Odd-but-valid xlsx layouts (namespace prefixes, cells without r=, attributes in
another order, phonetic runs, CDATA…) are made in tmp_path by rewriting the XML of a real file,
since no producer at hand writes them. The fast xlsx parser and the openpyxl path must give the
same rows, merges, sheets and warnings on every xlsx here.
"""
import datetime
import os
import re
import shutil
import sys
import types
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from xlakit.tables import formats as tf  # noqa: E402
from xlakit.tables.formats import delimited  # noqa: E402
from xlakit.tables.formats._base import classify_format, serial_to_value, DATE, DATETIME, TIME, ELAPSED  # noqa: E402
from xlakit.tables.values import display  # noqa: E402

FIX = os.path.join(ROOT, "tests", "fixtures")
CJK = re.compile(r"[\u4e00-\u9fff]")
D, DT, T = datetime.date, datetime.datetime, datetime.time

XLSX_FIXTURES = ["dates.xlsx", "dates_lo.xlsx", "dates_1904.xlsx", "formulas_lo.xlsx",
                 "formulas_nocache.xlsx", "xlsx_renamed.xls"]


def fx(name):
    return os.path.join(FIX, name)


def read_all(book, name=None):
    return list(book.rows(name))


def snapshot(path, reader):
    """Everything a caller can see of an xlsx, through one reader path."""
    with tf.open_book(path, reader=reader) as book:
        data = {"kind": book.kind, "sheets": list(book.sheets), "first": book.sheet()}
        for info in book.sheets:
            data[info.name] = (read_all(book, info.name), book.merges(info.name), book.dimensions(info.name))
        data["warnings"] = list(book.warnings)
    return data


def assert_chinese(exc_info, *needles):
    msg = str(exc_info.value)
    assert CJK.search(msg), msg
    for needle in needles:
        assert needle in msg, msg
    assert "Traceback" not in msg


# ---------------------------------------------------------------------------------------------
# sniff: by content

@pytest.mark.parametrize("name,kind", [
    ("dates.xlsx", "xlsx"), ("dates_lo.xlsx", "xlsx"), ("formulas_lo.xlsx", "xlsx"),
    ("xlsx_renamed.xls", "xlsx"), ("ledger.xls", "xls"), ("formulas_lo.xls", "xls"),
    ("gbk.csv", "csv"), ("utf8bom.csv", "csv"), ("tabs.txt", "csv"), ("semicolon.csv", "csv"),
    ("pipe.txt", "csv"), ("utf16.txt", "csv"), ("fake_html.xls", "html"), ("lo_html.xls", "html"),
])
def test_sniff_by_content(name, kind):
    assert tf.sniff(fx(name)) == kind


@pytest.mark.parametrize("name,wrong_name,kind", [
    ("gbk.csv", "报表.xlsx", "csv"), ("fake_html.xls", "导出.csv", "html"), ("ledger.xls", "账本.xlsx", "xls"),
    ("dates.xlsx", "日期.csv", "xlsx"), ("tabs.txt", "明细.xls", "csv"), ("dates.xlsx", "noext", "xlsx"),
])
def test_sniff_ignores_suffix(tmp_path, name, wrong_name, kind):
    target = tmp_path / wrong_name
    shutil.copy(fx(name), target)
    assert tf.sniff(str(target)) == kind
    with tf.open_book(str(target)) as book:
        assert book.kind == kind
        assert read_all(book)


@pytest.mark.parametrize("name,needles", [
    ("encrypted.xlsx", ["已加密", "去掉密码"]),
    ("encrypted.xls", ["已加密", "去掉密码"]),
    ("truncated.xlsx", ["损坏或不完整"]),
    ("garbage.xlsx", ["不是表格文件"]),
    ("empty.csv", ["空的"]),
    ("sample.docx", ["Word", "不是表格"]),
    ("sample.doc", ["Word", "不是表格"]),
    ("sample.pdf", ["PDF", "不是表格"]),
])
def test_bad_inputs_give_chinese_errors(name, needles):
    with pytest.raises(tf.FormatError) as exc:
        with tf.open_book(fx(name)) as book:
            read_all(book)
    assert_chinese(exc, *needles)


def test_hints_name_only_tools_that_exist():
    """"请用 read_document 读取" only once read_document is declared: a hint naming a missing tool
    would send the model in circles."""
    from xlakit import runtime as xla_runtime
    declared = xla_runtime.tool_hint("read_document", "x") == "x"
    with pytest.raises(tf.FormatError) as exc:
        tf.sniff(fx("sample.docx"))
    # the reader only names the tool; the runtime adds the hint when the tool is in the manifest
    assert exc.value.tool == "read_document" and "read_document" not in str(exc.value)
    assert ("read_document" in xla_runtime.format_error_hint(exc.value)) == declared
    assert xla_runtime.tool_hint("calc_table", "用 calc_table") == "用 calc_table"
    assert xla_runtime.tool_hint("no_such_tool", "用它") == ""


def test_format_error_is_a_tool_error():
    from xlakit import runtime as xla_runtime
    assert issubclass(tf.FormatError, xla_runtime.ToolError)


def test_more_bad_inputs(tmp_path):
    plain_zip = tmp_path / "a.xlsx"
    with zipfile.ZipFile(str(plain_zip), "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(tf.FormatError) as exc:
        tf.sniff(str(plain_zip))
    assert_chinese(exc, "zip")

    for raw in (b"\xef\xbb\xbf", b"\xff\xfe\r\x00\n\x00", b"\r\n  \r\n"):   # a BOM or blank lines only
        blank = tmp_path / "blank.csv"
        blank.write_bytes(raw)
        with pytest.raises(tf.FormatError) as exc:
            tf.sniff(str(blank))
        assert_chinese(exc, "空的", "没有任何数据")

    xml2003 = tmp_path / "b.xls"
    xml2003.write_text('<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n'
                       '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet ss:Name="S">'
                       '<Table><Row><Cell><Data ss:Type="String">a</Data></Cell></Row></Table></Worksheet></Workbook>',
                       encoding="utf-8")
    assert tf.sniff(str(xml2003)) == "spreadsheetml"          # read now (Excel 2003 XML exports)
    with tf.open_book(str(xml2003)) as book:
        assert list(book.rows()) == [(1, ["a"])]

    page = tmp_path / "c.xls"
    page.write_text("<html><body><p>没有表格</p></body></html>", encoding="utf-8")
    with pytest.raises(tf.FormatError) as exc:
        tf.open_book(str(page))
    assert_chinese(exc, "没有表格")

    png = tmp_path / "d.xlsx"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    with pytest.raises(tf.FormatError) as exc:
        tf.sniff(str(png))
    assert_chinese(exc, "图片")

    with pytest.raises(tf.FormatError) as exc:
        tf.sniff(str(tmp_path / "missing.xlsx"))
    assert_chinese(exc, "找不到")

    with pytest.raises(tf.FormatError) as exc:
        tf.sniff(str(tmp_path))
    assert_chinese(exc, "文件夹")

    blank = tmp_path / "blank.csv"
    blank.write_bytes(b"\r\n \r\n")
    with pytest.raises(tf.FormatError) as exc:
        tf.open_book(str(blank))
    assert_chinese(exc, "空的")


def test_xlsx_with_missing_sheet_part(tmp_path):
    target = tmp_path / "broken.xlsx"
    rewrite_xlsx(fx("dates.xlsx"), str(target), drop=["xl/worksheets/sheet1.xml"])
    with tf.open_book(str(target)) as book:
        with pytest.raises(tf.FormatError) as exc:
            read_all(book)
    assert_chinese(exc, "不完整")


# ---------------------------------------------------------------------------------------------
# xlsx values (both reader paths)

READERS = ["fast", "openpyxl"]

DATES_SHEET = [
    (1, ["类型", "值"]),
    (2, ["日期", D(2024, 3, 15), None, "合并标题"]),
    (3, ["日期时间", DT(2024, 3, 15, 14, 30, 5)]),
    (4, ["时间", T(9, 15)]),
    (5, ["中文日期", D(2024, 12, 31)]),
    (6, ["星期", D(2024, 1, 1)]),
    (7, ["美式", DT(2023, 7, 4, 8, 5)]),
    (8, ["早日期", D(1900, 1, 1)]),
    (9, ["三月", D(1900, 3, 1)]),
    (10, ["带单位数字", 1234.5]),
    (11, ["整数", 42]),
    (12, ["浮点", 0.3]),                 # openpyxl stored 0.1 + 0.2 with 15 digits
    (13, ["大整数", 123456789012]),
    (14, ["身份证", "110101199003071234"]),
    (15, ["银行卡", "6222020200112233445"]),
    (16, ["编号", "007"]),
    (17, ["布尔", True]),
    (18, ["错误", "#N/A"]),
    (19, ["换行", "第一行\n第二行"]),
    (20, ["实体", 'A&B <C> "D"']),
    (21, ["百分比", 0.125]),
    (22, ["富文本", "粗体普通斜体"]),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name", ["dates.xlsx", "dates_lo.xlsx", "xlsx_renamed.xls"])
def test_xlsx_values(name, reader):
    with tf.open_book(fx(name), reader=reader) as book:
        assert book.kind == "xlsx"
        assert book.encoding is None and book.delimiter is None
        rows = read_all(book)
        assert rows == DATES_SHEET
        for _n, values in rows:
            assert values[-1] is not None                      # trailing None trimmed
        assert type(rows[10][1][1]) is int and type(rows[12][1][1]) is int
        assert type(rows[9][1][1]) is float
        assert type(rows[1][1][1]) is D and type(rows[2][1][1]) is DT
        assert book.merges() == [(2, 4, 3, 5)]
        assert book.dimensions() == (22, 5)
        assert book.warnings == []


@pytest.mark.parametrize("reader", READERS)
def test_xlsx_1904_dates(reader):
    with tf.open_book(fx("dates_1904.xlsx"), reader=reader) as book:
        rows = dict(read_all(book))
    for n, values in DATES_SHEET:
        if n in (8, 9):
            # before 1904-01-01 there is no serial in the 1904 system: openpyxl stored negatives
            assert isinstance(rows[n][1], int) and rows[n][1] < 0
        else:
            assert rows[n] == values, n


@pytest.mark.parametrize("reader", READERS)
def test_xlsx_sheets_hidden_and_selection(reader):
    with tf.open_book(fx("dates_lo.xlsx"), reader=reader) as book:
        assert [(s.name, s.hidden, s.index) for s in book.sheets] == [
            ("日期", False, 0), ("隐藏", True, 1), ("深度隐藏", True, 2), ("第三", False, 3)]
        assert book.sheet().name == "日期"
        assert book.sheet("第三").index == 3
        assert read_all(book, "隐藏") == [(1, ["隐藏表"])]
        assert read_all(book, "深度隐藏") == [(1, ["深度隐藏表"])]
        assert read_all(book, "第三") == [(2, [None, "只有B2"])]
        with pytest.raises(tf.FormatError) as exc:
            book.sheet("不存在")
        assert_chinese(exc, "不存在", "日期", "第三", "隐藏")


def test_first_visible_sheet_skips_hidden(tmp_path):
    import openpyxl
    wb = openpyxl.Workbook()
    wb.active.title = "说明"
    wb.active["A1"] = "隐藏的说明"
    wb.active.sheet_state = "hidden"
    wb.create_sheet("数据")["A1"] = "数据"
    wb.active = 1
    path = str(tmp_path / "h.xlsx")
    wb.save(path)
    for reader in READERS:
        with tf.open_book(path, reader=reader) as book:
            assert book.sheet().name == "数据"
            assert read_all(book) == [(1, ["数据"])]


@pytest.mark.parametrize("reader", READERS)
def test_formula_cached_values_from_libreoffice(reader):
    with tf.open_book(fx("formulas_lo.xlsx"), reader=reader) as book:
        rows = dict(read_all(book))
        assert rows[1] == ["2024年一季度销售汇总"]
        assert rows[3] == [D(2024, 1, 5), "苹果", 10, 3.5, 35, "苹果-10箱"]
        assert rows[5] == [D(2024, 3, 7), "橙子", 7, 4.1, 28.7, "橙子-7箱"]
        assert rows[6] == ["合计", None, 21, None, 72.7]
        assert rows[7] == ["到期日", D(2024, 2, 4), "#DIV/0!", True]
        assert rows[8] == ["备注：合并单元格"]
        assert book.merges() == [(1, 1, 1, 6), (8, 1, 9, 2)]
        assert book.warnings == []


@pytest.mark.parametrize("reader", READERS)
def test_formulas_without_cache_warn_once(reader):
    with tf.open_book(fx("formulas_nocache.xlsx"), reader=reader) as book:
        rows = dict(read_all(book))
        assert rows[3] == [D(2024, 1, 5), "苹果", 10, 3.5]        # E3/F3 formulas read as empty
        assert rows[6] == ["合计"]
        # counted once per cell even when the sheet is read twice, with the first one as example
        list(book.rows())
        assert book.formula_without_value == {
            "count": 11, "sheets": {"汇总": 11}, "example": {"sheet": "汇总", "cell": "E3", "formula": "=C3*D3"}}
        assert len(book.warnings) == 1
        assert "11 个公式单元格没有缓存值" in book.warnings[0] and "E3：=C3*D3" in book.warnings[0]


@pytest.mark.parametrize("name", XLSX_FIXTURES)
def test_fast_and_openpyxl_paths_identical_on_fixtures(name):
    assert snapshot(fx(name), "fast") == snapshot(fx(name), "openpyxl")


def test_reader_selected_by_environment(monkeypatch):
    monkeypatch.setenv("XLA_XLSX_READER", "openpyxl")
    with tf.open_book(fx("dates.xlsx")) as book:
        assert book.reader == "openpyxl"
        assert read_all(book) == DATES_SHEET
    monkeypatch.delenv("XLA_XLSX_READER")
    with tf.open_book(fx("dates.xlsx")) as book:
        assert book.reader == "fast"


# ---------------------------------------------------------------------------------------------
# Odd but valid xlsx layouts, made by rewriting the XML of a real file

def rewrite_xlsx(src, dst, edit=None, drop=(), rename=None, add=None):
    """Copy an xlsx, passing each member's bytes through ``edit(name, data)``."""
    rename = rename or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename in drop:
                continue
            data = zin.read(item.filename)
            if edit:
                data = edit(item.filename, data)
            zout.writestr(rename.get(item.filename, item.filename), data)
        for name, data in (add or {}).items():
            zout.writestr(name, data)


def make_variant(tmp_path, kind):
    src = fx("dates_lo.xlsx")
    dst = str(tmp_path / ("%s.xlsx" % kind))
    sheet = "xl/worksheets/sheet1.xml"

    if kind == "prefixed":
        # what the .NET OpenXML SDK writes: every element with an x: prefix
        def edit(name, data):
            if name.endswith(".xml") and (name.startswith("xl/worksheets/") or name == "xl/sharedStrings.xml"):
                data = re.sub(rb"<(/?)(?!\?)([A-Za-z]+)([ />])", rb"<\1x:\2\3", data)
                data = data.replace(b'xmlns="http://schemas', b'xmlns:x="http://schemas', 1)
            return data
        rewrite_xlsx(src, dst, edit)
    elif kind == "no_cell_refs":
        # cells without r= (positions follow order) where possible, rows without r=
        def edit(name, data):
            if name != sheet:
                return data
            out = []
            for row in re.split(rb"(?=<row )", data):
                cells = re.findall(rb'<c r="([A-Z]+)\d+"', row)
                cols = [sum((ord(ch) - 64) * 26 ** i for i, ch in enumerate(reversed(c.decode()))) for c in cells]
                if cols and cols == list(range(1, len(cols) + 1)):
                    row = re.sub(rb'<c r="[A-Z]+\d+"', b"<c", row)
                out.append(row)
            data = b"".join(out)
            return re.sub(rb'<row r="(\d+)"', lambda m: b"<row" if m.group(1) in (b"1", b"2", b"3") else m.group(0), data)
        rewrite_xlsx(src, dst, edit)
    elif kind == "attr_order":
        # t= and s= before r=
        def edit(name, data):
            if name != sheet:
                return data
            return re.sub(rb'<c r="([A-Z]+\d+)"((?: [st]="[^"]*")+)', rb'<c\2 r="\1"', data)
        rewrite_xlsx(src, dst, edit)
    elif kind == "phonetic":
        # Japanese Excel adds <rPh> reading runs and <phoneticPr> to shared strings
        def edit(name, data):
            if name != "xl/sharedStrings.xml":
                return data
            return data.replace("<t>类型</t>".encode(), "<t>类型</t><rPh sb=\"0\" eb=\"2\"><t>ルイケイ</t></rPh>"
                                "<phoneticPr fontId=\"1\"/>".encode(), 1)
        rewrite_xlsx(src, dst, edit)
    elif kind == "escapes":
        # _xHHHH_ escapes and character references, as Excel writes control characters
        def edit(name, data):
            if name != "xl/sharedStrings.xml":
                return data
            # LibreOffice wrote "只有B2" as two rich-text runs, "只有" and "B2"
            return data.replace("只有</t>".encode(), "只有_x000D_&#x41;_x005F_x0041_</t>".encode(), 1)
        rewrite_xlsx(src, dst, edit)
    elif kind == "absolute_targets":
        # relationship targets written as absolute paths
        def edit(name, data):
            if name == "xl/_rels/workbook.xml.rels":
                data = data.replace(b'Target="worksheets/sheet1.xml"', b'Target="/xl/worksheets/sheet1.xml"')
                data = data.replace(b'Target="sharedStrings.xml"', b'Target="/xl/sharedStrings.xml"')
            return data
        rewrite_xlsx(src, dst, edit)
    elif kind == "member_case":
        # part names differ in case from the relationship target (OPC names are case-insensitive)
        rewrite_xlsx(src, dst, rename={sheet: "xl/worksheets/SHEET1.xml"})
    elif kind == "wrong_dimension":
        def edit(name, data):
            if name == sheet:
                data = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:B3"', data)
            return data
        rewrite_xlsx(src, dst, edit)
    elif kind == "cdata":
        # CDATA in a value: the fast parser gives up and the openpyxl path takes over
        def edit(name, data):
            if name == sheet:
                data = data.replace(b"<v>42</v>", b"<v><![CDATA[42]]></v>", 1)
            return data
        rewrite_xlsx(src, dst, edit)
    elif kind == "chinese_builtin_formats":
        # Chinese Excel stores its localised date formats as bare ids 27-36 / 50-58, no text
        def edit(name, data):
            if name != "xl/styles.xml":
                return data
            ids = iter([b"31", b"57", b"58", b"32"])
            return re.sub(rb'(<xf numFmtId=")(\d+)(")', lambda m: m.group(1) + (
                next(ids, m.group(2)) if m.group(2) in (b"166", b"167", b"168", b"169") else m.group(2)) + m.group(3),
                data)
        rewrite_xlsx(src, dst, edit)
    else:
        raise ValueError(kind)
    return dst


VARIANTS = ["prefixed", "no_cell_refs", "attr_order", "phonetic", "escapes", "absolute_targets",
            "wrong_dimension", "cdata"]


def test_member_name_case_is_ignored(tmp_path):
    """openpyxl cannot find such a sheet; the fast path can, and the openpyxl path says so in Chinese."""
    path = make_variant(tmp_path, "member_case")
    with tf.open_book(path) as book:
        assert read_all(book) == DATES_SHEET
    with tf.open_book(path, reader="openpyxl") as book:
        with pytest.raises(tf.FormatError) as exc:
            read_all(book)
    assert_chinese(exc, "日期")


@pytest.mark.parametrize("kind", VARIANTS)
def test_odd_xlsx_layouts_read_the_same(tmp_path, kind):
    path = make_variant(tmp_path, kind)
    fast, opx = snapshot(path, "fast"), snapshot(path, "openpyxl")
    assert fast == opx
    expected = dict(DATES_SHEET)
    got = dict(fast["日期"][0])
    if kind == "escapes":
        assert dict(fast["第三"][0]) == {2: [None, "只有\rA_x0041_B2"]}
    else:
        assert dict(fast["第三"][0]) == {2: [None, "只有B2"]}
    assert got == expected
    assert fast["日期"][1] == [(2, 4, 3, 5)]
    if kind == "wrong_dimension":
        assert fast["日期"][2] == (3, 2)        # what the file says; rows still all read
    if kind == "cdata":
        with tf.open_book(path) as book:
            assert read_all(book) == DATES_SHEET
            assert book.fallback_reason


def test_variant_files_really_differ(tmp_path):
    """The rewritten layouts must really contain what they claim (guards the test above)."""
    with zipfile.ZipFile(make_variant(tmp_path, "prefixed")) as zf:
        assert b"<x:c " in zf.read("xl/worksheets/sheet1.xml")
    with zipfile.ZipFile(make_variant(tmp_path, "no_cell_refs")) as zf:
        data = zf.read("xl/worksheets/sheet1.xml")
        assert b'r="A1"' not in data and b'<row r="1"' not in data and b'<row r="4"' in data
    with zipfile.ZipFile(make_variant(tmp_path, "attr_order")) as zf:
        assert re.search(rb'<c [st]="[^"]*"[^>]* r="', zf.read("xl/worksheets/sheet1.xml"))


@pytest.mark.parametrize("reader", READERS)
def test_chinese_builtin_date_ids(tmp_path, reader):
    path = make_variant(tmp_path, "chinese_builtin_formats")
    with zipfile.ZipFile(path) as zf:
        styles = zf.read("xl/styles.xml")
    assert b'numFmtId="31"' in styles and b'numFmtId="32"' in styles
    with tf.open_book(path, reader=reader) as book:
        rows = dict(read_all(book))
    values = [rows[n][1] for n in range(2, 10)]
    assert all(isinstance(v, (D, DT, T)) for v in values), values


def test_inline_and_shared_string_layouts_agree(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import bench_readers
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    results = []
    for shared in (True, False):
        path = str(tmp_path / ("l_%s.xlsx" % shared))
        bench_readers.write_xlsx(path, 300, shared=shared)
        for reader in READERS:
            with tf.open_book(path, reader=reader) as book:
                results.append(read_all(book))
    assert all(r == results[0] for r in results)
    expected = list(bench_readers.ledger_rows(300))
    assert results[0][0] == (1, bench_readers.HEADER)
    for (n, got), want in zip(results[0][1:], expected):
        while want and want[-1] is None:
            want = want[:-1]
        assert got == want, n


# ---------------------------------------------------------------------------------------------
# Streaming

STREAM_CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[2])
from xlakit.tables import formats as table_formats
book = table_formats.open_book(sys.argv[1])
book.shared_strings()                  # per book, not per row: loaded before the baseline
rows = book.rows()
first = next(rows)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
count, last = 1, first[0]
for n, values in rows:
    count += 1
    last = n
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(json.dumps({"count": count, "last": last, "grown_kib": grown}))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="resource module")
def test_rows_stream_with_flat_memory_and_max_rows(tmp_path):
    import json
    import subprocess
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import bench_readers
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    path = str(tmp_path / "big.xlsx")
    bench_readers.write_xlsx(path, 200000, shared=True)
    with tf.open_book(path) as book:
        assert book.dimensions() == (200001, 10)
        assert isinstance(book.rows(), types.GeneratorType)
        first = list(book.rows(max_rows=5))
        assert [n for n, _ in first] == [1, 2, 3, 4, 5]
        assert first[1][1][:2] == [D(2023, 1, 1), "东北"]
        assert book.merges() == []
    # Peak memory while streaming 200k rows (~2M cells; kept in a list they would take
    # ~200 MB) must stay flat. Measured in a child so nothing else in this process counts.
    out = subprocess.run([sys.executable, "-c", STREAM_CHILD, path, ROOT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=300)
    assert out.returncode == 0, out.stderr.decode("utf-8", "replace")[-2000:]
    data = json.loads(out.stdout.decode().strip().splitlines()[-1])
    assert data["count"] == 200001 and data["last"] == 200001
    grown_mib = data["grown_kib"] / 1024.0 / (1024.0 if sys.platform == "darwin" else 1.0)
    assert grown_mib < 25, "memory grew by %.1f MiB while streaming" % grown_mib


def test_merges_before_rows_on_big_sheet(tmp_path):
    import openpyxl
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("数据")
    for i in range(20000):
        ws.append(["行%d" % i, i, i * 1.5])
    wb.save(str(tmp_path / "w.xlsx"))
    # add merges at the end of the sheet the way Excel stores them
    def edit(name, data):
        if name.startswith("xl/worksheets/"):
            data = data.replace(b"</sheetData>", b'</sheetData><mergeCells count="2"><mergeCell ref="A1:B2"/>'
                                b'<mergeCell ref="C19999:C20000"/></mergeCells>')
        return data
    path = str(tmp_path / "m.xlsx")
    rewrite_xlsx(str(tmp_path / "w.xlsx"), path, edit)
    for reader in READERS:
        with tf.open_book(path, reader=reader) as book:
            assert book.merges() == [(1, 1, 2, 2), (19999, 3, 20000, 3)]
            rows = read_all(book)
            assert len(rows) == 20000 and rows[-1] == (20000, ["行19999", 19999, 19999 * 1.5])
            assert book.merges() == [(1, 1, 2, 2), (19999, 3, 20000, 3)]


# ---------------------------------------------------------------------------------------------
# xls

LEDGER = [
    (1, ["2024年收支流水"]),
    (2, ["日期", "摘要", "金额", "经办时间", "已核对"]),
    (3, [D(2024, 1, 2), "期初余额", 1000, DT(2024, 1, 2, 9, 30), True]),
    (4, [D(2024, 1, 3), "采购办公用品", -235.5, DT(2024, 1, 3, 14, 0), False]),
    (5, [D(2024, 1, 4), "身份证110101199003071234报销", 88, DT(2024, 1, 4, 17, 45), True]),
    (6, ["合计", None, 852.5]),
    (7, [D(2024, 12, 31), T(8, 5), "6222020200112233445"]),
    (9, ["合并备注"]),
]


@pytest.mark.parametrize("name", ["ledger.xls", "ledger_1904.xls"])
def test_xls_values(name):
    with tf.open_book(fx(name)) as book:
        assert book.kind == "xls"
        assert book.date1904 == (name == "ledger_1904.xls")
        assert [(s.name, s.hidden) for s in book.sheets] == [("流水", False), ("隐藏", True), ("空白", False)]
        rows = read_all(book)
        assert rows == LEDGER
        assert type(rows[2][1][2]) is int
        assert sorted(book.merges()) == [(1, 1, 1, 5), (9, 1, 10, 2)]
        assert book.dimensions() == (10, 5)
        assert read_all(book, "隐藏") == [(1, ["隐藏表"])]
        assert read_all(book, "空白") == [(4, [None, None, "C4"])]
        assert list(book.rows(max_rows=2)) == LEDGER[:2]
        with pytest.raises(tf.FormatError) as exc:
            book.sheet("Sheet9")
        assert_chinese(exc, "流水")


def test_xls_from_libreoffice_matches_its_xlsx():
    with tf.open_book(fx("formulas_lo.xls")) as xls, tf.open_book(fx("formulas_lo.xlsx")) as xlsx:
        a, b = read_all(xls), read_all(xlsx)
        assert xls.merges() == xlsx.merges()
    # LibreOffice's xls export stores no cached text for string formulas (the file holds 0 in
    # column F; xlrd and calamine agree): compare everything else.
    strip = [(n, [v for i, v in enumerate(vals) if i != 5]) for n, vals in a]
    assert strip == [(n, [v for i, v in enumerate(vals) if i != 5]) for n, vals in b]


def test_xls_without_formatting_info_still_reads(tmp_path, monkeypatch):
    """Files xlrd refuses with formatting_info=True are reopened without it."""
    import xlrd
    real = xlrd.open_workbook

    def picky(path, formatting_info=False, **kw):
        if formatting_info:
            raise NotImplementedError("formatting_info=True not yet implemented")
        return real(path, formatting_info=False, **kw)
    monkeypatch.setattr(xlrd, "open_workbook", picky)
    with tf.open_book(fx("ledger.xls")) as book:
        assert not book.formatting
        assert read_all(book) == LEDGER
        assert book.merges() == []


# ---------------------------------------------------------------------------------------------
# csv / txt

CSV_ROWS = [
    (1, ["日期", "摘要", "金额", "身份证号"]),
    (2, ["2024-01-02", "工资", "8,500.00", "110101199003071234"]),
    (3, ["2024-01-03", "餐费，含\n两行说明", "-35.5"]),
    (5, ["2024-01-04", "房租", "3000", "007"]),
]


@pytest.mark.parametrize("name,encoding,delimiter", [
    ("gbk.csv", "gb18030", ","), ("utf8bom.csv", "utf-8-sig", ","), ("tabs.txt", "utf-8", "\t")])
def test_delimited_values(name, encoding, delimiter):
    with tf.open_book(fx(name)) as book:
        assert book.kind == "csv"
        assert (book.encoding, book.delimiter) == (encoding, delimiter)
        assert [s.name for s in book.sheets] == ["Sheet1"]
        assert book.sheet().name == "Sheet1"
        assert book.sheet("任何名字").name == "Sheet1"           # csv has one sheet; names are ignored
        assert read_all(book, "任何名字") == CSV_ROWS
        rows = read_all(book)
        assert rows == CSV_ROWS
        assert all(isinstance(v, str) for _n, vals in rows for v in vals if v is not None)
        assert book.merges() == [] and book.warnings == []
        assert list(book.rows(max_rows=2)) == CSV_ROWS[:2]


def test_other_delimited_files():
    with tf.open_book(fx("semicolon.csv")) as book:
        assert book.delimiter == ";"
        assert read_all(book) == [(1, ["名称", "数量", "单价"]), (2, ["苹果", "3", "1,5"]), (3, ["梨", "2", "2,25"])]
    with tf.open_book(fx("pipe.txt")) as book:
        assert (book.encoding, book.delimiter) == ("gb18030", "|")
        assert read_all(book)[1] == (2, ["000123", "张三", "12.50"])
    with tf.open_book(fx("utf16.txt")) as book:
        assert (book.encoding, book.delimiter) == ("utf-16", "\t")
        assert read_all(book) == [(1, ["姓名", "部门", "工号"]), (2, ["王五", "财务", "00086"])]
    with tf.open_book(fx("excel_text_trick.csv")) as book:
        assert read_all(book) == [(1, ["银行流水导出"]), (2, ["账号", "户名", "金额"]),
                                  (3, ["6222020200112233445", "张三", "100"])]


def test_text_with_a_few_bad_bytes_is_still_text(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(("a,b\n" + "中,文\n" * 100).encode("utf-8") + b"\xff,x\n")
    assert tf.sniff(str(path)) == "csv"
    with tf.open_book(str(path)) as book:
        rows = read_all(book)
        assert book.encoding == "utf-8"
        assert len(rows) == 102 and rows[1] == (2, ["中", "文"])
        assert book.warnings


def test_detect_encoding():
    de = delimited.detect_encoding
    assert de("日期".encode("utf-8-sig")) == "utf-8-sig"
    assert de("日期".encode("utf-16")) == "utf-16"
    assert de("日期,金额\n".encode("utf-16-le")) == "utf-16-le"
    assert de("日期,金额\n".encode("utf-16-be")) == "utf-16-be"
    assert de("日期,金额".encode("utf-8")) == "utf-8"
    assert de(b"a,b,c") == "utf-8"
    assert de("日期,金额".encode("gbk")) == "gb18030"
    # a UTF-8 sample cut in the middle of a character is still UTF-8
    assert de("金额金额".encode("utf-8")[:-1]) == "utf-8"


def test_sniff_delimiter():
    sd = delimited.sniff_delimiter
    assert sd("a,b,c\n1,2,3\n") == ","
    assert sd("a\tb\tc\n1\t2,5\t3\n") == "\t"
    assert sd("a;b;c\n1;2,5;3\n4;5;6\n") == ";"
    assert sd("a|b\n1|2\n") == "|"
    assert sd("单列\n一\n二\n") == ","
    assert sd('标题行\n"a,1";b;c\nx;y;z\n') == ";"
    assert sd("") == ","


def test_csv_later_bad_bytes_warn(tmp_path):
    path = tmp_path / "mixed.csv"
    # bad bytes past the part the encoding is guessed from
    path.write_bytes(("a,b\n" + "中,文\n" * 600000).encode("utf-8") + b"\xff\xfe,x\n")
    with tf.open_book(str(path)) as book:
        rows = read_all(book)
        assert book.encoding == "utf-8"
        assert rows[-1][1][0].startswith("\ufffd")
        assert book.warnings and "UTF-8" in book.warnings[0]


def test_csv_long_field_and_quotes(tmp_path):
    path = tmp_path / "long.csv"
    big = "长" * 200000
    path.write_text('备注,编号\n"%s",="00123"\n"含""引号""",x\n' % big, encoding="utf-8")
    with tf.open_book(str(path)) as book:
        rows = read_all(book)
    assert rows[1] == (2, [big, "00123"])
    assert rows[2] == (3, ['含"引号"', "x"])


# ---------------------------------------------------------------------------------------------
# html

def test_fake_html_xls():
    with tf.open_book(fx("fake_html.xls")) as book:
        assert book.kind == "html"
        assert book.encoding == "gb18030"
        assert [s.name for s in book.sheets] == ["Table1", "Table2"]
        assert read_all(book) == [
            (1, ["某银行 账户交易明细"]),
            (2, ["交易日期", "金额", None, "摘要"]),
            (3, [None, "收入", "支出"]),
            (4, ["2024-01-02", "1,200.00", None, "工资 入账"]),
            (5, ["2024-01-03", None, "35.50", "午餐\n同事AA"]),
            (6, ["2024-01-05", None, "(100.00)", "身份证 110101199003071234"]),
            (7, ["合计", "1,200.00", "135.50"]),
        ]
        assert book.merges() == [(1, 1, 1, 4), (2, 1, 3, 1), (2, 2, 2, 3), (2, 4, 3, 4)]
        assert book.dimensions() == (7, 4)
        assert read_all(book, "Table2") == [(1, ["第二个表", "X"])]
        assert list(book.rows(max_rows=1)) == [(1, ["某银行 账户交易明细"])]


def test_libreoffice_html_export():
    with tf.open_book(fx("lo_html.xls")) as book:
        rows = dict(read_all(book))
        assert rows[3] == ["2024-01-05", "苹果", "10", "3.5", "35", "苹果-10箱"]
        assert rows[6] == ["合计", None, "21", None, "72.7"]
        assert (1, 1, 1, 6) in book.merges()


def test_html_encoding_sources(tmp_path):
    table = "<table><tr><td>中文</td></tr></table>"
    cases = {
        "meta.xls": ('<html><head><meta charset="gbk"></head><body>%s</body></html>' % table).encode("gbk"),
        "bom.xls": ("\ufeff<html>%s</html>" % table).encode("utf-8"),
        "plain.xls": ("<html>%s</html>" % table).encode("utf-8"),
        "nometa_gbk.xls": ("<html>%s</html>" % table).encode("gbk"),
        "utf16.xls": ("<html>%s</html>" % table).encode("utf-16"),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert tf.sniff(str(path)) == "html", name
        with tf.open_book(str(path)) as book:
            assert read_all(book) == [(1, ["中文"])], name


def test_html_rowspan_colspan_grid(tmp_path):
    path = tmp_path / "grid.html"
    path.write_text("<table><tr><td rowspan=3>A</td><td>B</td><td rowspan=2 colspan=2>C</td></tr>"
                    "<tr><td>D</td></tr><tr><td>E</td><td>F</td><td>G</td></tr><tr><td>H<td>I</tr></table>",
                    encoding="utf-8")
    with tf.open_book(str(path)) as book:
        assert read_all(book) == [(1, ["A", "B", "C"]), (2, [None, "D"]), (3, [None, "E", "F", "G"]),
                                  (4, ["H", "I"])]
        assert book.merges() == [(1, 1, 3, 1), (1, 3, 2, 4)]


# ---------------------------------------------------------------------------------------------
# value rules

def test_classify_format():
    cases = {
        "yyyy-mm-dd": DATE, "m/d/yy": DATE, 'yyyy"年"m"月"d"日"': DATE, "[$-F800]dddd, mmmm dd, yyyy": DATE,
        "mmm-yy": DATE, 'm"月"': DATE, "ge.m.d": DATE, "[DBNum1][$-804]yyyy\"年\"m\"月\"": DATE,
        "yyyy-mm-dd hh:mm:ss": DATETIME, "m/d/yy h:mm": DATETIME, "yyyy/m/d h:mm AM/PM": DATETIME,
        "hh:mm": TIME, "h:mm:ss AM/PM": TIME, "mm:ss": TIME, 'h"时"mm"分"': TIME, "[$-F400]h:mm:ss AM/PM": TIME,
        "[h]:mm:ss": ELAPSED, "[mm]:ss": ELAPSED + ":mm:ss", "[s]": ELAPSED + ":s",
        "[$-804]General": None, "[DBNum1][$-804]General": None, "[Red]General": None, "[BLUE]GENERAL": None,
        "[$-1010409]General": None,
        "General": None, "0.00": None, "#,##0.00_);[Red](#,##0.00)": None, "0.00E+00": None, "@": None,
        '#,##0"元"': None, '"days "0': None, "[Red]0": None, '0.0"d"': None, "": None, "yyyy-mm-dd;@": DATE,
        "\\d\\a\\y 0": None,
    }
    for code, kind in cases.items():
        assert classify_format(code) == kind, code


def test_serial_to_value():
    assert serial_to_value(45366, DATE) == D(2024, 3, 15)
    assert serial_to_value(45366.5, DATE) == DT(2024, 3, 15, 12, 0)
    assert serial_to_value(45366, DATETIME) == DT(2024, 3, 15)
    assert serial_to_value(0.6041666666666666, TIME) == T(14, 30)
    assert serial_to_value(45366.25, TIME) == DT(2024, 3, 15, 6, 0)
    assert serial_to_value(1.5, ELAPSED) == 1.5 and display(serial_to_value(1.5, ELAPSED)) == "36:00:00"
    assert display(serial_to_value(0.5, ELAPSED)) == "12:00:00"
    # Excel's 1900 leap-year bug
    assert serial_to_value(1, DATE) == D(1900, 1, 1)
    assert serial_to_value(59, DATE) == D(1900, 2, 28)
    assert serial_to_value(61, DATE) == D(1900, 3, 1)
    # 1904 system
    assert serial_to_value(0, DATE, date1904=True) == D(1904, 1, 1)
    assert serial_to_value(43904, DATE, date1904=True) == D(2024, 3, 15)
    # out of range stays a number
    assert serial_to_value(-5, DATE) == -5
    assert serial_to_value(3e6, DATE) == 3e6
    assert serial_to_value(7, None) == 7
    # a fraction of day 0 is a time of day whatever the format (issue 27: not 1899-12-31 16:00);
    # day 0 itself with a date format stays Excel's 1900-01-00, and in 1904 day 0 is a real date
    assert serial_to_value(0.6666666666666666, DATETIME) == T(16, 0)
    assert serial_to_value(0.25, DATE) == T(6, 0)
    assert serial_to_value(0, DATE) == D(1899, 12, 31)
    assert serial_to_value(0.5, DATETIME, date1904=True) == DT(1904, 1, 1, 12, 0)


def test_integral_float_rule(tmp_path):
    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append([3.0, 2.0 ** 53, 2.0 ** 53 - 1, -7.0, 1e-3, 12345678901234567, 1.5e300])
    path = str(tmp_path / "n.xlsx")
    wb.save(path)
    for reader in READERS:
        with tf.open_book(path, reader=reader) as book:
            (_, values), = read_all(book)
            # openpyxl wrote the 17-digit integer as 1.234567890123457e+16: a float in the file
            assert values == [3, 2 ** 53, 2 ** 53 - 1, -7, 1e-3, 1.234567890123457e16, 1.5e300]
            assert [type(v) for v in values] == [int, int, int, int, float, float, float]
    # digits without '.', 'e' or 'E' are an int directly, however long
    target = str(tmp_path / "m.xlsx")
    rewrite_xlsx(path, target, lambda name, data: re.sub(rb"<v>1\.234567890123457e\+16</v>",
                                                          b"<v>123456789012345678</v>", data))
    for reader in READERS:
        with tf.open_book(target, reader=reader) as book:
            assert read_all(book)[0][1][5] == 123456789012345678


# ---------------------------------------------------------------------------------------------
# Valid XML that is not written the way Excel writes it: both reader paths read it right

import xlsx_variants  # noqa: E402


@pytest.mark.parametrize("reader", ["fast", "openpyxl"])
@pytest.mark.parametrize("variant", sorted(xlsx_variants.VARIANTS))
def test_xlsx_xml_variants_on_both_paths(tmp_path, variant, reader):
    sheet_xml, sst_xml = xlsx_variants.VARIANTS[variant]
    path = xlsx_variants.make(tmp_path / ("%s.xlsx" % variant), sheet_xml, sst_xml)
    with tf.open_book(path, reader=reader) as book:
        assert read_all(book) == xlsx_variants.EXPECTED
        if reader == "fast" and variant not in ("plain", "row_element_per_cell", "single_quotes") \
                and "shared_strings" not in variant:
            # the text slicer must not have guessed: it handed the sheet to openpyxl
            assert book.fallback_reason, variant
        if variant in ("plain", "single_quotes"):
            # single-quoted attributes (SheetJS's stream writer) are rewritten to double quotes and
            # read on the fast path: openpyxl failed on such a file's styles (issue 35 corpus run)
            assert book.fallback_reason is None


def test_xlsx_variant_totals_through_table_io(tmp_path):
    """The bug as a user met it: a shared-string index read as a number put the header into a sum."""
    import table_io as tio
    sheet_xml, sst_xml = xlsx_variants.VARIANTS["single_quotes"]
    path = xlsx_variants.make(tmp_path / "q.xlsx", sheet_xml, sst_xml)
    with tio.open_table(path) as table:
        assert table.names == ["类别", "金额"]
        skip = tio.SkipLog()
        metric = tio.make_metric("sum", skip)
        for rownum, values in table.data_rows():
            metric.add(values[1], rownum)
        assert metric.result() == 19.5 and skip.count == 0


def test_xlsx_merges_with_single_quotes_and_comments(tmp_path):
    rows = xlsx_variants.PLAIN_ROWS
    sheet_xml = xlsx_variants.sheet(rows).replace(
        "</sheetData>", "</sheetData><!-- <mergeCells><mergeCell ref=\"A1:B1\"/></mergeCells> -->"
                        "<mergeCells count='1'><mergeCell ref='A2:A3'/></mergeCells>")
    path = xlsx_variants.make(tmp_path / "m.xlsx", sheet_xml, xlsx_variants.SST)
    for reader in ("fast", "openpyxl"):
        with tf.open_book(path, reader=reader) as book:
            assert book.merges() == [(2, 1, 3, 1)]
            read_all(book)
            assert book.merges() == [(2, 1, 3, 1)]


def test_zip_bomb_refused_before_inflating(tmp_path):
    from xlakit import opc
    path = tmp_path / "bomb.xlsx"
    sheet_xml, sst_xml = xlsx_variants.VARIANTS["plain"]
    xlsx_variants.make(path, sheet_xml, sst_xml)
    with zipfile.ZipFile(str(path), "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/media/padding.bin", b"\0" * (opc.RATIO_FROM + (1 << 20)))
    with pytest.raises(tf.FormatError) as exc:
        tf.open_book(str(path))
    assert_chinese(exc, "压缩比")


def test_opc_helpers_round_trip():
    from xlakit import opc
    rels = opc.relationships([("rId1", opc.NS_OFFICE_RELS + "/worksheet", "worksheets/sheet1.xml"),
                              ("rId2", opc.NS_OFFICE_RELS + "/image", "../media/a&b.png"),
                              ("rId3", opc.NS_OFFICE_RELS + "/hyperlink", "https://example.com/?a=1&b=2", "External")])
    parsed = opc.parse_rels(rels.encode("utf-8"), "xl/workbook.xml")
    assert parsed == {"rId1": ("worksheet", "xl/worksheets/sheet1.xml"), "rId2": ("image", "media/a&b.png")}
    assert opc.rels_part("xl/workbook.xml") == "xl/_rels/workbook.xml.rels"
    assert opc.rels_part("") == "_rels/.rels"
    assert opc.resolve("xl/worksheets/sheet1.xml", "/xl/media/x.png") == "xl/media/x.png"
    types = opc.content_types({"xl/workbook.xml": "a+xml"})
    assert '<Override PartName="/xl/workbook.xml" ContentType="a+xml"/>' in types
    assert opc.xml_attr('a"<&\n') == "a&quot;&lt;&amp;&#10;"
    assert opc.clean_xml_text("a\x00b\x1fc\ud800d") == "abcd"


def test_empty_inline_strings_stay_on_the_fast_path(tmp_path):
    """Issue 35: an export writing every blank cell as <is><t></t></is> (or <t/>) dropped the
    whole sheet to openpyxl (3.0 s instead of 0.3 s for 50k rows). They are empty cells, read on
    the fast path, with the same rows openpyxl gives."""
    import zipfile
    rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>名称</t></is></c><c r="B1" t="inlineStr"><is><t>金额</t></is></c>'
            '<c r="C1" t="inlineStr"><is><t>备注</t></is></c></row>']
    for i in range(2, 3002):
        blank = "<is><t></t></is>" if i % 2 else "<is><t/></is>"
        rows.append('<row r="%d"><c r="A%d" t="inlineStr"><is><t>项%d</t></is></c><c r="B%d"><v>%d.5</v></c>'
                    '<c r="C%d" t="inlineStr">%s</c></row>' % (i, i, i, i, i, i, blank))
    rows.append('<row r="3002"><c r="A3002" t="inlineStr"><is><t></t></is></c><c r="B3002" t="inlineStr">'
                '<is><t>尾</t></is></c></row>')
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rels = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"'
    path = str(tmp_path / "export.xlsx")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                   '<Override PartName="/xl/worksheets/sheet1.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>')
        z.writestr("_rels/.rels", '<Relationships %s><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
                   'officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>' % rels)
        z.writestr("xl/workbook.xml", '<workbook %s xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
                   'relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>' % ns)
        z.writestr("xl/_rels/workbook.xml.rels", '<Relationships %s><Relationship Id="rId1" Type="http://schemas.'
                   'openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
                   '</Relationships>' % rels)
        z.writestr("xl/worksheets/sheet1.xml", '<worksheet %s><sheetData>%s</sheetData></worksheet>' % (ns, "".join(rows)))
    out = []
    for reader in ("fast", "openpyxl"):
        with tf.open_book(path, reader=reader) as book:
            out.append(list(book.rows()))
            if reader == "fast":
                assert book.fallback_reason is None, book.fallback_reason
    assert out[0] == out[1]
    assert out[0][1] == (2, ["项2", 2.5]) and out[0][-1] == (3002, [None, "尾"])


def test_stream_written_empty_cells_and_date_cells(tmp_path):
    """Issue 35: a stream-written xlsx writes empty cells open-and-closed (<c ...></c>,
    <c ...><v></v></c>), date cells among them (t="d"). The fast reader took them for an end tag
    written another way and fell back to openpyxl, which failed on the empty date cell ("0 is out
    of range" on our Chinese error). They are empty cells, read on the fast path."""
    import zipfile
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rels = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"'
    styles = ('<styleSheet %s><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>'
              '<fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders>'
              '<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0"/>'
              '<xf numFmtId="164" applyNumberFormat="1"/></cellXfs></styleSheet>' % ns)
    sheet = ('<row r="1"><c r="A1" t="inlineStr"><is><t>日期</t></is></c><c r="B1" t="inlineStr"><is><t>金额</t></is></c>'
             '</row><row r="2"><c r="A2" t="d" s="1"><v>2024-01-05T00:00:00</v></c><c r="B2"><v>10</v></c></row>'
             '<row r="3"><c r="A3" t="d" s="1"></c><c r="B3"><v>20</v></c></row>'
             '<row r="4"><c r="A4" s="1"><v></v></c><c r="B4"><v>30</v></c></row>')
    path = str(tmp_path / "stream.xlsx")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                   '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
                   'officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType='
                   '"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>')
        z.writestr("_rels/.rels", '<Relationships %s><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
                   'officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>' % rels)
        z.writestr("xl/workbook.xml", '<workbook %s xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
                   'relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>' % ns)
        z.writestr("xl/_rels/workbook.xml.rels", '<Relationships %s><Relationship Id="rId1" Type="http://schemas.'
                   'openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
                   '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                   'styles" Target="styles.xml"/></Relationships>' % rels)
        z.writestr("xl/styles.xml", styles)
        z.writestr("xl/worksheets/sheet1.xml", '<worksheet %s><sheetData>%s</sheetData></worksheet>' % (ns, sheet))
    with tf.open_book(path) as book:
        rows = list(book.rows())
        assert book.fallback_reason is None, book.fallback_reason
    assert rows == [(1, ["日期", "金额"]), (2, [datetime.datetime(2024, 1, 5), 10]), (3, [None, 20]), (4, [None, 30])]
