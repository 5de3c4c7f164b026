"""PDF out (issue 28): write_document's format=pdf and the convert_document tool, both through
LibreOffice headless (``xlakit.documents.pdf_out``), and the whole chain a report takes:
calc_table -> draw_chart -> write_document (the chart picture and a table of the numbers) -> PDF,
checked on its pages (pdftotext text, pdfimages for the picture)."""
import os
import shutil
import subprocess
import time

import openpyxl
import pytest

from conftest import alive, ok, fail

HAS_LO = bool(shutil.which("soffice")) and bool(shutil.which("pdftotext")) and bool(shutil.which("pdfimages"))
needs_lo = pytest.mark.skipif(not HAS_LO, reason="LibreOffice (soffice) and poppler-utils are not installed: "
                              "apt-get install libreoffice-writer-nogui libreoffice-calc-nogui poppler-utils")


def workspace(home, *names):
    return os.path.join(str(home), ".xla", "workspace", *names)


def pages(pdf):
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, check=True).stdout.decode("utf-8")
    return text.split("\f")[:-1]


def images(pdf):
    """[(page, width, height)] of the pictures in a PDF (pdfimages -list)."""
    out = subprocess.run(["pdfimages", "-list", pdf], capture_output=True, check=True).stdout.decode()
    found = []
    for line in out.splitlines()[2:]:
        cols = line.split()
        if len(cols) > 4 and cols[2] == "image":
            found.append((int(cols[0]), int(cols[3]), int(cols[4])))
    return found


@needs_lo
def test_write_document_pdf_pages(run, home):
    text = "# 九月工作报告\n\n[TOC]\n\n## 一、概况\n\n本月完成**三项**任务。\n\n\\newpage\n\n## 二、下月计划\n\n- 继续推进"
    data = ok(run("write_document", {"path": "九月报告.docx", "format": "pdf", "text": text, "page_numbers": True,
                                     "header": "综合办公室"}))
    # a .docx path with format=pdf gives the .pdf beside it; no docx is left anywhere
    assert data["path"] == workspace(home, "九月报告.pdf") and data["format"] == "pdf" and data["pages"] == 2
    assert sorted(os.listdir(workspace(home))) == ["九月报告.pdf"]
    got = pages(data["path"])
    assert len(got) == 2 and "第1页共2页" in got[0].replace(" ", "") and "第2页共2页" in got[1].replace(" ", "")
    assert "综合办公室" in got[0] and "本月完成三项任务" in got[0].replace(" ", "") and "继续推进" in got[1]
    assert "共 2 页" in data["message"]
    # written again: the old PDF is backed up
    again = ok(run("write_document", {"path": "九月报告.pdf", "text": "# 改过的报告"}))
    assert again["action"] == "overwritten" and again["backup"] and again["pages"] == 1


def test_pdf_refusals(run, home, tmp_path):
    assert "不能追加" in fail(run("write_document", {"path": "a.pdf", "mode": "append", "text": "x"}))
    assert ".pdf 结尾" in fail(run("write_document", {"path": "a.txt", "format": "pdf", "text": "x"}))
    src = tmp_path / "表.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["a", 1])
    wb.save(str(src))
    missing = {"XLA_SOFFICE": "none"}
    for name, args in (("write_document", {"path": "b.pdf", "text": "正文"}), ("convert_document", {"path": str(src)})):
        error = fail(run(name, args, extra_env=missing))
        assert "LibreOffice" in error and "安装" in error and "另存为 PDF" in error
    assert not os.path.isdir(workspace(home)) or os.listdir(workspace(home)) == []
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    assert "已经是 PDF" in fail(run("convert_document", {"path": str(pdf)}))
    zipped = tmp_path / "x.zip"
    zipped.write_bytes(b"PK")
    assert "不是能转换的办公文件" in fail(run("convert_document", {"path": str(zipped)}))
    assert ".pdf 结尾" in fail(run("convert_document", {"path": str(src), "out_path": str(tmp_path / "y.docx")}))
    broken = tmp_path / "坏.docx"
    broken.write_bytes(b"not a document at all")
    error = fail(run("convert_document", {"path": str(broken)}))
    assert "坏.docx" in error and "不是办公文档" in error and "纯文本" in error


