"""write_document: real .docx from markdown, round trips through read_document, opens in
LibreOffice, and appending keeps a user's document (image, table, header) byte-for-byte."""
import os
import posixpath
import re
import shutil
import subprocess
import zipfile
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES, ok, fail

DOCS = os.path.join(FIXTURES, "documents")
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

REPORT = """# 第三季度工作总结

本季度**销售额**同比增长 *12%*，客户满意度保持在 95% 以上。
同一段的第二行。

## 一、主要数据

| 指标 | 目标 | 完成 |
| --- | --- | --- |
| 销售额 | 1200 万 | 1350 万 |
| 新客户 | 300 | 320 |

## 二、下季度计划

- 拓展华东市场
- 上线新版系统
  - 子项：培训

1. 第一步
2. 第二步

---

###### 附注
未配对的 ** 星号原样保留。
"""


def check_package(path):
    """The OOXML structure Word insists on: content types for every part, rels that resolve."""
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        ct = ET.fromstring(zf.read("[Content_Types].xml"))
        ns = "{http://schemas.openxmlformats.org/package/2006/content-types}"
        defaults = {d.get("Extension").lower() for d in ct.iter(ns + "Default")}
        overrides = {o.get("PartName") for o in ct.iter(ns + "Override")}
        for name in names:
            if name.endswith("/"):
                continue
            assert "/" + name in overrides or name.rsplit(".", 1)[-1].lower() in defaults, name
        for o in overrides:
            assert o.lstrip("/") in names, o
        for rels in [n for n in names if n.endswith(".rels")]:
            base = posixpath.dirname(posixpath.dirname(rels))
            for rel in ET.fromstring(zf.read(rels)):
                if rel.get("TargetMode") == "External":
                    continue
                target = rel.get("Target")
                full = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
                assert full in names, (rels, target)
        for name in names:
            if name.endswith(".xml") or name.endswith(".rels"):
                ET.fromstring(zf.read(name))      # well-formed


def test_new_document_round_trip(run, home):
    data = ok(run("write_document", {"path": "总结.docx", "text": REPORT}))
    path = os.path.join(str(home), ".xla", "workspace", "总结.docx")
    assert data["path"] == path and data["action"] == "created" and data["backup"] is None
    assert data["headings"] == 4 and data["tables"] == 1 and data["list_items"] == 5
    check_package(path)
    text = ok(run("read_document", {"path": path}))["text"]
    for line in ["# 第三季度工作总结", "本季度销售额同比增长 12%，客户满意度保持在 95% 以上。\n同一段的第二行。",
                 "指标 | 目标 | 完成", "销售额 | 1200 万 | 1350 万", "- 拓展华东市场", "  - 子项：培训",
                 "1. 第一步", "2. 第二步", "###### 附注", "未配对的 ** 星号原样保留。"]:
        assert line in text, (line, text)


def test_styles_fonts_page(run, home):
    ok(run("write_document", {"path": "样式.docx", "text": REPORT}))
    path = os.path.join(str(home), ".xla", "workspace", "样式.docx")
    with zipfile.ZipFile(path) as zf:
        styles = ET.fromstring(zf.read("word/styles.xml"))
        doc = zf.read("word/document.xml").decode("utf-8")
    heads = {}
    for st in styles.iter(W + "style"):
        name = st.find(W + "name").get(W + "val")
        if name.startswith("heading "):
            heads[name] = st
    assert sorted(heads) == ["heading %d" % n for n in range(1, 7)]
    for n in range(1, 7):
        st = heads["heading %d" % n]
        assert st.find(W + "pPr/" + W + "outlineLvl").get(W + "val") == str(n - 1)
        assert st.find(W + "rPr/" + W + "rFonts").get(W + "eastAsia") == "黑体"
    default_fonts = styles.find(W + "docDefaults/" + W + "rPrDefault/" + W + "rPr/" + W + "rFonts")
    assert default_fonts.get(W + "eastAsia") == "宋体"
    assert 'w:pgSz w:w="11906" w:h="16838"' in doc          # A4
    assert "<w:b/>" in doc and "<w:i/>" in doc and "<w:tblBorders>" in doc and "<w:tblHeader/>" in doc
    assert "<w:pBdr>" in doc                                 # --- is a horizontal rule


def test_append_keeps_everything(run, tmp_path):
    path = tmp_path / "用户文档.docx"
    shutil.copy(os.path.join(DOCS, "with_image.docx"), path)
    with zipfile.ZipFile(path) as zf:
        before = {n: zf.read(n) for n in zf.namelist()}
    data = ok(run("write_document", {"path": str(path), "mode": "append",
                                     "text": "## 补充说明\n\n新增的一段，**加粗**。\n\n- 要点一\n\n| 甲 | 乙 |\n|---|---|\n| 1 | 2 |"}))
    assert data["action"] == "appended" and data["backup"]
    with zipfile.ZipFile(path) as zf:
        after = {n: zf.read(n) for n in zf.namelist()}
    changed = {n for n in before if before[n] != after.get(n)}
    assert changed <= {"word/document.xml", "word/styles.xml", "[Content_Types].xml", "word/_rels/document.xml.rels"}
    assert after["word/media/image1.png"] == before["word/media/image1.png"]
    assert after["word/header1.xml"] == before["word/header1.xml"]
    old_doc, new_doc = before["word/document.xml"].decode(), after["word/document.xml"].decode()
    sect = old_doc.rfind("<w:sectPr")
    assert new_doc.startswith(old_doc[:sect]) and new_doc.endswith(old_doc[sect:])   # spliced, not rewritten
    check_package(str(path))
    text = ok(run("read_document", {"path": str(path)}))["text"]
    assert text.index("用户原有的第一段。") < text.index("原表头甲 | 原表头乙") < text.index("用户原有的最后一段。") \
        < text.index("## 补充说明") < text.index("新增的一段，加粗。") < text.index("甲 | 乙")
    assert "- 要点一" in text and "【页眉】\n用户自己的页眉" in text
    assert os.path.exists(data["backup"])


