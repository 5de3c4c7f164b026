"""The readers for the exports that are not what their name says: SpreadsheetML 2003 ("xls" from
banks and ERPs), OpenDocument .ods/.fods (LibreOffice/WPS) and WPS .et (BIFF in OLE).

Fixtures (tests/fixtures/new_formats/, see make_new_formats.py there): lo_ledger.ods/.fods saved
by LibreOffice from an openpyxl workbook, wps_ledger.et from xlwt with the WPS stream marker,
bank_export_gbk.xls hand-written SpreadsheetML in GBK. Expected values come from the maker's
data or are written out here, never from the reader. The 1,000-row messy ledger of part 1 is
also written as SpreadsheetML here and converted to .ods by LibreOffice when it is installed,
and every table tool must give the same answers on it as on the xlsx. Crafted files cover the
limits: repeat bombs, a zip bomb, encryption, DTDs, damaged XML, odd encodings.
"""
import datetime
import os
import shutil
import subprocess
import sys
import zipfile
from decimal import Decimal

import pytest

from conftest import ROOT, ok, fail
import tio_data

sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "new_formats"))
import make_new_formats as maker  # noqa: E402

from xlakit.tables import formats as tf  # noqa: E402
from xlakit.tables.formats import ods as ods_mod, ods_cells  # noqa: E402

HERE = os.path.join(ROOT, "tests", "fixtures", "new_formats")
CORPUS = "/tmp/corpus/calamine"


def fx(name):
    return os.path.join(HERE, name)


def read(path, sheet=None, **options):
    with tf.open_book(path, **options) as book:
        return list(book.rows(sheet)), book.merges(sheet), book


def both_ods_readers(path):
    """Rows, merges and warnings of every sheet through the text parser and the tree parser:
    they must agree, and the text parser must not have fallen back."""
    out = []
    for reader in ("fast", "tree"):
        with tf.open_book(path, reader=reader) as book:
            assert book.reader == reader
            out.append(([(s.name, list(book.rows(s.name)), book.merges(s.name), book.dimensions(s.name))
                         for s in book.sheets], book.warnings))
            if reader == "fast":
                assert book.fallback_reason is None, book.fallback_reason
    assert out[0] == out[1]
    return out[0]


def chinese(text):
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# =============================================================================================
# SpreadsheetML 2003

BANK_ROWS = [
    (1, ["中国某某银行 账户交易明细"]),
    (2, ["账号：", "6222020200112233445"]),
    (4, ["交易日期", "交易时间", "摘要", "收入金额", "支出金额", "余额"]),
    (5, [datetime.date(2024, 1, 5), datetime.time(9, 30, 15), "工资&奖金", 12345.67, None, 12345.67]),
    # the cell after 交易时间 has no ss:Index and C5's MergeDown still covers C6: it goes to D6
    (6, [datetime.datetime(2024, 1, 6, 14, 5), datetime.time(14, 5), None, 0, 200.5, 12145.17]),
    # serial 45300 with a "Short Date" style is 2024-01-09; "00123" stays text; rich text flattened
    (7, [datetime.date(2024, 1, 9), "00123", "转账支出", True, -1500, "#DIV/0!"]),
    (9, ["合计", None, None, 12345.67]),
]


def test_spreadsheetml_bank_export_in_gbk():
    path = fx("bank_export_gbk.xls")
    assert open(path, "rb").read(40).startswith(b'<?xml version="1.0" encoding="GBK"?>')
    assert tf.sniff(path) == "spreadsheetml"
    with tf.open_book(path) as book:
        assert book.kind == "spreadsheetml" and book.encoding == "gb18030" and book.warnings == []
        assert [(s.name, s.hidden) for s in book.sheets] == [("交易明细", False), ("账户信息", False), ("隐藏参数", True)]
        assert book.sheet().name == "交易明细"
        assert list(book.rows()) == [(n, v) for n, v in BANK_ROWS]
        assert book.merges() == [(1, 1, 1, 6), (5, 3, 6, 3), (9, 1, 9, 3)]
        assert book.dimensions() == (9, 6)
        assert list(book.rows("账户信息")) == [(1, ["户名", "张三"]), (2, ["开户日期", datetime.date(2019, 3, 8)])]
        assert list(book.rows("隐藏参数")) == [(1, ["内部"])]
        assert list(book.rows(max_rows=2)) == [(n, v) for n, v in BANK_ROWS[:2]]


