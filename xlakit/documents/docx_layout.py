"""Page furniture of a hand-written .docx: page size and orientation per section, header text,
page-number footers, the table-of-contents field, and the 公文 (GB/T 9704-2012) layout.

Why these choices:
- Page numbers are PAGE / NUMPAGES fields ("第 X 页 共 Y 页"), so every page counts itself in Word,
  WPS and LibreOffice; the digits written as field results are only placeholders.
- The table of contents is a real TOC field (\\o "1-3" \\h \\z \\u) marked dirty, with
  ``updateFields`` in settings.xml, so Word and WPS rebuild it on open; its entries are written
  already (heading text, a dotted tab, a PAGEREF to a bookmark on the heading) so LibreOffice and
  any reader that does not update fields still show a filled table. LibreOffice keeps a TOC's
  written result as it is (it updates neither the TOC nor the PAGEREFs inside it on load), so the
  page numbers written are estimated by paginating the blocks (``estimate_pages``); Word/WPS
  replace them with the real ones.
- 公文: A4, margins 37/35/28/26 mm (top/bottom/left/right), 22 lines × 28 characters: a line
  grid (docGrid lines, linePitch 579 = 225 mm / 22) with exact 28.95 pt lines, and characters
  spaced -0.25 pt (28 × 三号 16 pt is 158 mm, the 版心 is 156 mm). Not a character grid
  (linesAndChars, charSpace -842): Word squeezes each glyph into its 15.8 pt cell, but
  LibreOffice gives a glyph wider than its cell two cells, 14 characters a line. Then 小标宋
  二号 title, 仿宋 三号 body, 黑体/楷体 first/second level headings, page numbers "— 1 —" in 4 号宋体 placed outside (odd pages right, even pages left, one character
  in: evenAndOddHeaders). Fonts are named in the eastAsia attribute (what Word and WPS read for
  Chinese text) and fontTable.xml gives each a panose/charset family and an alternative name, so a
  machine without 方正小标宋 or 仿宋_GB2312 substitutes the nearest serif/sans Chinese face.
"""
import re

A4 = (11906, 16838)                     # twips
_PLAIN_MARGINS = dict(top=1440, right=1800, bottom=1440, left=1800, header=851, footer=992)
# GB/T 9704-2012 7.1: 天头 37 mm, 订口 28 mm, 版心 156 × 225 mm (so bottom 35, right 26); the footer
# 21.9 mm from the page edge puts the page number's line 7 mm below the 版心 (7.5, measured in the PDF)
_GONGWEN_MARGINS = dict(top=2098, right=1474, bottom=1984, left=1587, header=851, footer=1242)

GONGWEN_FONTS = {"title": "方正小标宋简体", "body": "仿宋", "h1": "黑体", "h2": "楷体", "page": "宋体"}
# fontTable entries: (name, alternative name, panose, family, pitch)
_FONT_TABLE = [
    ("宋体", "SimSun", "02010600030101010101", "auto", "variable"),
    ("黑体", "SimHei", "02010609060101010101", "modern", "fixed"),
    ("仿宋", "FangSong", "02010609060101010101", "modern", "fixed"),
    ("楷体", "KaiTi", "02010609060101010101", "modern", "fixed"),
    ("方正小标宋简体", "宋体", "02000000000000000000", "script", "variable"),
    ("Times New Roman", None, "02020603050405020304", "roman", "variable"),
]

# space before/after each heading level of the default style, twips: compact like Word 2016's own
# headings (12 pt before a chapter, a few points after) over a single-spaced 五号 body with a
# two-character first-line indent (what a new WPS/Word document in Chinese gives); the old Chinese
# template's 17/16.5 pt, 2.41-line headings over a 1.5-line body with 6 pt after each paragraph
# made a two-page text four pages (issue 37 item 7)
HEADING_SPACING = {1: (0, 240), 2: (240, 120), 3: (160, 80), 4: (120, 40), 5: (120, 0), 6: (120, 0)}
BODY_LINE = 15.6            # pt: one single-spaced 五号 line on the 15.6 pt line grid (docGrid 312)