@needs_lo
def test_convert_document_docx_and_chart_workbook(run, home, tmp_path):
    ok(run("write_document", {"path": "说明.docx", "text": "# 说明\n\n第一段。"}))
    data = ok(run("convert_document", {"path": "说明.docx"}))
    assert data["path"] == workspace(home, "说明.pdf") and data["pages"] == 1
    assert "第一段" in pages(data["path"])[0]

    book = tmp_path / "收支.xlsx"
    ok(run("write_spreadsheet", {"path": str(book), "rows": [["月份", "收入"], ["1月", 100], ["2月", 160]],
                                 "chart": {"type": "bar", "title": "月度收入图"}}))
    out = tmp_path / "导出" / "收支.pdf"
    data = ok(run("convert_document", {"path": str(book), "out_path": str(out)}))
    assert data["path"] == str(out) and out.is_file()
    text = "".join(pages(str(out)))      # the table, then the chart on its own page (two print areas)
    assert "月度收入图" in text and "160" in text


@needs_lo
def test_whole_chain_calc_chart_report_pdf(run, home, tmp_path):
    """把9月费用按部门汇总，画个图，写成报告发给领导: every step a real tool."""
    src = tmp_path / "9月费用.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["日期", "部门", "金额"])
    for day, dept, amount in [(1, "销售部", 1200.5), (3, "行政部", 300), (8, "销售部", 800), (9, "技术部", 2500),
                              (15, "行政部", 450.25), (20, "技术部", 1000), (28, "销售部", 99.5)]:
        ws.append(["2024-09-%02d" % day, dept, amount])
    wb.save(str(src))
    calc = ok(run("calc_table", {"path": str(src), "group_by": ["部门"],
                                 "metrics": [{"column": "金额", "func": "sum", "as": "金额"}],
                                 "sort_by": "金额", "order": "desc"}))
    groups = [(g["部门"], g["金额"]) for g in calc["groups"]]
    assert groups == [("技术部", 3500), ("销售部", 2100), ("行政部", 750.25)]
    chart = ok(run("draw_chart", {"type": "bar", "title": "9月各部门费用", "labels": [g[0] for g in groups],
                                  "series": [{"name": "金额", "data": [g[1] for g in groups]}],
                                  "file_name": "9月各部门费用"}))
    table = "\n".join(["| 部门 | 金额（元） |", "| --- | --- |"] + ["| %s | %s |" % (d, "{:,.2f}".format(v)) for d, v in groups]
                      + ["| 合计 | %s |" % "{:,.2f}".format(sum(v for _d, v in groups))])
    text = ("# 9月费用报告\n\n## 一、总体情况\n\n9月共发生费用 %s 元，技术部最多。\n\n![9月各部门费用](%s){width=70%%}\n\n"
            "## 二、分部门明细\n\n%s\n\n\\newpage\n\n## 三、建议\n\n控制行政开支。" % (
                "{:,.2f}".format(sum(v for _d, v in groups)), chart["path"], table))
    report = ok(run("write_document", {"path": "9月费用报告.pdf", "text": text, "page_numbers": True}))
    assert report["pictures"] == 1 and report["tables"] == 1 and report["pages"] == 2
    got = pages(report["path"])
    first = got[0].replace(" ", "")
    assert "9月费用报告" in first and "6,350.25" in first and "图19月各部门费用" in first
    assert first.index("技术部3,500.00") < first.index("销售部2,100.00") < first.index("行政部750.25") \
        < first.index("合计6,350.25")
    assert "第1页共2页" in first and "第2页共2页" in got[1].replace(" ", "") and "控制行政开支" in got[1]
    pics = images(report["path"])
    assert len(pics) == 1 and pics[0][0] == 1 and pics[0][1] >= 600        # the PNG, on page 1, full size


