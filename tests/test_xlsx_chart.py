"""Native Excel charts (issue 28): write_spreadsheet's and pivot_table's ``chart`` parameter adds a
DrawingML chart part beside the data. Checked by openpyxl's read-back of the chart XML (the
series' ranges) and by LibreOffice: the workbook converted to ods keeps a chart object whose
series point at the right cells, and its PDF shows the chart's title and labels."""
import os
import re
import shutil
import subprocess
import zipfile

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference

from conftest import ok, fail

HAS_LO = bool(shutil.which("soffice")) and bool(shutil.which("pdftotext"))
needs_lo = pytest.mark.skipif(not HAS_LO, reason="LibreOffice (soffice) and poppler-utils are not installed: "
                              "apt-get install libreoffice-calc-nogui poppler-utils")
ROWS = [["月份", "收入", "支出"], ["1月", 100, 80], ["2月", 120, 90], ["3月", 90, 70], ["合计", 310, 240]]


def series(path, sheet=None):
    """[(kind, title, [(name ref, categories ref, values ref)])] of every chart on a sheet."""
    wb = openpyxl.load_workbook(str(path))
    ws = wb[sheet] if sheet else wb.active
    out = []
    for ch in ws._charts:
        title = None
        if ch.title is not None and ch.title.tx is not None and ch.title.tx.rich is not None:
            title = "".join(r.t for p in ch.title.tx.rich.p for r in (p.r or []))
        refs = [(s.tx.strRef.f if s.tx is not None and s.tx.strRef is not None else None,
                 (s.cat.strRef or s.cat.numRef).f if s.cat is not None else None, s.val.numRef.f) for s in ch.series]
        out.append((type(ch).__name__, title, refs))
    return out