TOC_LINE = re.compile(r"^[ \t]*\[(?:TOC|目录)\][ \t]*$", re.I)
ORIENT_LINE = re.compile(r"^[ \t]*<!--\s*(landscape|portrait|横向|纵向)\s*-->[ \t]*$", re.I)


def orientation_of(word):
    return "landscape" if word.lower() in ("landscape", "横向") else "portrait"


class Layout(object):
    """What a new document's pages look like; ``base_sect`` (append mode) is the existing
    document's last section properties, copied for the sections this write starts."""

    def __init__(self, style="default", orientation="portrait", header=None, page_numbers=False, base_sect=None,
                 gongwen_parts=None):
        self.style = style
        self.gongwen_parts = gongwen_parts or {}     # 红头 / 署名 / 版记 words (``gongwen`` module)
        self.gongwen = style == "gongwen"
        self.orientation = orientation
        self.header = header or None
        self.page_numbers = bool(page_numbers) or self.gongwen
        self.margins = dict(_GONGWEN_MARGINS if self.gongwen else _PLAIN_MARGINS)
        self.base_sect = base_sect
        self.refs = ""             # header/footer references, filled once the parts have ids
        if base_sect:
            self._read_base(base_sect)

    def _read_base(self, sect):
        size = re.search(r"<w:pgSz\b[^>]*>", sect)
        mar = re.search(r"<w:pgMar\b[^>]*>", sect)
        w = _attr(size.group(0), "w") if size else None
        h = _attr(size.group(0), "h") if size else None
        self.page = (w or A4[0], h or A4[1])
        if size and (_attr_text(size.group(0), "orient") == "landscape" or (w and h and w > h)):
            self.page = (min(self.page), max(self.page))
            self.orientation = "landscape"
        if mar:
            for key in ("top", "right", "bottom", "left"):
                val = _attr(mar.group(0), key)
                if val is not None:
                    self.margins[key] = abs(val)

    def text_size(self, orientation):
        """(width, height) of the text block in twips for a section of that orientation."""
        pw, ph = getattr(self, "page", A4)
        if orientation == "landscape":
            pw, ph = ph, pw
        m = self.margins
        return pw - m["left"] - m["right"], ph - m["top"] - m["bottom"]

    def sect_xml(self, orientation):
        """The w:sectPr of one section (a copy of the existing one, turned when needed, in append mode)."""
        if self.base_sect:
            return turn(self.base_sect, orientation)
        pw, ph = A4
        orient = ""
        if orientation == "landscape":
            pw, ph, orient = ph, pw, ' w:orient="landscape"'
        m = self.margins
        grid = ('<w:docGrid w:type="lines" w:linePitch="579"/>' if self.gongwen
                else '<w:docGrid w:type="lines" w:linePitch="312"/>')
        return ('<w:sectPr>%s<w:pgSz w:w="%d" w:h="%d"%s/><w:pgMar w:top="%d" w:right="%d" w:bottom="%d" w:left="%d" '
                'w:header="%d" w:footer="%d" w:gutter="0"/><w:cols w:space="425"/>%s</w:sectPr>'
                % (self.refs, pw, ph, orient, m["top"], m["right"], m["bottom"], m["left"], m["header"], m["footer"], grid))


def turn(sect, orientation):
    """``sect`` (a w:sectPr text) with its page turned to ``orientation`` (width/height swapped,
    w:orient set); the margins, headers and everything else are kept."""
    m = re.search(r"<w:pgSz\b[^>]*?/?>", sect)
    if not m:
        return sect
    tag = m.group(0)
    w, h = _attr(tag, "w") or A4[0], _attr(tag, "h") or A4[1]
    want_wide = orientation == "landscape"
    if (w > h) != want_wide:
        w, h = h, w
    rest = re.sub(r'\s+w:(?:w|h|orient)="[^"]*"', "", tag[len("<w:pgSz"):].rstrip("/>"))
    new = '<w:pgSz w:w="%d" w:h="%d"%s%s/>' % (w, h, ' w:orient="landscape"' if want_wide else "", rest)
    return sect[:m.start()] + new + sect[m.end():]


def _attr_text(tag, name):
    m = re.search(r'\bw:%s="([^"]*)"' % name, tag)
    return m.group(1) if m else None


def _attr(tag, name):
    val = _attr_text(tag, name)
    try:
        return int(float(val)) if val is not None else None
    except ValueError:
        return None


