"""Hand-made xlsx files whose XML is valid but not written the way Excel writes it.

The fast xlsx reader slices sheet XML as text; these variants (single-quoted attributes, spaces
around ``=``, white space before ``>`` in end tags, CDATA sections, comments inside sheetData)
are what a text slicer gets wrong. Each variant is the same little table, so every reader path
must return :data:`EXPECTED` for every one of them.

``make(path, sheet_xml, sst_xml=None)`` writes a minimal package around the given parts.
"""
import zipfile

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.sharedStrings+xml"/>'
    '</Types>')
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="%s/officeDocument" Target="xl/workbook.xml"/></Relationships>' % REL)
WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="%s" xmlns:r="%s"><sheets><sheet name="明细" sheetId="1" r:id="rId1"/></sheets></workbook>'
    % (NS, REL))
WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="%s/worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="%s/sharedStrings" Target="sharedStrings.xml"/></Relationships>' % (REL, REL))

SST = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
       '<sst xmlns="%s" count="4" uniqueCount="4"><si><t>类别</t></si><si><t>金额</t></si>'
       '<si><t>餐饮</t></si><si><t>交通 &amp; 出行</t></si></sst>' % NS)

# What every variant holds: a header, two data rows, the amount 7 in the second one.
EXPECTED = [(1, ["类别", "金额"]), (2, ["餐饮", 12.5]), (3, ["交通 & 出行", 7])]


def sheet(rows_xml):
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<worksheet xmlns="%s"><sheetData>%s</sheetData></worksheet>' % (NS, rows_xml))


PLAIN_ROWS = ('<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
              '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>12.5</v></c></row>'
              '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3"><v>7</v></c></row>')

VARIANTS = {
    # the control: what Excel writes
    "plain": (sheet(PLAIN_ROWS), SST),
    # t='s' read as a number would put the shared-string index 2 or 3 into a sum
    "single_quotes": (sheet(PLAIN_ROWS.replace('"', "'")), SST),
    "spaces_around_equals": (sheet(PLAIN_ROWS.replace('="', ' = "')), SST),
    # </row > and </c >: rows lost, or 0 rows with ok true
    "space_before_gt_in_end_tags": (sheet(PLAIN_ROWS.replace("</row>", "</row >").replace("</c>", "</c >")), SST),
    "newline_before_gt": (sheet(PLAIN_ROWS.replace("</row>", "</row\n>").replace('">', '"\n>')), SST),
    # CDATA in the shared strings (both reader paths use the same table) and in an inline string
    "cdata_in_shared_strings": (sheet(PLAIN_ROWS), SST.replace("<t>交通 &amp; 出行</t>",
                                                               "<t><![CDATA[交通 & 出行]]></t>")),
    "cdata_in_inline_string": (sheet(PLAIN_ROWS.replace(
        '<c r="A3" t="s"><v>3</v></c>', '<c r="A3" t="inlineStr"><is><t><![CDATA[交通 & 出行]]></t></is></c>')), SST),
    # a commented-out row inside sheetData must not become an extra row
    "comment_in_sheet_data": (sheet(PLAIN_ROWS.replace(
        '<row r="3">', '<!-- <row r="9"><c r="A9"><v>999</v></c></row> --><row r="3">')), SST),
    # a writer that gives every cell its own <row r="N"> element: one row each, not only its first cell
    "row_element_per_cell": (sheet(
        '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="1"><c r="B1" t="s"><v>1</v></c></row>'
        '<row r="2"><c r="A2" t="s"><v>2</v></c></row><row r="2"><c r="B2"><v>12.5</v></c></row>'
        '<row r="3"><c r="A3" t="s"><v>3</v></c></row><row r="3"><c r="B3"><v>7</v></c></row>'), SST),
    "comment_in_shared_strings": (sheet(PLAIN_ROWS), SST.replace("<si><t>餐饮</t></si>",
                                                                 "<!-- <si><t>旧</t></si> --><si><t>餐饮</t></si>")),
}


def make(path, sheet_xml, sst_xml=None):
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", CONTENT_TYPES)
        zf.writestr("_rels/.rels", ROOT_RELS)
        zf.writestr("xl/workbook.xml", WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS)
        zf.writestr("xl/worksheets/sheet1.xml", sheet_xml)
        if sst_xml is not None:
            zf.writestr("xl/sharedStrings.xml", sst_xml)
    return str(path)