def _fake_soffice(folder, body):
    """A stand-in soffice (a shell script): what the conversion does when LibreOffice hangs or fails."""
    script = folder / "soffice"
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    os.chmod(str(script), 0o755)
    return str(script)


@pytest.mark.skipif(os.name != "posix", reason="the stand-in soffice is a shell script")
def test_a_hanging_or_failing_libreoffice_is_stopped_and_explained(run, home, tmp_path):
    src = tmp_path / "说明.docx"
    ok(run("write_document", {"path": str(src), "text": "# 说明"}))
    hang = _fake_soffice(tmp_path, 'sleep 60 &\necho $! > "$(dirname "$0")/child.pid"\nwait\n')
    error = fail(run("convert_document", {"path": str(src)}, extra_env={"XLA_SOFFICE": hang, "XLA_DEADLINE": "10"}))
    assert "超过" in error and "已停止" in error and "另存为 PDF" in error
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)              # the whole process group went, not only the script
    broken = _fake_soffice(tmp_path, "echo 'Error: source file could not be loaded' >&2\nexit 1\n")
    error = fail(run("write_document", {"path": "坏.pdf", "text": "正文"}, extra_env={"XLA_SOFFICE": broken}))
    assert "没能把" in error and "could not be loaded" in error
    assert not os.path.isdir(workspace(home)) or [n for n in os.listdir(workspace(home)) if n.endswith(".pdf")] == []


def _toc_and_heading_pages(pdf, headings):
    """({heading: page number the TOC shows}, {heading: page the heading itself is on}) from the
    PDF's own text: a TOC line is the heading, dot leaders and a number."""
    import re
    shown, found = {}, {}
    for n, page in enumerate(pages(pdf), 1):
        for line in page.splitlines():
            flat = line.replace(" ", "")
            for h in headings:
                key = h.replace(" ", "")
                m = re.match(r"^%s[.…·]{3,}(\d+)$" % re.escape(key), flat)
                if m:
                    shown[h] = int(m.group(1))
                elif flat == key and h not in found:
                    found[h] = n
    return shown, found


@needs_lo
def test_pdf_toc_pages_are_the_pages_of_the_pdf(run, home):
    """Issue 37 item 1: the TOC LibreOffice exports counts its own pages (indexes updated before the
    export), not our estimate: wide Latin text, a tall table and short headings near page ends make
    the estimate miss, the PDF must not."""
    parts = ["# 年度工作报告", "[TOC]"]
    headings = []
    for n in range(8):
        h = "第%d部分 工作内容" % (n + 1)
        headings.append(h)
        parts.append("## " + h)
        for k in range(2 + (n * 5) % 7):
            # capitals are about twice the width the page estimate gives Latin text
            parts.append("WWWW MMMM QQQQ " * (8 + 3 * k) if n % 2 else "本段正文用来占据版面，说明本部分的情况。" * (4 + 2 * k))
        if n % 3 == 1:
            parts.append("| 单位 | 金额 | 合同编号 |\n|---|---|---|\n" + "\n".join(
                "| 华东区域采购管理中心第%d分部 | 3,124,500.00 | HT-2024-0100%d |" % (i, i) for i in range(9)))
    data = ok(run("write_document", {"path": "年度报告.pdf", "text": "\n\n".join(parts), "page_numbers": True}))
    shown, found = _toc_and_heading_pages(data["path"], headings)
    assert sorted(shown) == sorted(headings) and sorted(found) == sorted(headings)
    assert shown == found
    assert max(found.values()) >= 5          # the headings really spread over pages


