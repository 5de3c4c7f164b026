"""Writing .docx by hand (minimal OOXML, no third-party library), and appending to any docx.

What models write is markdown, so that is the input: ``#``–``######`` headings become the built-in
"heading 1–6" styles with outline levels (the navigation pane and a table of contents see them),
``**粗体**`` and ``*斜体*`` runs, ``-``/``*``/``+`` bullet and ``1.`` numbered lists (two spaces of
indent per level), ``|`` pipe tables (a ``|---|`` line after the first row makes it a bold header repeated on
every page; borders always; columns sized by content, ``docx_tables``), ``---`` on its own line a horizontal rule, ``\\newpage`` on its own line a page
break, ``> `` a quote. Blank lines separate paragraphs; a single line break inside a paragraph
stays a line break. Unpaired ``**`` stays literal.

Chinese typesetting: the styles name an East Asian font (宋体 for the body, 黑体 for headings) so
Word never falls back to a Japanese face, the language is zh-CN, the page is A4 with the margins
Chinese Word uses.

Appending keeps the user's package byte-for-byte: every part is copied unchanged except three
text splices: the new paragraphs go into document.xml just before the final section properties,
heading/list/table styles the document lacks are added to styles.xml (existing ones, whatever
their ids, e.g. "1" for 标题 1 in Chinese Word, are reused), and list definitions are added to
numbering.xml (created, with its relationship and content type, when missing).
"""
import datetime as _dt
import io
import re
import zipfile
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

from . import docx_extras, docx_layout, docx_media, docx_tables, gongwen
from .docx_markdown import _BAD_XML, parse, plain, runs, strip_invalid  # noqa: F401 - docx_write.parse/plain/strip_invalid stay public
from .base import FormatError, why

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = "{%s}" % W_NS
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"
REL_BASE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

BODY_FONT = "宋体"
HEAD_FONT = "黑体"
LATIN_FONT = "Times New Roman"
HEADING_SIZES = {1: 44, 2: 32, 3: 30, 4: 28, 5: 24, 6: 21}     # half-points: 二号 三号 小三 四号 小四 五号



def _x(text):
    return escape(_BAD_XML.sub("", text))


# ---------------------------------------------------------------- blocks -> WordprocessingML

class Styles:
    """Style ids to use (a new document's, or the ids an existing document already has)."""

    def __init__(self, heading=None, list_para="ListParagraph", table="TableGrid", quote="Quote", cell_ppr=""):
        self.heading = heading or dict((n, "Heading%d" % n) for n in range(1, 7))
        self.cell_ppr = cell_ppr      # direct paragraph properties of table cells (公文: no indent, single lines)
        self.list_para = list_para
        self.table = table
        self.quote = quote


def _run_xml(text, bold=False, italic=False, code=False):
    props = ""
    if code:
        props += '<w:rFonts w:ascii="Consolas" w:hAnsi="Consolas"/>'
    if bold:
        props += "<w:b/><w:bCs/>"
    if italic:
        props += "<w:i/><w:iCs/>"
    rpr = "<w:rPr>%s</w:rPr>" % props if props else ""
    parts = []
    for n, piece in enumerate(text.split("\n")):
        if n:
            parts.append("<w:br/>")
        chunks = piece.split("\t")
        for k, chunk in enumerate(chunks):
            if k:
                parts.append("<w:tab/>")
            if chunk:
                parts.append('<w:t xml:space="preserve">%s</w:t>' % _x(chunk))
    return "<w:r>%s%s</w:r>" % (rpr, "".join(parts))


def _para_xml(text, ppr="", bold_all=False):
    body = "".join(_run_xml(t, b or bold_all, i, c) for t, b, i, c in runs(text))
    return "<w:p>%s%s</w:p>" % ("<w:pPr>%s</w:pPr>" % ppr if ppr else "", body)