WB_OPEN = ('<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
           'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">')


def xml_book(body, head='<?xml version="1.0"?>\n', root=WB_OPEN):
    return head + root + body + "</Workbook>"


def one_sheet(rows_xml, name="S", styles=""):
    return xml_book(styles + '<Worksheet ss:Name="%s"><Table>%s</Table></Worksheet>' % (name, rows_xml))


def test_spreadsheetml_variants_generators_write(tmp_path):
    # 1. the ss: prefix used without being declared (seen in hand-rolled exports), UTF-8, no BOM
    p = tmp_path / "undeclared.xls"
    p.write_text('<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n'
                 '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet ss:Name="S">'
                 '<Table><Row><Cell><Data ss:Type="String">a</Data></Cell></Row></Table></Worksheet></Workbook>',
                 encoding="utf-8")
    rows, _m, book = read(str(p))
    assert rows == [(1, ["a"])] and book.sheets[0].name == "S"

    # 2. declared UTF-8, written in GBK (a common export bug): read as GBK with a warning
    p = tmp_path / "lying.xls"
    p.write_bytes(one_sheet('<Row><Cell><Data ss:Type="String">收款人张三</Data></Cell></Row>')
                  .replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-8"?>').encode("gbk"))
    rows, _m, book = read(str(p))
    assert rows == [(1, ["收款人张三"])]
    assert any("编码" in w and "gb18030" in w for w in book.warnings)

    # 3. UTF-16 with a BOM (Excel's "XML 电子表格 2003" from some tools), prefixed elements
    p = tmp_path / "utf16.xml"
    p.write_bytes(("\ufeff" + '<?xml version="1.0" encoding="UTF-16"?>'
                   '<ss:Workbook xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet"><ss:Worksheet ss:Name="表一">'
                   '<ss:Table><ss:Row><ss:Cell><ss:Data ss:Type="Number">12</ss:Data></ss:Cell>'
                   '<ss:Cell><ss:Data ss:Type="String">十二</ss:Data></ss:Cell></ss:Row></ss:Table></ss:Worksheet>'
                   '</ss:Workbook>').encode("utf-16-le"))
    assert tf.sniff(str(p)) == "spreadsheetml"
    rows, _m, book = read(str(p))
    assert rows == [(1, [12, "十二"])] and book.sheets[0].name == "表一"

    # 4. ss:Index gaps on rows and cells, HTML entities, Boolean 0, empty Data, duplicate sheet names
    body = ('<Row ss:Index="3"><Cell ss:Index="4"><Data ss:Type="String">a&nbsp;b</Data></Cell>'
            '<Cell><Data ss:Type="Boolean">0</Data></Cell><Cell><Data ss:Type="String"></Data></Cell>'
            '<Cell><Data ss:Type="Number">1.25</Data></Cell></Row>'
            '<Row><Cell ss:MergeAcross="1" ss:MergeDown="2"><Data ss:Type="String">块</Data></Cell>'
            '<Cell><Data ss:Type="Number">7</Data></Cell></Row>'
            '<Row><Cell><Data ss:Type="Number">8</Data></Cell></Row>'
            '<Row ss:Index="7"><Cell><Data ss:Type="Number">9</Data></Cell></Row>')
    p = tmp_path / "gaps.xls"
    p.write_text(xml_book('<Worksheet ss:Name="S"><Table>%s</Table></Worksheet><Worksheet ss:Name="S">'
                          '<Table/></Worksheet>' % body), encoding="utf-8")
    rows, merges, book = read(str(p))
    assert rows == [(3, [None, None, None, "a\xa0b", False, None, 1.25]),
                    (4, ["块", None, 7]),
                    (5, [None, None, 8]),        # A5:B5 are covered by the block from row 4
                    (7, [9])]
    assert merges == [(4, 1, 6, 2)]
    assert [s.name for s in book.sheets] == ["S", "S (2)"]

    # 5. dates: DateTime with a time-only style, a datetime style, midnight without style; a
    #    Number with a Chinese date format; a Number with a plain money format stays a number
    styles = ('<Styles><Style ss:ID="t"><NumberFormat ss:Format="Long Time"/></Style>'
              '<Style ss:ID="dt"><NumberFormat ss:Format="General Date"/></Style>'
              '<Style ss:ID="cn"><NumberFormat ss:Format="yyyy&quot;年&quot;m&quot;月&quot;d&quot;日&quot;"/></Style>'
              '<Style ss:ID="child" ss:Parent="cn"/>'
              '<Style ss:ID="m"><NumberFormat ss:Format="#,##0.00_ ;[Red]\\-#,##0.00\\ "/></Style></Styles>')
    body = ('<Row><Cell ss:StyleID="t"><Data ss:Type="DateTime">1899-12-31T23:59:59.000</Data></Cell>'
            '<Cell ss:StyleID="dt"><Data ss:Type="DateTime">2024-02-29T00:00:00.000</Data></Cell>'
            '<Cell><Data ss:Type="DateTime">2024-03-01T00:00:00.000</Data></Cell>'
            '<Cell ss:StyleID="child"><Data ss:Type="Number">45383</Data></Cell>'
            '<Cell ss:StyleID="m"><Data ss:Type="Number">45383</Data></Cell></Row>')
    p = tmp_path / "dates.xls"
    p.write_text(one_sheet(body, styles=styles), encoding="utf-8")
    rows, _m, _b = read(str(p))
    assert rows == [(1, [datetime.time(23, 59, 59), datetime.datetime(2024, 2, 29), datetime.date(2024, 3, 1),
                         datetime.date(2024, 4, 1), 45383])]


def test_spreadsheetml_as_web_pages_export_it(tmp_path):
    """The shape of the widely copied browser "tables to Excel" template: one line, named
    Currency / Medium Date styles, cell data taken from the page's HTML (so <br> and &nbsp;
    appear), Number cells that are empty or hold display text."""
    cells = ('<Cell><Data ss:Type="String">第一行<br>第二行</Data></Cell>'
             '<Cell ss:StyleID="Currency"><Data ss:Type="Number">1234.5</Data></Cell>'
             '<Cell ss:StyleID="Date"><Data ss:Type="DateTime">2024-06-30</Data></Cell>'
             '<Cell><Data ss:Type="Number"></Data></Cell>'
             '<Cell><Data ss:Type="Number">1,234.00</Data></Cell>'
             '<Cell><Data ss:Type="String">A&nbsp;&amp;&nbsp;B</Data></Cell>')
    text = ('<?xml version="1.0"?><?mso-application progid="Excel.Sheet"?>' + WB_OPEN +
            '<DocumentProperties xmlns="urn:schemas-microsoft-com:office:office"><Author>x</Author></DocumentProperties>'
            '<Styles><Style ss:ID="Currency"><NumberFormat ss:Format="Currency"></NumberFormat></Style>'
            '<Style ss:ID="Date"><NumberFormat ss:Format="Medium Date"></NumberFormat></Style></Styles>'
            '<Worksheet ss:Name="Sheet0"><Table><Row>%s</Row></Table></Worksheet></Workbook>' % cells)
    p = tmp_path / "web.xls"
    p.write_text(text, encoding="utf-8")
    rows, _m, _b = read(str(p))
    assert rows == [(1, ["第一行\n第二行", 1234.5, datetime.date(2024, 6, 30), None, "1,234.00", "A\xa0&\xa0B"])]


def test_spreadsheetml_refusals_are_chinese(tmp_path):
    p = tmp_path / "dtd.xls"
    p.write_text('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaa">]>' + WB_OPEN +
                 '<Worksheet ss:Name="S"><Table><Row><Cell><Data ss:Type="String">&a;</Data></Cell></Row>'
                 '</Table></Worksheet></Workbook>', encoding="utf-8")
    with pytest.raises(tf.FormatError) as exc:
        read(str(p))
    assert "DTD" in str(exc.value) and chinese(str(exc.value))

    full = one_sheet("".join('<Row><Cell><Data ss:Type="Number">%d</Data></Cell></Row>' % i for i in range(50)))
    p = tmp_path / "cut.xls"
    p.write_text(full[:len(full) // 2], encoding="utf-8")            # a download cut in half
    with pytest.raises(tf.FormatError) as exc:
        read(str(p))
    assert "不完整" in str(exc.value) and "SpreadsheetML" in str(exc.value)

    p = tmp_path / "nosheet.xls"
    p.write_text(xml_book("<Styles/>"), encoding="utf-8")
    with pytest.raises(tf.FormatError) as exc:
        read(str(p))
    assert "没有工作表" in str(exc.value)

    # an Excel "web page" names the excel namespace and has a <table>: still the HTML reader
    p = tmp_path / "page.xls"
    p.write_text('<html xmlns:x="urn:schemas-microsoft-com:office:excel"><body><table><tr><td>甲</td></tr>'
                 '</table></body></html>', encoding="utf-8")
    assert tf.sniff(str(p)) == "html"


# =============================================================================================
# OpenDocument

def expected_ledger():
    rows = []
    for r, line in enumerate(maker.LEDGER_ROWS, start=1):
        if line:
            rows.append((r, list(line)))
    return rows


@pytest.mark.parametrize("name,kind", [("lo_ledger.ods", "ods"), ("lo_ledger.fods", "fods")])
def test_ods_saved_by_libreoffice(name, kind):
    path = fx(name)
    assert tf.sniff(path) == kind
    both_ods_readers(path)
    rows, merges, book = read(path)
    assert book.kind == kind
    assert [(s.name, s.hidden) for s in book.sheets] == [("台账", False), ("参数", True)]
    assert rows == expected_ledger()                   # blank rows 6-7 skipped, no trailing rows
    assert merges == maker.LEDGER_MERGES
    assert isinstance(rows[2][1][3], float) and rows[2][1][4] == 0.25           # currency, percentage
    assert rows[2][1][2] == "6222020200112233445"                                # long digits stay text
    with tf.open_book(path) as book:
        assert book.dimensions() == (8, 6)             # the styled empty rows 20-39 are not data
        assert list(book.rows("参数")) == [(1, maker.HIDDEN_ROWS[0])]
    with zipfile.ZipFile(fx("lo_ledger.ods")) as zf:      # the fixture really has both value types
        content = zf.read("content.xml")
    assert b'office:value-type="currency"' in content and b'office:value-type="percentage"' in content
    assert b'number-rows-repeated="1048' in content      # LibreOffice's trailing repeat


NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"')
MIME = "application/vnd.oasis.opendocument.spreadsheet"


def make_ods(path, tables, styles="", manifest=None, extra=None):
    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content %s office:version="1.2">'
               '<office:automatic-styles>%s</office:automatic-styles><office:body><office:spreadsheet>%s'
               '</office:spreadsheet></office:body></office:document-content>' % (NS, styles, tables))
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), MIME)
        zf.writestr("content.xml", content)
        zf.writestr("META-INF/manifest.xml", manifest or (
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
            '<manifest:file-entry manifest:full-path="/" manifest:media-type="%s"/></manifest:manifest>' % MIME))
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return str(path)


