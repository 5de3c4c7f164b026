"""read_document on .docx files where LibreOffice's text and ours differed (issue 36, bench
``--peers``): Apache POI's files (tests/fixtures/documents/poi, Apache-2.0) and small packages
built here that show the same thing.

- Tracked changes: Word shows the document with its changes accepted (ECMA-376 Part 1 §17.13.5):
  ``w:del`` / ``w:moveFrom`` text is gone, ``w:ins`` / ``w:moveTo`` text stays, a deleted
  paragraph mark joins the paragraph to the next one, a deleted row is gone. LibreOffice's plain
  text keeps the deleted text ("s." and "b" for Tika-792.docx, whose final text is empty); that is
  the peer being wrong, and our answer says how much deleted text it left out.
- Several ``w:body`` elements (POI's MultipleBodyBug.docx): all of them are read, not the first.
"""
import os
import zipfile

from conftest import FIXTURES, ok

POI = os.path.join(FIXTURES, "documents", "poi")
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def read(run, path):
    return ok(run("read_document", {"path": str(path)}))


def _package(path, document, numbering=None, styles=None):
    """A .docx with ``document`` as word/document.xml (and ``numbering`` as word/numbering.xml,
    ``styles`` as word/styles.xml)."""
    with zipfile.ZipFile(str(path), "w") as zf:
        zf.writestr("[Content_Types].xml",
                    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                    'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
                    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override '
                    'PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
                    'wordprocessingml.document.main+xml"/></Types>')
        zf.writestr("_rels/.rels",
                    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
                    'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
                    'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        zf.writestr("word/document.xml", document)
        if numbering:
            zf.writestr("word/numbering.xml", numbering)
        if styles:
            zf.writestr("word/styles.xml", styles)


def _doc(*bodies):
    return ('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="%s">%s</w:document>'
            % (W_NS, "".join("<w:body>%s</w:body>" % b for b in bodies)))


def t(text):
    return '<w:r><w:t xml:space="preserve">%s</w:t></w:r>' % text


def deleted(text):
    return '<w:del w:id="9" w:author="张三"><w:r><w:delText xml:space="preserve">%s</w:delText></w:r></w:del>' % text


def inserted(text):
    return '<w:ins w:id="8" w:author="张三">%s</w:ins>' % t(text)


def test_poi_tracked_changes_read_as_accepted(run):
    """POI's files with revisions: what Word shows with the changes accepted, and a warning that
    says deleted text was left out (LibreOffice's plain text shows the deleted words too)."""
    # Tika-792: "s" deleted, "." deleted inside a move destination, "b" inserted then moved away
    data = read(run, os.path.join(POI, "Tika-792.docx"))
    assert data["text"] == ""
    assert any("已删除的 2 个字" in w for w in data["warnings"]), data
    # 58067: a heading deleted with its paragraph mark, and "only " deleted from a sentence
    data = read(run, os.path.join(POI, "58067.docx"))
    assert data["text"].split("\n") == ["# This is a test.", "3", "4", "5",
                                        "This is a whole paragraph where one word is deleted."]
    assert any("修订" in w for w in data["warnings"]), data
    # delins: two deleted list items (with hyperlink fields), inserted items kept
    text = read(run, os.path.join(POI, "delins.docx"))["text"]
    assert "pendant" not in text and "Tika Waylan" not in text and "DragonLance" not in text
    assert "- Apache Droids - an intelligent standalone robot framework - Thorsten Scherler. March 26th @ 15:00" in text
    assert "- A software module for extracting text from binary files." in text


def test_revision_marks_in_paragraphs_lists_and_tables(run, tmp_path):
    """Built like Word writes them: a deleted paragraph mark joins the text to the next paragraph
    (which keeps its list label; the joined one takes no number), moved text shows at its
    destination only, a deleted row is gone, inserted text is kept."""
    numbering = ('<w:numbering xmlns:w="%s"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
                 '<w:numFmt w:val="decimal"/><w:lvlText w:val="%%1."/></w:lvl></w:abstractNum>'
                 '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>' % W_NS)
    num = '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
    gone_mark = '<w:rPr><w:del w:id="3" w:author="张三"/></w:rPr>'
    body = ("<w:p>" + t("合同金额为") + deleted("壹万") + inserted("贰万") + t("元。") + "</w:p>"
            # paragraph mark deleted: "第一段" runs on into "第二段"
            + "<w:p><w:pPr>" + gone_mark + "</w:pPr>" + t("第一段") + "</w:p>"
            + "<w:p>" + t("第二段") + "</w:p>"
            # whole paragraph deleted, mark included: nothing left, no blank item
            + "<w:p><w:pPr>" + num + gone_mark + "</w:pPr>" + deleted("删掉的条款") + "</w:p>"
            + "<w:p><w:pPr>" + num + "</w:pPr>" + t("付款") + "</w:p>"
            + "<w:p><w:pPr>" + num + "</w:pPr>" + t("交货") + '<w:moveTo w:id="5" w:author="张三">'
            + t("（移来的）") + deleted("又删了") + "</w:moveTo></w:p>"
            + '<w:p><w:moveFrom w:id="6" w:author="张三">' + inserted("（移来的）") + "</w:moveFrom>" + t("结尾") + "</w:p>"
            + "<w:tbl><w:tr><w:tc><w:p>" + t("项目") + "</w:p></w:tc><w:tc><w:p>" + t("金额") + "</w:p></w:tc></w:tr>"
            + '<w:tr><w:trPr><w:del w:id="7" w:author="张三"/></w:trPr><w:tc><w:p>' + deleted("旧行")
            + "</w:p></w:tc><w:tc><w:p>" + deleted("1") + "</w:p></w:tc></w:tr>"
            + "<w:tr><w:tc><w:p><w:pPr>" + gone_mark + "</w:pPr>" + t("设") + "</w:p><w:p>" + t("备")
            + "</w:p></w:tc><w:tc><w:p>" + inserted("200") + "</w:p></w:tc></w:tr></w:tbl>")
    path = tmp_path / "修订.docx"
    _package(path, _doc(body), numbering)
    data = read(run, path)
    assert data["text"].split("\n") == ["合同金额为贰万元。", "第一段第二段", "1. 付款", "2. 交货（移来的）", "结尾",
                                        "项目 | 金额", "设备 | 200"], data["text"]
    assert any("已删除的 13 个字" in w for w in data["warnings"]), data


def test_no_warning_without_deleted_text(run, tmp_path):
    path = tmp_path / "plain.docx"
    _package(path, _doc("<w:p>" + t("正文") + inserted("补充") + "</w:p>"))
    data = read(run, path)
    assert data["text"] == "正文补充" and not data.get("warnings")


def test_every_body_is_read(run, tmp_path):
    """POI's MultipleBodyBug.docx has three w:body elements (the schema allows one); LibreOffice
    shows all three, we used to show the first only."""
    path = tmp_path / "three_bodies.docx"
    _package(path, _doc(*("<w:p>%s</w:p>" % t("START BODY %d 第 %d 部分 END BODY %d." % (n, n, n)) for n in (1, 2, 3))))
    assert read(run, path)["text"].split("\n") == ["START BODY %d 第 %d 部分 END BODY %d." % (n, n, n) for n in (1, 2, 3)]


def test_bullet_with_symbol_font_and_lone_num_id(run):
    """POI's NumberingWithOutOfOrderId.docx: a bullet list (Symbol font U+F0B7) through a w:num
    whose abstractNum id is not 0: a bullet item (LibreOffice prints "•", the bench ignores the
    bullet glyph)."""
    assert read(run, os.path.join(POI, "NumberingWithOutOfOrderId.docx"))["text"] == "- Level 1"


def test_alt_chunks_are_read_in_place(run, tmp_path):
    """``w:altChunk``: content Word imports when it opens the file. OA systems export a .docx
    whose whole text is one ``afchunk.mht`` (GBK, quoted-printable); report generators add HTML,
    RTF, plain text or another .docx this way. Each is read where it stands (LibreOffice 7.4's
    plain text shows none of them); a chunk in a format we cannot read is named in a warning."""
    import quopri
    page = ("<html><head><meta http-equiv=Content-Type content='text/html; charset=gb2312'></head><body>"
            "<h1>关于年度考核的通知</h1><p>各部门：请于本月底前提交考核表。</p>"
            "<table><tr><td>部门</td><td>人数</td></tr><tr><td>财务部</td><td>12</td></tr></table></body></html>")
    mht = (b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"----=mhtDocumentPart\"\r\n\r\n"
           b"------=mhtDocumentPart\r\nContent-Type: text/html; charset=\"gb2312\"\r\n"
           b"Content-Transfer-Encoding: quoted-printable\r\nContent-Location: file:///C:/mhtDocumentPart.htm\r\n\r\n"
           + quopri.encodestring(page.encode("gbk")) + b"\r\n------=mhtDocumentPart--\r\n")
    inner = tmp_path / "inner.docx"
    _package(inner, _doc("<w:p>%s</w:p>" % t("嵌入的 Word 文档")))
    parts = {"afchunk.mht": mht, "part2.htm": "<html><body><p>网页片段</p></body></html>".encode("utf-8"),
             "part3.rtf": b"{\\rtf1\\ansi\\ansicpg936{\\fonttbl{\\f0\\fcharset134 SimSun;}}\\f0 \\'c8\\'d5\\'d6\\'be\\par}",
             "part4.txt": "纯文字一行\n第二行".encode("utf-8"), "part5.docx": inner.read_bytes(),
             "part6.bin": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64}
    rels = "".join('<Relationship Id="c%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                   'aFChunk" Target="%s"/>' % (n, name) for n, name in enumerate(parts))
    body = ("<w:p>%s</w:p>" % t("前言") + "".join('<w:altChunk r:id="c%d"/>' % n for n in range(len(parts)))
            + "<w:p>%s</w:p>" % t("结尾"))
    path = tmp_path / "导出.docx"
    _package(path, _doc(body).replace("<w:document ", '<w:document xmlns:r="http://schemas.openxmlformats.org/'
                                      'officeDocument/2006/relationships" '))
    with zipfile.ZipFile(str(path), "a") as zf:
        zf.writestr("word/_rels/document.xml.rels", '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns='
                    '"http://schemas.openxmlformats.org/package/2006/relationships">%s</Relationships>' % rels)
        for name, data in parts.items():
            zf.writestr("word/" + name, data)
    data = read(run, path)
    assert data["text"].split("\n") == ["前言", "# 关于年度考核的通知", "各部门：请于本月底前提交考核表。", "部门 | 人数",
                                        "财务部 | 12", "网页片段", "日志", "纯文字一行", "第二行", "嵌入的 Word 文档",
                                        "结尾"], data["text"]
    assert any("part6.bin" in w for w in data["warnings"]), data


def test_list_through_a_list_style(run, tmp_path):
    """A list that uses a list style (w:numStyleLink: its abstractNum has no levels, the style's
    numPr names the list that has them) is numbered as that list style says, and shares its count;
    it used to come out as bullets."""
    numbering = ('<w:numbering xmlns:w="%s">'
                 '<w:abstractNum w:abstractNumId="0"><w:styleLink w:val="ChineseOutline"/>'
                 '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="chineseCounting"/><w:lvlText w:val="%%1、"/></w:lvl>'
                 '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="chineseCounting"/><w:lvlText w:val="（%%2）"/></w:lvl>'
                 '</w:abstractNum>'
                 '<w:abstractNum w:abstractNumId="5"><w:numStyleLink w:val="ChineseOutline"/></w:abstractNum>'
                 '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
                 '<w:num w:numId="7"><w:abstractNumId w:val="5"/></w:num></w:numbering>' % W_NS)
    styles = ('<w:styles xmlns:w="%s"><w:style w:type="numbering" w:styleId="ChineseOutline"><w:name w:val="中文大纲"/>'
              '<w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style></w:styles>' % W_NS)

    def item(text, ilvl, num="7"):
        return ('<w:p><w:pPr><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%s"/></w:numPr></w:pPr>%s</w:p>'
                % (ilvl, num, t(text)))
    path = tmp_path / "列表样式.docx"
    _package(path, _doc(item("总则", 0) + item("目的", 1) + item("范围", 1) + item("职责", 0, num="1")),
             numbering, styles)
    assert read(run, path)["text"].split("\n") == ["一、总则", "  （一）目的", "  （二）范围", "二、职责"]


def test_one_chunk_named_thousands_of_times_is_read_once(run, tmp_path):
    """A few KB of XML naming one 6 MB text part 3,000 times would be 19 GB of text (a deep
    ``offset`` once took 19 s and 2.1 GB): each chunk part is imported once, with a warning."""
    rels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="c1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/aFChunk" Target="chunk.txt"/></Relationships>')
    body = "<w:p>%s</w:p>" % t("开头") + '<w:altChunk r:id="c1"/>' * 3000 + "<w:p>%s</w:p>" % t("结尾")
    path = tmp_path / "重复引用.docx"
    _package(path, _doc(body).replace("<w:document ", '<w:document xmlns:r="http://schemas.openxmlformats.org/'
                                      'officeDocument/2006/relationships" '))
    with zipfile.ZipFile(str(path), "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/_rels/document.xml.rels", rels)
        zf.writestr("word/chunk.txt", ("一行重复的文字。" * 40 + "\n") * 20000)
    assert os.path.getsize(str(path)) < 200000
    res = run("read_document", {"path": str(path), "offset": 100000000})
    assert res.exit_code != 0 and "超过了文档总长度" in res.stderr
    total = int(res.stderr.split("超过了文档总长度")[1].split("字")[0].strip())
    assert total < 7000000
    last = ok(run("read_document", {"path": str(path), "offset": total - 100}))
    assert last["text"].endswith("结尾") and any("引用了多次" in w for w in last["warnings"]), last