def body_xml(blocks, styles, numbering, extras):
    """The paragraphs and tables of ``blocks``; ``numbering`` maps a list's number to a numId
    (filled here: {list_no: (kind, numId)} is requested through numbering.num_for); ``extras``
    (docx_extras.Extras) places pictures, the TOC and section breaks."""
    out = []
    extras.plan_toc(blocks)
    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "h":
            level = block[1]
            body = "".join(_run_xml(t, b, i, c) for t, b, i, c in runs(block[2]))
            # the outline level also on the paragraph: a TOC field and the navigation pane need it, and
            # an existing document's "heading N" style (append) may lack one
            centre = '<w:jc w:val="center"/>' if index == extras.title_index else ""
            out.append('<w:p><w:pPr><w:pStyle w:val="%s"/>%s<w:outlineLvl w:val="%d"/></w:pPr>%s</w:p>'
                       % (styles.heading[level], centre, level - 1, extras.heading_wrap(index, body)))
        elif kind == "img":
            out.append(extras.picture(block[1], block[2], block[3]))
        elif kind == "toc":
            out.append(extras.toc())
        elif kind == "orient":
            out.append(extras.orient(block[1]))
        elif kind == "p":
            out.append(_para_xml(block[1]))
        elif kind == "quote":
            out.append(_para_xml(block[1], '<w:pStyle w:val="%s"/>' % styles.quote))
        elif kind == "li":
            _k, list_kind, level, text, list_no = block
            num_id = numbering.num_for(list_no, list_kind)
            out.append(_para_xml(text, '<w:pStyle w:val="%s"/><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%d"/></w:numPr>'
                                 % (styles.list_para, level, num_id)))
        elif kind == "rule":
            out.append('<w:p><w:pPr><w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="auto"/>'
                       '</w:pBdr></w:pPr></w:p>')
        elif kind == "pagebreak":
            out.append('<w:p><w:r><w:br w:type="page"/></w:r></w:p>')
        elif kind == "table":
            out.append(docx_tables.table_xml(block[1], block[2], styles, _para_xml, plain,
                                             total=extras.layout.text_size(extras.orientation)[0],
                                             em=315 if extras.layout.gongwen else 210))
    return "".join(out)


class Numbering:
    """Allocates w:num ids for the lists of one write; every numbered list restarts at 1."""

    def __init__(self, bullet_abstract=None, number_abstract=None, next_num=1, next_abstract=0):
        self.bullet_abstract = bullet_abstract
        self.number_abstract = number_abstract
        self.next_num = next_num
        self.next_abstract = next_abstract
        self.nums = []             # (numId, abstractId, restart)
        self.abstracts = []        # (abstractId, kind) to add
        self._by_list = {}

    def _abstract(self, kind):
        attr = "bullet_abstract" if kind == "bullet" else "number_abstract"
        if getattr(self, attr) is None:
            setattr(self, attr, self.next_abstract)
            self.abstracts.append((self.next_abstract, kind))
            self.next_abstract += 1
        return getattr(self, attr)

    def num_for(self, list_no, kind):
        if list_no not in self._by_list:
            num_id = self.next_num
            self.next_num += 1
            self.nums.append((num_id, self._abstract(kind), kind == "number"))
            self._by_list[list_no] = num_id
        return self._by_list[list_no]

    def abstract_xml(self):
        out = []
        bullets = ["\u2022", "\u25e6", "\u25aa"]
        for aid, kind in self.abstracts:
            levels = []
            for lvl in range(9):
                left = 420 * (lvl + 1)
                if kind == "bullet":
                    fmt, text = "bullet", bullets[lvl % 3]
                    rpr = '<w:rPr><w:rFonts w:ascii="Arial" w:hAnsi="Arial" w:hint="default"/></w:rPr>'
                else:
                    fmt, text = "decimal", ".".join("%%%d" % (k + 1) for k in range(lvl + 1)) + "."
                    rpr = ""
                levels.append('<w:lvl w:ilvl="%d"><w:start w:val="1"/><w:numFmt w:val="%s"/><w:lvlText w:val="%s"/>'
                              '<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="%d" w:hanging="420"/></w:pPr>%s</w:lvl>'
                              % (lvl, fmt, _x(text), left, rpr))
            out.append('<w:abstractNum w:abstractNumId="%d"><w:multiLevelType w:val="hybridMultilevel"/>%s</w:abstractNum>'
                       % (aid, "".join(levels)))
        return "".join(out)

    def num_xml(self):
        out = []
        for num_id, aid, restart in self.nums:
            override = ('<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride>' if restart else "")
            out.append('<w:num w:numId="%d"><w:abstractNumId w:val="%d"/>%s</w:num>' % (num_id, aid, override))
        return "".join(out)


# ---------------------------------------------------------------- parts of a new document

NS_DECL = ('xmlns:w="%s" xmlns:r="%s"' % (W_NS, R_NS))


def _fonts(font):
    return ('<w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s" w:cs="%s"/>' % (LATIN_FONT, LATIN_FONT, font, LATIN_FONT))


def heading_style_xml(level, style_id):
    """A heading: 黑体 bold, single line not snapped to the 15.6 pt line grid (a 16–22 pt line
    would otherwise take two grid lines), kept with the next paragraph, no first-line indent."""
    before, after = docx_layout.HEADING_SPACING[level]
    return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="heading %d"/><w:basedOn w:val="Normal"/>'
            '<w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/><w:pPr><w:keepNext/><w:keepLines/>'
            '<w:snapToGrid w:val="0"/><w:spacing w:before="%d" w:after="%d" w:line="240" w:lineRule="auto"/>'
            '<w:ind w:firstLineChars="0" w:firstLine="0"/><w:outlineLvl w:val="%d"/></w:pPr>'
            '<w:rPr>%s<w:b/><w:bCs/><w:kern w:val="%d"/><w:sz w:val="%d"/><w:szCs w:val="%d"/></w:rPr></w:style>'
            % (style_id, level, before, after, level - 1, _fonts(HEAD_FONT), HEADING_SIZES[level],
               HEADING_SIZES[level], HEADING_SIZES[level]))