def cell(value=None, vt="string", rep=None, span=None, attrs=""):
    a = attrs
    if rep:
        a += ' table:number-columns-repeated="%d"' % rep
    if span:
        a += ' table:number-rows-spanned="%d" table:number-columns-spanned="%d"' % span
    if value is None:
        return "<table:table-cell%s/>" % a
    if vt == "string":
        return '<table:table-cell office:value-type="string"%s><text:p>%s</text:p></table:table-cell>' % (a, value)
    return '<table:table-cell office:value-type="%s" %s%s><text:p>x</text:p></table:table-cell>' % (vt, value, a)


def row(cells, rep=None):
    a = ' table:number-rows-repeated="%d"' % rep if rep else ""
    return "<table:table-row%s>%s</table:table-row>" % (a, "".join(cells))


def table(name, rows, style=""):
    s = ' table:style-name="%s"' % style if style else ""
    return '<table:table table:name="%s"%s>%s</table:table>' % (name, s, "".join(rows))


def test_ods_values_repeats_and_merges(tmp_path):
    rows = [
        row([cell("标题", span=(1, 3)), '<table:covered-table-cell table:number-columns-repeated="2"/>',
             cell(rep=16380)]),
        row([cell('office:value="5"', "float", rep=3), cell('office:value="0.155"', "percentage"),
             cell('office:value="-12.5" office:currency="CNY"', "currency")]),
        row([cell(rep=1024)], rep=3),                                               # empty: just moves on
        row([cell('office:date-value="2024-09-01"', "date"),
             cell('office:date-value="2024-09-01T08:15:30.5"', "date"),
             cell('office:time-value="PT10H30M00S"', "time"),
             cell('office:time-value="PT36H00M00S"', "time"),
             cell('office:boolean-value="true"', "boolean")]),
        row([cell("重复行"), cell('office:value="1"', "float")], rep=3),            # repeated with content
        row(['<table:table-cell office:value-type="string"><text:p>a<text:s text:c="3"/>b<text:tab/>c</text:p>'
             '<text:p><text:span>第二</text:span>段<text:line-break/>末</text:p>'
             '<office:annotation><text:p>批注不是值</text:p></office:annotation></table:table-cell>',
             '<table:table-cell office:value-type="string" office:string-value="属性里的文字"/>',
             cell("纵向", span=(2, 1))]),
        row([cell(rep=2), '<table:covered-table-cell/>', cell("后面")]),
        row([cell(rep=1024)], rep=1048560),                                         # LibreOffice's tail
    ]
    hidden = ('<style:style style:name="ta2" style:family="table">'
              '<style:table-properties table:display="false"/></style:style>')
    path = make_ods(tmp_path / "v.ods", table("数据", rows) + table("藏", [row([cell("x")])], "ta2"),
                    styles=hidden)
    both_ods_readers(path)
    got, merges, book = read(path)
    assert [(s.name, s.hidden) for s in book.sheets] == [("数据", False), ("藏", True)]
    assert got == [
        (1, ["标题"]),
        (2, [5, 5, 5, 0.155, -12.5]),
        (6, [datetime.date(2024, 9, 1), datetime.datetime(2024, 9, 1, 8, 15, 30, 500000),
             datetime.time(10, 30), 1.5, True]),
        (7, ["重复行", 1]), (8, ["重复行", 1]), (9, ["重复行", 1]),
        (10, ["a   b\tc\n第二段\n末", "属性里的文字", "纵向"]),
        (11, [None, None, None, "后面"]),
    ]
    assert merges == [(1, 1, 1, 3), (10, 3, 11, 3)]
    with tf.open_book(path) as book:
        assert book.dimensions() == (11, 5)
        assert list(book.rows("藏")) == [(1, ["x"])]