def section_break_xml(sect):
    """An empty paragraph that ends a section (its sectPr describes the section before it)."""
    return "<w:p><w:pPr>%s</w:pPr></w:p>" % sect


# ---------------------------------------------------------------- fields, header, footer

def field_xml(instr, shown, rpr="", dirty=False):
    """A complex field as runs (begin, instruction, separate, result, end)."""
    return ('<w:r>%s<w:fldChar w:fldCharType="begin"%s/></w:r><w:r>%s<w:instrText xml:space="preserve"> %s </w:instrText></w:r>'
            '<w:r>%s<w:fldChar w:fldCharType="separate"/></w:r><w:r>%s<w:t>%s</w:t></w:r><w:r>%s<w:fldChar w:fldCharType="end"/></w:r>'
            % (rpr, ' w:dirty="true"' if dirty else "", rpr, instr, rpr, rpr, shown, rpr))


def _text_run(text, esc, rpr=""):
    return '<w:r>%s<w:t xml:space="preserve">%s</w:t></w:r>' % (rpr, esc(text))


_PART_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def footer_parts(layout, ns_decl, esc):
    """{kind: xml} of the footers to add: "default" (all pages, or the odd ones in 公文) and "even"."""
    if not layout.page_numbers:
        return {}
    if layout.gongwen:
        rpr = ('<w:rPr><w:rFonts w:ascii="宋体" w:hAnsi="宋体" w:eastAsia="宋体" w:hint="eastAsia"/>'
               '<w:sz w:val="28"/><w:szCs w:val="28"/></w:rPr>')
        runs = _text_run("\u2014 ", esc, rpr) + field_xml("PAGE", "1", rpr) + _text_run(" \u2014", esc, rpr)
        out = {}
        for kind, jc, ind in (("default", "right", 'w:right="320"'), ("even", "left", 'w:left="320"')):
            out[kind] = ('%s<w:ftr %s><w:p><w:pPr><w:pStyle w:val="Footer"/><w:ind %s/><w:jc w:val="%s"/></w:pPr>%s</w:p></w:ftr>'
                         % (_PART_HEAD, ns_decl, ind, jc, runs))
        return out
    runs = (_text_run("第 ", esc) + field_xml("PAGE", "1") + _text_run(" 页 共 ", esc) + field_xml("NUMPAGES", "1")
            + _text_run(" 页", esc))
    return {"default": '%s<w:ftr %s><w:p><w:pPr><w:pStyle w:val="Footer"/><w:jc w:val="center"/></w:pPr>%s</w:p></w:ftr>'
            % (_PART_HEAD, ns_decl, runs)}


def header_parts(layout, ns_decl, esc):
    if not layout.header:
        return {}
    xml = ('%s<w:hdr %s><w:p><w:pPr><w:pStyle w:val="Header"/><w:jc w:val="center"/></w:pPr>%s</w:p></w:hdr>'
           % (_PART_HEAD, ns_decl, _text_run(layout.header, esc)))
    return {"default": xml, "even": xml} if layout.gongwen and layout.page_numbers else {"default": xml}


def header_footer_styles(font, latin):
    out = []
    for sid, name, border in (("Header", "header", '<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="auto"/></w:pBdr>'),
                              ("Footer", "footer", "")):
        out.append('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="%s"/><w:basedOn w:val="Normal"/>'
                   '<w:uiPriority w:val="99"/><w:unhideWhenUsed/><w:pPr>%s<w:tabs><w:tab w:val="center" w:pos="4153"/>'
                   '<w:tab w:val="right" w:pos="8306"/></w:tabs><w:snapToGrid w:val="0"/><w:spacing w:after="0" w:line="240" '
                   'w:lineRule="auto"/><w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="center"/></w:pPr>'
                   '<w:rPr><w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr></w:style>'
                   % (sid, name, border, latin, latin, font))
    return "".join(out)


# ---------------------------------------------------------------- table of contents