@needs_lo
def test_written_money_columns_print_as_money_and_totals_bold(run, tmp_path):
    """Issue 37 item 9: a plain write_spreadsheet table's money columns are numbers in #,##0.00
    (not "15184" beside "1801.93"), its 合计 row bold; read from the printed PDF."""
    import re
    import zipfile
    rows = [["部门", "费用金额", "人数"], ["技术部", 15184, 12], ["销售部", 1801.93, 8], ["合计", 16985.93, 20]]
    path = str(tmp_path / "费用.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": rows}))
    with zipfile.ZipFile(path) as zf:
        assert 'formatCode="#,##0.00"' in zf.read("xl/styles.xml").decode()
    wb = openpyxl.load_workbook(path)
    ws = wb.active
    assert ws["B2"].value == 15184 and ws["B2"].number_format == "#,##0.00" and ws["C2"].number_format == "General"
    assert ws["A4"].font.b and ws["B4"].font.b and not ws["A2"].font.b
    pdf = str(tmp_path / "费用.pdf")
    ok(run("convert_document", {"path": path, "out_path": pdf}))
    text = pages(pdf)[0]
    assert "15,184.00" in text and "1,801.93" in text and "16,985.93" in text
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", pdf], capture_output=True).stdout.decode()
    fonts = dict(re.findall(r'<fontspec id="(\d+)"[^>]*family="([^"]+)"', xml))
    total = re.search(r'font="(\d+)"[^>]*>(?:<b>)?合计', xml)
    body = re.search(r'font="(\d+)"[^>]*>(?:<b>)?技术部', xml)
    assert total and body
    assert "Bold" in fonts[total.group(1)] or "<b>合计" in xml, fonts


def _ruled_lines(pdf, tmp_path, dpi=150):
    """(horizontal, vertical) counts of the long straight lines on the PDF's first page: pixel rows
    / columns holding a run of non-white pixels at least 2 cm long (a border, not a line of text)."""
    from xlakit.raster import png
    stem = str(tmp_path / "ruled")
    subprocess.run(["pdftoppm", "-r", str(dpi), "-f", "1", "-l", "1", "-png", pdf, stem], check=True)
    name = next(f for f in os.listdir(str(tmp_path)) if f.startswith("ruled") and f.endswith(".png"))
    w, h, rgb = png.decode(open(os.path.join(str(tmp_path), name), "rb").read())
    ink = [[sum(rgb[(y * w + x) * 3:(y * w + x) * 3 + 3]) < 690 for x in range(w)] for y in range(h)]
    long_run = dpi * 2 / 2.54

    def count(lines):
        found, last = 0, -5
        for i, cells in enumerate(lines):
            run = best = 0
            for v in cells:
                run = run + 1 if v else 0
                best = max(best, run)
            if best >= long_run:
                found += i != last + 1
                last = i
        return found
    return count(ink), count([[ink[y][x] for y in range(h)] for x in range(w)])


@needs_lo
def test_written_tables_print_with_thin_borders(run, tmp_path):
    """Issue 37 item 9: a table write_spreadsheet writes (with or without money columns) and a
    pivot table print with thin lines around every cell, blank cells too (a rule over the table's
    columns, not per-cell borders with holes); a derived copy (filter_table) stays plain. Counted
    on the rendered page."""
    import zipfile
    rows = [["部门", "项目", "备注"], ["技术部", "差旅", ""], ["销售部", "招待", "季度"], ["行政部", "", None]]
    path = str(tmp_path / "清单.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": rows}))
    pdf = str(tmp_path / "清单.pdf")
    ok(run("convert_document", {"path": path, "out_path": pdf}))
    (tmp_path / "a").mkdir()
    assert _ruled_lines(pdf, tmp_path / "a") == (5, 4)           # 4 rows, 3 columns: every cell closed
    money = [["部门", "类别", "费用金额"], ["技术部", "差旅", 15184], ["销售部", "招待", 1801.93], ["技术部", "招待", 2000.5]]
    path = str(tmp_path / "费用.xlsx")
    ok(run("write_spreadsheet", {"path": path, "rows": money}))
    with zipfile.ZipFile(path) as zf:
        assert "<conditionalFormatting" in zf.read("xl/worksheets/sheet1.xml").decode()
    pivot = ok(run("pivot_table", {"path": path, "row": {"column": "部门"}, "col": {"column": "类别"}, "value": "费用金额"}))
    pdf = str(tmp_path / "透视.pdf")
    ok(run("convert_document", {"path": pivot["path"], "out_path": pdf}))
    (tmp_path / "b").mkdir()
    assert _ruled_lines(pdf, tmp_path / "b") == (5, 5)           # header, 2 departments, 合计; 2 kinds + 合计
    plain = ok(run("filter_table", {"path": path, "where": [{"column": "费用金额", "op": "gt", "value": 0}]}))
    with zipfile.ZipFile(plain["path"]) as zf:
        assert "<conditionalFormatting" not in zf.read("xl/worksheets/sheet1.xml").decode()


