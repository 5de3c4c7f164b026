"""Issue 20, files people look at: a new workbook prints as a person expects (LibreOffice headless
-> PDF -> pages counted with pypdf): fit to the page width, landscape when wide, the header row
on every page. Skipped where LibreOffice is not installed (CI installs it)."""
import datetime
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, ok

openpyxl = pytest.importorskip("openpyxl")
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
sys.path.insert(0, os.path.join(ROOT, "tools", "pydeps"))
pypdf = pytest.importorskip("pypdf")


def _pdf(xlsx, tmp_path):
    profile = tmp_path / "lo-profile"
    subprocess.run([SOFFICE, "-env:UserInstallation=file://%s" % profile, "--headless", "--convert-to", "pdf",
                    "--outdir", str(tmp_path), str(xlsx)], capture_output=True, timeout=180, check=True)
    pdf = tmp_path / (os.path.splitext(os.path.basename(str(xlsx)))[0] + ".pdf")
    return pypdf.PdfReader(str(pdf))


def test_a_wide_pivot_prints_on_one_landscape_page(run, tmp_path):
    src = tmp_path / "全年.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["部门", "日期", "金额"])
    depts = ["销售一部", "销售二部", "财务部", "人事部", "研发中心", "行政部", "市场部", "客服部"]
    for m in range(1, 13):
        for d, dept in enumerate(depts):
            ws.append([dept, datetime.date(2024, m, 1 + d), 123456.78 + m * 1000 + d])
    wb.save(str(src))
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "部门"},
                                  "col": {"column": "日期", "date_bucket": "month"}, "value": "金额",
                                  "out_path": str(tmp_path / "透视.xlsx")}))
    assert data["column_count"] == 12
    sheet = openpyxl.load_workbook(data["path"]).active
    assert sheet.page_setup.orientation == "landscape" and sheet.page_setup.fitToWidth == 1
    assert sheet.sheet_properties.pageSetUpPr.fitToPage and sheet.freeze_panes == "B2"
    assert sheet.print_title_rows == "$1:$1"
    pdf = _pdf(data["path"], tmp_path)
    assert len(pdf.pages) == 1
    page = pdf.pages[0]
    assert float(page.mediabox.width) > float(page.mediabox.height)        # landscape
    text = page.extract_text()
    assert "2024-12" in text and "合计" in text                          # every column on the page


def test_a_long_filtered_table_repeats_its_header_on_every_page(run, tmp_path):
    src = tmp_path / "台账.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["序号", "客户名称", "金额", "备注"])
    for i in range(1, 301):
        ws.append([i, "客户%d" % i, "￥{:,.2f}".format(i * 10.5), "正常"])
    wb.save(str(src))
    data = ok(run("filter_table", {"path": str(src), "where": [{"column": "备注", "op": "eq", "value": "正常"}],
                                   "out_path": str(tmp_path / "筛选.xlsx")}))
    sheet = openpyxl.load_workbook(data["path"]).active
    assert sheet.page_setup.orientation == "portrait" and sheet.print_title_rows == "$1:$1"
    pdf = _pdf(data["path"], tmp_path)
    assert len(pdf.pages) >= 3
    for page in pdf.pages:
        assert "客户名称" in page.extract_text()