def convert(paths, fmt, tmp_path):
    out = tmp_path / ("lo_" + fmt)
    subprocess.run(["soffice", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"), "--headless",
                    "--convert-to", fmt, "--outdir", str(out)] + [str(p) for p in paths], check=True, timeout=240,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [str(out / (os.path.splitext(os.path.basename(str(p)))[0] + "." + fmt)) for p in paths]


def ods_series(ods):
    """Every chart object of an ods: its class and each series' value/label cell ranges."""
    found = []
    with zipfile.ZipFile(ods) as zf:
        for name in sorted(n for n in zf.namelist() if re.match(r"Object \d+/content\.xml$", n)):
            xml = zf.read(name).decode("utf-8")
            kind = re.search(r'<chart:chart [^>]*chart:class="chart:(\w+)"', xml).group(1)
            found.append((kind, re.findall(r'chart:values-cell-range-address="([^"]*)"', xml)))
    return found


def test_new_workbook_bar_chart_by_column_names(run, tmp_path):
    target = tmp_path / "收支.xlsx"
    data = ok(run("write_spreadsheet", {"path": str(target), "rows": ROWS,
                                        "chart": {"type": "bar", "title": "一季度收支", "categories": "月份"}}))
    # the 合计 row stays out of the chart; every number column is a series named by its header
    assert data["chart"] == {"type": "bar", "title": "一季度收支", "categories": "A2:A4",
                             "values": [{"name": "收入", "range": "B2:B4"}, {"name": "支出", "range": "C2:C4"}]}
    assert "柱状图" in data["message"]
    assert series(target) == [("BarChart", "一季度收支", [
        ("'Sheet1'!$B$1", "'Sheet1'!$A$2:$A$4", "'Sheet1'!$B$2:$B$4"),
        ("'Sheet1'!$C$1", "'Sheet1'!$A$2:$A$4", "'Sheet1'!$C$2:$C$4")])]
    with zipfile.ZipFile(str(target)) as zf:
        names = zf.namelist()
        ct = zf.read("[Content_Types].xml").decode("utf-8")
        sheet = zf.read("xl/worksheets/sheet1.xml").decode("utf-8")
        drawing = zf.read("xl/drawings/drawing1.xml").decode("utf-8")
    assert {"xl/charts/chart1.xml", "xl/drawings/drawing1.xml", "xl/drawings/_rels/drawing1.xml.rels",
            "xl/worksheets/_rels/sheet1.xml.rels"} <= set(names)
    assert "drawingml.chart+xml" in ct and "/xl/drawings/drawing1.xml" in ct
    assert re.search(r'<pageSetup [^>]*/><drawing [^>]*r:id="rId1"/></worksheet>$', sheet)
    # beside the data: one blank column right of C, level with the header
    assert "<xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row>" in drawing
    # the rows are what they always were
    assert [list(r) for r in openpyxl.load_workbook(str(target)).active.iter_rows(values_only=True)] == ROWS


def test_line_and_pie_by_ranges_letters_and_defaults(run, tmp_path):
    line = tmp_path / "趋势.xlsx"
    ok(run("write_spreadsheet", {"path": str(line), "sheet": "月度", "rows": ROWS,
                                 "chart": {"type": "line", "categories": "A2:A4", "values": ["B2:B4", "C"]}}))
    assert series(line, "月度") == [("LineChart", None, [
        ("'月度'!$B$1", "'月度'!$A$2:$A$4", "'月度'!$B$2:$B$4"),
        ("'月度'!$C$1", "'月度'!$A$2:$A$4", "'月度'!$C$2:$C$4")])]
    pie = tmp_path / "占比.xlsx"
    data = ok(run("write_spreadsheet", {"path": str(pie), "rows": [["部门", "金额"], ["销售", 5], ["行政", 3]],
                                        "chart": {"type": "pie", "title": "费用占比"}}))
    assert data["chart"]["values"] == [{"name": "金额", "range": "B2:B3"}]
    assert series(pie) == [("PieChart", "费用占比", [("'Sheet1'!$B$1", "'Sheet1'!$A$2:$A$3", "'Sheet1'!$B$2:$B$3")])]


def test_bad_chart_parameters_refused_in_chinese_before_writing(run, tmp_path):
    target = tmp_path / "坏.xlsx"
    cases = [({"values": ["利润"]}, "「利润」在表头里找不到"),
             ({"categories": "A2:C9"}, "一组数据只能是一列"),
             ({"values": ["B9:B2"]}, "起点在终点之后"),
             ({"values": ["Sheet1!B2:B4"]}, "不要带工作表名"),
             ({"type": "pie", "values": ["收入", "支出"]}, "饼图只能画一组数据"),
             ({"categories": "A2:A4", "values": ["B2:B3"]}, "个数不一样"),
             ({"colour": "red"}, "不认识的字段")]
    for chart, words in cases:
        error = fail(run("write_spreadsheet", {"path": str(target), "rows": ROWS, "chart": chart}))
        assert words in error and "chart" in error, (chart, error)
        assert not target.exists()
    error = fail(run("write_spreadsheet", {"path": str(tmp_path / "a.csv"), "rows": ROWS, "chart": {}}))
    assert ".xlsx" in error and "draw_chart" in error and not (tmp_path / "a.csv").exists()


def make_chart_book(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "台账"
    for row in [["月份", "金额"]] + [["%d月" % i, i * 100] for i in range(1, 7)]:
        ws.append(row)
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=7), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=7))
    ws.add_chart(chart, "E2")
    wb.save(str(path))


@needs_lo
def test_append_keeps_and_grows_the_old_chart_adds_a_new_one_and_libreoffice_draws_both(run, tmp_path):
    target = tmp_path / "台账.xlsx"
    make_chart_book(target)
    data = ok(run("write_spreadsheet", {"path": str(target), "mode": "append", "rows": [["7月", 700], ["8月", 800]],
                                        "chart": {"type": "line", "title": "金额走势", "values": ["金额"]}}))
    assert data["action"] == "appended" and data["chart"]["values"] == [{"name": "金额", "range": "B2:B9"}]
    got = series(target, "台账")
    # the user's chart follows the table to the new last row; ours sits in the same drawing
    assert got[0] == ("BarChart", None, [("'台账'!B1", "'台账'!$A$2:$A$9", "'台账'!$B$2:$B$9")])
    assert got[1] == ("LineChart", "金额走势", [("'台账'!$B$1", "'台账'!$A$2:$A$9", "'台账'!$B$2:$B$9")])
    with zipfile.ZipFile(str(target)) as zf:
        drawing = zf.read("xl/drawings/drawing1.xml").decode("utf-8")
        assert not any(n.startswith("xl/drawings/drawing2") for n in zf.namelist())
    assert len(re.findall(r"</(?:\w+:)?graphicFrame>", drawing)) == 2

    fresh = tmp_path / "收支.xlsx"
    ok(run("write_spreadsheet", {"path": str(fresh), "rows": ROWS, "chart": {"title": "一季度收支"}}))
    ods_files = convert([target, fresh], "ods", tmp_path)
    assert sorted(ods_series(ods_files[0])) == [("bar", ["台账.B2:台账.B9"]), ("line", ["台账.B2:台账.B9"])]
    assert ods_series(ods_files[1]) == [("bar", ["Sheet1.B2:Sheet1.B4", "Sheet1.C2:Sheet1.C4"])]
    pdf = convert([fresh], "pdf", tmp_path)[0]
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, check=True).stdout.decode()
    assert "一季度收支" in text and "收入" in text.split("一季度收支", 1)[1]     # the chart's title and legend


