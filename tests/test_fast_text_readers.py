"""The fast paths of the csv and .ods readers give exactly what their general paths give.

csv: quote-free blocks are cut with ``str.split`` (``delimited._records``); the oracle here is the
csv module itself, read over the whole file with the reader's cell rules. Small block sizes make
every block boundary case happen (CRLF cut in two, a line longer than a block, a quote arriving
after many plain blocks, no final newline).

ods: a row of plain cells is read by ``ods_text._FastRows.row``; every other row goes through
``_text_cells`` + ``add_row``. Each row kind below is checked both ways: on the row's XML (the
fast path either gives the general path's values or declines) and through the whole book against
the tree parser.
"""
import csv
import datetime
import io
import os
import zipfile

import pytest

from xlakit.tables import formats as tf
from xlakit.tables.formats import delimited, ods_text
from xlakit.tables.formats._base import trim
from xlakit.tables.formats.ods_cells import _Sheet


# =============================================================================================
# csv

def csv_module_rows(path, encoding, delimiter):
    """What the reader gave before its split path: csv.reader over the file, its cell rules."""
    out = []
    with io.open(path, "r", encoding=encoding, newline="") as fh:
        for number, rec in enumerate(csv.reader(fh, delimiter=delimiter), 1):
            values = trim([delimited._cell(v) for v in rec])
            if values:
                out.append((number, values))
    return out


PLAIN = "".join("%d,华东,,%d.5,备注%d,,\r\n" % (i, i * 3, i) for i in range(1, 400))
CSV_CASES = {
    "crlf": "日期,区域,金额\r\n" + PLAIN,
    "lf": "日期,区域,金额\n" + PLAIN.replace("\r\n", "\n"),
    "no_final_newline": "a,b\n1,2\n3,4",
    "blank_lines": "a,b\n\n1,2\n,,\n\n3,,\n",
    "quote_late": PLAIN + '5,"多行\n备注, 含逗号",="00123"\r\n' + PLAIN,
    "keep_as_text_late": PLAIN + '="00123",="0042"\r\n',
    "lone_cr": PLAIN + "x,y\ry,z\r" + PLAIN,
    "mixed_endings": "a,b\r\n1,2\n3,4\r\n",
    "nul": PLAIN + "a\0b,c\r\n",
    "long_line": "a,b\n" + ",".join(["很长的单元格" * 30] * 40) + "\n1,2\n",
    "spaces": " a , b \n\t,\t\n",
    "tabs": "a\tb\tc\n1\t\t3\n4\t5\t\n",
}


@pytest.mark.parametrize("block", [1, 5, 64, 4096, 1 << 20])
@pytest.mark.parametrize("name", sorted(CSV_CASES))
def test_csv_split_path_gives_the_csv_module_records(tmp_path, monkeypatch, name, block):
    text = CSV_CASES[name]
    if "\0" in text and not _csv_reads_nul():
        pytest.skip("this Python's csv module refuses NUL")
    path = str(tmp_path / (name + ".csv"))
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8-sig" if name == "crlf" else "utf-8"))
    monkeypatch.setattr(delimited, "BLOCK", block)
    book = delimited.DelimitedBook(path)
    want = csv_module_rows(path, book.encoding, book.delimiter)
    if "\0" in text:       # stray NUL bytes in UTF-8/GBK text are dropped while decoding (issue 35, item 6)
        want = [(n, [c.replace("\0", "") if isinstance(c, str) else c for c in row]) for n, row in want]
    assert list(book.rows()) == want
    assert list(book.rows(max_rows=3)) == want[:3]


def _csv_reads_nul():
    try:
        list(csv.reader(["a\0b\n"]))
        return True
    except csv.Error:
        return False