@needs_lo
def test_preview_shows_the_first_page_and_layout_facts(run, home):
    """Issue 37 "let the model see what it made": preview=true answers with a PNG of the first page
    and the facts: pages, the fonts the PDF embeds, text running off the page."""
    import base64
    from xlakit.raster import png
    pytest.importorskip("pypdfium2")
    data = ok(run("write_document", {"path": "预览.pdf", "preview": True, "text": "# 九月工作报告\n\n本月完成三项任务。"}))
    facts = data["preview"]
    assert facts["pages"] == 1 and facts["overflow"] == {} and facts["fonts"]
    assert data["images"][0]["mime"] == "image/png"
    w, h, rgb = png.decode(base64.b64decode(data["images"][0]["data"]))
    assert w == 560 and abs(h / float(w) - 297 / 210.0) < 0.01
    assert any(sum(rgb[i:i + 3]) < 200 for i in range(0, len(rgb), 3))      # ink on the page
    # a docx is looked at through a PDF made in a scratch folder: nothing but the docx is left
    data = ok(run("write_document", {"path": "看看.docx", "preview": True, "style": "gongwen",
                                     "text": "# 关于开展检查的通知\n\n各部门：\n\n现将有关事项通知如下。"}))
    assert data["preview"]["pages"] == 1 and len(data["images"]) == 1
    assert any("Serif" in f for f in data["preview"]["fonts"])               # the 公文's serif roles, not one sans
    assert sorted(n for n in os.listdir(workspace(home)) if n.startswith("看看")) == ["看看.docx"]


@needs_lo
def test_preview_without_pypdfium2(run, home):
    """Issue 37: without pypdfium2 the first page still comes as a PNG through poppler's pdftoppm
    (overflow counted from pdftotext -bbox); without any renderer the answer says why there is no
    picture and what to install, and still gives the pages and fonts."""
    import base64
    from xlakit.raster import png
    data = ok(run("write_document", {"path": "预览.pdf", "preview": True, "text": "# 九月工作报告\n\n本月完成三项任务。"},
                  extra_env={"XLA_PREVIEW_RENDERER": "pdftoppm"}))
    facts = data["preview"]
    assert facts["pages"] == 1 and facts["fonts"] and "note" not in facts and facts["overflow"] == {}
    w, h, rgb = png.decode(base64.b64decode(data["images"][0]["data"]))
    assert w == 560 and abs(h / float(w) - 297 / 210.0) < 0.01
    assert any(sum(rgb[i:i + 3]) < 200 for i in range(0, len(rgb), 3))
    data = ok(run("write_document", {"path": "预览2.pdf", "preview": True, "text": "# 九月工作报告\n\n本月完成三项任务。"},
                  extra_env={"XLA_PREVIEW_RENDERER": "none"}))
    assert "images" not in data and data["preview"]["pages"] == 1 and data["preview"]["fonts"]
    assert "pypdfium2" in data["preview"]["note"] and "pdftoppm" in data["preview"]["note"]