def toc_styles(text_width, font, latin):
    out = ['<w:style w:type="paragraph" w:styleId="TOCHeading"><w:name w:val="TOC Heading"/><w:basedOn w:val="Normal"/>'
           '<w:next w:val="Normal"/><w:uiPriority w:val="39"/><w:unhideWhenUsed/><w:qFormat/><w:pPr><w:keepNext/>'
           '<w:spacing w:before="240" w:after="240"/><w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="center"/></w:pPr>'
           '<w:rPr><w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s"/><w:b/><w:sz w:val="32"/><w:szCs w:val="32"/></w:rPr></w:style>'
           % (latin, latin, font)]
    for level in (1, 2, 3):
        out.append('<w:style w:type="paragraph" w:styleId="TOC%d"><w:name w:val="toc %d"/><w:basedOn w:val="Normal"/>'
                   '<w:next w:val="Normal"/><w:uiPriority w:val="39"/><w:unhideWhenUsed/><w:pPr><w:tabs>'
                   '<w:tab w:val="right" w:leader="dot" w:pos="%d"/></w:tabs><w:spacing w:after="60"/>'
                   '<w:ind w:left="%d" w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="left"/></w:pPr></w:style>'
                   % (level, level, text_width, 420 * (level - 1)))
    return "".join(out)


def toc_xml(entries, esc, title="目录", style_ids=None, levels=(1, 3)):
    """The TOC block: a heading and the field; ``entries`` are (level, text, bookmark, page or
    None) of the headings the document will hold, written as the field's current result."""
    ids = style_ids or {}
    head = '<w:p><w:pPr><w:pStyle w:val="%s"/></w:pPr>%s</w:p>' % (ids.get("heading", "TOCHeading"), _text_run(title, esc))
    begin = ('<w:r><w:fldChar w:fldCharType="begin" w:dirty="true"/></w:r><w:r><w:instrText xml:space="preserve">'
             ' TOC \\o "%d-%d" \\h \\z \\u </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>'
             % levels)
    end = '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
    paras = []
    shown = [e for e in entries if levels[0] <= e[0] <= levels[1]]
    if not shown:
        paras.append('<w:p>%s%s%s</w:p>' % (begin, _text_run("（文档里还没有标题：在 Word/WPS 中右键“更新域”生成目录）", esc), end))
    for n, (level, text, mark, page) in enumerate(shown):
        link = ('<w:hyperlink w:anchor="%s" w:history="1">%s<w:r><w:tab/></w:r>%s</w:hyperlink>'
                % (mark, _text_run(text, esc), field_xml("PAGEREF %s \\h" % mark, str(page) if page else "")))
        paras.append('<w:p><w:pPr><w:pStyle w:val="%s"/></w:pPr>%s%s%s</w:p>'
                     % (ids.get(level, "TOC%d" % level), begin if n == 0 else "", link, end if n == len(shown) - 1 else ""))
    return head + "".join(paras)


def settings_xml(ns_decl, update_fields=False, even_odd=False):
    # the schema's order: defaultTabStop, evenAndOddHeaders, characterSpacingControl, updateFields, compat
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:settings %s>'
            '<w:defaultTabStop w:val="420"/>%s<w:characterSpacingControl w:val="compressPunctuation"/>%s'
            '<w:compat><w:doNotExpandShiftReturn/><w:compatSetting w:name="compatibilityMode" '
            'w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat></w:settings>'
            % (ns_decl, "<w:evenAndOddHeaders/>" if even_odd else "",
               '<w:updateFields w:val="true"/>' if update_fields else ""))


# settings.xml children that come after updateFields in the schema: it goes before the first
_AFTER_UPDATE_FIELDS = ("hdrShapeDefaults", "footnotePr", "endnotePr", "compat", "docVars", "rsids", "mathPr",
                        "attachedSchema", "themeFontLang", "clrSchemeMapping", "doNotIncludeSubdocsInStats",
                        "doNotAutoCompressPictures", "forceUpgrade", "captions", "readModeInkLockDown",
                        "smartTagType", "schemaLibrary", "shapeDefaults", "doNotEmbedSmartTags", "decimalSymbol",
                        "listSeparator")


