"""Issue 20, files people look at: file_info's read_with follows the readers' content sniffing,
probe_table/read_spreadsheet say how a csv was read, near-duplicate categories are flagged."""
import os
import shutil
import subprocess

import pytest

from conftest import ok

openpyxl = pytest.importorskip("openpyxl")
xlwt = pytest.importorskip("xlwt")


def _xls(path):
    book = xlwt.Workbook(encoding="utf-8")
    ws = book.add_sheet("表一")
    for r, row in enumerate([["名称", "金额"], ["甲", 3], ["乙", 4]]):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    book.save(str(path))


SPREADSHEET_ML = ('<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n'
                  '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
                  'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet ss:Name="S"><Table>'
                  '<Row><Cell><Data ss:Type="String">名称</Data></Cell></Row></Table></Worksheet></Workbook>')
WEB_XLS = ("<html><head><meta charset=gbk></head><body><table><tr><td>名称</td><td>金额</td></tr>"
           "<tr><td>甲</td><td>3</td></tr></table></body></html>")


def test_read_with_follows_the_readers_sniffing(run, tmp_path):
    files = {}
    files["real.xls"] = tmp_path / "real.xls"
    _xls(files["real.xls"])
    files["wps.et"] = tmp_path / "wps.et"
    shutil.copy(str(files["real.xls"]), str(files["wps.et"]))
    files["web.xls"] = tmp_path / "web.xls"
    files["web.xls"].write_bytes(WEB_XLS.encode("gbk"))
    files["ml.xls"] = tmp_path / "ml.xls"
    files["ml.xls"].write_text(SPREADSHEET_ML, encoding="utf-8")
    files["gbk.csv"] = tmp_path / "gbk.csv"
    files["gbk.csv"].write_bytes("名称,金额\n甲,3\n乙,4\n".encode("gbk"))
    files["utf16.csv"] = tmp_path / "utf16.csv"
    files["utf16.csv"].write_bytes("名称\t金额\n甲\t3\n".encode("utf-16"))
    files["导出.txt"] = tmp_path / "导出.txt"
    files["导出.txt"].write_bytes("名称\t金额\t备注\n甲\t3\t无\n乙\t4\t有\n".encode("gbk"))
    files["会议.txt"] = tmp_path / "会议.txt"
    files["会议.txt"].write_text("今天开会，讨论了三件事。\n第一，预算。\n第二，人员。\n", encoding="utf-8")
    files["文章.html"] = tmp_path / "文章.html"
    files["文章.html"].write_text("<html><body><p>一段话</p></body></html>", encoding="utf-8")
    want = {"real.xls": "read_spreadsheet", "wps.et": "read_spreadsheet", "web.xls": "read_spreadsheet",
            "ml.xls": "read_spreadsheet", "gbk.csv": "read_spreadsheet", "utf16.csv": "read_spreadsheet",
            "导出.txt": "read_spreadsheet", "会议.txt": "read_text_file", "文章.html": "read_text_file"}
    if shutil.which("soffice"):
        subprocess.run(["soffice", "--headless", "--convert-to", "fods", "--outdir", str(tmp_path),
                        str(files["real.xls"])], capture_output=True, timeout=120)
        if (tmp_path / "real.fods").exists():
            files["real.fods"] = tmp_path / "real.fods"
            want["real.fods"] = "read_spreadsheet"
    got = {name: ok(run("file_info", {"path": str(path)})).get("read_with") for name, path in files.items()}
    assert got == want
    # and the reader it names does read them
    for name, tool in want.items():
        if tool == "read_spreadsheet":
            ok(run("read_spreadsheet", {"path": str(files[name])}))