def test_ods_text_parser_falls_back_on_xml_it_does_not_read(tmp_path):
    """A comment, single-quoted attributes, another prefix for the table namespace: the tree
    parser reads those sheets, with the same result as the plain file."""
    plain = [row([cell("甲"), cell('office:value="2"', "float")]), row([cell("乙", span=(2, 1))]), row([cell("丙")])]
    want = read(make_ods(tmp_path / "plain.ods", table("S", plain)))[:2]
    commented = table("S", plain[:1] + ["<!-- 注释 -->"] + plain[1:])
    quoted = table("S", plain).replace('office:value="2"', "office:value='2'")
    for i, body in enumerate((commented, quoted)):
        path = make_ods(tmp_path / ("odd%d.ods" % i), body)
        with tf.open_book(path) as book:
            assert (list(book.rows()), book.merges()) == want
            assert book.fallback_reason
    other = make_ods(tmp_path / "prefix.ods", table("S", plain).replace("table:", "t:").replace("text:", "x:"))
    with zipfile.ZipFile(other) as zf:
        content = zf.read("content.xml").replace(b"xmlns:table=", b"xmlns:t=").replace(b"xmlns:text=", b"xmlns:x=")
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("mimetype", MIME)
        zf.writestr("content.xml", content)
    with tf.open_book(other) as book:
        assert [s.name for s in book.sheets] == ["S"]
        assert (list(book.rows()), book.merges()) == want


