"""The xlsx reader on two cores (xlakit/tables/formats/xlsx_parallel.py) gives exactly what one
process gives, on generated sheets big enough to fork a worker (a few MB of XML each), including
what crosses chunk boundaries: rows without r=, formulas without cached values, merges after the
data, and XML only openpyxl can read halfway through. And the worker never outlives the reader."""
import os
import shutil
import sys
import time
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from xlakit.tables import formats as tf  # noqa: E402
from xlakit.tables.formats import xlsx_parallel  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked on Linux only")

ROWS = 60000          # ~13 MB of sheet XML (9 MB without r=): several 2 MB chunks and a tail


def _write(path, rows=ROWS, with_r=True, formulas=(), comment_at=None, merges=(), inline=False):
    """A one-sheet workbook written directly (strings shared or inline, dates styled)."""
    sst, index = [], {}

    def text(ref, value):
        attr = ' r="%s"' % ref if with_r else ""
        if inline:
            return '<c%s t="inlineStr"><is><t>%s</t></is></c>' % (attr, value)
        if value not in index:
            index[value] = len(sst)
            sst.append(value)
        return '<c%s t="s"><v>%d</v></c>' % (attr, index[value])

    def num(ref, value, style=""):
        attr = ' r="%s"' % ref if with_r else ""
        return '<c%s%s><v>%s</v></c>' % (attr, style, value)

    parts = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.'
             'openxmlformats.org/spreadsheetml/2006/main"><sheetData>']
    head = ["日期", "区域", "门店", "数量", "单价", "金额", "备注"]
    parts.append('<row%s>%s</row>' % (' r="1"' if with_r else "",
                                      "".join(text("%s1" % chr(65 + i), h) for i, h in enumerate(head))))
    for i in range(rows):
        r = i + 2
        rattr = ' r="%d"' % r if with_r else ""
        cells = [num("A%d" % r, 44927 + i % 700, ' s="1"'), text("B%d" % r, "区域%d" % (i % 7)),
                 text("C%d" % r, "门店%d" % (i % 45)), num("D%d" % r, i % 50 + 1),
                 num("E%d" % r, "%.2f" % (1 + (i * 7919) % 30000 / 100.0), ' s="2"')]
        if r in formulas:
            cells.append('<c r="F%d"><f>D%d*E%d</f><v></v></c>' % (r, r, r) if with_r else
                         '<c><f>D%d*E%d</f><v></v></c>' % (r, r))
        else:
            cells.append(num("F%d" % r, "%.2f" % ((i % 50 + 1) * 1.5)))
        if i % 11 == 0:
            cells.append(text("G%d" % r, "订单%08d" % i))
        parts.append("<row%s>%s</row>" % (rattr, "".join(cells)))
        if comment_at == r:
            parts.append("<!-- exported by a tool -->")
    parts.append("</sheetData>")
    if merges:
        parts.append('<mergeCells count="%d">%s</mergeCells>' % (
            len(merges), "".join('<mergeCell ref="%s"/>' % m for m in merges)))
    parts.append("</worksheet>")
    ct = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
          'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
          'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
          'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
          '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
          'officedocument.spreadsheetml.worksheet+xml"/></Types>')
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", ct)
        zf.writestr("_rels/.rels", '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                    'relationships"><Relationship Id="rId1" Type="%sofficeDocument" Target="xl/workbook.xml"/>'
                    '</Relationships>' % rel)
        zf.writestr("xl/workbook.xml", '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                    'main" xmlns:r="%s"><sheets><sheet name="流水" sheetId="1" r:id="rId1"/></sheets></workbook>'
                    % rel.rstrip("/"))
        zf.writestr("xl/_rels/workbook.xml.rels", '<Relationships xmlns="http://schemas.openxmlformats.org/'
                    'package/2006/relationships"><Relationship Id="rId1" Type="%sworksheet" Target="worksheets/'
                    'sheet1.xml"/><Relationship Id="rId2" Type="%sstyles" Target="styles.xml"/><Relationship '
                    'Id="rId3" Type="%ssharedStrings" Target="sharedStrings.xml"/></Relationships>' % (rel, rel, rel))
        zf.writestr("xl/styles.xml", '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                    'main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/></numFmts>'
                    '<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="2"/></cellXfs>'
                    '</styleSheet>')
        zf.writestr("xl/worksheets/sheet1.xml", "".join(parts))
        zf.writestr("xl/sharedStrings.xml", '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                    'main">%s</sst>' % "".join("<si><t>%s</t></si>" % s for s in sst))
    return path


def _read(path, workers, monkeypatch):
    """Everything a reader pass gives: rows, merges, warnings, the fallback taken (if any)."""
    monkeypatch.setenv("XLA_XLSX_WORKERS", str(workers))
    with tf.open_book(path) as book:
        rows = list(book.rows())
        return {"rows": rows, "merges": book.merges(), "warnings": book.warnings,
                "nocache": book.formula_without_value, "fallback": book.fallback_reason is not None}


def _both(path, monkeypatch):
    one = _read(path, 1, monkeypatch)
    two = _read(path, 2, monkeypatch)
    assert len(two["rows"]) == len(one["rows"])
    for a, b in zip(one["rows"], two["rows"]):
        assert a == b and [type(v) for v in a[1]] == [type(v) for v in b[1]]
    assert two == one
    return one


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xlsx_parallel")
    return {
        "plain": _write(str(folder / "plain.xlsx"), merges=("B2:C3", "G49997:G50002")),
        "inline": _write(str(folder / "inline.xlsx"), inline=True),
        "no_r": _write(str(folder / "no_r.xlsx"), with_r=False),
        "formulas": _write(str(folder / "formulas.xlsx"), formulas=(3, 15001, 30002, 45003, 59004)),
        "comment": _write(str(folder / "comment.xlsx"), comment_at=40000),
    }


def test_the_generated_sheets_are_big_enough_to_fork(big):
    with zipfile.ZipFile(big["plain"]) as zf:
        size = zf.getinfo("xl/worksheets/sheet1.xml").file_size
    assert size >= xlsx_parallel.MIN_PARALLEL_BYTES
    assert xlsx_parallel.workers_wanted(size, None) == 2
    assert xlsx_parallel.workers_wanted(size, 100) == 1                 # previews stay on one process
    assert xlsx_parallel.workers_wanted(100000, None) == 1              # so do small sheets


def test_two_processes_give_the_same_rows_and_merges(big, monkeypatch):
    got = _both(big["plain"], monkeypatch)
    assert len(got["rows"]) == ROWS + 1 and got["merges"] == [(2, 2, 3, 3), (49997, 7, 50002, 7)]
    assert got["rows"][1][1][0].isoformat() == "2023-01-01"


def test_inline_strings(big, monkeypatch):
    assert len(_both(big["inline"], monkeypatch)["rows"]) == ROWS + 1


def test_rows_without_r_are_numbered_as_on_one_process(big, monkeypatch):
    got = _both(big["no_r"], monkeypatch)
    assert [r for r, _ in got["rows"][:3]] == [1, 2, 3] and got["rows"][-1][0] == ROWS + 1


def test_formulas_without_values_counted_in_order(big, monkeypatch):
    got = _both(big["formulas"], monkeypatch)
    assert got["nocache"]["count"] == 5 and got["nocache"]["example"]["cell"] == "F3"


def test_xml_for_openpyxl_halfway_falls_back_after_the_rows_given(big, monkeypatch):
    got = _both(big["comment"], monkeypatch)
    assert got["fallback"] and len(got["rows"]) == ROWS + 1


def _children():
    """Our live (or zombie) child processes, from /proc."""
    me = str(os.getpid())
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            out.append((int(pid), fields[0]))
    return out


def _wait_no_children(before):
    for _ in range(100):
        left = [c for c in _children() if c not in before]
        if not left:
            return []
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("stop", ["close generator", "drop generator", "close book"])
def test_the_worker_never_outlives_the_reader(big, monkeypatch, stop):
    """A consumer that stops early (a deadline, an error, enough rows) leaves no process behind,
    whichever way the reading stops: the generator closed, dropped (garbage), or the book closed."""
    monkeypatch.setenv("XLA_XLSX_WORKERS", "2")
    before = _children()
    book = tf.open_book(big["plain"])
    rows = book.rows()
    for n, _item in enumerate(rows):
        if n == 12000:              # past the first chunk: the worker is running
            break
    assert [c for c in _children() if c not in before], "no worker was started"
    if stop == "close generator":
        rows.close()
        assert _wait_no_children(before) == []
    elif stop == "drop generator":
        del rows, _item
        assert _wait_no_children(before) == []
    book.close()
    assert _wait_no_children(before) == []


def test_every_generated_sheet_forks(big):
    for path in big.values():
        with zipfile.ZipFile(path) as zf:
            assert zf.getinfo("xl/worksheets/sheet1.xml").file_size >= xlsx_parallel.MIN_PARALLEL_BYTES, path


def _table(path, workers, monkeypatch):
    from xlakit.tables.book import open_table
    from xlakit.tables.formats import xlsx
    started = []
    plain = xlsx.XlsxBook._start_early

    def start_early(book, info, member):
        plain(book, info, member)
        started.append(bool(book._early))
    monkeypatch.setattr(xlsx.XlsxBook, "_start_early", start_early)
    monkeypatch.setenv("XLA_XLSX_WORKERS", str(workers))
    table = open_table(path)          # asks for the merges before the first row: the worker starts early
    try:
        early = started == [True]
        rows = list(table.data_rows())
        return early, {"names": table.names, "rows": rows, "merged": table.merged_data,
                       "warnings": table.warnings + table.row_warnings()}
    finally:
        table.close()


def test_a_table_reads_the_same_with_the_worker_started_before_the_merges_scan(big, monkeypatch):
    early1, one = _table(big["plain"], 1, monkeypatch)
    early2, two = _table(big["plain"], 2, monkeypatch)
    assert not early1 and early2
    assert two == one and len(one["rows"]) == ROWS and one["merged"] == [(2, 2, 3, 3), (49997, 7, 50002, 7)]
    assert one["rows"][49995][1][6] == one["rows"][50000][1][6] == "订单00049995"      # the merged block filled down


def test_a_preview_after_the_merges_scan_ends_the_early_worker(big, monkeypatch):
    monkeypatch.setenv("XLA_XLSX_WORKERS", "2")
    before = _children()
    with tf.open_book(big["plain"]) as book:
        book.merges()
        assert book._early
        assert len(list(book.rows(max_rows=5))) == 5
        assert not book._early and not book._workers
        assert _wait_no_children(before) == []


def test_a_worker_that_cannot_open_the_file_leaves_its_chunks_and_says_nothing(big, monkeypatch, tmp_path, capfd):
    """The worker opens the workbook by path: when that path is gone by then (the file was moved
    while being read), this process reads every chunk itself — same rows — and no traceback from
    the worker reaches the tool's stderr (the host's error channel)."""
    want = _read(big["plain"], 1, monkeypatch)["rows"]
    moving = str(tmp_path / "moving.xlsx")
    shutil.copy(big["plain"], moving)
    monkeypatch.setenv("XLA_XLSX_WORKERS", "2")
    capfd.readouterr()
    with tf.open_book(moving) as book:
        os.remove(moving)                    # our open zip still reads; the worker's open fails
        got = list(book.rows())
    assert got == want
    assert "Traceback" not in capfd.readouterr().err
