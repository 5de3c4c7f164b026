"""The writer's fast paths give exactly what the per-cell path gives (issue 21: the writer at speed).

``cells.prepare_rows`` converts a row whose cells ``to_cell`` has seen before without calling it
(``_Known``: kept texts, date text and its date), and ``xlsx_new`` builds rows from per-shape templates (``RowXml``). Both must be invisible: the
same cells, the same warnings, the same XML, byte for byte, as ``to_cell`` and the per-cell
functions ``_cell_xml`` / ``_styled_cell_xml`` (the reference) produce. The rows here mix every
kind of value a tool hands the writer, including the ones the fast paths must send elsewhere
(control characters, lone surrogates, long integers, inf/nan, text too long for a cell); the
files are real, written through ``write_rows`` as the tools write them and read back by the XML
and by openpyxl. Then the whole chain once more through the real write_spreadsheet script.
"""
import copy
import datetime
import decimal
import random
import re
import sys
import threading
import zipfile

import pytest

from conftest import ROOT, ok

sys.path.insert(0, ROOT)
from xlakit.errors import FormatError, ToolError  # noqa: E402
from xlakit.tables import cells, write, xlsx_new  # noqa: E402
from xlakit.tables.values import col_letter  # noqa: E402

POOL = ["华东", "门店", "", " 前导空格", "尾随空格 ", "两行\n文字", "007", "110101199003077777", "A&B<c>", "1<2",
        "控制\x01字符", "\x02", "单独\ud800代理", "2024-03-05", "2024/3/5 14:30", "12345678901234567890", "1e5",
        "\u3000全角", True, False, 0, -5, 7, 10 ** 14, 10 ** 15, -10 ** 16, 3.25, -0.1, 1e-7, 1e300,
        float("inf"), float("nan"), datetime.date(2024, 3, 5), datetime.date(1900, 1, 1), datetime.date(1899, 5, 1),
        datetime.datetime(2024, 3, 5, 14, 30), datetime.datetime(2024, 3, 5), datetime.time(12, 30, 1),
        decimal.Decimal("12.50"), None, None, None, ["列表"], {"k": 1}]


def _rows(seed, count, width):
    rnd = random.Random(seed)
    rows = [["名称", "金额", "日期"] + ["列%d" % i for i in range(width - 3)]]
    for _ in range(count):
        n = rnd.choice([width, width, width, width - 1, width + 2])
        # mostly a few repeated shapes (as a tool's rows are), now and then anything from the pool
        if rnd.random() < 0.6:
            day = rnd.randint(1, 28)
            row = [rnd.choice(["华东", "华南", "007"]), rnd.choice([1, 2.5, 3]),
                   rnd.choice([datetime.date(2024, 1, day), "2024-01-%02d" % day, "2024/1/%d 08:30" % day])]
            row += [rnd.choice(["甲", "乙", None, ""]) for _ in range(n - 3)]
        else:
            row = [rnd.choice(POOL) for _ in range(n)]
        rows.append(row)
    return rows


def _same(a, b):
    return type(a) is type(b) and (a == b or (a != a and b != b))


def test_prepare_rows_gives_what_to_cell_gives():
    rows = _rows(1, 3000, 8)
    fast_stats, slow_stats = {}, {}
    got = list(cells.prepare_rows(copy.deepcopy(rows), "xlsx", fast_stats))
    want = [[cells.to_cell(v, slow_stats) for v in row] for row in rows]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w) and all(_same(x, y) for x, y in zip(g, w)), (i, g, w)
    assert fast_stats == slow_stats


def test_prepare_rows_copies_rows_and_still_refuses_long_text():
    row = ["华东", 1, 2.5]
    out = list(cells.prepare_rows([row, row], "xlsx", {}))
    assert out == [row, row] and out[0] is not row and out[1] is not row
    long_text = "长" * (cells.CELL_TEXT_LIMIT + 1)
    rows = [["a", "b"]] * 50 + [["a", long_text]]
    with pytest.raises(FormatError) as err:
        list(cells.prepare_rows(rows, "xlsx", {}))
    assert "第 51 行第 2 列" in str(err.value)


def _sheet_rows(path):
    with zipfile.ZipFile(path) as zf:
        xml = zf.read("xl/worksheets/sheet1.xml").decode("utf-8")
    return re.findall(r"<row .*?</row>", xml, re.S)