def list_style_xml(style_id):
    return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/>'
            '<w:uiPriority w:val="34"/><w:qFormat/><w:pPr><w:ind w:firstLineChars="0" w:firstLine="0"/></w:pPr></w:style>'
            % style_id)


def table_style_xml(style_id):
    border = "".join('<w:%s w:val="single" w:sz="4" w:space="0" w:color="auto"/>' % side
                     for side in ("top", "left", "bottom", "right", "insideH", "insideV"))
    return ('<w:style w:type="table" w:styleId="%s"><w:name w:val="Table Grid"/><w:uiPriority w:val="59"/>'
            '<w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>'
            '<w:tblPr><w:tblBorders>%s</w:tblBorders><w:tblCellMar><w:left w:w="108" w:type="dxa"/>'
            '<w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>' % (style_id, border))


def quote_style_xml(style_id):
    return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/>'
            '<w:uiPriority w:val="29"/><w:qFormat/><w:pPr><w:ind w:left="420" w:right="420" w:firstLineChars="0" w:firstLine="0"/></w:pPr>'
            '<w:rPr><w:i/><w:color w:val="404040"/></w:rPr></w:style>' % style_id)


def extra_styles_xml(text_width, font=BODY_FONT, head_font=HEAD_FONT, latin=LATIN_FONT):
    """Caption (图 N), header/footer and table-of-contents styles: in every new document, added
    to an existing one only when its write uses them and it lacks them."""
    return (docx_media.caption_style_xml("Caption", head_font, latin) + docx_layout.header_footer_styles(font, latin)
            + docx_layout.toc_styles(text_width, font, latin))


def styles_xml(layout=None):
    layout = layout or docx_layout.Layout()
    text_width = layout.text_size("portrait")[0]
    if layout.gongwen:
        g = docx_layout.GONGWEN_FONTS
        heads = "".join(docx_layout.gongwen_heading_style(n, "Heading%d" % n) for n in range(1, 7))
        defaults, normal = docx_layout.gongwen_defaults()
        extra = extra_styles_xml(text_width, g["body"], g["h1"], g["body"])
    else:
        heads = "".join(heading_style_xml(n, "Heading%d" % n) for n in range(1, 7))
        defaults = ('<w:docDefaults><w:rPrDefault><w:rPr>%s<w:kern w:val="2"/><w:sz w:val="21"/><w:szCs w:val="21"/>'
                    '<w:lang w:val="en-US" w:eastAsia="zh-CN" w:bidi="ar-SA"/></w:rPr></w:rPrDefault>'
                    '<w:pPrDefault><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr></w:pPrDefault>'
                    '</w:docDefaults>' % _fonts(BODY_FONT))
        normal = ('<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/>'
                  '<w:pPr><w:widowControl w:val="0"/><w:ind w:firstLineChars="200" w:firstLine="420"/><w:jc w:val="both"/>'
                  '</w:pPr><w:rPr>%s</w:rPr></w:style>'
                  % _fonts(BODY_FONT))
        extra = extra_styles_xml(text_width)
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles %s>%s%s'
            '<w:style w:type="character" w:default="1" w:styleId="DefaultParagraphFont">'
            '<w:name w:val="Default Paragraph Font"/><w:uiPriority w:val="1"/><w:semiHidden/></w:style>'
            '<w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/>'
            '<w:semiHidden/><w:tblPr><w:tblInd w:w="0" w:type="dxa"/><w:tblCellMar><w:top w:w="0" w:type="dxa"/>'
            '<w:left w:w="108" w:type="dxa"/><w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/>'
            '</w:tblCellMar></w:tblPr></w:style>'
            '%s%s%s%s%s</w:styles>' % (NS_DECL, defaults, normal, heads, list_style_xml("ListParagraph"),
                                       table_style_xml("TableGrid"), quote_style_xml("Quote"), extra))


def _core_xml(title):
    now = _dt.datetime.utcnow().replace(microsecond=0).isoformat() + "Z"
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            '%s<dc:creator>xla-tools</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">%s</dcterms:created>'
            '<dcterms:modified xsi:type="dcterms:W3CDTF">%s</dcterms:modified></cp:coreProperties>'
            % ("<dc:title>%s</dc:title>" % _x(title) if title else "", now, now))


