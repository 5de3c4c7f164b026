"""Formats people still send (issue 26): PowerPoint 97-2003 .ppt, Word 2003 XML, EPUB, Word 6.0/95.
Each read by the real read_document from a file a real producer wrote (LibreOffice, Apache POI's
test data, Word); see the README beside each fixture folder."""
import os

from conftest import FIXTURES, ok, fail

DOCS = os.path.join(FIXTURES, "documents")
POI = os.path.join(DOCS, "poi")


def read(run, path, **kw):
    return ok(run("read_document", dict({"path": path}, **kw)))


def test_ppt_slides_in_order_with_notes(run):
    data = read(run, os.path.join(DOCS, "ppt", "deck.ppt"))          # LibreOffice-made
    assert data["format"] == "ppt" and data["pages"] == 3
    text = data["text"]
    assert text.split("\n") == ["【第 1 页】", "项目汇报", "进度：已完成 80%", "风险：人手不足", "【备注】", "提醒：先讲预算",
                                "【第 2 页】", "下一步", "十月底上线 Café €5", "文本框里的字",
                                "【第 3 页】", "第三页 Summary", "【备注】", "结束时提问"]
    text = read(run, os.path.join(POI, "basic_test_ppt_file.ppt"))["text"]     # PowerPoint-made
    assert text.startswith("【第 1 页】\n## This is a test title\nThis is a test subtitle\nThis is on page 1\n"
                           "【备注】\nThese are the notes for page 1\n【第 2 页】\n## This is the title on page 2")


def test_encrypted_ppt(run):
    path = os.path.join(POI, "Password_Protected-hello.ppt")
    assert "password" in fail(run("read_document", {"path": path}))
    data = read(run, path, password="hello")
    assert "## This is a protected document" in data["text"] and "【备注】\nJust for the hell of it" in data["text"]
    assert data["encrypted"] is True and not data.get("warnings")


def test_wordml_reads_like_docx(run):
    docx = read(run, os.path.join(DOCS, "report.docx"))["text"]
    data = read(run, os.path.join(DOCS, "wordml", "report_lo.xml"))      # LibreOffice "MS Word 2003 XML"
    assert data["format"] == "wordml" and data["title"] == "年度工作报告"
    assert data["text"] == docx
    text = read(run, os.path.join(DOCS, "wordml", "word_style.xml"))["text"]   # Word's form: wx:t labels
    assert text.split("\n") == ["# 关于报送材料的通知", "各部门：", "## 一、报送内容", "  （一）年度总结", "  （二）预算表",
                                "## 二、时间要求", "- 3 月 15 日前报送", "部门 | 联系人", "财务处 | 张三 李四", "详见网站。",
                                "【脚注】", "预算表用附件模板。", "【页眉】", "某某单位文件"]
    assert "表格" in fail(run("read_spreadsheet", {"path": os.path.join(DOCS, "wordml", "report_lo.xml")}))


def test_epub_chapters_in_spine_order(run):
    # LibreOffice's EPUB export writes the chapters into the zip last first; the spine says the order
    data = read(run, os.path.join(DOCS, "epub", "book.epub"))
    assert data["format"] == "epub" and data["title"] == "员工手册"
    assert data["text"].split("\n") == ["第一章 总则", "本手册适用于全体员工。", "第二章 考勤", "工作时间为 9:00–18:00。",
                                        "假别 | 天数", "年假 | 5", "第三章 附则", "本手册由人事部负责解释。"]


def test_word95_text_in_its_code_page(run):
    data = read(run, os.path.join(POI, "Word6.doc"))
    assert data["format"] == "doc" and data["text"] == "The quick brown fox jumps over the lazy dog"
    assert any("Word 6.0/95" in w for w in data["warnings"])
    text = read(run, os.path.join(POI, "Bug60942.doc"))["text"]          # complex, cp1252 accents
    assert "Société APPLICOLOR" in text and "Suite à notre récent contact téléphonique" in text
    assert "Date | 12/12/97" in text.split("\n")
    # English language id, Russian bytes: the 8-bit text is scored (xlakit.text), not taken as cp1252
    assert read(run, os.path.join(POI, "Bug60942b.doc"))["text"] == "Четыре балла и семь лет"


def test_pptx_notes_and_master_text(run):
    data = read(run, os.path.join(DOCS, "pptx", "deck.pptx"))       # LibreOffice-made
    assert data["text"].split("\n") == [
        "【第 1 页】", "项目汇报", "进度：已完成 80%", "风险：人手不足", "内部资料 注意保密", "【备注】", "提醒：先讲预算",
        "【第 2 页】", "下一步", "十月底上线 Café €5", "文本框里的字", "内部资料 注意保密",
        "【第 3 页】", "第三页 Summary", "内部资料 注意保密", "【备注】", "结束时提问"]
    assert "单击" not in data["text"] and "Click" not in data["text"]     # no placeholder prompts


def test_pptx_chart_data_and_smartart(run):
    text = read(run, os.path.join(POI, "bar-chart.pptx"))["text"]          # PowerPoint-made
    assert text.split("\n") == ["【第 1 页】", "## My Bar Chart", "图表：Sales", "类别 | Sales", "1st Qtr | 8.2",
                                "2nd Qtr | 3.2", "3rd Qtr | 1.4", "4th Qtr | 1.2"]
    text = read(run, os.path.join(DOCS, "pptx", "chart.pptx"))["text"]             # LibreOffice-made
    assert text.split("\n") == ["【第 1 页】", "季度销售", "图表：2024 年销售额（万元）", "类别 | 华东 | 华南",
                                "一季度 | 120.5 | 98", "二季度 | 135 | 102.25", "三季度 | 150 | 110"]
    text = read(run, os.path.join(POI, "smartart-simple.pptx"))["text"]
    assert text.startswith("【第 1 页】\n- abc\n- def\n- ghi\nThis file contains a SmartArt diagram")
    text = read(run, os.path.join(POI, "smartart-rotated-text.pptx"))["text"]   # a child node, indented
    assert text == "【第 1 页】\n- abc\n- def\n- ghi\n  - jkl"


def test_phonetic_guides_read_the_same_in_doc_docx_and_odt(run):
    """Issue 36: a .doc with phonetic guides (ruby) answered "没有文字内容": Word writes them as EQ
    fields with no result. Base text then reading in brackets, the same in all three formats."""
    for name in ("ruby.doc", "ruby.docx", "ruby.fodt"):
        data = ok(run("read_document", {"path": os.path.join(FIXTURES, "documents", name)}))
        assert data["text"] == "ふりがなの例：東京（とうきょう）へ行きます。\n拼音：银行（yínháng）", name