def _reference(rows, styles):
    """Each row's XML from the per-cell functions, as xlsx_new wrote every row before the templates."""
    stats = {}
    prepared = [cells.clean_xml_row(row, stats) for row in cells.prepare_rows(copy.deepcopy(rows), "xlsx", {})]
    header = cells.looks_like_header(prepared[0])
    out = []
    if not styles:
        for r, row in enumerate(prepared, start=1):
            out.append('<row r="%d">%s</row>' % (r, "".join(
                xlsx_new._cell_xml("%s%d" % (col_letter(c), r), v, header and r == 1)
                for c, v in enumerate(row) if v is not None)))
        return out, stats
    bold_rows, bold_cols = set(styles.get("bold_rows", ())), set(styles.get("bold_cols", ()))
    numfmt = styles.get("number_format")
    by_column = dict((int(c), code) for c, code in (styles.get("column_formats") or {}).items())
    codes = sorted(set(by_column.values()))
    column_xf = dict((c, (11 + 2 * codes.index(code), 12 + 2 * codes.index(code))) for c, code in by_column.items())
    for r, row in enumerate(prepared, start=1):
        row_bold = (r - 1) in bold_rows or (r == len(prepared) and -1 in bold_rows)
        n = len(row)
        out.append('<row r="%d">%s</row>' % (r, "".join(
            xlsx_new._styled_cell_xml("%s%d" % (col_letter(c), r), v,
                                      row_bold or c in bold_cols or (c == n - 1 and -1 in bold_cols),
                                      numfmt, column_xf.get(c))
            for c, v in enumerate(row) if v is not None)))
    return out, stats


STYLES = [None,
          {"bold_rows": [0, -1], "bold_cols": [0, -1], "number_format": "#,##0.00"},
          {"bold_rows": [0], "freeze": [1, 0], "column_formats": {"1": "#,##0.00", "4": "0.00%"}},
          {"bold_cols": [2], "freeze": [1, 1]}]


@pytest.mark.parametrize("styles", STYLES, ids=["plain", "bold+numfmt", "column_formats", "bold_col"])
def test_new_workbook_rows_match_the_per_cell_path(tmp_path, home, monkeypatch, styles):
    monkeypatch.setenv("HOME", str(home))
    # more than one chunk of rows, several widths; the templates must also give way past their caps
    for seed, count, width in ((2, xlsx_new.CHUNK_ROWS + 500, 6), (3, 400, 30), (4, 50, 3)):
        rows = _rows(seed, count, width)
        path = tmp_path / ("t%d.xlsx" % seed)
        answer = write.write_rows(str(path), copy.deepcopy(rows), styles=styles)
        want, stats = _reference(rows, styles)
        assert _sheet_rows(path) == want
        assert answer["rows_written"] == len(rows)
        if stats.get("control_chars"):
            assert any("控制字符" in w for w in answer["warnings"])


def test_a_failing_stream_leaves_no_file_and_no_thread(tmp_path, home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    threads = threading.active_count()

    def rows():
        yield ["名称", "金额"]
        for i in range(3 * xlsx_new.CHUNK_ROWS):
            yield ["客户%d" % i, i]
        yield "不是一行"

    path = tmp_path / "坏.xlsx"
    with pytest.raises(ToolError):
        write.write_rows(str(path), rows())
    assert not path.exists() and [p.name for p in tmp_path.iterdir()] == ["home"]
    assert threading.active_count() == threads


def test_fast_rows_read_back_by_openpyxl(run, tmp_path):
    import openpyxl
    rows = [["日期", "名称", "编号", "数量", "单价", "备注"]]
    for i in range(3000):
        rows.append(["2024-%02d-%02d" % (i % 12 + 1, i % 28 + 1), "客户%d & 子公司" % (i % 40), "%05d" % i, i,
                     i * 1.25, None if i % 3 else " 备注 %d" % i])
    path = tmp_path / "读回.xlsx"
    ok(run("write_spreadsheet", {"path": str(path), "rows": rows}))
    ws = openpyxl.load_workbook(str(path), read_only=True).worksheets[0]
    got = [list(r) + [None] * (len(rows[0]) - len(r)) for r in ws.iter_rows(values_only=True)]
    assert got[0] == rows[0]
    for want, have in zip(rows[1:], got[1:]):
        assert have[0].date() == datetime.date.fromisoformat(want[0])
        assert have[1:5] == want[1:5]
        assert have[5] == want[5]
    assert len(got) == len(rows)