def add_update_fields(settings_text, prefix):
    """An existing settings.xml with updateFields on (None when it already is, or cannot be placed)."""
    if re.search(r"<%s:updateFields\b" % re.escape(prefix), settings_text):
        return None
    at = -1
    for name in _AFTER_UPDATE_FIELDS:
        m = re.search(r"<[\w.-]+:%s[\s/>]" % name, settings_text)
        if m and (at < 0 or m.start() < at):
            at = m.start()
    if at < 0:
        at = settings_text.rfind("</%s:settings>" % prefix)
    if at < 0:
        return None
    return settings_text[:at] + '<%s:updateFields %s:val="true"/>' % (prefix, prefix) + settings_text[at:]


def font_table_xml(ns_decl):
    fonts = []
    for name, alt, panose, family, pitch in _FONT_TABLE:
        fonts.append('<w:font w:name="%s">%s<w:panose1 w:val="%s"/><w:charset w:val="%s"/><w:family w:val="%s"/>'
                     '<w:pitch w:val="%s"/></w:font>'
                     % (name, '<w:altName w:val="%s"/>' % alt if alt else "", panose,
                        "00" if name == "Times New Roman" else "86", family, pitch))
    return '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:fonts %s>%s</w:fonts>' % (ns_decl, "".join(fonts))


# ---------------------------------------------------------------- 公文 styles

_CN_DIGITS = "零一二三四五六七八九"
_LEVEL1 = re.compile(r"^[一二三四五六七八九十百]+、")
_LEVEL2 = re.compile(r"^[（(][一二三四五六七八九十百]+[）)]")


def chinese_number(n):
    if n <= 10:
        return "十" if n == 10 else _CN_DIGITS[n]
    if n < 20:
        return "十" + _CN_DIGITS[n - 10]
    tens, ones = divmod(n, 10)
    return _CN_DIGITS[tens] + "十" + (_CN_DIGITS[ones] if ones else "")


def gongwen_numbering(blocks):
    """公文 headings carry their order number in the text: ``##`` → 一、 ``###`` → （一）
    ``####`` → 1. — added when the writer did not type one (what is typed is kept)."""
    out, first, second, third = [], 0, 0, 0
    for block in blocks:
        if block[0] == "h" and block[1] in (2, 3, 4):
            level, text = block[1], block[2]
            if level == 2:
                first, second, third = first + 1, 0, 0
                if not _LEVEL1.match(text):
                    text = chinese_number(first) + "、" + text
            elif level == 3:
                second, third = second + 1, 0
                if not _LEVEL2.match(text):
                    text = "（%s）" % chinese_number(second) + text
            else:
                third += 1
                if not re.match(r"^\d+[.．、]", text):
                    text = "%d." % third + text
            block = ("h", level, text)
        out.append(block)
    return out


def gongwen_fonts(font, latin=None):
    latin = latin or font
    return ('<w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s" w:cs="%s" w:hint="eastAsia"/>' % (latin, latin, font, latin))


def gongwen_heading_style(level, style_id):
    f = GONGWEN_FONTS
    if level == 1:     # the document title: 小标宋 二号, centred, a blank line below
        font, size, ppr, bold = f["title"], 44, '<w:spacing w:before="0" w:after="579"/><w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="center"/>', ""
    else:
        font = {2: f["h1"], 3: f["h2"]}.get(level, f["body"])
        size, ppr, bold = 32, '<w:spacing w:before="0" w:after="0"/>', "<w:b/><w:bCs/>" if level == 4 else ""
    return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="heading %d"/><w:basedOn w:val="Normal"/>'
            '<w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/><w:pPr><w:keepNext/><w:keepLines/>%s'
            '<w:outlineLvl w:val="%d"/></w:pPr><w:rPr>%s%s<w:sz w:val="%d"/><w:szCs w:val="%d"/></w:rPr></w:style>'
            % (style_id, level, ppr, level - 1, gongwen_fonts(font), bold, size, size))