_CT_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml."
_XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def new_document(text, layout=None, pictures=None, notes=None):
    """Bytes of a new .docx holding ``text`` (markdown subset), and its blocks. ``layout``
    (docx_layout.Layout) sets the page, header, page numbers and style; ``pictures`` maps every
    image path the text names to its docx_media.Picture (loaded and checked by the caller);
    ``notes``, a list, receives Chinese sentences for the answer (a wide table turned landscape)."""
    layout = layout or docx_layout.Layout()
    blocks = parse(text)
    if layout.gongwen:
        blocks = docx_layout.gongwen_numbering(blocks)
    blocks, turned = docx_tables.turn_wide_tables(blocks, layout, plain, 315 if layout.gongwen else 210)
    if notes is not None:
        notes.extend(turned)
    numbering = Numbering()
    extras = docx_extras.Extras(layout, pictures or {}, _x, plain, rel_ids=["rId%d" % n for n in range(1, 10)])

    # header and footer parts first: every section's properties name them
    parts, rels = [], [("rId1", "styles", "styles.xml"), ("rId2", "numbering", "numbering.xml"),
                       ("rId3", "settings", "settings.xml"), ("rId4", "fontTable", "fontTable.xml")]
    refs = []
    for role, found in (("header", docx_layout.header_parts(layout, NS_DECL, _x)),
                        ("footer", docx_layout.footer_parts(layout, NS_DECL, _x))):
        for n, (kind, xml) in enumerate(sorted(found.items())):
            rid = "rId%d" % (5 + len(parts))
            name = "%s%d.xml" % (role, n + 1)
            parts.append((name, xml, _CT_MAIN + role + "+xml"))
            rels.append((rid, role, name))
            refs.append('<w:%sReference w:type="%s" r:id="%s"/>' % (role, kind, rid))
    layout.refs = "".join(refs)
    cell_ppr = ('<w:spacing w:line="240" w:lineRule="auto"/><w:ind w:firstLineChars="0" w:firstLine="0"/>'
                if layout.gongwen else '<w:ind w:firstLineChars="0" w:firstLine="0"/>')
    body = body_xml(blocks, Styles(cell_ppr=cell_ppr), numbering, extras)
    if layout.gongwen and layout.gongwen_parts:
        body = _gongwen_parts(body, layout)
    title = next((b[2] for b in blocks if b[0] == "h"), None)
    document = ('%s<w:document %s><w:body>%s%s</w:body></w:document>' % (_XML_HEAD, NS_DECL, body, extras.final_sect()))
    numbering_xml = ('%s<w:numbering %s>%s%s</w:numbering>' % (_XML_HEAD, NS_DECL, numbering.abstract_xml(), numbering.num_xml()))
    overrides = [("/word/document.xml", _CT_MAIN + "document.main+xml"), ("/word/styles.xml", _CT_MAIN + "styles+xml"),
                 ("/word/numbering.xml", _CT_MAIN + "numbering+xml"), ("/word/settings.xml", _CT_MAIN + "settings+xml"),
                 ("/word/fontTable.xml", _CT_MAIN + "fontTable+xml")]
    overrides += [("/word/" + name, ct) for name, _xml, ct in parts]
    overrides += [("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml"),
                  ("/docProps/app.xml", "application/vnd.openxmlformats-officedocument.extended-properties+xml")]
    defaults = sorted(set(m[3].rsplit(".", 1)[-1] for m in extras.media))
    content_types = ('%s<Types xmlns="%s">'
                     '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     '<Default Extension="xml" ContentType="application/xml"/>%s%s</Types>'
                     % (_XML_HEAD, CT_NS, "".join('<Default Extension="%s" ContentType="%s"/>' % (ext, docx_media.CONTENT_TYPES[ext])
                                                 for ext in defaults),
                        "".join('<Override PartName="%s" ContentType="%s"/>' % o for o in overrides)))
    pkg_rels = ('%s<Relationships xmlns="%s">'
                '<Relationship Id="rId1" Type="%sofficeDocument" Target="word/document.xml"/>'
                '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>'
                '<Relationship Id="rId3" Type="%sextended-properties" Target="docProps/app.xml"/>'
                '</Relationships>' % (_XML_HEAD, PKG_NS, REL_BASE, REL_BASE))
    doc_rels = ('%s<Relationships xmlns="%s">%s%s</Relationships>'
                % (_XML_HEAD, PKG_NS, "".join('<Relationship Id="%s" Type="%s%s" Target="%s"/>' % (rid, REL_BASE, kind, target)
                                              for rid, kind, target in rels),
                   "".join('<Relationship Id="%s" Type="%s" Target="%s"/>' % r for r in extras.relationships())))
    settings = docx_layout.settings_xml(NS_DECL, update_fields=any(b[0] == "toc" for b in blocks),
                                        even_odd=layout.gongwen and layout.page_numbers)
    app = ('%s<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
           '<Application>xla-tools</Application></Properties>' % _XML_HEAD)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in (("[Content_Types].xml", content_types), ("_rels/.rels", pkg_rels),
                           ("word/document.xml", document), ("word/_rels/document.xml.rels", doc_rels),
                           ("word/styles.xml", styles_xml(layout)), ("word/numbering.xml", numbering_xml),
                           ("word/settings.xml", settings), ("word/fontTable.xml", docx_layout.font_table_xml(NS_DECL)),
                           ("docProps/core.xml", _core_xml(title)), ("docProps/app.xml", app)):
            zf.writestr(name, data.encode("utf-8"))
        for name, xml, _ct in parts:
            zf.writestr("word/" + name, xml.encode("utf-8"))
        for part, data, _rid, _target in extras.media:
            zf.writestr(part, data, compress_type=zipfile.ZIP_STORED if part.endswith((".png", ".jpeg", ".gif")) else zipfile.ZIP_DEFLATED)
    return buf.getvalue(), blocks


