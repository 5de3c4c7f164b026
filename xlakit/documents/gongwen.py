"""The 公文's own elements (GB/T 9704-2012) around the text a model writes: the 红头 (发文机关标志,
发文字号, 签发人, the red separator line), the 署名 and 成文日期 under the body, and the 版记
(抄送, 印发机关 and 印发日期 between their lines) at the foot of the last page.

Why parameters and not markdown: these parts have fixed positions, fonts and colours a person
cannot type (a red 小标宋 line centred 35 mm below the top of the text block, a red rule the width
of the 版心, a date four characters in from the right with the 署名 centred over it); the model
passes their words (``write_document``'s ``gongwen`` object) and this module lays them out.

Positions (7.2–7.4 of the standard): 发文机关标志 red, 小标宋, centred, its top 35 mm below the
top of the 版心 (a 上行文 with 签发人 too); 发文字号 two lines below it, centred (or, with a 签发人,
one character in from the left with 「签发人：」 + 楷体 name one character in from the right on the
same line); the red separator line 4 mm under it, as wide as the 版心; two blank lines, then the
title. 成文日期 four characters in from the right, the 署名 centred over it, one blank line under
the body and kept on the body's last page (keep-with-next). 版记: 抄送 (四号仿宋, one character in
on both sides) and 印发机关/印发日期 (one character in from the left and the right) between a
0.35 mm first and last line and a 0.25 mm line between, as a table floated to the foot of the
last page's text block (in LibreOffice's PDF the export macro puts it there, on an even page:
``pdf_out``).
"""
from xml.sax.saxutils import escape

RED = "FF0000"
FIELDS = {"issuer": "发文机关标志（如「××市人民政府文件」）", "number": "发文字号（如「×政发〔2025〕12号」）",
          "signer": "签发人（上行文）", "signature": "署名（发文机关名称）", "date": "成文日期（如「2025年3月8日」）",
          "cc": "抄送机关（如「市委办公室，市人大常委会办公室。」）", "printer": "印发机关",
          "print_date": "印发日期（如「2025年3月8日印发」）"}
SPACER = "_XlaRecordSpacer"   # bookmark of the paragraph before the 版记 (pdf_out's export macro)
CHAR = 320                  # twips: one 三号 character
_NO_INDENT = '<w:ind w:firstLineChars="0" w:firstLine="0"/>'


def _fonts(font):
    return '<w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s" w:hint="eastAsia"/>' % (font, font, font)


def _run(text, font, size=32, color=None, extra=""):
    rpr = _fonts(font) + extra + ('<w:color w:val="%s"/>' % color if color else "") + \
        '<w:sz w:val="%d"/><w:szCs w:val="%d"/>' % (size, size)
    return '<w:r><w:rPr>%s</w:rPr><w:t xml:space="preserve">%s</w:t></w:r>' % (rpr, escape(text))


def _para(runs, ppr=""):
    return "<w:p><w:pPr>%s</w:pPr>%s</w:p>" % (ppr, runs)


def head_xml(params, fonts, width=8845):
    """The 红头: 发文机关标志, 发文字号 (with 签发人), the red line; "" without an issuer or number."""
    issuer, number, signer = params.get("issuer"), params.get("number"), params.get("signer")
    if not (issuer or number):
        return ""
    out = []
    if issuer:
        # 35 mm from the top of the 版心 to the top of the mark (a 36 pt line: its glyphs start ~2 mm in)
        size = 72 if len(issuer) <= 10 else (60 if len(issuer) <= 13 else 48)
        out.append(_para(_run(issuer, fonts["title"], size, RED),
                         '<w:spacing w:before="1757" w:after="0" w:line="240" w:lineRule="auto"/>%s<w:jc w:val="center"/>'
                         % _NO_INDENT))
        out.append(_para("", '<w:spacing w:before="0" w:after="0"/>%s' % _NO_INDENT))
    # the 发文字号 line carries the red separator line as its bottom border, 4 mm under the text
    rule = ('<w:pBdr><w:bottom w:val="single" w:sz="12" w:space="11" w:color="%s"/></w:pBdr>' % RED)
    if signer:
        # one character in on the left as an ideographic space, not an indent: a tab stop then counts
        # from the margin in Word and LibreOffice alike
        runs = (_run("\u3000" + (number or ""), fonts["body"]) + '<w:r><w:tab/></w:r>' + _run("签发人：", fonts["body"])
                + _run(signer, fonts["h2"]))
        out.append(_para(runs, '%s<w:tabs><w:tab w:val="right" w:pos="%d"/></w:tabs><w:spacing w:before="0" w:after="0"/>'
                               '<w:ind w:right="%d" w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="left"/>'
                         % (rule, width - CHAR, CHAR)))
    else:
        out.append(_para(_run(number or "", fonts["body"]),
                         '%s<w:spacing w:before="0" w:after="0"/>%s<w:jc w:val="center"/>' % (rule, _NO_INDENT)))
    out.append(_para("", '<w:spacing w:before="0" w:after="0"/>%s' % _NO_INDENT) * 2)
    return "".join(out)