def gongwen_defaults():
    """docDefaults and Normal of the 公文 page: 仿宋 三号, exact 28.95 pt lines, two-character indent."""
    fonts = gongwen_fonts(GONGWEN_FONTS["body"])
    defaults = ('<w:docDefaults><w:rPrDefault><w:rPr>%s<w:spacing w:val="-5"/><w:kern w:val="2"/><w:sz w:val="32"/><w:szCs w:val="32"/>'
                '<w:lang w:val="en-US" w:eastAsia="zh-CN" w:bidi="ar-SA"/></w:rPr></w:rPrDefault>'
                '<w:pPrDefault><w:pPr><w:spacing w:after="0" w:line="579" w:lineRule="exact"/></w:pPr></w:pPrDefault>'
                '</w:docDefaults>' % fonts)
    normal = ('<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/>'
              '<w:pPr><w:widowControl w:val="0"/><w:ind w:firstLineChars="200" w:firstLine="640"/><w:jc w:val="both"/></w:pPr>'
              '<w:rPr>%s<w:sz w:val="32"/><w:szCs w:val="32"/></w:rPr></w:style>' % fonts)
    return defaults, normal


# ---------------------------------------------------------------- page estimate for the TOC

def _text_em(text):
    """Width of ``text`` in ems: a CJK character is one, most Latin letters and digits half."""
    return sum(1.0 if ord(ch) > 0x2e7f else 0.5 for ch in text)


def estimate_pages(blocks, layout, picture_height, plain):
    """{block index: page number} for the headings, by a line-count pagination of the blocks as
    LibreOffice and Word lay them out with these styles (calibrated on LibreOffice's output:
    default style 15.6 pt body lines, 公文 exact 28.95 pt lines). Only the first guess a TOC
    shows in a reader that does not update fields; Word and WPS recompute it on open.
    ``picture_height(block, orientation)`` is a picture's height in points with its caption."""
    gw = layout.gongwen
    orientation = layout.orientation
    pages, page, used = {}, 1, 0.0

    def height():
        return layout.text_size(orientation)[1] / 20.0

    def width():
        return layout.text_size(orientation)[0] / 20.0

    def lines(text, size, indent_em=0.0):
        per = max(1.0, width() / size)
        out = 0
        for piece in (text or " ").split("\n"):
            out += max(1, int((_text_em(piece) + indent_em) / per + 0.999))
        return out

    def add(points, line=None):
        """Place a block of ``points``: whole (a heading, a picture, a table row) or, given the
        ``line`` pitch, line by line (a paragraph flows on to the next page)."""
        nonlocal page, used
        if line:
            while points > 0.01:
                step = min(line, points)
                add(step)
                points -= step
            return
        if used + points > height() + 0.5 and used > 0:
            page += 1
            used = 0.0
        used += points

    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "h":
            level = block[1]
            if used > 0 and used + (2 if gw else 3) * 28.95 > height():
                page, used = page + 1, 0.0         # kept with the next paragraph: to the next page
            if gw:
                size = 22.0 if level == 1 else 15.75
                add(28.95 * (lines(plain(block[2]), size, 0 if level == 1 else 2) + (1 if level == 1 else 0)))
            else:
                size = {1: 22, 2: 16, 3: 15, 4: 14}.get(level, 12)
                add(sum(HEADING_SPACING[level]) / 20.0 + 1.3 * size * lines(plain(block[2]), 1.0 * size))
            pages[index] = page
        elif kind in ("p", "quote", "li"):
            text = plain(block[1] if kind != "li" else block[3])
            if gw:
                add(28.95 * lines(text, 15.75, 2), 28.95)
            else:
                add(BODY_LINE * lines(text, 10.5, 0 if kind == "li" else 2), BODY_LINE)
        elif kind == "table":
            ncols = max((len(r) for r in block[1]), default=1)
            size = 15.75 if gw else 10.5
            for row in block[1]:
                per_cell = max(1.0, (width() / ncols - 11) / size)
                n = max(max(1, int(_text_em(plain(c)) / per_cell + 0.999)) for c in (row or [""]))
                add((28.95 if gw else 16.6) * n)
        elif kind == "img":
            add(picture_height(block, orientation))
        elif kind == "toc":
            entries = sum(1 for b in blocks if b[0] == "h" and b[1] <= 3)
            add(53.0 if gw else 60.0)                          # the heading 目录, 12 pt above and below
            for _n in range(max(entries, 1)):
                add((28.95 if gw else BODY_LINE) + 3.0)
        elif kind == "pagebreak":
            page, used = page + 1, 0.0
        elif kind == "orient" and block[1] != orientation:
            orientation = block[1]
            page, used = page + 1, 0.0
        elif kind == "rule":
            add(12.0)
    return pages