def test_regenerating_a_chart_workbook_replaces_its_chart(run, tmp_path):
    target = tmp_path / "报表.xlsx"
    ok(run("write_spreadsheet", {"path": str(target), "rows": ROWS, "chart": {"title": "旧图"}}))
    data = ok(run("write_spreadsheet", {"path": str(target), "rows": ROWS[:3], "chart": {"type": "line", "title": "新图"}}))
    assert data["action"] == "replaced_sheet" and data["backup"]
    assert series(target) == [("LineChart", "新图", [("'Sheet1'!$B$1", "'Sheet1'!$A$2:$A$3", "'Sheet1'!$B$2:$B$3"),
                                                   ("'Sheet1'!$C$1", "'Sheet1'!$A$2:$A$3", "'Sheet1'!$C$2:$C$3")])]
    # without a new chart, replacing the sheet would drop the old one: refused as before
    error = fail(run("write_spreadsheet", {"path": str(target), "rows": ROWS}))
    assert "图表" in error and "allow_lossy_resave" in error


def test_pivot_table_chart_leaves_out_the_totals(run, tmp_path):
    src = tmp_path / "费用.xlsx"
    wb = openpyxl.Workbook()
    for row in [["部门", "月份", "金额"], ["销售", "1月", 100], ["销售", "2月", 50], ["行政", "1月", 30],
                ["行政", "2月", 20]]:
        wb.active.append(row)
    wb.save(str(src))
    out = tmp_path / "透视.xlsx"
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "部门"}, "col": {"column": "月份"},
                                  "value": "金额", "out_path": str(out), "chart": {"type": "bar", "title": "各部门"}}))
    assert data["chart"]["categories"] == "A2:A3"
    assert [v["name"] for v in data["chart"]["values"]] == ["1月", "2月"]
    assert series(out, data["out_sheet"])[0][2][0][1:] == ("'透视表'!$A$2:$A$3", "'透视表'!$B$2:$B$3")


def test_rows_above_totals_chart_stops_at_the_last_data_row(run, tmp_path):
    target = tmp_path / "费用台账.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "台账"
    for row in [["部门", "金额"], ["销售", 100], ["行政", 50], ["技术", 70]]:
        ws.append(row)
    ws.append(["合计", "=SUM(B2:B4)"])
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=4))
    ws.add_chart(chart, "E2")
    wb.save(str(target))
    data = ok(run("write_spreadsheet", {"path": str(target), "mode": "append", "rows": [["财务", 30], ["后勤", 20]],
                                        "chart": {"type": "pie", "title": "占比"}}))
    assert data["action"] == "inserted_above_totals" and data["totals_moved"] == {"from": 5, "to": 7}
    assert data["chart"]["categories"] == "A2:A6" and data["chart"]["values"] == [{"name": "金额", "range": "B2:B6"}]
    got = series(target, "台账")
    assert got[0][2] == [("'台账'!B1", "'台账'!$A$2:$A$6", "'台账'!$B$2:$B$6")]      # the old chart follows
    assert got[1] == ("PieChart", "占比", [("'台账'!$B$1", "'台账'!$A$2:$A$6", "'台账'!$B$2:$B$6")])
    values = [list(r) for r in openpyxl.load_workbook(str(target))["台账"].iter_rows(values_only=True)]
    assert values[-1] == ["合计", "=SUM(B2:B6)"]


