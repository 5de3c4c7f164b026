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


def test_csv_encoding_and_delimiter_are_reported(run, tmp_path):
    src = tmp_path / "客户.csv"
    src.write_bytes("客户;金额\nC001;10\nC001 ;20\nＣ００１;5\nC002;7\nC002;8\n".encode("gbk"))
    for tool in ("probe_table", "read_spreadsheet"):
        data = ok(run(tool, {"path": str(src)}))
        assert data["encoding"] == "GBK" or data["encoding"].lower().startswith(("gbk", "gb18030")), data["encoding"]
        assert data["delimiter"] == ";"
    tab = tmp_path / "导出.txt"
    tab.write_bytes("名称\t金额\n甲\t3\n".encode("utf-8-sig"))
    data = ok(run("probe_table", {"path": str(tab)}))
    assert data["delimiter"] == "\t" and "utf" in data["encoding"].lower()
    xlsx = tmp_path / "表.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["a"])
    wb.save(str(xlsx))
    assert "delimiter" not in ok(run("probe_table", {"path": str(xlsx)}))


def test_probe_flags_near_duplicate_categories(run, tmp_path):
    src = tmp_path / "客户.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["客户", "金额"])
    for name, n in (("C001", 10), ("C001 ", 3), ("Ｃ００１", 2), ("C002", 6), ("C003", 1)):
        for _ in range(n):
            ws.append([name, 1])
    wb.save(str(src))
    data = ok(run("probe_table", {"path": str(src)}))
    col = next(c for c in data["columns"] if c["name"] == "客户")
    assert col["near_duplicates"] == [{"key": "C001", "rows": 15, "values": [
        {"value": "C001", "count": 10}, {"value": "C001 ", "count": 3}, {"value": "Ｃ００１", "count": 2}]}]
    assert any("「C001 」3 行" in w for w in data["warnings"])


def test_dedupe_shows_the_first_spelling_and_the_variants(run, tmp_path):
    src = tmp_path / "客户.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["客户", "金额"])
    for name in ("C001", "C002", "C001 ", "Ｃ００１", "C001 "):
        ws.append([name, 1])
    wb.save(str(src))
    data = ok(run("dedupe_table", {"path": str(src), "keys": ["客户"], "mode": "report",
                                   "out_path": str(tmp_path / "重复.xlsx")}))
    group = data["groups"][0]
    assert group["key"] == {"客户": "C001"} and group["count"] == 4
    assert group["variants"] == [{"客户": "C001"}, {"客户": "C001 "}, {"客户": "Ｃ００１"}]
    ws2 = openpyxl.Workbook()
    ws2.active.append(["客户"])
    for name in (" C009", "C009", "C009"):
        ws2.active.append([name])
    ws2.save(str(tmp_path / "二.xlsx"))
    data = ok(run("dedupe_table", {"path": str(tmp_path / "二.xlsx"), "keys": ["客户"], "out_path": str(tmp_path / "d.xlsx")}))
    assert data["groups"][0]["key"] == {"客户": " C009"}          # the first occurrence, as written
    assert data["groups"][0]["variants"] == [{"客户": " C009"}, {"客户": "C009"}]