def _gongwen_parts(body, layout):
    """The 红头 before the body, 署名/成文日期 after it (the body's last paragraph kept with them),
    the 版记 at the foot of the last page (``gongwen``)."""
    A4 = docx_layout.A4
    parts, fonts = layout.gongwen_parts, docx_layout.GONGWEN_FONTS
    sign = gongwen.signature_xml(parts, fonts)
    if sign:
        last = body.rfind("<w:p>")
        if last >= 0:
            rest = body[last + len("<w:p>"):]
            if rest.startswith("<w:pPr>"):
                m = re.match(r"<w:pPr>(<w:pStyle [^>]*/>)?", rest)
                rest = rest[:m.end()] + "<w:keepNext/>" + rest[m.end():]
            else:
                rest = "<w:pPr><w:keepNext/></w:pPr>" + rest
            body = body[:last + len("<w:p>")] + rest
    record = gongwen.record_xml(parts, fonts, layout.text_size(layout.orientation)[0],
                                A4[1] if layout.orientation == "portrait" else A4[0], layout.margins["bottom"])
    return gongwen.head_xml(parts, fonts, layout.text_size(layout.orientation)[0]) + body + sign + record


# ---------------------------------------------------------------- appending

def _main_part(files):
    rels = files.get("_rels/.rels")
    if rels:
        try:
            for rel in ET.fromstring(rels).iter("{%s}Relationship" % PKG_NS):
                if rel.get("Type", "").endswith("/officeDocument"):
                    return rel.get("Target", "").lstrip("/")
        except ET.ParseError:
            pass
    return "word/document.xml"


def _w_prefix(xml_text):
    m = re.search(r'xmlns:([A-Za-z_][\w.-]*)="%s"' % re.escape(W_NS), xml_text[:20000])
    return m.group(1) if m else None


def _reprefix(fragment, prefix):
    if prefix == "w":
        return fragment
    return re.sub(r"(</?|\s)w:", lambda m: m.group(1) + prefix + ":", fragment)


def _existing_styles(styles_text):
    """(heading ids by level, list paragraph id, table grid id, quote id, all ids)."""
    heading, ids = {}, set()
    list_para = table = quote = None
    try:
        root = ET.fromstring(styles_text.encode("utf-8"))
    except ET.ParseError:
        return heading, None, None, None, ids
    for st in root.iter(W + "style"):
        sid = st.get(W + "styleId")
        if not sid:
            continue
        ids.add(sid)
        name_el = st.find(W + "name")
        name = (name_el.get(W + "val") if name_el is not None else "").strip().lower()
        m = re.match(r"^(?:heading|标题)\s*([1-6])$", name)
        if m and st.get(W + "type") == "paragraph":
            heading.setdefault(int(m.group(1)), sid)
        elif name == "list paragraph":
            list_para = sid
        elif name == "table grid":
            table = sid
        elif name == "quote":
            quote = sid
    return heading, list_para, table, quote, ids


def _free_id(base, ids):
    sid, n = base, 2
    while sid in ids:
        sid = "%s%d" % (base, n)
        n += 1
    ids.add(sid)
    return sid


