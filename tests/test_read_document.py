"""read_document on real files of every format (LibreOffice-made, Apache POI's, hand-made GBK)."""
import os
import shutil

import pytest

from conftest import FIXTURES, ok, fail

DOCS = os.path.join(FIXTURES, "documents")
POI = os.path.join(DOCS, "poi")

REPORT_BODY = ["# 年度工作报告", "## 一、主要指标", "项目 | 目标 | 完成", "销售额 | 1200 万元 | 1350 万元",
               "新客户 |  | 320 家", "## 二、重点工作", "- 市场拓展：新增华东、华南两个办事处",
               "结语：明年继续努力。"]


def read(run, path, **kw):
    return ok(run("read_document", dict({"path": path}, **kw)))


@pytest.mark.parametrize("name", ["report.docx", "report.doc", "report.odt", "report.rtf"])
def test_report_structure(run, name):
    data = read(run, os.path.join(DOCS, name))
    text = data["text"]
    for line in REPORT_BODY:
        assert line in text.split("\n"), (name, line, text)
    # cp1252-range punctuation survives every producer
    assert "Sales grew “strongly” – by 12% – to €1.35m; it’s the best year." in text
    # field codes are not text, the field result is
    assert "HYPERLINK" not in text and "公司官网" in text
    assert data["title"] == "年度工作报告"
    assert data["total_chars"] == len(text) and data["next_offset"] is None and not data["truncated"]


def test_docx_and_odt_extras(run):
    for name in ("report.docx", "report.odt"):
        text = read(run, os.path.join(DOCS, name))["text"]
        assert "1. 第一步，完成调研" in text or "- 第一步，完成调研" in text
        assert "文本框里的说明文字" in text and text.count("文本框里的说明文字") == 1
        # notes, headers and footers come after the body, labelled
        body, _, rest = text.partition("【脚注】")
        assert "附件另行发送给各部门负责人。" in rest and "附件另行发送" not in body
        assert "【页眉】\n内部资料 请勿外传" in text and "【页脚】" in text


def test_doc_notes_come_after_the_body(run):
    """Footnotes and headers live after ccpText: they come after the body under 【脚注】 and
    【页眉】/【页脚】, as in docx, and the body keeps the note's reference mark where Word shows it
    (issue 36: LibreOffice shows "1" there)."""
    data = read(run, os.path.join(DOCS, "report.doc"))
    body, _, rest = data["text"].partition("【脚注】")
    assert "附件另行发送" not in body and "[1]\t附件另行发送给各部门负责人。" in rest.split("\n")
    assert data["format"] == "doc"
    # headers and footers after the notes, as in docx (the PlcfHdd's stories, each text once)
    assert rest.endswith("【页眉】\n内部资料 请勿外传\n【页脚】\n第 1 页") and "内部资料" not in body


def test_doc_footnote_and_endnote_marks(run):
    """POI's footnote.doc / endingnote.doc: auto-numbered marks as Word numbers them by default
    (footnotes 1, 2, endnotes i, ii), the notes after the body, each after its mark."""
    text = read(run, os.path.join(POI, "footnote.doc"))["text"]
    assert text.split("\n") == ["Test text[1][i]", "【脚注】", "[1]\tTestFootnote", "【尾注】", "[i]\tTestEndnote"]
    text = read(run, os.path.join(POI, "endingnote.doc"))["text"]
    assert text.split("\n") == ["Text, text[i], text.", "【尾注】", "[i]\tEnding note text"]


def test_doc_headers_and_footers(run):
    """POI's DiffFirstPageHeadFoot.doc: the odd-page and first-page header and footer stories
    (PlcfHdd), headers first, each under its label, after the body."""
    text = read(run, os.path.join(POI, "DiffFirstPageHeadFoot.doc"))["text"]
    body, _, rest = text.partition("【页眉】")
    assert "First header column" not in body and "The footer of the first page" not in body
    assert ("【页眉】" + rest).split("\n") == [
        "【页眉】", "First header column!\tMid header Right header!",
        "【页眉】", "I am the header on the first page, and I’m nice and simple",
        "【页脚】", "Footer Left\tFooter Middle Footer Right", "【页脚】", "The footer of the first page"]


def test_doc_table_stream_marked_as_storage(run):
    """A fuzzed POI file whose 1Table directory entry says "storage" though it has a size and
    sectors and no children: read as the stream it is (as LibreOffice does), with a warning,
    instead of refusing with "this file is not a stream". Its text is 14 NUL characters."""
    data = read(run, os.path.join(POI, "fuzz-table-as-storage.doc"))
    assert data["text"] == "" and "没有文字内容" in data["message"]
    assert any("损坏" in w and "另存" in w for w in data["warnings"])


def test_doc_compressed_pieces(run):
    data = read(run, os.path.join(POI, "simple.doc"))
    assert data["text"] == "This is a simple file created with Word 97-SR2."