def test_ods_repeat_bomb_stays_bounded(tmp_path):
    """A billion rows of a billion cells, the way calamine's issue 594 file does it: the reader
    expands at most 16,384 columns and MAX_REPEAT_CELLS cells, then stops and says so."""
    rows = [row([cell("X", rep=999999999)], rep=999999999)]
    path = make_ods(tmp_path / "dos.ods", table("Sheet1", rows))
    both_ods_readers(path)
    got, _m, book = read(path)
    cells = sum(len(v) for _n, v in got)
    assert len(got[0][1]) == ods_cells.MAX_COLS
    assert cells <= ods_cells.MAX_REPEAT_CELLS + ods_cells.MAX_COLS
    assert any("重复" in w and "没有读取" in w for w in book.warnings)


def test_reading_stops_cleanly_when_time_runs_out(tmp_path, monkeypatch):
    """A file too big to read in time gives the rows read so far and says so, instead of the host
    killing the tool at 60 s. The time limit is set to 0 here so the first row already ends it."""
    from xlakit.tables.formats import spreadsheetml as sml_mod
    ods_path = make_ods(tmp_path / "big.ods", table("S", [row([cell("r%d" % i)]) for i in range(50)]))
    xml_path = tmp_path / "big.xls"
    xml_path.write_text(one_sheet("".join('<Row><Cell><Data ss:Type="String">r%d</Data></Cell></Row>' % i
                                          for i in range(50)), name="流水"), encoding="utf-8")
    monkeypatch.setattr(ods_mod, "PARSE_SECONDS", 0)
    monkeypatch.setattr(sml_mod, "PARSE_SECONDS", 0)
    for path, options in ((ods_path, {}), (ods_path, {"reader": "tree"}), (str(xml_path), {})):
        got, _m, book = read(path, **options)
        assert got == [(1, ["r0"])], path
        assert any("只读到第 1 行" in w and "不完整" in w for w in book.warnings), book.warnings
        assert [s.name for s in book.sheets] == (["流水"] if path.endswith(".xls") else ["S"])


