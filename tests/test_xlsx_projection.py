"""calc_table on an xlsx whose reader builds only the columns the job needs (column projection,
``SheetParser.project`` / ``_by_columns``) gives exactly the answer of the reader that builds
every cell: the same JSON, byte for byte, with ``XLA_XLSX_PROJECT=0`` as the reference.

The files are big enough for several 1 MB chunks (the projection starts after the header's chunk)
and, for the raw one, for the forked worker (8 MB of XML). The awkward cases are spread over the
whole file, so some chunks go the whole-chunk way, some the row-by-row way and some both:
formulas with and without cached values, an empty shared string in a first-three cell, inline
strings, error and boolean cells, text in the amount column, mixed styles in a column, empty
styled cells, rows without ``r=``, a row element per cell, 小计 / 合计 / footnote rows, a first
cell missing, hidden rows; files written by openpyxl and by our own writer; merged cells in the
data (no projection there)."""
import datetime
import json
import zipfile

import pytest

from conftest import ok

from xlakit.tables.formats import xlsx_sheet
from xlakit.tables.formats.xlsx import XlsxBook

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
HEADER = ["日期", "区域", "门店", "品类", "数量", "单价", "金额", "渠道", "备注"]
REGIONS = ["华东", "华南", "华北", "西南", "东北"]
KINDS = ["饮料", "零食", "日用", "生鲜"]
CHANNELS = ["门店", "小程序", "美团"]

JOBS = [
    {"group_by": ["区域", "品类"], "metrics": [{"column": "金额", "func": "sum", "as": "金额"}]},
    {"group_by": [{"column": "日期", "date_bucket": "month"}],
     "metrics": [{"column": "金额", "func": "avg"}, {"column": "数量", "func": "max"}, {"column": "数量", "func": "min"},
                 {"column": "备注", "func": "count"}, {"column": "门店", "func": "distinct_count"},
                 {"func": "count_rows"}]},
    {"group_by": ["渠道"], "metrics": [{"column": "金额", "func": "sum"}, {"column": "日期", "func": "max"}],
     "where": [{"column": "数量", "op": "gt", "value": 3}, {"column": "金额", "op": "gt", "value": 100}],
     "sort_by": "金额"},
    {"group_by": ["门店"], "metrics": [{"column": "金额", "func": "sum"}], "include_totals": True},
]

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.sharedStrings+xml"/>'
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.styles+xml"/></Types>')
ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
             '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
             '<Relationship Id="rId1" Type="%s/officeDocument" Target="xl/workbook.xml"/></Relationships>' % REL)
WORKBOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="%s" xmlns:r="%s">'
            '<sheets><sheet name="明细" sheetId="1" r:id="rId1"/></sheets></workbook>' % (NS, REL))
WORKBOOK_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                 '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                 '<Relationship Id="rId1" Type="%s/worksheet" Target="worksheets/sheet1.xml"/>'
                 '<Relationship Id="rId2" Type="%s/sharedStrings" Target="sharedStrings.xml"/>'
                 '<Relationship Id="rId3" Type="%s/styles" Target="styles.xml"/></Relationships>' % (REL, REL, REL))
# style 1: a date; style 2: money; style 3: a plain number with another style index
STYLES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="%s">'
          '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>'
          '<fonts count="1"><font/></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/></borders>'
          '<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="164"/>'
          '<xf numFmtId="4"/><xf numFmtId="1"/></cellXfs></styleSheet>' % NS)
COLS = "ABCDEFGHI"