def append_document(data, text, pictures=None, notes=None):
    """Bytes of the docx ``data`` with ``text`` appended, and its blocks; every other part is kept
    as it is. ``pictures`` as for new_document: new media parts, their relationships and content
    types are added beside the existing ones."""
    try:
        src = zipfile.ZipFile(io.BytesIO(data))
        infos = src.infolist()
        files = {}
        for info in infos:
            if info.file_size > 300 << 20:
                raise FormatError("文档里的部件 %s 过大（%d MB），无法安全追加" % (info.filename, info.file_size >> 20))
            files[info.filename] = src.read(info.filename)
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as exc:
        raise FormatError("原文档已损坏，无法追加（%s）。请换一个新文件名写入" % why(exc))
    if any(info.flag_bits & 0x1 for info in infos):
        raise FormatError("原文档的压缩包已加密，无法追加")
    main = _main_part(files)
    if main not in files:
        raise FormatError("原文档里找不到正文部件（%s），不是有效的 Word 文档。请换一个新文件名写入" % main)
    doc_text = files[main].decode("utf-8")
    prefix = _w_prefix(doc_text)
    if not prefix:
        raise FormatError("原文档的正文不是 WordprocessingML，无法追加")
    base = main.rsplit("/", 1)[0] if "/" in main else ""
    rels_name = (base + "/" if base else "") + "_rels/" + main.rsplit("/", 1)[-1] + ".rels"
    rels_text = files.get(rels_name, b"").decode("utf-8") if rels_name in files else None
    targets = _rel_targets(rels_text)
    styles_name = _join(base, targets.get("styles", "styles.xml"))
    numbering_name = _join(base, targets["numbering"]) if "numbering" in targets else None

    blocks = parse(text)
    changed = {}
    # styles: reuse what exists, add what is missing
    styles_text = files[styles_name].decode("utf-8") if styles_name in files else None
    if styles_text is None:
        raise FormatError("原文档没有样式表（styles.xml），无法安全追加。请换一个新文件名写入")
    heading, list_para, table, quote, ids = _existing_styles(styles_text)
    additions = []
    used_levels = sorted(set(b[1] for b in blocks if b[0] == "h"))
    for level in used_levels:
        if level not in heading:
            heading[level] = _free_id("Heading%d" % level, ids)
            additions.append(heading_style_xml(level, heading[level]))
    if any(b[0] == "li" for b in blocks) and not list_para:
        list_para = _free_id("ListParagraph", ids)
        additions.append(list_style_xml(list_para))
    if any(b[0] == "table" for b in blocks) and not table:
        table = _free_id("TableGrid", ids)
        additions.append(table_style_xml(table))
    if any(b[0] == "quote" for b in blocks) and not quote:
        quote = _free_id("Quote", ids)
        additions.append(quote_style_xml(quote))
    if additions:
        sprefix = _w_prefix(styles_text) or "w"
        end = styles_text.rfind("</%s:styles>" % sprefix)
        if end < 0:
            raise FormatError("原文档的样式表不完整，无法安全追加")
        styles_text = styles_text[:end] + _reprefix("".join(additions), sprefix) + styles_text[end:]
        changed[styles_name] = styles_text.encode("utf-8")
    styles = Styles(heading=dict((n, heading.get(n, "Heading%d" % n)) for n in range(1, 7)),
                    list_para=list_para or "ListParagraph", table=table or "TableGrid", quote=quote or "Quote")
    extras, sect_text = _append_extras(blocks, doc_text, prefix, files, base, rels_text, styles_name,
                                       styles_text, ids, changed, pictures or {})
    if sect_text:
        # a wide table turns its page as in a new document (the copied section, turned); without a
        # readable section it stays in the document's orientation, a size smaller
        blocks, turned = docx_tables.turn_wide_tables(blocks, extras.layout, plain, 210)
        if notes is not None:
            notes.extend(turned)

    # numbering: new definitions after the existing ones
    numbering = None
    if any(b[0] == "li" for b in blocks):
        num_text = files[numbering_name].decode("utf-8") if numbering_name and numbering_name in files else None
        if num_text is not None:
            abs_ids = [int(x) for x in re.findall(r'abstractNumId="(\d+)"', num_text)]
            num_ids = [int(x) for x in re.findall(r'numId="(\d+)"', num_text)]
            numbering = Numbering(next_num=max(num_ids, default=0) + 1, next_abstract=max(abs_ids, default=-1) + 1)
        else:
            numbering = Numbering()
    else:
        numbering = Numbering()
    body = body_xml(blocks, styles, numbering, extras)
    if extras.media:
        rels_text = _add_media(files, changed, rels_name, rels_text, extras)
    if numbering.nums:
        if numbering_name and numbering_name in files:
            num_text = files[numbering_name].decode("utf-8")
            nprefix = _w_prefix(num_text) or "w"
            first_num = re.search(r"<%s:num[\s>]" % nprefix, num_text)
            close = num_text.rfind("</%s:numbering>" % nprefix)
            if close < 0:
                raise FormatError("原文档的编号定义（numbering.xml）不完整，无法安全追加列表")
            cleanup = num_text.find("<%s:numIdMacAtCleanup" % nprefix)
            num_at = cleanup if cleanup >= 0 else close
            abs_at = first_num.start() if first_num else num_at
            num_text = (num_text[:abs_at] + _reprefix(numbering.abstract_xml(), nprefix) + num_text[abs_at:num_at]
                        + _reprefix(numbering.num_xml(), nprefix) + num_text[num_at:])
            changed[numbering_name] = num_text.encode("utf-8")
        else:
            numbering_name = _join(base, "numbering.xml")
            changed[numbering_name] = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering %s>%s%s</w:numbering>'
                                       % (NS_DECL, numbering.abstract_xml(), numbering.num_xml())).encode("utf-8")
            changed[rels_name] = _add_rel(rels_text, "numbering", "numbering.xml").encode("utf-8")
            ct = changed.get("[Content_Types].xml", files["[Content_Types].xml"]).decode("utf-8")
            part = "/" + numbering_name
            if part not in ct:
                ct = ct.replace("</Types>", '<Override PartName="%s" ContentType="application/vnd.openxmlformats-'
                                'officedocument.wordprocessingml.numbering+xml"/></Types>' % part)
                changed["[Content_Types].xml"] = ct.encode("utf-8")

    # the body: before the final sectPr of w:body
    body = _reprefix(body, prefix)
    close = doc_text.rfind("</%s:body>" % prefix)
    if close < 0:
        raise FormatError("原文档的正文不完整（没有 body 结束标记），无法安全追加")
    sect = doc_text.rfind("<%s:sectPr" % prefix, 0, close)
    at = close
    if sect >= 0 and "</%s:p>" % prefix not in doc_text[sect:close] and "</%s:tbl>" % prefix not in doc_text[sect:close]:
        at = sect
    tail = doc_text[at:]
    if sect_text and extras.orientation != extras.layout.orientation:
        # the appended text ends in the other orientation: the last section turns (only its page size)
        tail = tail.replace(sect_text, docx_layout.turn(sect_text, extras.orientation), 1)
    changed[main] = (doc_text[:at] + body + tail).encode("utf-8")

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        seen = set()
        for info in infos:
            seen.add(info.filename)
            if info.filename in changed:
                zf.writestr(_copy_info(info), changed[info.filename])
            else:
                zf.writestr(_copy_info(info), files[info.filename])
        for name, payload in changed.items():
            if name not in seen:
                zf.writestr(name, payload, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue(), blocks


_FINAL_SECT = re.compile(r"<w:sectPr\b(?:[^>]*/>|.*?</w:sectPr>)", re.S)


def _append_extras(blocks, doc_text, prefix, files, base, rels_text, styles_name, styles_text, ids, changed, pictures):
    """The Extras of an append: ids already used in the document, the page of its last section,
    the caption/TOC styles it lacks (added to styles.xml), updateFields when a TOC is written."""
    close = doc_text.rfind("</%s:body>" % prefix)
    sect_text = None
    if prefix == "w":
        found = list(_FINAL_SECT.finditer(doc_text, max(0, close - 20000), close if close >= 0 else len(doc_text)))
        sect_text = found[-1].group(0) if found else None
    if any(b[0] == "orient" for b in blocks) and not sect_text:
        raise FormatError("原文档的页面设置无法识别，不能追加横向页面（<!-- landscape -->）。请去掉横向标记，或写到新文档里")
    layout = docx_layout.Layout(base_sect=sect_text)
    names = _style_names(styles_text)
    caption_id = names.get("caption")
    additions = []
    if not caption_id and any(b[0] == "img" and b[1] for b in blocks):
        caption_id = _free_id("Caption", ids)
        additions.append(docx_media.caption_style_xml(caption_id, HEAD_FONT, LATIN_FONT))
    toc_ids = None
    if any(b[0] == "toc" for b in blocks):
        toc_ids = {"heading": names.get("toc heading")}
        for level in (1, 2, 3):
            toc_ids[level] = names.get("toc %d" % level)
        if not all(toc_ids.values()):
            wanted = docx_layout.toc_styles(layout.text_size("portrait")[0], BODY_FONT, LATIN_FONT)
            for sid, key in (("TOCHeading", "heading"), ("TOC1", 1), ("TOC2", 2), ("TOC3", 3)):
                if not toc_ids[key]:
                    toc_ids[key] = _free_id(sid, ids)
                    m = re.search(r'<w:style [^>]*w:styleId="%s">.*?</w:style>' % sid, wanted)
                    additions.append(m.group(0).replace('w:styleId="%s"' % sid, 'w:styleId="%s"' % toc_ids[key]))
        settings_name = _join(base, _rel_targets(rels_text).get("settings", "settings.xml"))
        if settings_name in files:
            settings_text = files[settings_name].decode("utf-8")
            updated = docx_layout.add_update_fields(settings_text, _w_prefix(settings_text) or "w")
            if updated:
                changed[settings_name] = updated.encode("utf-8")
    if additions:
        current = changed.get(styles_name, styles_text.encode("utf-8")).decode("utf-8")
        sprefix = _w_prefix(current) or "w"
        end = current.rfind("</%s:styles>" % sprefix)
        if end < 0:
            raise FormatError("原文档的样式表不完整，无法安全追加")
        changed[styles_name] = (current[:end] + _reprefix("".join(additions), sprefix) + current[end:]).encode("utf-8")
    media_names = set(n[len(base) + 1:] if base and n.startswith(base + "/") else n for n in files)
    extras = docx_extras.Extras(
        layout, pictures, _x, plain, caption_style=caption_id or "Caption",
        rel_ids=re.findall(r'Id="([^"]+)"', rels_text or ""), media_names=media_names,
        first_figure=len(re.findall(r"SEQ\s+图", doc_text)) + 1,
        next_shape=max([int(x) for x in re.findall(r'<wp:docPr [^>]*?id="(\d+)"', doc_text)] + [0]) + 1,
        next_bookmark=max([int(x) for x in re.findall(r'bookmarkStart [^>]*?w:id="(\d+)"', doc_text)] + [0]) + 1,
        part_base=base)
    extras.toc_style_ids = toc_ids
    extras.estimate_pages = False      # the pages of the existing content are not known here
    extras.find_title = False
    return extras, sect_text


def _style_names(styles_text):
    """{style name, lower case: style id} of an existing styles.xml."""
    out = {}
    for m in re.finditer(r"<(?:\w+:)?style\b([^>]*)>(.*?)</(?:\w+:)?style>", styles_text, re.S):
        sid = re.search(r'styleId="([^"]*)"', m.group(1))
        name = re.search(r'<(?:\w+:)?name [^>]*?val="([^"]*)"', m.group(2))
        if sid and name:
            out.setdefault(name.group(1).strip().lower(), sid.group(1))
    return out


def _add_media(files, changed, rels_name, rels_text, extras):
    """New media parts, their relationships in the main part's rels, and a Default content type
    for each picture extension the package does not type yet. Returns the new rels text."""
    for part, data, _rid, _target in extras.media:
        changed[part] = data
    if not rels_text:
        rels_text = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                     '<Relationships xmlns="%s"></Relationships>' % PKG_NS)
    close = rels_text.rfind("</Relationships>")
    added = "".join('<Relationship Id="%s" Type="%s" Target="%s"/>' % r for r in extras.relationships())
    rels_text = rels_text[:close] + added + rels_text[close:]
    changed[rels_name] = rels_text.encode("utf-8")
    ct = changed.get("[Content_Types].xml", files["[Content_Types].xml"]).decode("utf-8")
    for ext in sorted(set(t.rsplit(".", 1)[-1] for _p, _d, _r, t in extras.media)):
        if not re.search(r'<Default [^>]*Extension="%s"' % ext, ct, re.I):
            ct = ct.replace("</Types>", '<Default Extension="%s" ContentType="%s"/></Types>'
                            % (ext, docx_media.CONTENT_TYPES[ext]), 1)
    changed["[Content_Types].xml"] = ct.encode("utf-8")
    return rels_text