def test_ods_refusals(tmp_path):
    enc = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
           '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
           '<manifest:encryption-data manifest:checksum-type="SHA1"/></manifest:file-entry></manifest:manifest>')
    path = make_ods(tmp_path / "locked.ods", table("S", [row([cell("a")])]), manifest=enc)
    with pytest.raises(tf.FormatError) as exc:
        read(path)
    assert "加密" in str(exc.value) and "密码" in str(exc.value)

    path = make_ods(tmp_path / "broken.ods", table("S", [row([cell("a")])]).replace("</table:table>", ""))
    with pytest.raises(tf.FormatError) as exc:
        read(path)
    assert "损坏" in str(exc.value) and chinese(str(exc.value))

    # a zip bomb: 300 MB of one byte declared in a small member is refused before inflating
    bomb = tmp_path / "bomb.ods"
    with zipfile.ZipFile(str(bomb), "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), MIME)
        with zf.open("content.xml", "w", force_zip64=True) as fh:
            block = b" " * (1 << 20)
            for _ in range(300):
                fh.write(block)
    assert tf.sniff(str(bomb)) == "ods"
    with pytest.raises(tf.FormatError) as exc:
        read(str(bomb))
    assert "压缩比" in str(exc.value) or "上限" in str(exc.value)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="calamine corpus not present")
def test_public_corpus_files():
    """calamine's test files (MIT, not committed): the repeat DoS stays bounded, the encrypted
    file gets the Chinese password message, covered cells become merges."""
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".ods") and name != "pass_protected.ods":
            both_ods_readers(os.path.join(CORPUS, name))
    got, _m, book = read(os.path.join(CORPUS, "issue_594_dos.ods"))
    assert sum(len(v) for _n, v in got) <= ods_cells.MAX_REPEAT_CELLS + ods_cells.MAX_COLS and book.warnings
    with pytest.raises(tf.FormatError) as exc:
        read(os.path.join(CORPUS, "pass_protected.ods"))
    assert "加密" in str(exc.value)
    got, merges, _b = read(os.path.join(CORPUS, "merged_cells.ods"))
    assert merges == [(2, 1, 3, 1)] and got[0] == (1, ["A", "B", "C"])
    got, _m, _b = read(os.path.join(CORPUS, "date.ods"))
    assert got[0][1][0] == datetime.date(2021, 1, 1) and got[3][1][0] == datetime.time(10, 10, 10, 123456)


# =============================================================================================
# WPS .et