@needs_lo
def test_a_chart_beside_the_table_does_not_shrink_its_print(run, tmp_path):
    """Issue 37 item 8: "fit to one page wide" took the chart's width too and printed the table at
    4 pt. The print area is the table and the chart as two areas: the table prints at its size
    (text lines about 11 pt high in the PDF), the chart on a page of its own."""
    rows = [["部门", "项目", "金额", "数量"]] + [["部门%d" % i, "项目名称%d" % i, 15184 + i * 1801.93, i]
                                                for i in range(30)]
    path = str(tmp_path / "带图表.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": rows,
                                 "chart": {"type": "bar", "title": "金额", "categories": "部门", "values": ["金额"]}}))
    with zipfile.ZipFile(path) as zf:
        workbook = zf.read("xl/workbook.xml").decode("utf-8")
    # 30 categories: the chart 24 rows tall (their labels turn), both areas in the print area
    assert "'Sheet1'!$A$1:$D$31,'Sheet1'!$F$1:$M$25" in workbook.replace("&apos;", "'")
    with zipfile.ZipFile(path) as zf:
        drawing = zf.read("xl/drawings/drawing1.xml").decode("utf-8")
        chart_xml = zf.read("xl/charts/chart1.xml").decode("utf-8")
    assert "<xdr:to><xdr:col>13</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>24</xdr:row>" in drawing
    # the value axis: titled with the series, numbers with thousands separators
    assert '<c:numFmt formatCode="#,##0" sourceLinked="0"/>' in chart_xml and "<a:t>金额</a:t>" in chart_xml
    pdf = str(tmp_path / "带图表.pdf")
    data = ok(run("convert_document", {"path": path, "out_path": pdf}))
    assert data["pages"] == 2
    xml = subprocess.run(["pdftotext", "-bbox", "-f", "1", "-l", "1", pdf, "-"], capture_output=True,
                         check=True).stdout.decode("utf-8")
    heights = [float(b) - float(a) for a, b in re.findall(r'yMin="([\d.]+)"[^>]*yMax="([\d.]+)"', xml)]
    assert heights and min(heights) > 9, heights[:5]          # 11 pt text, not 4 pt
    second = subprocess.run(["pdftotext", "-f", "2", "-l", "2", pdf, "-"], capture_output=True).stdout.decode()
    assert "项目名称29" not in second and "金额" in second      # the table on page 1, the chart on page 2


@needs_lo
def test_chart_axes_titled_and_numbered_on_the_printed_page(run, tmp_path):
    """Issue 37 item 9: a chart's category axis is titled with the category column's name and its
    value axis with the one series' name, read on LibreOffice's printed chart page; big figures
    get thousands separators (3,500,000), small ones (rates) keep their cells' format (0.12 is
    not shown as 0)."""
    rows = [["区域", "销售额"], ["华东", 3500000], ["华南", 2800000], ["华北", 1950000]]
    path = str(tmp_path / "销售.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": rows, "chart": {"type": "bar", "title": "各区域销售额"}}))
    with zipfile.ZipFile(path) as zf:
        chart_xml = zf.read("xl/charts/chart1.xml").decode("utf-8")
    cat_axis = re.search(r"<c:catAx>.*?</c:catAx>", chart_xml).group(0)
    assert "<a:t>区域</a:t>" in cat_axis and '<c:numFmt formatCode="#,##0" sourceLinked="0"/>' in chart_xml
    pdf = str(tmp_path / "销售.pdf")
    ok(run("convert_document", {"path": path, "out_path": pdf}))
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, check=True).stdout.decode()
    chart_page = [p for p in text.split("\f") if "各区域销售额" in p][0]
    assert "3,500,000" in chart_page or "3,000,000" in chart_page, chart_page
    words = [w for line in chart_page.splitlines() for w in line.split()]
    assert "区域" in words and "销售额" in words                    # both axis titles drawn
    rates = [["月份", "完成率"], ["1月", 0.82], ["2月", 0.91], ["3月", 0.12]]
    path = str(tmp_path / "完成率.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": rates, "chart": {"type": "line"}}))
    with zipfile.ZipFile(path) as zf:
        chart_xml = zf.read("xl/charts/chart1.xml").decode("utf-8")
    assert '<c:numFmt formatCode="#,##0"' not in chart_xml and "<a:t>月份</a:t>" in chart_xml