def _copy_info(info):
    new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
    new.compress_type = info.compress_type if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) \
        else zipfile.ZIP_DEFLATED
    new.external_attr = info.external_attr
    new.create_system = info.create_system
    new.comment = info.comment
    return new


def _join(base, target):
    if target.startswith("/"):
        return target.lstrip("/")
    parts = (base.split("/") if base else []) + target.split("/")
    out = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part and part != ".":
            out.append(part)
    return "/".join(out)


def _rel_targets(rels_text):
    out = {}
    if not rels_text:
        return out
    try:
        for rel in ET.fromstring(rels_text.encode("utf-8")).iter("{%s}Relationship" % PKG_NS):
            if rel.get("TargetMode") == "External":
                continue
            out.setdefault(rel.get("Type", "").rsplit("/", 1)[-1], rel.get("Target", ""))
    except ET.ParseError:
        pass
    return out


def _add_rel(rels_text, rel_type, target):
    if not rels_text:
        rels_text = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                     '<Relationships xmlns="%s"></Relationships>' % PKG_NS)
    ids = set(re.findall(r'Id="([^"]+)"', rels_text))
    n = 1
    while "rIdXla%d" % n in ids:
        n += 1
    rel = '<Relationship Id="rIdXla%d" Type="%s%s" Target="%s"/>' % (n, REL_BASE, rel_type, target)
    close = rels_text.rfind("</Relationships>")
    return rels_text[:close] + rel + rels_text[close:]