def test_wps_et_goes_to_the_xls_reader():
    path = fx("wps_ledger.et")
    from xlakit import sniff as sniffer
    raw = sniffer.sniff(path)
    assert raw.kind == "et" and raw.base == "xls"
    assert tf.sniff(path) == "et"
    rows, merges, book = read(path)
    assert book.kind == "et"
    assert rows == [(1, ["WPS 保存的表格"]), (2, ["日期", "品名", "金额"]),
                    (3, [datetime.date(2024, 5, 1), "打印纸", 56.8]), (4, [datetime.date(2024, 5, 2), "墨盒", 120])]
    assert merges == [(1, 1, 1, 3)]


# =============================================================================================
# Every table tool on the new formats

def spreadsheetml_ledger(path, rows):
    """The part-1 messy ledger as a bank system would export it in SpreadsheetML (GBK)."""
    from xml.sax.saxutils import escape
    data, merges = tio_data.grid(rows)
    starts = {(r1, c1): (r2 - r1, c2 - c1) for r1, c1, r2, c2 in merges}
    covered = set()
    for r1, c1, r2, c2 in merges:
        covered.update((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1) if (r, c) != (r1, c1))
    out = ['<?xml version="1.0" encoding="GB2312"?>\r\n<?mso-application progid="Excel.Sheet"?>\r\n',
           WB_OPEN, '<Styles><Style ss:ID="d"><NumberFormat ss:Format="yyyy\\-mm\\-dd"/></Style></Styles>',
           '<Worksheet ss:Name="费用明细"><Table>']
    for ri, line in enumerate(data, start=1):
        out.append('<Row ss:Index="%d">' % ri)
        for ci, value in enumerate(line, start=1):
            if (ri, ci) in covered or (value is None and (ri, ci) not in starts):
                continue
            attrs = ' ss:Index="%d"' % ci
            down, across = starts.get((ri, ci), (0, 0))
            if across:
                attrs += ' ss:MergeAcross="%d"' % across
            if down:
                attrs += ' ss:MergeDown="%d"' % down
            if value is None:
                out.append("<Cell%s/>" % attrs)
            elif isinstance(value, (datetime.date, datetime.datetime)):
                out.append('<Cell%s ss:StyleID="d"><Data ss:Type="DateTime">%sT00:00:00.000</Data></Cell>' % (
                    attrs, value.isoformat()[:10]))
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append('<Cell%s><Data ss:Type="Number">%r</Data></Cell>' % (attrs, value))
            else:
                out.append('<Cell%s><Data ss:Type="String">%s</Data></Cell>' % (attrs, escape(str(value))))
        out.append("</Row>\r\n")
    out.append("</Table></Worksheet></Workbook>")
    with open(path, "wb") as fh:
        fh.write("".join(out).encode("gb18030"))


def soffice_convert(src, fmt, outdir):
    if not shutil.which("soffice"):
        return None
    try:
        return maker.convert(src, fmt, outdir)
    except (subprocess.SubprocessError, OSError):
        return None


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("new_formats_ledger")
    rows = tio_data.messy_rows()
    paths = {"xlsx": str(folder / "费用明细.xlsx"), "xml": str(folder / "费用明细_银行导出.xls")}
    tio_data.write_xlsx(paths["xlsx"], rows)
    spreadsheetml_ledger(paths["xml"], rows)
    ods = soffice_convert(paths["xlsx"], "ods", str(folder))
    if ods:
        paths["ods"] = ods
    return rows, paths


def test_readers_agree_with_xlsx_on_the_messy_ledger(ledgers):
    rows, paths = ledgers
    if shutil.which("soffice"):
        assert "ods" in paths                           # LibreOffice is here: the conversion must work
    base, base_merges, _b = read(paths["xlsx"])
    for kind in ("xml", "ods"):
        if kind not in paths:
            continue
        got, merges, _b = read(paths[kind])
        assert got == base, kind
        assert sorted(merges) == sorted(base_merges), kind


def _dec(x):
    return Decimal(repr(x)) if isinstance(x, float) else Decimal(x)