def test_csv_split_path_keeps_the_bad_byte_count(tmp_path):
    """A UTF-8 file with stray bytes past the encoding sample: the count in the warning is the
    same whichever path read the block."""
    path = str(tmp_path / "bad.csv")
    head = ("a,b\n" + "1,中文\n" * (delimited.SAMPLE // 8)).encode("utf-8")
    with open(path, "wb") as fh:
        fh.write(head + b"2,\xff\xfe\n3,\"x\xff\"\n")
    book = delimited.DelimitedBook(path)
    rows = list(book.rows())
    assert rows[-2][1] == ["2", "\ufffd\ufffd"] and rows[-1][1] == ["3", "x\ufffd"]
    assert any("3 处字节" in w for w in book.warnings), book.warnings


# =============================================================================================
# ods

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"')


def c(vt=None, value=None, text=None, extra="", close=True):
    """One cell as LibreOffice writes it: type, value attribute, one paragraph."""
    a = extra
    if vt:
        a += ' office:value-type="%s"' % vt
    if value is not None:
        a += ' %s="%s"' % (value[0], value[1])
    if vt:
        a += ' calcext:value-type="%s"' % vt
    if text is None and close:
        return "<table:table-cell%s/>" % a
    return "<table:table-cell%s>%s</table:table-cell>" % (a, "" if text is None else "<text:p>%s</text:p>" % text)


PLAIN_ROWS = {
    "strings": [c("string", text="华东"), c("string", text="a &amp; b &lt;c&gt;"), c("string", text="")],
    "numbers": [c("float", ("office:value", "21"), "21"), c("float", ("office:value", "284.41"), "284.41"),
                c("percentage", ("office:value", "0.155"), "15.5%"),
                c("currency", ("office:value", "-12.5"), "-¥12.50", extra=' office:currency="CNY"'),
                c("float", ("office:value", "12345678901234567"), "1.23E+16")],
    "booleans_shown_so": [c("float", ("office:value", "1"), "TRUE"), c("float", ("office:value", "0"), "FALSE"),
                          c("float", ("office:value", "1"), "1"), c("boolean", ("office:boolean-value", "true"), "真"),
                          c("boolean", ("office:boolean-value", "maybe"), "也许")],
    "dates_times": [c("date", ("office:date-value", "2024-09-01"), "2024/9/1", extra=' table:style-name="ce1"'),
                    c("date", ("office:date-value", "2024-09-01T08:30:00"), "x"),
                    c("time", ("office:time-value", "PT10H30M00S"), "10:30"),
                    c("time", ("office:time-value", "PT36H"), "36:00"), c("date", ("office:date-value", "bad"), "?")],
    "string_value_and_gaps": [c(), c("string", ("office:string-value", "属性里的文字"), "显示"),
                              c(extra=' table:number-columns-repeated="3"'), c("string", text="后面"),
                              c(extra=' table:number-columns-repeated="16374"')],
    "untyped_and_empty": [c(text="无类型"), c(text=None, close=False), "<table:table-cell><text:p/></table:table-cell>",
                          c("float", ("office:value", "abc"), "abc"), c("weird", ("office:value", "3"), "三")],
    "repeated_values": [c("float", ("office:value", "1"), "1"),
                        c("float", ("office:value", "19.1"), "19.10", extra=' table:number-columns-repeated="2"'),
                        c("string", text="同", extra=' table:number-columns-repeated="3"'), c("string", text="末")],
    "blank_between_cells": [c("string", text="x"), "\n  ", c("string", text="y"), "\n"],
    "spans_of_one": [c("string", text="x", extra=' table:number-columns-spanned="1" table:number-rows-spanned="1"')],
}
OTHER_ROWS = {
    "rich": [c("string", text="a<text:s text:c=\"3\"/>b"), c("string", text="x")],
    "two_paragraphs": ['<table:table-cell office:value-type="string"><text:p>x</text:p><text:p>y</text:p>'
                       '</table:table-cell>'],
    "span": [c("string", text="合并", extra=' table:number-columns-spanned="2" table:number-rows-spanned="1"'),
             "<table:covered-table-cell/>", c("string", text="z")],
    "newline_between_attributes": [c("string", text="x").replace(" office:", "\n office:", 1)],
    "text_between_cells": [c("string", text="x"), " 杂 ", c("string", text="y")],
    "two_value_attributes": [c("float", ("office:value", "1"), "1", extra=' office:string-value="s"')],
}


def general_values(body, budget=None):
    sheet = _Sheet()
    ods_text.add_row(sheet, 0, 1, ods_text._text_cells(body, {}, (b"<w %s>" % NS.encode(), b"</w>")),
                     budget if budget is not None else [10 ** 6])
    return sheet.rows[0][1] if sheet.rows else []


@pytest.mark.parametrize("name", sorted(PLAIN_ROWS))
def test_ods_fast_row_reads_plain_rows_like_the_general_path(name):
    body = "".join(PLAIN_ROWS[name]).encode("utf-8")
    budget = [10 ** 6]
    got = ods_text._FastRows().row(body, budget)
    assert got is not None, "a plain row must take the fast path"
    general_budget = [10 ** 6]
    assert repr(got) == repr(general_values(body, general_budget))
    assert budget == general_budget         # repeats charged the same


@pytest.mark.parametrize("name", sorted(OTHER_ROWS))
def test_ods_fast_row_declines_what_it_does_not_read(name):
    body = "".join(OTHER_ROWS[name]).encode("utf-8")
    budget = [10 ** 6]
    assert ods_text._FastRows().row(body, budget) is None
    assert budget == [10 ** 6]


def test_ods_book_with_every_row_kind_reads_as_the_tree_parser_does(tmp_path):
    rows = []
    for group in (PLAIN_ROWS, OTHER_ROWS):
        for name in sorted(group):
            if name == "text_between_cells":
                continue            # the text parser hands such a sheet to the tree parser: tested elsewhere
            rows.append("<table:table-row>%s</table:table-row>" % "".join(group[name]))
    rows.append('<table:table-row table:number-rows-repeated="2">%s</table:table-row>' % c("string", text="两行"))
    rows.append('<table:table-row table:number-rows-repeated="1048000"><table:table-cell/></table:table-row>')
    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content %s><office:body><office:spreadsheet>'
               '<table:table table:name="S">%s</table:table></office:spreadsheet></office:body>'
               '</office:document-content>' % (NS, "".join(rows)))
    path = str(tmp_path / "kinds.ods")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", content)
    out = []
    for reader in ("fast", "tree"):
        with tf.open_book(path, reader=reader) as book:
            out.append(repr((list(book.rows()), book.merges(), book.dimensions(), book.warnings)))
            if reader == "fast":
                assert book.fallback_reason is None, book.fallback_reason
    assert out[0] == out[1]
    assert "datetime.date(2024, 9, 1)" in out[0] and "'属性里的文字'" in out[0] and "True, False, 1" in out[0]


def test_ods_fast_rows_repeat_across_rows_from_the_caches():
    """The caches (attribute texts, paragraphs, dates) hand out the same values on later rows."""
    fast = ods_text._FastRows()
    body = "".join(PLAIN_ROWS["dates_times"] + PLAIN_ROWS["strings"]).encode("utf-8")
    first = fast.row(body, [10 ** 6])
    assert fast.row(body, [10 ** 6]) == first == general_values(body)
    assert first[0] == datetime.date(2024, 9, 1) and first[1] == datetime.datetime(2024, 9, 1, 8, 30)


@pytest.mark.skipif(not os.path.exists(os.path.join(os.path.dirname(__file__), "fixtures", "new_formats",
                                                    "lo_ledger.ods")), reason="fixture missing")
def test_ods_libreoffice_fixture_same_on_both_parsers():
    path = os.path.join(os.path.dirname(__file__), "fixtures", "new_formats", "lo_ledger.ods")
    got = []
    for reader in ("fast", "tree"):
        with tf.open_book(path, reader=reader) as book:
            got.append(repr([(s.name, list(book.rows(s.name)), book.merges(s.name)) for s in book.sheets]))
    assert got[0] == got[1]


def test_ods_fast_row_leaves_a_repeat_past_the_budget_to_add_row():
    """add_row caps a repeat that would pass MAX_REPEAT_CELLS (and the sheet warns): the fast
    path declines such a row without charging anything."""
    body = "".join([c("string", text="a"), c("string", text="b", extra=' table:number-columns-repeated="50"')]).encode()
    budget = [10]
    assert ods_text._FastRows().row(body, budget) is None and budget == [10]
    budget = [50]
    assert ods_text._FastRows().row(body, budget) == ["a"] + ["b"] * 50 and budget == [1]


def _revalued(body):
    """The same row with other values in the same attributes (a row of the same shape)."""
    return (body.replace(b'value="21"', b'value="7"').replace(b'value="1"', b'value="0"')
            .replace(b"2024-09-01", b"2025-02-03").replace("华东".encode(), "华北".encode())
            .replace(b">TRUE<", b">FALSE<").replace(b">x<", b">1<"))


@pytest.mark.parametrize("name", sorted(PLAIN_ROWS))
def test_ods_row_shapes_read_later_rows_like_the_general_path(name):
    """The second row of a shape is matched whole by the shape's regex (no cell regex): the
    values and the repeat budget are the general path's, with the same or other values."""
    fast = ods_text._FastRows()
    body = "".join(PLAIN_ROWS[name]).encode("utf-8")
    fast.row(body, [10 ** 6])
    assert fast.shapes, "a plain row leaves its shape"
    for other in (body, _revalued(body), b"  " + body + b"\n"):
        budget, general_budget = [10 ** 6], [10 ** 6]
        got = fast.row(b"<x>" + other + b"</x>", budget, 3, 3 + len(other))
        assert repr(got) == repr(general_values(other, general_budget))
        assert budget == general_budget
    assert fast.builds == 1, "rows of the same shape compile nothing new"


def test_ods_row_shapes_decline_and_switch():
    fast = ods_text._FastRows()
    a = "".join(PLAIN_ROWS["numbers"]).encode()
    b = "".join(PLAIN_ROWS["strings"]).encode()
    for body in (a, b, a, b):
        assert fast.row(body, [10 ** 6]) == general_values(body)
    assert fast.builds == 2 and len(fast.shapes) == 2
    for name in sorted(OTHER_ROWS):         # a shape never takes what the cell regex declines
        assert fast.row("".join(OTHER_ROWS[name]).encode(), [10 ** 6]) is None
    # a repeat past the budget in a shaped row still goes to add_row, nothing charged
    body = "".join([c("string", text="a"), c("string", text="b", extra=' table:number-columns-repeated="50"')]).encode()
    assert fast.row(body, [100]) is not None
    budget = [10]
    assert fast.row(body.replace(b">a<", b">z<"), budget) is None and budget == [10]


def test_ods_row_shapes_are_bounded():
    fast = ods_text._FastRows()
    for k in range(fast.MAX_BUILDS + 1):
        body = c("string", text="v", extra=' table:style-name="ce%d"' % k).encode()
        for _ in range(6):          # rows of a shape met again, so shapes keep paying
            assert fast.row(body, [10 ** 6]) == ["v"]
    assert fast.builds == fast.MAX_BUILDS and len(fast.shapes) == fast.MAX_SHAPES


@pytest.mark.parametrize("chunk", [61, 509, 1 << 20])
def test_ods_rows_of_known_shapes_read_as_the_tree_parser_does(tmp_path, monkeypatch, chunk):
    """Ledger-like rows (a few shapes, values changing, blanks between some rows, a repeat of 1
    that passes the budget, a repeated row) read whole by the shapes: the same rows as the tree
    parser, also with the XML cut into small chunks (a row cut at a chunk's end is not matched)."""
    monkeypatch.setattr(ods_text, "CHUNK", chunk)
    monkeypatch.setattr("xlakit.tables.formats.ods_cells.MAX_REPEAT_CELLS", 50)
    rows = []
    for i in range(300):
        cells = [c("date", ("office:date-value", "2024-%02d-%02d" % (i % 12 + 1, i % 28 + 1)), "d",
                   extra=' table:style-name="ce1"'),
                 c("string", text=["华东", "华北", "a &amp; b", ""][i % 4]),
                 c("float", ("office:value", str(i % 7)), ["TRUE", "FALSE", "x"][i % 3])]
        if i % 5 == 0:
            cells.append(c("float", ("office:value", "%d.5" % i), "v", extra=' table:number-columns-repeated="2"'))
        if i % 11 == 0:
            cells.append(c("string", text="备注%d" % i))
        cells.append(c(extra=' table:number-columns-repeated="16374"'))
        style = ' table:style-name="ro%d"' % (i % 2 + 1)
        rows.append("%s<table:table-row%s>%s</table:table-row>" % ("\n " if i % 17 == 0 else "", style,
                                                                   "".join(cells)))
    rows.append('<table:table-row table:number-rows-repeated="2">%s</table:table-row>' % c("string", text="两行"))
    rows.append('<table:table-row table:number-rows-repeated="1048000"><table:table-cell/></table:table-row>')
    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content %s><office:body><office:spreadsheet>'
               '<table:table table:name="S">%s</table:table><table:table table:name="T"><table:table-row>%s'
               '</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>'
               % (NS, "".join(rows), c("string", text="t")))
    path = str(tmp_path / "shapes.ods")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", content)
    out = []
    for reader in ("fast", "tree"):
        monkeypatch.setattr("xlakit.tables.formats.ods_cells.MAX_REPEAT_CELLS", 50)
        with tf.open_book(path, reader=reader) as book:
            out.append(repr([(s.name, list(book.rows(s.name)), book.merges(s.name), book.dimensions(s.name))
                             for s in book.sheets] + [book.warnings]))
            if reader == "fast":
                assert book.fallback_reason is None, book.fallback_reason
    assert out[0] == out[1]
    assert ", True" in out[0] and "'备注11'" in out[0] and "超过 50 个" in out[0]


def test_ods_row_shapes_given_up_when_rows_fit_none():
    """More shapes in turn than are tried: the rows are read cell by cell, shapes dropped."""
    fast = ods_text._FastRows()
    bodies = [(c("string", text="v") + c(extra=' table:number-columns-repeated="%d"' % (100 + k))).encode()
              for k in range(fast.MAX_SHAPES + 2)]
    for _ in range(20):
        for body in bodies:
            assert fast.row(body, [10 ** 6]) == ["v"]
    assert fast.shapes == [] and fast.whole_shapes == [] and fast.builds == fast.MAX_BUILDS