def test_append_reuses_existing_heading_style(run, tmp_path):
    """Chinese Word names heading styles "1", "2"...: appending must use them, not add copies."""
    path = tmp_path / "中文模板.docx"
    ok(run("write_document", {"path": str(path), "text": "# 原标题\n\n原正文"}))
    with zipfile.ZipFile(path) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    parts["word/styles.xml"] = parts["word/styles.xml"].replace(b'w:styleId="Heading2"', b'w:styleId="2"')
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in parts.items():
            zf.writestr(n, d)
    ok(run("write_document", {"path": str(path), "mode": "append", "text": "## 新二级标题"}))
    with zipfile.ZipFile(path) as zf:
        doc = zf.read("word/document.xml").decode()
        styles = zf.read("word/styles.xml").decode()
    assert '<w:pStyle w:val="2"/>' in doc and styles.count("heading 2") == 1


def test_append_to_missing_file_creates_it(run, tmp_path):
    path = tmp_path / "新.docx"
    assert ok(run("write_document", {"path": str(path), "mode": "append", "text": "第一段"}))["action"] == "created"


def test_overwrite_backs_up(run, tmp_path):
    path = tmp_path / "覆盖.docx"
    ok(run("write_document", {"path": str(path), "text": "旧内容"}))
    data = ok(run("write_document", {"path": str(path), "text": "新内容"}))
    assert data["action"] == "overwritten" and os.path.exists(data["backup"])
    text = ok(run("read_document", {"path": str(path)}))["text"]
    assert text == "新内容"


def test_refusals(run, tmp_path, home):
    err = fail(run("write_document", {"path": str(tmp_path / "a.txt"), "text": "x"}))
    assert ".docx" in err
    fake = tmp_path / "假的.docx"
    shutil.copy(os.path.join(DOCS, "report.doc"), fake)
    err = fail(run("write_document", {"path": str(fake), "mode": "append", "text": "x"}))
    assert "不是 docx" in err
    err = fail(run("write_document", {"path": str(home / ".ssh" / "x.docx"), "text": "x"}))
    assert "ssh" in err.lower() or "SSH" in err


@pytest.mark.skipif(not shutil.which("soffice"), reason="LibreOffice (soffice) is not installed: "
                    "apt-get install libreoffice-writer-nogui to run the open-in-LibreOffice check")
def test_opens_in_libreoffice(run, tmp_path):
    path = tmp_path / "lo.docx"
    ok(run("write_document", {"path": str(path), "text": REPORT}))
    appended = tmp_path / "lo_append.docx"
    shutil.copy(os.path.join(DOCS, "with_image.docx"), appended)
    ok(run("write_document", {"path": str(appended), "mode": "append", "text": "## 追加标题\n\n- 追加要点"}))
    out = tmp_path / "out"
    profile = tmp_path / "profile"
    for src in (path, appended):
        subprocess.run(["soffice", "-env:UserInstallation=file://%s" % profile, "--headless", "--convert-to",
                        "txt:Text", "--outdir", str(out), str(src)], check=True, timeout=240,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = (out / "lo.txt").read_text(encoding="utf-8-sig")
    assert "第三季度工作总结" in text and "1350 万" in text and "子项：培训" in text
    text2 = (out / "lo_append.txt").read_text(encoding="utf-8-sig")
    assert "用户原有的第一段" in text2 and "追加标题" in text2 and "追加要点" in text2
    assert re.search(r"原表头甲", text2)


def test_numbered_list_goes_on_after_nested_bullets_and_italic_touching_cjk(run, tmp_path):
    """Issue 36: "1. 2. (nested bullets) 3." used to come out "1. 2. 1." in Word and PDF (the
    bullets started a new list and the number list after them started again); "*斜体*的" stayed
    as literal asterisks. Checked in our reader and in LibreOffice's own text export."""
    path = tmp_path / "清单.docx"
    text = "1. 第一步\n2. 第二步\n   - 甲项\n   - 乙项\n3. 第三步\n   - 丙项\n4. 第四步\n\n这是*斜体*的文字，a*b*c 不变。"
    ok(run("write_document", {"path": str(path), "text": text}))
    got = ok(run("read_document", {"path": str(path)}))["text"]
    for line in ["1. 第一步", "2. 第二步", "  - 甲项", "3. 第三步", "  - 丙项", "4. 第四步", "这是斜体的文字，a*b*c 不变。"]:
        assert line in got, (line, got)
    with zipfile.ZipFile(str(path)) as zf:
        body = zf.read("word/document.xml").decode("utf-8")
    assert re.search(r"<w:i/>.*?斜体", body)
    out, profile = tmp_path / "out", tmp_path / "profile"
    subprocess.run(["soffice", "-env:UserInstallation=file://%s" % profile, "--headless", "--convert-to",
                    "txt:Text", "--outdir", str(out), str(path)], check=True, timeout=240,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lo = (out / "清单.txt").read_text(encoding="utf-8-sig")
    assert re.search(r"3\.\s*第三步", lo) and re.search(r"4\.\s*第四步", lo), lo
