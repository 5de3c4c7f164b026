"""Reports people hand in (issue 28): pictures with numbered captions, page numbers, header, a
table of contents, landscape sections and the 公文 layout in write_document; the pages checked
in LibreOffice's PDF (pdftotext geometry) where LibreOffice is installed."""
import os
import re
import shutil
import struct
import subprocess
import zipfile
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES, ok, fail
from test_write_document import check_package

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
EMU_PER_TWIP = 635
HAS_LO = bool(shutil.which("soffice")) and bool(shutil.which("pdftotext"))
needs_lo = pytest.mark.skipif(not HAS_LO, reason="LibreOffice (soffice) and poppler-utils (pdftotext) are not "
                              "installed: apt-get install libreoffice-writer-nogui poppler-utils for the page checks")
MM = 72 / 25.4


def workspace(home, *names):
    return os.path.join(str(home), ".xla", "workspace", *names)


def chart(run, name="9月费用", kind="bar"):
    data = ok(run("draw_chart", {"type": kind, "title": name, "labels": ["差旅", "餐饮", "办公"],
                                 "series": [{"name": "金额", "data": [12300, 5600, 3100]}], "file_name": name}))
    return data["path"]


def parts(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def to_pdf(src, tmp_path):
    out = tmp_path / "pdf"
    subprocess.run(["soffice", "-env:UserInstallation=file://%s" % (tmp_path / "lo_profile"), "--headless",
                    "--convert-to", "pdf", "--outdir", str(out), str(src)], check=True, timeout=240,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return str(out / (os.path.splitext(os.path.basename(str(src)))[0] + ".pdf"))


def pdf_pages(pdf):
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, check=True).stdout.decode("utf-8")
    return text.split("\f")[:-1]


def page_sizes(pdf):
    info = subprocess.run(["pdfinfo", "-f", "1", "-l", "999", pdf], capture_output=True, check=True).stdout.decode()
    return [(float(w), float(h)) for w, h in re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)", info)]


def pdf_lines(pdf):
    """[(page, y_min, y_max, x_min, x_max, text)] of every text line, from pdftotext -bbox-layout."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", pdf, "-"], capture_output=True, check=True).stdout
    xml = re.sub(rb"<!DOCTYPE[^>]*>", b"", xml)
    root = ET.fromstring(xml)
    out = []
    ns = "{http://www.w3.org/1999/xhtml}"
    for n, page in enumerate(root.iter(ns + "page")):
        for line in page.iter(ns + "line"):
            words = list(line.iter(ns + "word"))
            text = "".join(w.text or "" for w in words)
            out.append((n + 1, float(line.get("yMin")), float(line.get("yMax")), float(line.get("xMin")),
                        float(line.get("xMax")), text))
    return out


# ---------------------------------------------------------------- pictures

def test_picture_scaled_to_text_width_with_numbered_caption(run, home):
    chart(run)
    text = ("# 9月费用报告\n\n各部门费用如下图。\n\n![9月费用按类别](charts/9月费用.png)\n\n"
            "再放一张小一点的。\n\n![同一张图，60%](charts/9月费用.png){width=60%}")
    data = ok(run("write_document", {"path": "图表报告.docx", "text": text}))
    assert data["pictures"] == 2 and "2 张图片" in data["message"]
    path = workspace(home, "图表报告.docx")
    check_package(path)
    p = parts(path)
    media = [n for n in p if n.startswith("word/media/")]
    assert media == ["word/media/xla_image1.png"]            # the same picture is stored once
    assert b'Extension="png" ContentType="image/png"' in p["[Content_Types].xml"]
    rels = p["word/_rels/document.xml.rels"].decode()
    assert re.search(r'Type="[^"]+/image" Target="media/xla_image1.png"', rels)
    doc = ET.fromstring(p["word/document.xml"])
    extents = [(int(e.get("cx")), int(e.get("cy"))) for e in doc.iter(WP + "extent")]
    full = (11906 - 1800 - 1800) * EMU_PER_TWIP                  # A4 text width
    assert extents[0][0] == full and abs(extents[0][1] - full * 500 / 800) <= 1        # 800 x 500 chart
    assert abs(extents[1][0] - full * 0.6) <= 1 and abs(extents[1][1] * 800 - extents[1][0] * 500) <= 800
    captions = [para for para in doc.iter(W + "p")
                if para.find(W + "pPr/" + W + "pStyle") is not None
                and para.find(W + "pPr/" + W + "pStyle").get(W + "val") == "Caption"]
    assert len(captions) == 2
    assert [c.find(W + "fldSimple").get(W + "instr").split() for c in captions] == [["SEQ", "图", "\\*", "ARABIC"]] * 2
    assert ["".join(t.text for t in c.iter(W + "t")) for c in captions] == ["图 1 9月费用按类别", "图 2 同一张图，60%"]
    styles = p["word/styles.xml"].decode()
    assert re.search(r'w:styleId="Caption"><w:name w:val="caption"/>', styles)
    read = ok(run("read_document", {"path": path}))["text"]
    assert "图 1 9月费用按类别" in read and read.index("各部门费用如下图") < read.index("图 1") < read.index("图 2")


def _bmp(width, height):
    row = (width * 3 + 3) // 4 * 4
    pixels = b"\xff\x80\x00" * width + b"\x00" * (row - width * 3)
    body = pixels * height
    header = struct.pack("<2sIHHI", b"BM", 54 + len(body), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, -height, 1, 24, 0, len(body), 3780, 3780, 0, 0)
    return header + info + body


def _gif(width, height):
    return (b"GIF89a" + struct.pack("<HH", width, height) + b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff"
            + b"\x2c\x00\x00\x00\x00" + struct.pack("<HH", width, height) + b"\x00\x02\x02\x44\x01\x00\x3b")


def test_jpeg_gif_bmp_sizes_from_their_headers(run, tmp_path):
    jpg = os.path.join(FIXTURES, "ocr", "invoice.jpg")
    (tmp_path / "方块.bmp").write_bytes(_bmp(40, 10))
    (tmp_path / "动图.gif").write_bytes(_gif(30, 60))
    target = tmp_path / "三种图.docx"
    text = "![发票](%s)\n\n![](方块.bmp)\n\n![竖图](%s)" % (jpg, tmp_path / "动图.gif")
    data = ok(run("write_document", {"path": str(target), "text": text}))
    assert data["pictures"] == 3
    check_package(str(target))
    p = parts(str(target))
    assert sorted(n.rsplit(".", 1)[-1] for n in p if n.startswith("word/media/")) == ["bmp", "gif", "jpeg"]
    ct = p["[Content_Types].xml"].decode()
    for ext, mime in (("jpeg", "image/jpeg"), ("gif", "image/gif"), ("bmp", "image/bmp")):
        assert 'Extension="%s" ContentType="%s"' % (ext, mime) in ct
    doc = ET.fromstring(p["word/document.xml"])
    (jw, jh), (bw, bh), (gw, gh) = [(int(e.get("cx")), int(e.get("cy"))) for e in doc.iter(WP + "extent")]
    with open(jpg, "rb") as fh:
        head = fh.read()
    sof = re.search(b"\xff[\xc0\xc2]..\x08(..)(..)", head, re.S)
    height, width = struct.unpack(">H", sof.group(1))[0], struct.unpack(">H", sof.group(2))[0]
    assert abs(jh / jw - height / width) < 0.01
    # the BMP names 96 dpi (3780 px/m): 40 x 10 px is tiny, blown up at most twice its own size
    assert abs(bw - 2 * 40 * 9525) < 200 and abs(bh - 2 * 10 * 9525) < 100
    assert abs(gh / gw - 2.0) < 0.01
    captions = [t.text for t in doc.iter(W + "t") if t.text and t.text.strip().startswith(("发票", "竖图"))]
    assert captions == [" 发票", " 竖图"]       # the BMP has no caption text, so no caption: 竖图 is 图 2
    assert b">2</w:t></w:r></w:fldSimple><w:r><w:t xml:space=\"preserve\"> \xe7\xab\x96\xe5\x9b\xbe" in p["word/document.xml"]


def test_missing_or_unsupported_picture_is_refused_before_writing(run, tmp_path, home):
    target = tmp_path / "原文档.docx"
    ok(run("write_document", {"path": str(target), "text": "原来的内容"}))
    before = target.read_bytes()
    err = fail(run("write_document", {"path": str(target), "text": "新的\n\n![图](charts/没有这张.png)"}))
    assert "没有这张.png" in err and "找不到" in err and "没有写入" in err
    (tmp_path / "假图.png").write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 32)
    err = fail(run("write_document", {"path": str(target), "text": "![图](%s)" % (tmp_path / "假图.png")}))
    assert "WebP" in err and "PNG" in err
    (tmp_path / "坏图.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    err = fail(run("write_document", {"path": str(target), "mode": "append", "text": "![图](%s)" % (tmp_path / "坏图.png")}))
    assert "损坏" in err
    assert target.read_bytes() == before
    err = fail(run("write_document", {"path": "新文件.docx", "text": "![图](%s)" % (home / ".ssh" / "id.png")}))
    assert not os.path.exists(workspace(home, "新文件.docx"))


def test_append_picture_keeps_every_existing_part(run, tmp_path, home):
    chart(run)
    path = tmp_path / "用户文档.docx"
    shutil.copy(os.path.join(FIXTURES, "documents", "with_image.docx"), path)
    before = parts(str(path))
    ok(run("write_document", {"path": str(path), "mode": "append",
                              "text": "## 附图\n\n![追加的图表](charts/9月费用.png){width=80%}\n\n再一张：\n\n![第二张](charts/9月费用.png)"}))
    after = parts(str(path))
    changed = {n for n in before if before[n] != after[n]}
    assert changed <= {"word/document.xml", "word/styles.xml", "[Content_Types].xml", "word/_rels/document.xml.rels"}
    assert set(after) - set(before) == {"word/media/xla_image1.png"}
    rels_before = before["word/_rels/document.xml.rels"].decode()
    rels_after = after["word/_rels/document.xml.rels"].decode()
    for rel in re.findall(r"<Relationship [^>]+/>", rels_before):
        assert rel in rels_after                                       # every old relationship as it was
    old_ids = set(re.findall(r'Id="([^"]+)"', rels_before))
    new_id = re.search(r'Id="([^"]+)"[^>]*Target="media/xla_image1.png"', rels_after).group(1)
    assert new_id not in old_ids
    check_package(str(path))
    doc = after["word/document.xml"].decode()
    ids = re.findall(r'<wp:docPr [^>]*?id="(\d+)"', doc)
    assert len(ids) == len(set(ids))                                   # drawing ids never collide
    styles = after["word/styles.xml"].decode()
    # the document's own caption style (LibreOffice names it "Caption") is reused, not copied
    assert styles.count('w:styleId="Caption"') == 1 and "Caption2" not in styles
    assert doc.count('<w:pStyle w:val="Caption"/>') == 2
    text = ok(run("read_document", {"path": str(path)}))["text"]
    assert text.index("用户原有的最后一段") < text.index("图 1 追加的图表") < text.index("图 2 第二张")
    # a second append numbers on from the captions already there
    ok(run("write_document", {"path": str(path), "mode": "append", "text": "![第三张](charts/9月费用.png)"}))
    assert "图 3 第三张" in ok(run("read_document", {"path": str(path)}))["text"]
    check_package(str(path))


# ---------------------------------------------------------------- furniture

REPORT = """# 9月费用报告

[TOC]

\\newpage

## 一、总体情况

9月各部门费用合计 **21,000** 元。

## 二、明细

### （一）分类

| 类别 | 金额 |
|---|---|
| 差旅 | 12300 |
| 餐饮 | 5600 |

<!-- landscape -->

## 三、各部门明细（宽表）

| 部门 | 1月 | 2月 | 3月 | 4月 | 5月 | 6月 | 7月 | 8月 | 9月 |
|---|---|---|---|---|---|---|---|---|---|
| 财务部 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 |

<!-- portrait -->

## 四、结论

完。
"""


def test_page_numbers_header_toc_and_landscape_structure(run, home):
    data = ok(run("write_document", {"path": "带目录.docx", "text": REPORT, "page_numbers": True,
                                     "header": "财务部 · 内部资料"}))
    assert "目录" in data["message"]
    path = workspace(home, "带目录.docx")
    check_package(path)
    p = parts(path)
    footer = p["word/footer1.xml"].decode()
    assert re.findall(r"<w:instrText[^>]*> (\w+) </w:instrText>", footer) == ["PAGE", "NUMPAGES"]
    assert "第 " in footer and " 页 共 " in footer
    assert "财务部 · 内部资料" in p["word/header1.xml"].decode()
    settings = p["word/settings.xml"].decode()
    assert '<w:updateFields w:val="true"/>' in settings
    doc = p["word/document.xml"].decode()
    assert '<w:fldChar w:fldCharType="begin" w:dirty="true"/>' in doc and 'TOC \\o "2-3" \\h \\z \\u' in doc
    # the report's title (the one level-1 heading, first): centred, kept out of the TOC (issue 37 item 7)
    assert re.search(r'<w:pStyle w:val="Heading1"/><w:jc w:val="center"/><w:outlineLvl w:val="0"/>', doc)
    sects = re.findall(r"<w:sectPr>.*?</w:sectPr>", doc)
    assert len(sects) == 3                                # portrait | landscape | portrait
    assert 'w:orient="landscape"' in sects[1] and 'w:orient' not in sects[0] + sects[2]
    for sect in sects:
        assert '<w:headerReference w:type="default"' in sect and '<w:footerReference w:type="default"' in sect
    marks = re.findall(r'w:anchor="(_TocXla\d+)"', doc)
    assert len(marks) == 5 and all('w:name="%s"' % m in doc for m in marks)
    text = ok(run("read_document", {"path": path}))["text"]
    assert "第 1 页 共 1 页" in text or "【页脚】" in text


@needs_lo
def test_report_pages_in_libreoffice(run, home, tmp_path):
    chart(run)
    text = REPORT.replace("完。", "完。\n\n![9月费用](charts/9月费用.png)")
    ok(run("write_document", {"path": "带目录.docx", "text": text, "page_numbers": True, "header": "财务部"}))
    pdf = to_pdf(workspace(home, "带目录.docx"), tmp_path)
    pages = pdf_pages(pdf)
    sizes = page_sizes(pdf)
    assert len(pages) == 4
    assert [w > h for w, h in sizes] == [False, False, True, False]         # the wide table's page is landscape
    for n, page in enumerate(pages):
        assert re.search(r"第\s*%d\s*页\s*共\s*4\s*页" % (n + 1), page), page       # footer fields computed
        assert "财务部" in page
    toc = dict((m.group(1).replace(" ", ""), int(m.group(2)))
               for m in re.finditer(r"^\s*(\S.*?)\s*\.{5,}\s*(\d+)\s*$", pages[0], re.M))
    assert toc == {"一、总体情况": 2, "二、明细": 2, "（一）分类": 2,
                   "三、各部门明细（宽表）": 3, "四、结论": 4}
    assert "图 1 9 月费用" in pages[3] or "图 1 9月费用" in pages[3]
    images = subprocess.run(["pdfimages", "-list", pdf], capture_output=True).stdout.decode()
    assert re.search(r"^\s+4\s+0\s+image\s+800\s+500", images, re.M)
    # the picture sits inside the margins: LibreOffice draws it at the text width
    lines = [l for l in pdf_lines(pdf) if l[0] == 4]
    assert min(l[3] for l in lines) >= 1800 / 20 - 1


@needs_lo
def test_gongwen_page_geometry(run, home, tmp_path):
    body = "一二三四五六七八九十" * 70
    text = ("# 关于做好2026年度费用管理工作的通知\n\n各部门：\n\n## 总体要求\n\n%s\n\n### 重点任务\n\n%s\n\n"
            "## 工作安排\n\n%s" % (body, body, body))
    data = ok(run("write_document", {"path": "通知.docx", "text": text, "style": "gongwen"}))
    path = workspace(home, "通知.docx")
    check_package(path)
    p = parts(path)
    doc = p["word/document.xml"].decode()
    assert '<w:pgMar w:top="2098" w:right="1474" w:bottom="1984" w:left="1587"' in doc
    assert '<w:docGrid w:type="lines" w:linePitch="579"/>' in doc
    assert "<w:evenAndOddHeaders/>" in p["word/settings.xml"].decode()
    styles = p["word/styles.xml"].decode()
    assert re.search(r'heading 1".*?w:eastAsia="方正小标宋简体".*?<w:sz w:val="44"/>', styles)
    assert re.search(r'heading 2".*?w:eastAsia="黑体"', styles) and re.search(r'heading 3".*?w:eastAsia="楷体"', styles)
    assert 'w:eastAsia="仿宋"' in styles and '<w:sz w:val="32"/>' in styles
    fonts = p["word/fontTable.xml"].decode()
    assert '<w:font w:name="仿宋"><w:altName w:val="FangSong"/>' in fonts
    read = ok(run("read_document", {"path": path}))["text"]
    assert "一、总体要求" in read and "（一）重点任务" in read and "二、工作安排" in read      # order numbers added
    assert data["headings"] == 4

    pdf = to_pdf(path, tmp_path)
    sizes = page_sizes(pdf)
    assert all(abs(w - 595.3) < 1 and abs(h - 841.9) < 1 for w, h in sizes)
    lines = pdf_lines(pdf)
    numbers = [l for l in lines if re.match(r"^[—–-]\d+[—–-]$", l[5])]
    body_lines = [l for l in lines if l not in numbers]
    page1 = [l for l in body_lines if l[0] == 1]
    # the text block: top 37 mm, left 28 mm, right edge 26 mm from the page edge, 225 mm high
    assert abs(min(l[3] for l in body_lines) - 28 * MM) < 1 * MM
    assert max(l[4] for l in body_lines) <= (210 - 26) * MM + 1 * MM
    assert max(l[2] for l in body_lines) <= (297 - 35) * MM + 1 * MM
    # 22 lines a page, 28.95 pt apart; 28 characters on a full line
    full = [l for l in body_lines if l[0] == 2]
    assert len(full) == 22
    # the glyphs of the first line: the 28.95 pt line starts at 37 mm, a 16 pt glyph sits at its foot
    assert 37 * MM < full[0][1] < 37 * MM + 28.95 - 14
    assert 37 * MM < page1[0][1] < 37 * MM + 28.95
    pitches = [b[1] - a[1] for a, b in zip(full, full[1:])]
    assert all(abs(x - 28.95) < 0.6 for x in pitches), pitches
    assert max(len(l[5]) for l in body_lines) == 28
    assert abs((full[-1][2] - full[0][1]) - (225 * MM - (28.95 - 16) )) < 3 * MM
    # the title: centred; page numbers outside: odd pages right, even pages left
    title = page1[0]
    assert abs((title[3] + title[4]) / 2 - (28 + 156 / 2) * MM) < 2 * MM
    assert title[2] - title[1] > 20                              # 二号 (22 pt) line
    odd = [l for l in numbers if l[0] % 2 == 1]
    even = [l for l in numbers if l[0] % 2 == 0]
    assert odd and even
    assert all(l[4] > (210 - 26 - 10) * MM for l in odd) and all(l[3] < (28 + 10) * MM for l in even)
    assert [l[5] for l in numbers] == ["—%d—" % (n + 1) for n in range(len(sizes))]


def test_refusals_for_new_parameters(run, tmp_path):
    result = run("write_document", {"path": str(tmp_path / "a.docx"), "text": "x", "style": "fancy"})
    assert not result.ok and "gongwen" in result.error           # the host checks the enum from tools.json
    ok(run("write_document", {"path": str(tmp_path / "b.docx"), "text": "x"}))
    err = fail(run("write_document", {"path": str(tmp_path / "b.docx"), "text": "y", "mode": "append",
                                      "page_numbers": True}))
    assert "新建" in err and "landscape" in err


def pdf_texts(pdf):
    """[(page, top, left, width, height, font family, colour, text)] of every text run, from
    pdftohtml -xml (poppler-utils): the font and colour each piece of text is drawn in."""
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", pdf], capture_output=True, check=True).stdout
    xml = re.sub(rb"<!DOCTYPE[^>]*>", b"", xml)
    root = ET.fromstring(xml)
    out = []
    for page in root.iter("page"):
        specs = dict((f.get("id"), (f.get("family"), f.get("color"))) for f in root.iter("fontspec"))
        for t in page.iter("text"):
            fam, color = specs.get(t.get("font"), ("", ""))
            out.append((int(page.get("number")), float(t.get("top")), float(t.get("left")), float(t.get("width")),
                        float(t.get("height")), fam.split("+")[-1], color, "".join(t.itertext())))
    return out


def _face_of(texts, want):
    return next(t[5] for t in texts if t[7].replace(" ", "").startswith(want))


@needs_lo
@pytest.mark.skipif(not subprocess.run(["fc-list", ":family=Noto Serif CJK SC"], capture_output=True).stdout
                    if shutil.which("fc-list") else True, reason="fonts-noto-cjk (Noto Serif CJK SC) is not installed")
def test_pdf_fonts_by_role_without_windows_fonts(run, home):
    """Issue 37 item 5: without Windows fonts, 宋体 body, 黑体 headings and the 公文's 小标宋 title /
    仿宋 body no longer collapse into one sans face: the PDF's own fonts (pdftohtml) are a serif
    CJK face for 宋体/小标宋/仿宋/楷体 and a sans one for 黑体; the docx keeps the Windows names."""
    gw = ok(run("write_document", {"path": "通知.pdf", "style": "gongwen", "text":
                                   "# 关于做好年度安全生产工作的通知\n\n各部门：\n\n为切实做好安全生产工作，现通知如下。\n\n"
                                   "## 总体要求\n\n坚持安全第一。\n\n### 压实责任\n\n各单位要落实主体责任。"}))
    texts = pdf_texts(gw["path"])
    title, body = _face_of(texts, "关于做好"), _face_of(texts, "为切实做好")
    h1, h2 = _face_of(texts, "一、总体要求"), _face_of(texts, "（一）压实责任")
    assert "Serif" in title and "Serif" in body and ("Serif" in h2 or "Kai" in h2), (title, body, h2)
    assert "Sans" in h1 or "Hei" in h1, h1
    report = ok(run("write_document", {"path": "报告.pdf", "text": "# 九月工作报告\n\n## 一、概况\n\n本月完成三项任务。"}))
    texts = pdf_texts(report["path"])
    assert "Serif" in _face_of(texts, "本月完成") and "Sans" in _face_of(texts, "一、概况")


COMPANIES = ["上海宏达建设工程有限公司", "北京数字化科技发展股份有限公司", "广州南方贸易有限公司", "杭州西湖软件有限公司",
             "深圳前海供应链管理有限公司", "成都天府物流集团有限公司", "武汉长江机电设备有限公司", "南京金陵医药有限公司"]


@needs_lo
def test_table_columns_sized_by_content_rows_whole_header_repeated(run, home):
    """Issue 37 item 6: numbers and codes never broken ("3,124,50 / 0", "HT- / 2024- / 01001"),
    company names not wrapped every few characters, no row split across pages, the header row on
    every page: read from the PDF's own lines."""
    rows = []
    for i in range(36):
        rows.append("| %s | HT-2024-0%04d | 华东区域采购管理中心第%d分部 | %s | %d | 2024-%02d-15 | 已完成付款审批流程，等待财务复核 |"
                    % (COMPANIES[i % 8], 1000 + i, i, "{:,.2f}".format(3124500 + i * 1037.5), 138912 + i, i % 12 + 1))
    text = ("# 合同台账\n\n<!-- landscape -->\n\n| 供应商 | 合同编号 | 采购单位 | 金额（元） | 数量 | 签订日期 | 备注 |\n"
            "|---|---|---|---|---|---|---|\n" + "\n".join(rows))
    data = ok(run("write_document", {"path": "合同台账.pdf", "text": text, "page_numbers": True}))
    lines = pdf_lines(data["path"])
    words = set(t for _p, _a, _b, _c, _d, t in lines)
    flat = " ".join(t for _p, _a, _b, _c, _d, t in lines)
    for i in range(36):
        amount = "{:,.2f}".format(3124500 + i * 1037.5)
        assert any(amount in t for t in words), amount                      # on one line, whole
        assert any("HT-2024-0%04d" % (1000 + i) in t for t in words)
        assert any(str(138912 + i) in t for t in words)
    # a company name takes at most two lines: its column is not three characters wide
    name_lines = [t for _p, _a, _b, _c, _d, t in lines if t and t[0] in "上北广杭深成武南" and "公司" not in t[:3]]
    assert all(len(t) >= 5 for t in name_lines if "HT-" not in t), name_lines[:5]
    npages = data["pages"]
    assert npages >= 3          # the title page, then the landscape table over two pages at least
    for page in range(1, npages + 1):
        on_page = [t for p, _a, _b, _c, _d, t in lines if p == page]
        if any("HT-2024" in t for t in on_page):
            assert any(t.startswith("供应商") for t in on_page), page       # the header row repeats
    # a row is whole on one page: its company name and its 备注's second line are on the same page
    by_row = {}
    for p, _a, _b, _c, _d, t in lines:
        m = re.search(r"HT-2024-0(\d{4})", t)
        if m:
            by_row[int(m.group(1))] = p
    assert len(by_row) == 36
    for page in range(1, npages + 1):
        codes = sum(1 for p in by_row.values() if p == page)
        tails = sum(1 for p, _a, _b, _c, _d, t in lines if p == page and "复核" in t)
        assert codes == tails, (page, codes, tails)        # no row's last line went to the next page


RED_HEAD = {"issuer": "××市人民政府文件", "number": "×政发〔2026〕12号", "signature": "××市人民政府",
            "date": "2026年3月8日", "cc": "市委办公室，市人大常委会办公室，市政协办公室。",
            "printer": "××市人民政府办公室", "print_date": "2026年3月8日印发"}


def _rows_with_red(pdf, page, dpi=72):
    """{y in pt: (x_min, x_max)} of the pixel rows of ``page`` holding pure red (pdftoppm)."""
    from xlakit.raster import png
    subprocess.run(["pdftoppm", "-r", str(dpi), "-f", str(page), "-l", str(page), "-png", pdf, pdf + "-p"], check=True)
    found = [f for f in os.listdir(os.path.dirname(pdf)) if f.startswith(os.path.basename(pdf) + "-p")]
    w, h, flat = png.decode(open(os.path.join(os.path.dirname(pdf), found[0]), "rb").read())
    rows = {}
    for y in range(h):
        xs = [x for x in range(w) if flat[(y * w + x) * 3] > 200 and flat[(y * w + x) * 3 + 1] < 60
              and flat[(y * w + x) * 3 + 2] < 60]
        if xs:
            rows[y * 72.0 / dpi] = (xs[0] * 72.0 / dpi, xs[-1] * 72.0 / dpi)
    return rows


@needs_lo
def test_gongwen_red_head_signature_and_record(run, home):
    """Issue 37 items 3 and 4 on the PDF: the 发文机关标志 red and centred 35 mm under the top of the
    版心, the 发文字号 centred under it, the red separator line as wide as the 版心 between the
    number and the title; 署名 centred over the 成文日期, the date four characters in from the right,
    both on the body's last page; the 版记 at the foot of that page; the page number 7 mm under the 版心."""
    body = "一二三四五六七八九十" * 30
    text = ("# 关于做好2026年度安全生产工作的通知\n\n各区县人民政府，市政府各部门：\n\n## 总体要求\n\n%s\n\n"
            "### 压实责任\n\n%s\n\n## 工作安排\n\n%s" % (body, body, body))
    data = ok(run("write_document", {"path": "红头通知.pdf", "text": text, "gongwen": RED_HEAD}))
    lines = pdf_lines(data["path"])
    texts = pdf_texts(data["path"])

    def line(want):
        return next(l for l in lines if l[5].replace(" ", "") == want)
    issuer, number = line("××市人民政府文件"), line("×政发〔2026〕12号")
    title = next(l for l in lines if l[5].startswith("关于做好"))
    centre = (28 + 156 / 2.0) * MM
    assert abs((issuer[3] + issuer[4]) / 2 - centre) < 2 * MM and abs((number[3] + number[4]) / 2 - centre) < 2 * MM
    assert abs(issuer[1] - (37 + 35) * MM) < 2.5 * MM, issuer[1] / MM
    assert next(t for t in texts if t[7].replace(" ", "") == "××市人民政府文件")[6].lower() == "#ff0000"
    assert issuer[2] < number[1] < number[2] < title[1]
    red = _rows_with_red(data["path"], 1)
    rule = [(y, xs) for y, xs in red.items() if number[2] < y < title[1]]
    assert rule, sorted(red)[:5]
    y, (x0, x1) = rule[0]
    assert abs(x0 - 28 * MM) < 1.5 * MM and abs(x1 - (210 - 26) * MM) < 1.5 * MM       # the 版心's width
    assert 2 * MM < y - number[2] < 7 * MM                                             # about 4 mm under the number
    # 署名 and 成文日期: on the page of the body's last line, the date 4 characters in from the right
    last_body = max((l for l in lines if "九十" in l[5]), key=lambda l: (l[0], l[1]))
    sig, date = line("××市人民政府"), line("2026年3月8日")
    assert sig[0] == date[0] == last_body[0]
    assert sig[1] > last_body[2] and date[1] > sig[2]
    assert abs(date[4] - ((210 - 26) * MM - 4 * 16)) < 1.5 * MM
    assert abs((sig[3] + sig[4]) / 2 - (date[3] + date[4]) / 2) < 2 * MM
    cc = next(l for l in lines if l[5].startswith("抄送"))
    printed = line("2026年3月8日印发")
    assert cc[0] == printed[0] and printed[4] > (210 - 26 - 8) * MM
    # the 版记 at the foot of the last page, an even one (封四): the body ends on page 3, so it is
    # page 4, without a page number (GB/T 9704 7.5); its last line on the 版心's last line (the text
    # block ends 262 mm from the top)
    assert date[0] == 3 and data["pages"] == printed[0] == 4 == max(l[0] for l in lines)
    assert (297 - 35 - 6) * MM < printed[2] <= (297 - 35) * MM, printed[2] / MM
    assert printed[1] - cc[1] < 12 * MM
    # the page number's line: 7 mm under the 版心 (262 mm from the top)
    numbers = [l for l in lines if re.match(r"^[—–-]\d+[—–-]$", l[5])]
    assert numbers and all(abs(l[1] - (297 - 35 + 7) * MM) < 1 * MM for l in numbers), [l[1] / MM for l in numbers]
    assert sorted(l[0] for l in numbers) == [1, 2, 3]                  # the 版记 page has none
    # a body ending on an even page with room: the 版记 at that page's foot, after the date
    short = {"signature": "××市人民政府", "date": "2026年3月8日", "cc": RED_HEAD["cc"], "printer": RED_HEAD["printer"],
             "print_date": RED_HEAD["print_date"]}
    two = ok(run("write_document", {"path": "两页.pdf", "gongwen": short,
                                    "text": "# 关于做好工作的通知\n\n各部门：\n\n" + "一二三四五六七八九十" * 42}))
    got = pdf_lines(two["path"])
    end = next(l for l in got if l[5].replace(" ", "") == "2026年3月8日印发")
    date2 = next(l for l in got if l[5].replace(" ", "") == "2026年3月8日")
    assert two["pages"] == end[0] == date2[0] == 2 and (297 - 35 - 6) * MM < end[2] <= (297 - 35) * MM
    # a one-page notice: the 版记 alone on page 2, unnumbered
    one = ok(run("write_document", {"path": "一页.pdf", "gongwen": short,
                                    "text": "# 关于做好工作的通知\n\n各部门：\n\n" + "一二三四五六七八九十" * 20}))
    got = pdf_lines(one["path"])
    end = next(l for l in got if l[5].replace(" ", "") == "2026年3月8日印发")
    assert one["pages"] == end[0] == 2 and not [l for l in got if l[0] == 2 and re.match(r"^[—–-]\d+[—–-]$", l[5])]
    # 签发人 (上行文): the number at the left, 「签发人：姓名」 at the right of the same line
    data = ok(run("write_document", {"path": "请示.pdf", "text": "# 关于申请专项经费的请示\n\n市政府：\n\n特此请示。",
                                     "gongwen": {"issuer": "××市财政局文件", "number": "×财发〔2026〕3号", "signer": "张三"}}))
    lines = pdf_lines(data["path"])
    number = next(l for l in lines if "财发" in l[5])
    signer = next(l for l in lines if "签发人" in l[5])
    assert abs(number[1] - signer[1]) < 1 and number[3] < 40 * MM and signer[4] > (210 - 26 - 10) * MM


KNOWN_PARAGRAPH = ("本季度公司围绕年度经营目标，统筹推进市场拓展、成本管控和内部管理各项工作，主要经营指标保持平稳增长。"
                   "营业收入同比增长百分之十二点四，毛利率较上年同期提高一点三个百分点，经营性现金流持续改善。") * 2


@needs_lo
def test_report_spacing_like_a_new_chinese_document(run, home):
    """Issue 37 item 7: a text of about 1,800 characters (a title, four chapters with a section,
    two paragraphs and three bullets each) is two A4 pages, as in a new WPS/Word document in
    Chinese (五号 single lines on the 15.6 pt grid, no space between paragraphs, a two-character
    first-line indent, compact headings); the old styles made it four. Read from the PDF."""
    text = "# 2026年第三季度工作总结\n\n"
    for n, head in enumerate(["总体情况", "重点工作进展", "存在的问题", "下季度工作安排"]):
        text += "## %s、%s\n\n### （一）主要指标\n\n%s\n\n%s\n\n" % ("一二三四"[n], head, KNOWN_PARAGRAPH, KNOWN_PARAGRAPH)
        text += "- 完成重点项目验收三项\n- 新签合同额一点二亿元\n- 培训员工四百余人次\n\n"
    data = ok(run("write_document", {"path": "季度总结.pdf", "text": text}))
    assert data["pages"] == 2
    lines = pdf_lines(data["path"])
    body = [l for l in lines if l[0] == 1 and ("经营" in l[5] or "增长" in l[5]) and l[2] - l[1] < 14]
    pitches = [round(b[1] - a[1], 1) for a, b in zip(body, body[1:]) if 0 < b[1] - a[1] < 30]
    assert pitches and all(abs(p - 15.6) < 0.8 for p in pitches), pitches
    # the first line of a paragraph starts two characters (21 pt) in from the margin, the rest at it
    starts = sorted(set(round(l[3]) for l in body))
    assert abs(starts[0] - 1800 / 20.0) < 1.5 and any(abs(s - (1800 / 20.0 + 21)) < 1.5 for s in starts), starts
    # a chapter heading: 12 pt before it and 6 after, not the old 17/16.5 pt with 2.41-line headings
    head = next(l for l in lines if l[5].startswith("二、重点工作进展"))
    above = max(l[2] for l in lines if l[0] == head[0] and l[2] < head[1])
    assert head[1] - above < 24, head[1] - above


def _ink_box(raw):
    """(x0, y0, x1, y1) of the pixels darker than light grey in a PNG."""
    from xlakit.raster import png
    w, h, rgb = png.decode(raw)
    xs, ys = [], []
    for y in range(0, h):
        row = rgb[y * w * 3:(y + 1) * w * 3]
        dark = [x for x in range(w) if sum(row[x * 3:x * 3 + 3]) < 300]
        if dark:
            xs += [dark[0], dark[-1]]
            ys.append(y)
    return min(xs), min(ys), max(xs), max(ys)


@needs_lo
def test_report_chart_at_print_resolution(run, home):
    """Issue 37 item 10: draw_chart's scale=2 draws the same layout with twice the pixels and says
    288 dpi, so in a report it keeps its size on the page and prints at about 280 ppi (pdfimages
    -list on the PDF) instead of about 139."""
    from xlakit.raster import png
    spec = {"type": "bar", "title": "各区域季度收入", "labels": ["一季度", "二季度", "三季度"], "unit": "元",
            "series": [{"name": "华东", "data": [34.5e6, 39.8e6, 45.2e6]}, {"name": "华北", "data": [28.5e6, -2.345e6, 37.9e6]}]}
    one = ok(run("draw_chart", dict(spec, file_name="收入1")))
    two = ok(run("draw_chart", dict(spec, file_name="收入2", scale=2)))
    assert (one["width"], one["height"]) == (800, 500) and (two["width"], two["height"]) == (1600, 1000)
    raw1, raw2 = open(one["path"], "rb").read(), open(two["path"], "rb").read()
    assert png.dpi_of(raw1) == 144.0 and png.dpi_of(raw2) == 288.0
    # the same layout, not a different chart: the ink's box at twice the coordinates
    box1, box2 = _ink_box(raw1), _ink_box(raw2)
    assert all(abs(b - 2 * a) <= 4 for a, b in zip(box1, box2)), (box1, box2)
    data = ok(run("write_document", {"path": "收入报告.pdf", "text": "# 收入报告\n\n![各区域季度收入](charts/收入2.png)\n\n"
                                     "![各区域季度收入](charts/收入1.png)"}))
    listing = subprocess.run(["pdfimages", "-list", data["path"]], capture_output=True, check=True).stdout.decode()
    rows = [l.split() for l in listing.splitlines()[2:] if l.split()[2:3] == ["image"]]
    ppi = dict((int(r[3]), (float(r[12]), float(r[13]))) for r in rows)
    assert ppi[1600][0] >= 270 and ppi[800][0] < 150, listing          # ~280 ppi vs ~139 ppi
    result = run("draw_chart", {"type": "bar", "labels": ["a"], "series": [{"name": "x", "data": [1]}], "scale": 5})
    assert not result.ok and "scale" in result.error           # the host checks the range from tools.json


@needs_lo
def test_wide_table_in_portrait_turns_its_page(run, home):
    """Issue 37: a table too wide for a portrait page (nine columns of codes, amounts and dates)
    gets a landscape section of its own, the text before and after stays portrait, the answer
    says so; a narrow table stays in portrait without a word. Page sizes from the PDF."""
    head = "| 序号 | 供应商 | 合同编号 | 采购单位 | 金额（元） | 数量 | 签订日期 | 付款日期 | 备注 |\n|" + "---|" * 9 + "\n"
    rows = "".join("| %d | 上海宏达建设工程有限公司 | HT-2024-0%04d | 华东区域采购管理中心 | 3,124,500.00 | 138912 | 2024-03-15 "
                   "| 2024-04-15 | 已完成付款审批 |\n" % (i, 1000 + i) for i in range(12))
    text = "# 合同台账\n\n前面的说明文字。\n\n" + head + rows + "\n后面的说明文字。\n\n| 区域 | 金额 |\n|---|---|\n| 华东 | 1,200.00 |"
    data = ok(run("write_document", {"path": "台账.pdf", "text": text, "page_numbers": True}))
    assert "第 1 个表格有 9 列" in data["message"] and "横向" in data["message"] and "第 2 个表格" not in data["message"]
    sizes = page_sizes(data["path"])
    assert [w > h for w, h in sizes] == [False, True, False]
    lines = pdf_lines(data["path"])
    pages_of = dict((t, p) for p, _a, _b, _c, _d, t in lines)
    assert pages_of["前面的说明文字。"] == 1 and pages_of["后面的说明文字。"] == 3
    words = " ".join(t for p, _a, _b, _c, _d, t in lines if p == 2)
    assert all("HT-2024-0%04d" % (1000 + i) in words for i in range(12)) and words.count("3,124,500.00") == 12
    # a docx written the same way carries the same sections
    ok(run("write_document", {"path": "台账.docx", "text": text}))
    doc = parts(workspace(home, "台账.docx"))["word/document.xml"].decode()
    assert doc.count('w:orient="landscape"') == 1 and doc.count("<w:sectPr") == 3


@needs_lo
def test_monthly_report_title_not_in_toc_bold_total_whole(run, home):
    """The monthly report of examples/: LibreOffice's updated TOC does not list the document title
    (it lists every outline level from 1 whatever \\o "2-3"; the export keeps the title out), and
    the bold 合计 row's amount is on one line (bold digits measured a tenth wider)."""
    text = ("# 9月经营月报\n\n[TOC]\n\n\\newpage\n\n## 一、总体情况\n\n本月收入平稳。\n\n## 二、分区域明细\n\n"
            "| 区域 | 合同编号 | 收入（元） | 利润（元） | 备注 |\n|---|---|---|---|---|\n"
            "| 华东区域营销管理中心 | HT-2024-01001 | 18,452,300.00 | 1,204,500.00 | 完成全年目标的 78% |\n"
            "| 华北区域营销管理中心 | HT-2024-01003 | 9,021,700.00 | -234,500.00 | 开办费用集中发生 |\n"
            "| 合计 | | 45,213,600.00 | 2,138,300.00 | |\n\n## 三、下月安排\n\n继续控制费用。")
    data = ok(run("write_document", {"path": "月报.pdf", "text": text, "page_numbers": True}))
    pages = pdf_pages(data["path"])
    toc = re.findall(r"^\s*(\S.*?)\s*\.{5,}\s*(\d+)\s*$", pages[0], re.M)
    assert [t.replace(" ", "") for t, _p in toc] == ["一、总体情况", "二、分区域明细", "三、下月安排"], toc
    assert [int(p) for _t, p in toc] == [2, 2, 2]
    lines = pdf_lines(data["path"])
    assert any("45,213,600.00" in l[5] for l in lines) and any("2,138,300.00" in l[5] for l in lines)