def test_every_table_tool_reads_the_new_formats(run, ledgers):
    rows, paths = ledgers
    want_total = tio_data.totals(rows)[2]
    kinds = [k for k in ("xml", "ods") if k in paths]
    args = {"group_by": ["部门"], "metrics": [{"column": "金额", "func": "sum", "as": "合计"}, {"func": "count"}]}
    base = ok(run("calc_table", dict(args, path=paths["xlsx"])))
    assert sum(_dec(g["合计"]) for g in base["groups"]) == want_total
    for kind in kinds:
        data = ok(run("calc_table", dict(args, path=paths[kind])))
        assert data["groups"] == base["groups"], kind
        assert data["totals_rows_excluded"] == 1
        probe = ok(run("probe_table", {"path": paths[kind]}))
        assert probe["header_row"] == 5 and probe["data_rows"] == tio_data.N_ROWS
        assert probe["format"] == ("spreadsheetml" if kind == "xml" else "ods")
        page = ok(run("read_spreadsheet", {"path": paths[kind], "limit": 10}))
        assert page["sheet_names"] == ["费用明细"] and page["sheets"][0]["rows"][0] == [tio_data.grid(rows)[0][0][0]]
        want = [r for r in rows if r["dept"] == "销售部" and isinstance(r["amount"], Decimal) and r["amount"] > 1000]
        out = ok(run("filter_table", {"path": paths[kind], "where": [
            {"column": "部门", "op": "eq", "value": "销售部"}, {"column": "金额", "op": "gt", "value": 1000}]}))
        assert out["match_count"] == out["written"] == len(want) > 0, kind
        assert out["path"].endswith(".xlsx")


def test_tools_on_committed_fixtures(run):
    data = ok(run("read_spreadsheet", {"path": fx("wps_ledger.et")}))
    assert data["format"] == "et" and data["sheets"][0]["rows"][2] == ["2024-05-01", "打印纸", 56.8]
    data = ok(run("read_spreadsheet", {"path": fx("lo_ledger.ods")}))
    assert data["format"] == "ods" and data["hidden_sheets"] == ["参数"]
    assert data["sheets"][0]["rows"][2][2] == "6222020200112233445"
    data = ok(run("calc_table", {"path": fx("bank_export_gbk.xls"), "metrics": [
        {"column": "支出金额", "func": "sum", "as": "支出"}]}))
    assert _dec(data["groups"][0]["支出"]) == Decimal("200.5") + Decimal(-1500)
    data = ok(run("probe_table", {"path": fx("lo_ledger.ods")}))
    assert data["header_row"] == 2 and data["merged_in_data"] == ["B3:B4"]


def test_tool_errors_on_bad_new_formats(run, tmp_path):
    enc = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
           '<manifest:encryption-data/></manifest:manifest>')
    path = make_ods(tmp_path / "加密.ods", table("S", [row([cell("a")])]), manifest=enc)
    assert "加密" in fail(run("read_spreadsheet", {"path": path}))
    cut = tmp_path / "半截.xls"
    cut.write_text(one_sheet('<Row><Cell><Data ss:Type="String">a</Data></Cell></Row>' * 20)[:300], encoding="utf-8")
    assert "不完整" in fail(run("probe_table", {"path": str(cut)}))


def test_ods_first_visible_sheet_without_scanning_the_rest(tmp_path):
    """The first visible sheet is known from the first table tag (the table styles come before the
    body), so reading it never scans the rest of content.xml; asking for every sheet, or for the
    first visible one when the first is hidden, scans it all, also after close()."""
    from xlakit.tables.formats import ods
    hidden = ('<style:style style:name="ta2" style:family="table">'
              '<style:table-properties table:display="false"/></style:style>')
    body = table("一", [row([cell("甲")])]) + table("二", [row([cell("乙")])], "ta2") + table("一", [row([cell("丙")])])
    path = make_ods(tmp_path / "s.ods", body, styles=hidden)
    book = ods.OdsBook(str(path))
    assert book.sheet().name == "一" and not book._scanned
    assert [list(v) for _n, v in book.rows()] == [["甲"]] and not book._scanned
    book.close()
    assert [(s.name, s.hidden) for s in book.sheets] == [("一", False), ("二", True), ("一 (2)", False)]
    first_hidden = make_ods(tmp_path / "h.ods", table("藏", [row([cell("x")])], "ta2") + table("显", [row([cell("y")])]),
                            styles=hidden)
    book = ods.OdsBook(str(first_hidden))
    assert book.sheet().name == "显" and book._scanned
    book.close()
