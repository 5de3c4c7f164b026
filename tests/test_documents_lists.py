"""Automatic numbering in .docx and .doc (issue 26): the labels Word shows, which are not in the text.

The fixture numbered.docx is LibreOffice's export of numbered.fodt: outline numbering 一、/（一）
on the headings (chineseCounting-style formats in numbering.xml), a decimal list with a second
level shown as 1.1., a second list that restarts at 1, and a circled-number list. numbered.doc is
numbered.docx saved as Word 97 by LibreOffice (LST/LFO tables, sprmPIlfo on the paragraphs and
the heading styles): it must read exactly like the docx."""
import os

from conftest import FIXTURES, ok

DOCS = os.path.join(FIXTURES, "documents")

EXPECTED = """# 一、总则
## （一）目的
为规范公司采购行为，制定本办法。
## （二）适用范围
1. 总部各部门
  1.1. 行政部
  1.2. 财务部
2. 各分公司
# 二、采购流程
## （一）申请
1. 填写采购申请单
2. 部门负责人审批
所需材料：
① 报价单
② 合同草稿
③ 验收记录"""


def test_docx_numbering_as_word_shows_it(run):
    data = ok(run("read_document", {"path": os.path.join(DOCS, "numbered.docx")}))
    assert data["text"] == EXPECTED


def test_doc_numbering_reads_like_the_docx(run):
    data = ok(run("read_document", {"path": os.path.join(DOCS, "numbered.doc")}))
    assert data["format"] == "doc" and data["text"] == EXPECTED


def test_doc_numbering_from_word(run):
    """Apache POI's Lists.doc (saved by Word): bullets stay "-", a multi-level decimal list counts
    and restarts its sub-levels."""
    text = ok(run("read_document", {"path": os.path.join(DOCS, "poi", "Lists.doc")}))["text"]
    assert "1. Ordered list 1\n2. OL 2\n3. OL 3\n" in text
    assert "- Unordered list 1\n- UL 2\n" in text
    assert ("1. OL 1\n2. OL 2\n  2.1. OL 2.1\n  2.2. OL 2.2\n    2.2.1. OL 2.2.1\n    2.2.2. OL 2.2.2\n"
            "      2.2.2.1. OL 2.2.2.1\n    2.2.3. OL 2.2.3\n3. OL 3\n") in text


def test_doc_numbering_start_overrides(run):
    """POI's Bug52311.doc: heading numbering 1 / 1.1 / 2.3.1, then a list instance (LFO) that starts
    level 1 at 2 and level 2 at 99: "2.99", as Word shows it (POI's own test expects the same).
    ListEntryNoListTable.doc names a list it has no table for: no label, as in Word."""
    text = ok(run("read_document", {"path": os.path.join(DOCS, "poi", "Bug52311.doc")}))["text"]
    assert text.startswith("# 1 Introduction\n## 1.1 Context\n# 2 Ref\n## 2.1 Header 2.1\n")
    for label in ("2.3.1 Header 2.3.1", "2.99 Header 2.99", "2.99.1 Header 2.99.1", "2.100 Header 2.100",
                  "2.101 Header 2.101"):
        assert "## " + label + "\n" in text
    text = ok(run("read_document", {"path": os.path.join(DOCS, "poi", "ListEntryNoListTable.doc")}))["text"]
    assert "\nTable 3. System capacity" in text and "- Table 3" not in text


def test_number_formats():
    from xlakit.documents.numbering import chinese_number, format_number
    assert [chinese_number(n) for n in (1, 10, 11, 20, 21, 105, 110, 2024)] == \
        ["一", "十", "十一", "二十", "二十一", "一百零五", "一百一十", "二千零二十四"]
    assert format_number(3, "chineseLegalSimplified") == "叁"
    assert format_number(2, "ideographTraditional") == "乙"
    assert format_number(12, "decimalEnclosedCircle") == "⑫"
    assert format_number(28, "upperLetter") == "BB" and format_number(4, "lowerRoman") == "iv"
    assert format_number(7, "decimalZero") == "07"


def test_restart_and_legal_numbering():
    """startOverride restarts a list instance; isLgl shows 1.1 under a 第一章 level."""
    from xlakit.documents.numbering import Numbering
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    xml = ("<w:numbering %s><w:abstractNum w:abstractNumId=\"0\">"
           "<w:lvl w:ilvl=\"0\"><w:start w:val=\"1\"/><w:numFmt w:val=\"chineseCounting\"/>"
           "<w:lvlText w:val=\"第%%1章\"/></w:lvl>"
           "<w:lvl w:ilvl=\"1\"><w:start w:val=\"1\"/><w:numFmt w:val=\"decimal\"/><w:isLgl/>"
           "<w:lvlText w:val=\"%%1.%%2\"/></w:lvl></w:abstractNum>"
           "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/></w:num>"
           "<w:num w:numId=\"2\"><w:abstractNumId w:val=\"0\"/>"
           "<w:lvlOverride w:ilvl=\"0\"><w:startOverride w:val=\"1\"/></w:lvlOverride></w:num>"
           "</w:numbering>" % w).encode()
    n = Numbering(xml)
    assert [n.label("1", 0), n.label("1", 1), n.label("1", 1), n.label("1", 0), n.label("1", 1)] == \
        ["第一章", "1.1", "1.2", "第二章", "2.1"]
    assert n.label("2", 0) == "第一章"          # the second instance restarts
    assert n.label("0", 0) is None and n.label("9", 0) is None


def test_odt_numbering_reads_like_the_docx(run):
    """Issue 36: ODF list styles (text:list-level-style-number) and the outline style give the
    same labels LibreOffice shows; a numbered list used to come out as bullets, 一、总则 as 总则.
    The .odt is LibreOffice's own save of numbered.fodt, and the flat .fodt reads the same (it
    used to be returned as raw XML)."""
    for name in ("numbered.odt", "numbered.fodt"):
        data = ok(run("read_document", {"path": os.path.join(DOCS, name)}))
        assert data["text"] == EXPECTED, name
        assert data["title"] == "管理办法"


def test_odt_cross_reference_text_is_kept(run):
    """Issue 36: the text a cross-reference shows (text:bookmark-ref: a page number, a heading's
    text) used to be dropped, leaving "详见第  页“”一节"."""
    data = ok(run("read_document", {"path": os.path.join(DOCS, "xref.odt")}))
    assert data["text"] == "# 付款条件\n详见第 2 页“付款条件”一节。"