def raw_xlsx(path, n, merged=False, odd_end_tag=False, comment=False):
    """A ledger written as raw XML with the awkward cases spread through it."""
    sst, index = [], {}

    def s(ref, text, attrs=""):
        if text not in index:
            index[text] = len(sst)
            sst.append(text)
        return '<c r="%s"%s t="s"><v>%d</v></c>' % (ref, attrs, index[text])

    out = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="%s"><sheetData>' % NS,
           '<row r="1">' + "".join(s("%s1" % COLS[i], h) for i, h in enumerate(HEADER)) + "</row>"]
    r = 1
    for i in range(n):
        r += 1
        day = 45000 + i % 400
        region, kind = REGIONS[(i * 7) % 5], KINDS[(i * 3) % 4]
        shop = "%s%d号店" % (region, i % 7)
        qty, price = i % 9 + 1, "%d.%02d" % (i % 300 + 1, i % 100)
        amount = "%d.%02d" % ((i * 37) % 5000, (i * 11) % 100)
        cells = ['<c r="A%d" s="1"><v>%d</v></c>' % (r, day), s("B%d" % r, region),
                 s("C%d" % r, shop), s("D%d" % r, kind),
                 '<c r="E%d"><v>%d</v></c>' % (r, qty), '<c r="F%d" s="2"><v>%s</v></c>' % (r, price),
                 '<c r="G%d" s="2"><v>%s</v></c>' % (r, amount), s("H%d" % r, CHANNELS[i % 3])]
        if i % 5 == 0:
            cells.append(s("I%d" % r, "促销"))
        row_attrs = ' r="%d"' % r
        if (i // 10000) % 2 or odd_end_tag or comment:
            pass                                # every other stretch plain: whole chunks there
        elif i % 997 == 11:
            cells[6] = '<c r="G%d" s="2"><f>E%d*F%d</f><v>%s</v></c>' % (r, r, r, amount)   # cached
        elif i % 991 == 13:
            cells[5] = '<c r="F%d" s="2"><f>1/0</f></c>' % r          # no cached value, not wanted
        elif i % 983 == 17:
            cells[1] = s("B%d" % r, "")                                # empty shared string
        elif i % 977 == 19:
            cells[2] = '<c r="C%d" t="inlineStr"><is><t>%s</t></is></c>' % (r, shop)
        elif i % 971 == 23:
            cells[6] = '<c r="G%d" t="e"><v>#DIV/0!</v></c>' % r
        elif i % 967 == 29:
            cells[6] = s("G%d" % r, "待定")                            # text in the amount column
        elif i % 953 == 31:
            cells[6] = '<c r="G%d" s="3"><v>%s</v></c>' % (r, amount)  # another style, same kind
        elif i % 947 == 37:
            cells[6] = '<c r="G%d" s="2"/>' % r                        # empty styled cell
        elif i % 941 == 41:
            cells[7] = '<c r="H%d" t="b"><v>1</v></c>' % r
        elif i % 937 == 43:
            cells = cells[1:]                                          # no first cell
        elif i % 929 == 47:
            row_attrs = ' r="%d" hidden="1"' % r
        elif i % 919 == 53:
            row_attrs = ' spans="1:9"'                                 # no r=: the next number
        elif i % 911 == 59:                                            # a row element per cell
            out.append("".join('<row r="%d">%s</row>' % (r, c) for c in cells))
            continue
        elif i % 887 == 67:
            out.append('<row r="%d" ht="20" customHeight="1"/>' % r)   # an empty self-closing row
            r += 1
            row_attrs = ' r="%d"' % r
            cells = [c.replace("%d\"" % (r - 1), "%d\"" % r) for c in cells]
        elif i % 907 == 61:
            cells[6] = '<c r="G%d" s="2"><v>1e3</v></c>' % r
        out.append("<row%s>%s</row>" % (row_attrs, "".join(cells)))
        if i % 2500 == 2499:
            r += 1
            out.append('<row r="%d">%s<c r="G%d" s="2"><v>%d</v></c></row>' % (r, s("A%d" % r, "小计"), r, i))
    r += 1
    out.append('<row r="%d">%s<c r="G%d" s="2"><v>999999.99</v></c></row>' % (r, s("A%d" % r, "合计"), r))
    r += 1
    out.append('<row r="%d">%s</row>' % (r, s("A%d" % r, "注：本表由系统导出")))
    if odd_end_tag:      # valid XML the fast parser refuses: openpyxl reads the sheet, from row 1
        out[len(out) * 2 // 3] = out[len(out) * 2 // 3].replace("</row>", "</row >")
    if comment:          # a commented-out row deep in the sheet (a worker's chunk): openpyxl reads it
        out[len(out) * 3 // 4] += '<!-- <row r="9"><c r="G9"><v>999</v></c></row> -->'
    out.append("</sheetData>")
    if merged:
        out.append('<mergeCells count="1"><mergeCell ref="B50:B60"/></mergeCells>')
    out.append("</worksheet>")
    sst_xml = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="%s">%s</sst>' % (
        NS, "".join("<si><t>%s</t></si>" % t for t in sst)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", CONTENT_TYPES)
        zf.writestr("_rels/.rels", ROOT_RELS)
        zf.writestr("xl/workbook.xml", WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS)
        zf.writestr("xl/styles.xml", STYLES)
        zf.writestr("xl/sharedStrings.xml", sst_xml)
        zf.writestr("xl/worksheets/sheet1.xml", "".join(out))
    return str(path)


def ledger_values(n):
    rows = [HEADER]
    for i in range(n):
        region = REGIONS[(i * 7) % 5]
        amount = ((i * 37) % 5000) + ((i * 11) % 100) / 100.0
        if i % 613 == 7:
            amount = "待定"
        rows.append([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 400), region,
                     "%s%d号店" % (region, i % 7) if i % 701 != 3 else None, KINDS[(i * 3) % 4], i % 9 + 1,
                     round(i % 300 + 1.5, 2), amount, CHANNELS[i % 3], "促销" if i % 5 == 0 else None])
        if i % 3000 == 2999:
            rows.append(["小计", None, None, None, None, None, i, None, None])
    rows.append(["合计", None, None, None, None, None, 999999.99, None, None])
    return rows


def openpyxl_xlsx(path, n):
    import openpyxl
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("明细")
    for k, row in enumerate(ledger_values(n)):
        if k and k % 1499 == 0:
            row = list(row)
            row[5] = "=E%d*2" % (k + 1)          # a formula openpyxl writes without a cached value
        ws.append(row)
    wb.save(path)
    return str(path)


def ours_xlsx(path, n):
    from xlakit.tables.write import write_rows
    write_rows(str(path), ledger_values(n))
    return str(path)


def answers(run, path, job, workers):
    args = dict(job, path=path)
    env = {"XLA_XLSX_WORKERS": workers}
    whole = ok(run("calc_table", args, extra_env=dict(env, XLA_XLSX_PROJECT="0")))
    projected = ok(run("calc_table", args, extra_env=env))
    return json.dumps(whole, ensure_ascii=False), json.dumps(projected, ensure_ascii=False)


def chunk_ways(path, columns):
    """How many chunks of the sheet the whole-chunk way takes (the rest go row by row)."""
    book = XlsxBook(path)
    try:
        info, member = book._part(None)
        parser, boundary = book._sheet_parser(info, member)
        parser.project(columns)
        taken = 0
        for n, chunk in enumerate(xlsx_sheet.member_chunks(book._zip, member, boundary)):
            if n and parser._by_columns(chunk) is not None:
                taken += 1
        return taken, n
    finally:
        book.close()


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory):
    return raw_xlsx(tmp_path_factory.mktemp("proj") / "台账.xlsx", 40000)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_raw_file_same_answer(run, raw_file, workers):
    for job in JOBS:
        whole, projected = answers(run, raw_file, job, workers)
        assert whole == projected, job
    first = json.loads(projected)
    assert first["totals_rows_excluded"] == 0          # include_totals (the last job)
    whole, _ = answers(run, raw_file, JOBS[0], workers)
    assert json.loads(whole)["totals_rows_excluded"] == 17
    # both ways were taken: most chunks whole, the ones with a formula or an odd cell row by row
    taken, chunks = chunk_ways(raw_file, {0, 1, 2, 3, 6})
    assert chunks >= 8 and 3 <= taken < chunks


def test_merged_cells_same_answer(run, tmp_path):
    path = raw_xlsx(tmp_path / "合并.xlsx", 12000, merged=True)
    for job in JOBS[:2]:
        whole, projected = answers(run, path, job, "1")
        assert whole == projected, job


def test_parse_problem_same_answer(run, tmp_path):
    path = raw_xlsx(tmp_path / "结束标签.xlsx", 12000, odd_end_tag=True)
    whole, projected = answers(run, path, JOBS[0], "1")
    assert whole == projected
    path = raw_xlsx(tmp_path / "注释.xlsx", 40000, comment=True)
    whole, projected = answers(run, path, JOBS[0], "2")
    assert whole == projected


@pytest.mark.parametrize("maker", [openpyxl_xlsx, ours_xlsx])
def test_other_writers_same_answer(run, tmp_path, maker):
    path = maker(tmp_path / ("%s.xlsx" % maker.__name__), 15000)
    for job in JOBS:
        whole, projected = answers(run, path, job, "1")
        assert whole == projected, job


@pytest.mark.parametrize("workers", ["1", "2"])
def test_pivot_same_answer(run, raw_file, workers, tmp_path):
    for job in ({"row": {"column": "区域"}, "col": {"column": "渠道"}, "value": "金额", "func": "sum"},
                {"row": {"column": "日期", "date_bucket": "month"}, "col": {"column": "门店"}, "value": "数量",
                 "func": "avg",
                 "where": [{"column": "金额", "op": "gt", "value": 100}]}):
        env = {"XLA_XLSX_WORKERS": workers}
        texts = []
        out = tmp_path / "透视.xlsx"
        for project in ("0", "1"):
            res = ok(run("pivot_table", dict(job, path=raw_file, out_path=str(out)),
                         extra_env=dict(env, XLA_XLSX_PROJECT=project)))
            out.unlink()
            texts.append(json.dumps(res, ensure_ascii=False))
        assert texts[0] == texts[1], job