def test_doc_table_and_lists(run):
    text = read(run, os.path.join(POI, "simple-table.doc"))["text"]
    assert "Cell 1,1 | Cell 1,2 | Cell 1,3\nCell 2,1 | Cell 2,2 | Cell 2,3" in text
    assert "This is a Word document that was created using Word 97 – SR2." in text
    lists = read(run, os.path.join(POI, "Lists.doc"))["text"]
    assert lists.startswith("# Heading Level 1\n")
    assert "- Unordered list 1" in lists


def test_doc_fast_saved_many_pieces(run):
    """rasp.doc (Russian form): a complex file whose text is spread over 34 pieces."""
    text = read(run, os.path.join(POI, "rasp.doc"))["text"]
    assert text.startswith("Распоряжение на выдачу информации из реестра")
    assert text.count("Открытое акционерное общество") == 2


def test_doc_fields_removed(run):
    text = read(run, os.path.join(POI, "test-fields.doc"))["text"]
    assert "MERGEFORMAT" not in text and "CREATEDATE" not in text
    assert text.startswith("19/11/2010 14:49:00")
    assert "Here is a link to a footnote" in text


def test_doc_errors(run):
    err = fail(run("read_document", {"path": os.path.join(POI, "PasswordProtected.doc")}))
    assert "加密" in err and "密码" in err
    err = fail(run("read_document", {"path": os.path.join(POI, "word2.doc")}, extra_env={"XLA_SOFFICE": "none"}))
    assert "Word 1.0/2.0" in err and "LibreOffice" in err and "另存为" in err    # read with it: test_documents_via_office


@pytest.mark.parametrize("source,fake,fmt", [
    ("report.rtf", "合同.doc", "rtf"), ("report.html", "网页版.doc", "html"), ("report.docx", "改名.doc", "docx"),
    ("report.doc", "金山.wps", "doc"), ("report.pdf", "扫描件.docx", "pdf")])
def test_format_by_content_not_suffix(run, tmp_path, source, fake, fmt):
    path = tmp_path / fake
    shutil.copy(os.path.join(DOCS, source), path)
    data = read(run, str(path))
    assert data["format"] == fmt
    assert "销售额" in data["text"]


def test_pdf_pages_and_encryption(run):
    data = read(run, os.path.join(DOCS, "report.pdf"))
    assert data["pages"] == 1 and data["text"].startswith("【第 1 页】")
    assert "销售额 1200 万元 1350 万元" in data["text"]
    # owner password only (print/copy restrictions): opened with the empty password
    assert "年度工作报告" in read(run, os.path.join(DOCS, "owner_only.pdf"))["text"]
    err = fail(run("read_document", {"path": os.path.join(DOCS, "password.pdf")}))
    assert "打开密码" in err


def test_scanned_pdf_is_not_an_empty_success(run):
    result = run("read_document", {"path": os.path.join(DOCS, "scanned.pdf")})
    err = fail(result)
    assert "扫描" in err and "共 2 页" in err and "OCR" in err


def test_gbk_rtf(run):
    text = read(run, os.path.join(DOCS, "gbk.rtf"))["text"]
    assert text.split("\n") == ["关于召开年度总结会议的通知", "Meeting: 2024-12-30，地点：三楼会议室。",
                                "各部门请准时参加", "部门 | 人数", "财务部 | 5", "此致"]


def test_gbk_html(run):
    data = read(run, os.path.join(DOCS, "gbk.html"))
    text = data["text"]
    assert text.startswith("# 关于国庆节放假安排的通知\n各部门：")
    assert "- 值班安排另行通知" in text and "日期 | 值班人\n10月1日 | 张三" in text
    assert "脚本" not in text and "首页" not in text and "font:" not in text
    assert data["title"] == "关于国庆节放假安排的通知"     # the page's own h1 beats the <title> with its site name


def test_pptx_slides(run):
    data = read(run, os.path.join(DOCS, "slides.pptx"))
    assert data["pages"] == 2
    text = data["text"]
    assert text.index("【第 1 页】") < text.index("项目汇报") < text.index("【第 2 页】") < text.index("十月底上线")


def test_md_and_txt(run, tmp_path):
    md = tmp_path / "说明.md"
    md.write_text("# 标题\n\n正文第一段\n\n\n\n- 列表\n", encoding="utf-8")
    data = read(run, str(md))
    assert data["text"] == "# 标题\n\n正文第一段\n\n- 列表" and data["title"] == "标题"
    txt = tmp_path / "gbk.txt"
    txt.write_bytes("中文记事本\r\n第二行".encode("gbk"))
    assert read(run, str(txt))["text"] == "中文记事本\n第二行"