def signature_xml(params, fonts):
    """署名 and 成文日期 under the body (a blank line first), kept together with the body's end."""
    sig, date = params.get("signature"), params.get("date")
    if not (sig or date):
        return ""
    keep = "<w:keepNext/><w:keepLines/>"
    out = [_para("", keep + _NO_INDENT)]
    date_w = _width(date or "") * CHAR
    right = 4 * CHAR
    if sig:
        sig_right = right + max(0, (date_w - _width(sig) * CHAR) / 2.0) if date else 2 * CHAR
        out.append(_para(_run(sig, fonts["body"]), '%s<w:ind w:right="%d" w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="right"/>'
                         % (keep if date else "<w:keepLines/>", int(sig_right))))
    if date:
        out.append(_para(_run(date, fonts["body"]), '<w:keepLines/><w:ind w:right="%d" w:firstLineChars="0" w:firstLine="0"/>'
                         '<w:jc w:val="right"/>' % right))
    return "".join(out)


def record_xml(params, fonts, width=8845, page_h=16838, bottom=1984):
    """The 版记 at the foot of the last page: a table of exact-height rows floated to the page
    position where its last line ends on the text block's last line (``page_h``/``bottom``: the
    page height and bottom margin, twips); "" without 抄送 and 印发."""
    cc, printer, pdate = params.get("cc"), params.get("printer"), params.get("print_date")
    if not (cc or printer or pdate):
        return ""
    rows = []
    cell = '<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/><w:vAlign w:val="center"/></w:tcPr>%s</w:tc>'
    ppr = '<w:spacing w:before="0" w:after="0" w:line="240" w:lineRule="auto"/>'
    if cc:
        text = cc if cc.startswith("抄送") else "抄送：" + cc
        rows.append(cell % (width, _para(_run(text, fonts["body"], 28),
                                         ppr + '<w:ind w:left="%d" w:right="%d" w:hanging="%d" w:firstLineChars="0"/>'
                                         % (CHAR + 3 * 280, CHAR, 3 * 280))))
    if printer or pdate:
        runs = (_run("\u3000" + (printer or ""), fonts["body"], 28) + "<w:r><w:tab/></w:r>"
                + _run(pdate or "", fonts["body"], 28))
        rows.append(cell % (width, _para(runs, ppr + '<w:tabs><w:tab w:val="right" w:pos="%d"/></w:tabs>'
                                         '<w:ind w:right="%d" w:firstLineChars="0" w:firstLine="0"/>'
                                         % (width - 280, 280))))
    borders = ('<w:tblBorders><w:top w:val="single" w:sz="8" w:space="0" w:color="000000"/>'
               '<w:left w:val="nil"/><w:bottom w:val="single" w:sz="8" w:space="0" w:color="000000"/>'
               '<w:right w:val="nil"/><w:insideH w:val="single" w:sz="6" w:space="0" w:color="000000"/>'
               '<w:insideV w:val="nil"/></w:tblBorders>')
    row_h = 579
    top = page_h - bottom - row_h * len(rows)
    # the spacer LibreOffice's export grows until the table sits on the text block's last lines
    # (pdf_out's macro: LibreOffice lays a floating table out inline, after the text); Word and WPS
    # place the table by tblpY and the spacer stays one twip high
    spacer = ('<w:p><w:pPr><w:snapToGrid w:val="0"/><w:spacing w:before="0" w:after="0" w:line="20" w:lineRule="exact"/>%s</w:pPr>'
              '<w:bookmarkStart w:id="9990" w:name="%s"/><w:bookmarkEnd w:id="9990"/></w:p>' % (_NO_INDENT, SPACER))
    return spacer + ('<w:tbl><w:tblPr><w:tblpPr w:leftFromText="0" w:rightFromText="0" w:vertAnchor="page" '
            'w:horzAnchor="margin" w:tblpXSpec="center" w:tblpY="%d"/><w:tblW w:w="%d" w:type="dxa"/>'
            '%s<w:tblLayout w:type="fixed"/><w:tblCellMar><w:left w:w="0" w:type="dxa"/>'
            '<w:right w:w="0" w:type="dxa"/></w:tblCellMar></w:tblPr><w:tblGrid><w:gridCol w:w="%d"/></w:tblGrid>%s</w:tbl>'
            '<w:p><w:pPr><w:snapToGrid w:val="0"/><w:spacing w:before="0" w:after="0" w:line="20" w:lineRule="exact"/>%s'
            '<w:rPr><w:sz w:val="2"/><w:szCs w:val="2"/></w:rPr></w:pPr></w:p>'
            % (top, width, borders, width, "".join('<w:tr><w:trPr><w:cantSplit/><w:trHeight w:val="%d" w:hRule="exact"/>'
                                                   '</w:trPr>%s</w:tr>' % (row_h, r) for r in rows), _NO_INDENT))


def _width(text):
    return sum(1.0 if ord(ch) > 0x2e7f else 0.5 for ch in text)


def check(value):
    """The ``gongwen`` parameter checked: a dict of known keys with string values; a Chinese
    message (InputError text) otherwise, None when fine."""
    if not isinstance(value, dict):
        return "gongwen 要给一个对象，如 {\"issuer\": \"××市人民政府文件\", \"number\": \"×政发〔2025〕12号\"}"
    for key, val in value.items():
        if key not in FIELDS:
            return "gongwen 里没有「%s」这一项；可用的有：%s" % (key, "、".join("%s（%s）" % kv for kv in FIELDS.items()))
        if val is not None and not isinstance(val, str):
            return "gongwen.%s 要给文字（字符串）" % key
    return None