def test_refusals(run, tmp_path):
    err = fail(run("read_document", {"path": os.path.join(FIXTURES, "dates.xlsx")}))
    assert "Excel 表格" in err
    empty = tmp_path / "空.docx"
    empty.write_bytes(b"")
    assert "空" in fail(run("read_document", {"path": str(empty)}))
    png = tmp_path / "图.doc"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    assert "图片" in fail(run("read_document", {"path": str(png)}))
    assert "找不到" in fail(run("read_document", {"path": str(tmp_path / "没有.docx")}))


def test_paging_long_document(run, tmp_path):
    """A long docx read in windows: pieces join up to the whole text, never over the cap."""
    from xlakit.documents import docx_write
    paras = ["第 %d 段：%s" % (n, "合同条款内容" * 20) for n in range(600)]
    data, _ = docx_write.new_document("\n\n".join(paras))
    path = tmp_path / "长合同.docx"
    path.write_bytes(data)
    first = run("read_document", {"path": str(path)})
    page = ok(first)
    assert len(first.stdout) <= 20000
    assert page["truncated"] and page["next_offset"] and page["total_chars"] is None   # not all extracted
    text = page["text"]
    offset = page["next_offset"]
    rounds = 0
    while offset is not None:
        page = read(run, str(path), offset=offset, max_chars=30000)
        assert page["offset"] == offset
        text += page["text"]
        offset = page["next_offset"]
        rounds += 1
        assert rounds < 20
    assert text == "\n".join(paras)
    assert page["total_chars"] == len(text)
    small = read(run, str(path), offset=5, max_chars=10)
    assert small["text"] == "\n".join(paras)[5:15] and small["next_offset"] == 15


def test_bad_parameters(run):
    assert "offset" in fail(run("read_document", {"path": os.path.join(DOCS, "report.docx"), "offset": 10 ** 7}))


def _docx(path, body):
    """A minimal .docx as Word writes one: the package parts and ``body`` inside w:body."""
    from test_documents_docx import _package
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    _package(path, '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="%s" '
             'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"><w:body>%s</w:body>'
             '</w:document>' % (w, body))


def test_docx_check_boxes_show_their_state(run, tmp_path):
    """Issue 36: form check boxes (FORMCHECKBOX fields, which show no text), Wingdings / Wingdings 2
    box symbols and content-control boxes come out as ☑/☐ (they used to be dropped)."""
    def field(state):
        return ('<w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Check1"/><w:enabled/>'
                '<w:checkBox><w:sizeAuto/>%s</w:checkBox></w:ffData></w:fldChar></w:r>'
                '<w:r><w:instrText xml:space="preserve"> FORMCHECKBOX </w:instrText></w:r>'
                '<w:r><w:fldChar w:fldCharType="end"/></w:r>' % state)

    def sym(font, char):
        return '<w:r><w:sym w:font="%s" w:char="%s"/></w:r>' % (font, char)

    def t(text):
        return '<w:r><w:t xml:space="preserve">%s</w:t></w:r>' % text
    body = ("<w:p>" + t("婚姻状况：") + field('<w:default w:val="1"/>') + t("已婚 ") + field('<w:default w:val="0"/>')
            + t("未婚 ") + field('<w:default w:val="0"/><w:checked/>') + t("其他") + "</w:p>"
            + "<w:p>" + t("是否党员：") + sym("Wingdings 2", "F052") + t("是 ") + sym("Wingdings 2", "F0A3") + t("否")
            + "</w:p><w:p>" + t("已阅读：") + sym("Wingdings", "F0FE") + t(" 同意 ") + sym("Wingdings", "F0A8")
            + t(" 不同意") + "</w:p><w:p><w:sdt><w:sdtPr><w14:checkbox><w14:checked w14:val=\"1\"/></w14:checkbox>"
            "</w:sdtPr><w:sdtContent>" + t("\u2612") + "</w:sdtContent></w:sdt>" + t(" 已提交") + "</w:p>")
    path = tmp_path / "表单.docx"
    _docx(path, body)
    text = ok(run("read_document", {"path": str(path)}))["text"]
    assert text.split("\n") == ["婚姻状况：☑已婚 ☐未婚 ☑其他", "是否党员：☑是 ☐否", "已阅读：☑ 同意 ☐ 不同意", "☒ 已提交"]


@pytest.mark.parametrize("name", ["report.docx", "report.odt", "slides.pptx", "report.pdf"])
def test_damaged_files_are_explained_in_chinese_only(run, tmp_path, name):
    """Issue 36: a file cut short used to be refused with the library's English in the middle
    ("File is not a zip file", "Stream has ended unexpectedly"); the reason is now Chinese."""
    import re
    with open(os.path.join(FIXTURES, "documents", name), "rb") as fh:
        data = fh.read()
    cut = tmp_path / ("cut_" + name)
    cut.write_bytes(data[:len(data) // 3])
    error = fail(run("read_document", {"path": str(cut)}))
    assert "损坏" in error or "不完整" in error, error
    assert not re.search(r"[A-Za-z]{3,} [A-Za-z]{2,}", error), error
