"""Native Excel charts: a real, editable DrawingML chart (``xl/charts/chartN.xml``) placed beside the
data by a drawing part, for write_spreadsheet's and pivot_table's ``chart`` parameter.

Why a chart part and not a picture: the user opens the workbook in Excel, WPS or LibreOffice and
gets a chart that follows the cells (change a number, the bar moves), can be restyled and copied
into PowerPoint. draw_chart's PNG is for documents; this is for the workbook itself.

The request (``{"type": "bar"|"line"|"pie", "title", "categories", "values"}``) is checked before
anything is written (:class:`ChartRequest`), with Chinese errors that say what to send; the cell
ranges are settled once the rows are written (:meth:`ChartRequest.resolve`: column names become the
data rows of that column, trailing 合计 / 注： rows left out). The chart carries no cached values:
every program reads the referenced cells when it opens the file (as it does for openpyxl's charts).

:class:`Attach` computes the package edits for one chart on one sheet, for a new workbook and for
an existing one alike: a new drawing part or one more anchor in the sheet's existing drawing (its
charts stay), the sheet's and the drawing's relationships, the content types and the sheet's
``<drawing r:id>`` element. :func:`grow_chart_refs` keeps the charts a workbook already has
following their table when rows are appended or inserted above its totals.
"""
import html
import re

from .. import opc
from ..errors import ToolError
from .values import col_letter, is_note_row, is_summary_label, is_total_label, letter_index, parse_number

KINDS = {"bar": "柱状图", "line": "折线图", "pie": "饼图"}
MAX_SERIES = 12
MAX_POINTS = 4000           # a chart with more points than this is a grey smear, and slow to open
NS_C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
CT_DRAWING = "application/vnd.openxmlformats-officedocument.drawing+xml"
CT_CHART = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
REL_DRAWING = opc.NS_OFFICE_RELS + "/drawing"
REL_CHART = opc.NS_OFFICE_RELS + "/chart"
# Office's default palette, so a chart looks like one Excel made
COLORS = ("4472C4", "ED7D31", "A5A5A5", "FFC000", "5B9BD5", "70AD47", "264478", "9E480E", "636363", "997300",
          "255E91", "43682B")
ANCHOR_COLS, ANCHOR_ROWS = 8, 16            # the chart's size in cells (about 15 x 8 cm at default widths)

_RANGE_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d{1,7})(?::\$?([A-Za-z]{1,3})\$?(\d{1,7}))?$")
_HELP = ('例如 {"type": "bar", "title": "各部门费用", "categories": "部门", "values": ["金额"]}，'
         '或用单元格范围 {"categories": "A2:A13", "values": ["B2:B13"]}')


def _bad(text):
    return ToolError("chart 参数有误：%s。%s" % (text, _HELP))


class Ref(object):
    """One column (or row) of cells: 1-based, inclusive."""

    def __init__(self, c1, r1, c2, r2):
        self.c1, self.r1, self.c2, self.r2 = c1, r1, c2, r2

    @property
    def count(self):
        return (self.r2 - self.r1 + 1) * (self.c2 - self.c1 + 1)

    def formula(self, sheet):
        quoted = "'%s'" % sheet.replace("'", "''")
        a = "$%s$%d" % (col_letter(self.c1 - 1), self.r1)
        if (self.c1, self.r1) == (self.c2, self.r2):
            return "%s!%s" % (quoted, a)
        return "%s!%s:$%s$%d" % (quoted, a, col_letter(self.c2 - 1), self.r2)

    def text(self):
        return "%s%d:%s%d" % (col_letter(self.c1 - 1), self.r1, col_letter(self.c2 - 1), self.r2)


def parse_range(text, what):
    """``A2:A13`` / ``$B$2:$B$13`` / ``B5`` -> Ref (one column or one row), or a Chinese error."""
    s = text.strip()
    if "!" in s:
        raise _bad("%s「%s」不要带工作表名：图表总是引用写入的那个工作表，直接写 %s" % (what, text, s.rsplit("!", 1)[1]))
    m = _RANGE_RE.match(s)
    if not m:
        return None
    c1, r1 = letter_index(m.group(1)), int(m.group(2))
    c2, r2 = (letter_index(m.group(3)), int(m.group(4))) if m.group(3) else (c1, r1)
    if c1 is None or c2 is None or not (1 <= r1 <= 1048576 and 1 <= r2 <= 1048576):
        raise _bad("%s「%s」超出了 Excel 的范围（列 A–XFD，行 1–1048576）" % (what, text))
    c1, c2 = c1 + 1, c2 + 1
    if c1 > c2 or r1 > r2:
        raise _bad("%s「%s」的起点在终点之后，请写成左上到右下，如 %s" % (what, text, Ref(min(c1, c2), min(r1, r2),
                                                                         max(c1, c2), max(r1, r2)).text()))
    if c1 != c2 and r1 != r2:
        raise _bad("%s「%s」是一块 %d 列 × %d 行的区域；一组数据只能是一列（如 B2:B13）或一行。多列数据请在 values 里分开写，"
                   "如 [\"B2:B13\", \"C2:C13\"]" % (what, text, c2 - c1 + 1, r2 - r1 + 1))
    return Ref(c1, r1, c2, r2)


class ChartRequest(object):
    """The ``chart`` parameter, checked for shape before any file is touched."""

    def __init__(self, raw, fmt):
        if not isinstance(raw, dict):
            raise _bad("要给一个对象，收到的是 %s" % type(raw).__name__)
        unknown = sorted(set(raw) - {"type", "title", "categories", "values"})
        if unknown:
            raise _bad("不认识的字段 %s（只有 type、title、categories、values）" % "、".join(unknown))
        if fmt not in ("xlsx", "xlsm"):
            raise ToolError("%s 文件不能保存图表，图表只能放进 .xlsx 工作簿。请把 path 的后缀改成 .xlsx，或去掉 chart 参数；"
                            "要一张图片可以用 draw_chart" % fmt)
        kind = raw.get("type") or "bar"
        if kind not in KINDS:
            raise _bad("type 只能是 bar（柱状图）、line（折线图）或 pie（饼图），收到的是 %r" % (kind,))
        self.kind = kind
        title = raw.get("title")
        if title is not None and not isinstance(title, (str, int, float)):
            raise _bad("title 是图表标题，要给一个字符串")
        self.title = opc.clean_xml_text(str(title)).strip()[:200] if title not in (None, "") else ""
        cats = raw.get("categories")
        if cats is not None and (not isinstance(cats, str) or not cats.strip()):
            raise _bad("categories 是分类（横轴标签）所在的列名或范围，要给一个字符串，如 \"部门\" 或 \"A2:A13\"")
        self.categories = cats.strip() if cats else None
        values = raw.get("values")
        if isinstance(values, str):
            values = [values]
        if values is not None:
            if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
                raise _bad("values 是数值列的列名或范围的数组，如 [\"金额\"] 或 [\"B2:B13\", \"C2:C13\"]")
            if len(values) > MAX_SERIES:
                raise _bad("values 有 %d 组，一张图最多 %d 组；请分成几张图" % (len(values), MAX_SERIES))
        self.values = [v.strip() for v in values] if values else None
        if kind == "pie" and self.values and len(self.values) > 1:
            raise _bad("饼图只能画一组数据，values 给了 %d 组；多组请用 bar 或 line" % len(self.values))
        # explicit ranges are checked for syntax now; column names once the header is known
        for what, text in [("categories", self.categories)] + [("values", v) for v in self.values or []]:
            if text:
                parse_range(text, what)

    # -- settled once the rows are written ---------------------------------------------------
    def resolve(self, sheet, header, first_row, last_row, sample, tail):
        """The chart's series on ``sheet``: ``header`` = the header row's values (None = no
        header; it sits on ``first_row - 1``), data rows ``first_row``..``last_row``, ``sample`` =
        some data rows written (which columns hold numbers), ``tail`` = the last rows (trailing 合计 /
        平均 / 注： rows are left out of a chart by column name). Returns a Chart; Chinese errors."""
        header = list(header) if header else None
        width = max([len(header or [])] + [len(r) for r in sample] + [1])
        last = last_row
        for row in reversed(tail):
            if last < first_row or not row:
                break
            first = next((v for v in row if v is not None), None)
            # (read from the end, a 平均/最高 row is in a footer run that reaches the end)
            if not (is_total_label(first) or is_summary_label(first) or is_note_row(list(row), width)):
                break
            last -= 1
        if last < first_row:
            raise ToolError("没有可画图的数据行（表里只有表头或合计行）。请先写入数据，或去掉 chart 参数")

        def column(text, what):
            ref = parse_range(text, what)
            if ref is not None:
                return ref
            col = find_column(text, what, header)
            return Ref(col, first_row, col, last)

        cat_col = None
        if self.categories:
            cats = column(self.categories, "categories")
        else:
            cat_col = 1
            cats = Ref(1, first_row, 1, last)
        if self.values:
            vals = [column(v, "values") for v in self.values]
        else:
            used = cats.c1 if cats.c1 == cats.c2 else cat_col
            vals = []
            for c in range(1, width + 1):
                label = header[c - 1] if header and c - 1 < len(header) else None
                if c == used or is_total_label(label) or not _numeric(sample, c - 1):
                    continue
                vals.append(Ref(c, first_row, c, last))
            if self.kind == "pie":
                vals = vals[:1]
            vals = vals[:MAX_SERIES]
            if not vals:
                raise _bad("没有指明 values，而除分类列外没有找到数字列；请用 values 写出要画的列名")
        for v, text in zip(vals, self.values or [None] * len(vals)):
            if v.count != cats.count:
                raise _bad("categories（%s，%d 个）和 values「%s」（%s，%d 个）的个数不一样，要一一对应" % (
                    cats.text(), cats.count, text or col_letter(v.c1 - 1), v.text(), v.count))
        if cats.count > MAX_POINTS:
            raise _bad("要画 %d 个点，一张图最多 %d 个；请先用 calc_table 或 pivot_table 汇总后再画图" % (cats.count, MAX_POINTS))
        series = []
        for k, v in enumerate(vals):
            name_ref, name = None, "系列%d" % (k + 1)
            if header is not None and v.c1 == v.c2 and v.r1 == first_row and v.c1 - 1 < len(header) \
                    and header[v.c1 - 1] not in (None, ""):
                name_ref, name = Ref(v.c1, first_row - 1, v.c1, first_row - 1), str(header[v.c1 - 1])
            series.append((name_ref, name, v))
        chart = Chart(self.kind, self.title, sheet, cats, series)
        if header is not None and cats.c1 == cats.c2 and cats.r1 == first_row and cats.c1 - 1 < len(header) \
                and header[cats.c1 - 1] not in (None, ""):
            chart.category_title = str(header[cats.c1 - 1])
        numbers = []
        for v in vals:
            for row in sample if v.c1 == v.c2 else ():
                cell = row[v.c1 - 1] if v.c1 - 1 < len(row) else None
                number = cell if isinstance(cell, (int, float)) and not isinstance(cell, bool) else (
                    parse_number(cell) if isinstance(cell, str) else None)
                if number is not None:
                    numbers.append(abs(number))
        if numbers and max(numbers) < 100:
            chart.value_format = None           # small figures (rates, scores): the cells' own format
        return chart


def find_column(text, what, header):
    """The 1-based column a name (case-insensitive, as in the header) or a letter (``B``) means."""
    for i, v in enumerate(header or []):
        if v is not None and str(v).strip().lower() == text.lower():
            return i + 1
    letter = letter_index(text)
    if letter is None or header and text.upper() != text:
        shown = "、".join(str(v) for v in (header or []) if v not in (None, ""))
        raise _bad("%s 里的列「%s」在表头里找不到（表头：%s）；也可以写列字母（如 B）或范围（如 B2:B13）" % (
            what, text, shown or "没有表头"))
    return letter + 1


def _numeric(rows, c):
    seen = False
    for row in rows:
        v = row[c] if c < len(row) else None
        if v is None or v == "":
            continue
        if isinstance(v, bool):
            return False
        if isinstance(v, (int, float)) or parse_number(v) is not None:
            seen = True
        elif not is_total_label(v):
            return False
    return seen


def _axis_title(text, rotated=False):
    """An axis title in 10 pt, not bold (a value axis's turned to read upwards)."""
    return ('<c:title><c:tx><c:rich><a:bodyPr%s/><a:lstStyle/><a:p><a:pPr>'
            '<a:defRPr sz="1000" b="0"/></a:pPr><a:r><a:rPr lang="zh-CN" sz="1000" b="0"/><a:t>%s</a:t></a:r></a:p>'
            '</c:rich></c:tx><c:overlay val="0"/></c:title>'
            % (' rot="-5400000" vert="horz"' if rotated else "", opc.xml_text(text)))


class Chart(object):
    def __init__(self, kind, title, sheet, categories, series):
        self.kind, self.title, self.sheet, self.categories, self.series = kind, title, sheet, categories, series
        self.category_title = ""            # the category column's header (部门, 月份): the axis's title
        self.value_format = "#,##0"         # None: small figures keep the cells' format (0.12, 4.5)

    def answer(self):
        """What the tool reports: the ranges, as a person would type them."""
        return {"type": self.kind, "title": self.title or None, "categories": self.categories.text(),
                "values": [{"name": name, "range": ref.text()} for _r, name, ref in self.series]}

    def _value_title(self):
        """The value axis's title: the one series' name (several series have the legend). The
        axis's numbers are "#,##0" whatever the cells' format: 3,500,000, not 3500000 or
        3,500,000.00 (``value_format``; figures under 100 keep the cells' format, 0.12 is not 0)."""
        if len(self.series) != 1 or not self.series[0][1]:
            return ""
        return _axis_title(str(self.series[0][1]), rotated=True)

    def _category_title(self):
        """The category axis's title: the category column's name under the labels."""
        return _axis_title(self.category_title) if self.category_title else ""

    def _value_numfmt(self):
        if self.value_format:
            return '<c:numFmt formatCode="%s" sourceLinked="0"/>' % opc.xml_attr(self.value_format)
        return '<c:numFmt formatCode="General" sourceLinked="1"/>'

    def xml(self):
        s = self.sheet
        sers = []
        for k, (name_ref, name, ref) in enumerate(self.series):
            if name_ref is not None:
                tx = "<c:tx><c:strRef><c:f>%s</c:f></c:strRef></c:tx>" % opc.xml_text(name_ref.formula(s))
            else:
                tx = "<c:tx><c:v>%s</c:v></c:tx>" % opc.xml_text(name)
            color = COLORS[k % len(COLORS)]
            if self.kind == "line":
                look = ('<c:spPr><a:ln w="28575" cap="rnd"><a:solidFill><a:srgbClr val="%s"/></a:solidFill>'
                        '<a:round/></a:ln></c:spPr><c:marker><c:symbol val="circle"/><c:size val="5"/></c:marker>' % color)
            elif self.kind == "pie":
                look = "".join('<c:dPt><c:idx val="%d"/><c:bubble3D val="0"/><c:spPr><a:solidFill><a:srgbClr val="%s"/>'
                               '</a:solidFill><a:ln><a:solidFill><a:srgbClr val="FFFFFF"/></a:solidFill></a:ln>'
                               '</c:spPr></c:dPt>' % (i, COLORS[i % len(COLORS)])
                               for i in range(min(self.categories.count, 60)))
            else:
                look = '<c:spPr><a:solidFill><a:srgbClr val="%s"/></a:solidFill></c:spPr><c:invertIfNegative val="0"/>' % color
            labels = ('<c:dLbls><c:numFmt formatCode="0.0%" sourceLinked="0"/><c:showLegendKey val="0"/>'
                      '<c:showVal val="0"/><c:showCatName val="0"/><c:showSerName val="0"/><c:showPercent val="1"/>'
                      '<c:showBubbleSize val="0"/><c:showLeaderLines val="1"/></c:dLbls>' if self.kind == "pie" else "")
            sers.append('<c:ser><c:idx val="%d"/><c:order val="%d"/>%s%s%s'
                        '<c:cat><c:strRef><c:f>%s</c:f></c:strRef></c:cat>'
                        '<c:val><c:numRef><c:f>%s</c:f></c:numRef></c:val>%s</c:ser>' % (
                            k, k, tx, look, labels, opc.xml_text(self.categories.formula(s)),
                            opc.xml_text(ref.formula(s)), '<c:smooth val="0"/>' if self.kind == "line" else ""))
        body = "".join(sers)
        axes = ('<c:axId val="50010"/><c:axId val="50020"/>')
        if self.kind == "bar":
            plot = ('<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:varyColors val="0"/>%s'
                    '<c:gapWidth val="150"/>%s</c:barChart>' % (body, axes))
        elif self.kind == "line":
            plot = ('<c:lineChart><c:grouping val="standard"/><c:varyColors val="0"/>%s<c:marker val="1"/>%s'
                    '</c:lineChart>' % (body, axes))
        else:
            plot = '<c:pieChart><c:varyColors val="1"/>%s<c:firstSliceAng val="0"/></c:pieChart>' % body
        if self.kind != "pie":
            plot += ('<c:catAx><c:axId val="50010"/><c:scaling><c:orientation val="minMax"/></c:scaling>'
                     '<c:delete val="0"/><c:axPos val="b"/>' + self._category_title() +
                     '<c:numFmt formatCode="General" sourceLinked="1"/>'
                     '<c:majorTickMark val="out"/><c:minorTickMark val="none"/><c:tickLblPos val="nextTo"/>'
                     '<c:crossAx val="50020"/><c:crosses val="autoZero"/><c:auto val="1"/><c:lblAlgn val="ctr"/>'
                     '<c:lblOffset val="100"/><c:noMultiLvlLbl val="0"/></c:catAx>'
                     '<c:valAx><c:axId val="50020"/><c:scaling><c:orientation val="minMax"/></c:scaling>'
                     '<c:delete val="0"/><c:axPos val="l"/><c:majorGridlines><c:spPr><a:ln w="9525">'
                     '<a:solidFill><a:srgbClr val="D9D9D9"/></a:solidFill></a:ln></c:spPr></c:majorGridlines>'
                     + self._value_title() + self._value_numfmt() +
                     '<c:majorTickMark val="out"/>'
                     '<c:minorTickMark val="none"/><c:tickLblPos val="nextTo"/><c:crossAx val="50010"/>'
                     '<c:crosses val="autoZero"/><c:crossBetween val="between"/></c:valAx>')
        if self.title:
            title = ('<c:title><c:tx><c:rich><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="1400" b="1"/></a:pPr>'
                     '<a:r><a:rPr lang="zh-CN" sz="1400" b="1"/><a:t>%s</a:t></a:r></a:p></c:rich></c:tx>'
                     '<c:overlay val="0"/></c:title><c:autoTitleDeleted val="0"/>' % opc.xml_text(self.title))
        else:
            title = '<c:autoTitleDeleted val="1"/>'
        legend = ('<c:legend><c:legendPos val="%s"/><c:overlay val="0"/></c:legend>' % ("r" if self.kind == "pie" else "b")
                  if self.kind == "pie" or len(self.series) > 1 else "")
        return (opc.XML_DECLARATION +
                '<c:chartSpace xmlns:c="%s" xmlns:a="%s" xmlns:r="%s"><c:lang val="zh-CN"/>'
                '<c:roundedCorners val="0"/><c:chart>%s<c:plotArea><c:layout/>%s</c:plotArea>%s'
                '<c:plotVisOnly val="1"/><c:dispBlanksAs val="gap"/></c:chart>'
                '<c:txPr><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="1000"><a:latin typeface="Calibri"/>'
                '<a:ea typeface="微软雅黑"/></a:defRPr></a:pPr><a:endParaRPr lang="zh-CN"/></a:p></c:txPr>'
                '</c:chartSpace>' % (NS_C, NS_A, opc.NS_OFFICE_RELS, title, plot, legend)).encode("utf-8")


def anchor_rows(chart):
    """Rows of cells a chart takes: ``ANCHOR_ROWS``, more for many categories, whose labels Excel
    and LibreOffice turn 45-90° and which would squeeze the plot to a strip (a pivot by month and
    department easily has 12-30)."""
    if chart is None or chart.kind == "pie":
        return ANCHOR_ROWS
    n = chart.categories.count
    return ANCHOR_ROWS + (0 if n <= 6 else 4 if n <= 12 else 8)


def _anchor(col, row, rid, shape_id, name, rows=ANCHOR_ROWS):
    """A chart ``ANCHOR_COLS`` x ``rows`` cells big whose top left is cell (col, row), 0-based."""
    def mark(tag, c, r):
        return ('<xdr:%s><xdr:col>%d</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%d</xdr:row><xdr:rowOff>0</xdr:rowOff>'
                '</xdr:%s>' % (tag, c, r, tag))
    return ('<xdr:twoCellAnchor editAs="oneCell">%s%s<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr>'
            '<xdr:cNvPr id="%d" name="%s"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>'
            '<xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm><a:graphic>'
            '<a:graphicData uri="%s"><c:chart xmlns:c="%s" xmlns:r="%s" r:id="%s"/></a:graphicData></a:graphic>'
            '</xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor>' % (
                mark("from", col, row), mark("to", col + ANCHOR_COLS, row + rows), shape_id,
                opc.xml_attr(name), NS_C, NS_C, opc.NS_OFFICE_RELS, rid))


def _free(names, pattern):
    n = 1
    while pattern % n in names:
        n += 1
    return pattern % n


def _next_rid(rels_text):
    ids = set(re.findall(r'\bId="([^"]*)"', rels_text or ""))
    k = 1
    while "rId%d" % k in ids:
        k += 1
    return "rId%d" % k


def _add_rel(rels_text, rid, rel_type, target):
    el = '<Relationship Id="%s" Type="%s" Target="%s"/>' % (rid, rel_type, target)
    if not rels_text:
        return opc.XML_DECLARATION + '<Relationships xmlns="%s">%s</Relationships>' % (opc.NS_PKG_RELS, el)
    m = re.search(r"</(\w+:)?Relationships>", rels_text)
    if m.group(1):
        el = el.replace("<Relationship ", "<%sRelationship " % m.group(1))
    return rels_text[:m.start()] + el + rels_text[m.start():]


def _relative(source_part, target_part):
    """``xl/drawings/drawing1.xml`` seen from ``xl/worksheets/sheet1.xml`` -> ``../drawings/drawing1.xml``."""
    import posixpath
    return posixpath.relpath(target_part, posixpath.dirname(source_part))


# CT_Worksheet's children after <drawing>: a new <drawing> goes before the first of them
_AFTER_DRAWING = re.compile(rb"<(?:\w+:)?(?:legacyDrawing|legacyDrawingHF|drawingHF|picture|oleObjects|controls|"
                            rb"webPublishItems|tableParts|extLst)\b|</(?:\w+:)?worksheet>")


class Attach(object):
    """Where one new chart goes on ``sheet_part`` of a package with part ``names``: ``read(name)``
    gives an existing part's bytes, ``ct_text`` the content types. Everything is settled here
    except the chart's own XML, which needs the written row numbers (:meth:`parts`)."""

    def __init__(self, names, read, sheet_part, ct_text):
        self.sheet_part = sheet_part
        self.sheet_rels_part = opc.rels_part(sheet_part)
        self.sheet_rels = read(self.sheet_rels_part).decode("utf-8") if self.sheet_rels_part in names else None
        drawing = None
        if self.sheet_rels:
            rels = opc.parse_rels(self.sheet_rels.encode("utf-8"), sheet_part)
            drawing = next((t for k, t in rels.values() if k == "drawing" and t in names), None)
        self.new_drawing = drawing is None
        self.chart_part = _free(names, "xl/charts/chart%d.xml")
        if self.new_drawing:
            self.drawing_part = _free(names, "xl/drawings/drawing%d.xml")
            self.sheet_rid = _next_rid(self.sheet_rels)
            self.drawing_text = None
            self.drawing_rels = None
        else:
            self.drawing_part = drawing
            self.sheet_rid = None
            self.drawing_text = read(drawing).decode("utf-8")
            rp = opc.rels_part(drawing)
            self.drawing_rels = read(rp).decode("utf-8") if rp in names else None
        self.chart_rid = _next_rid(self.drawing_rels)
        ct = ct_text
        add = [(self.chart_part, CT_CHART)] + ([(self.drawing_part, CT_DRAWING)] if self.new_drawing else [])
        m = re.search(r"</(\w+:)?Types>", ct)
        p = m.group(1) or ""
        ct = ct[:m.start()] + "".join('<%sOverride PartName="%s" ContentType="%s"/>' % (p, opc.part_name(n), t)
                                      for n, t in add) + ct[m.start():]
        self.ct_text = ct

    def drawing_element(self, prefix=""):
        """The sheet's ``<drawing r:id>`` (bytes), or b"" when the sheet already has a drawing."""
        if not self.new_drawing:
            return b""
        return ('<%sdrawing xmlns:r="%s" r:id="%s"/>' % (prefix, opc.NS_OFFICE_RELS, self.sheet_rid)).encode("utf-8")

    def sheet_tail(self, tail, prefix=b""):
        """The sheet XML after ``</sheetData>`` with the ``<drawing>`` element in its place."""
        el = self.drawing_element(prefix.decode("utf-8") if isinstance(prefix, bytes) else prefix)
        if not el:
            return tail
        m = _AFTER_DRAWING.search(tail)
        return tail[:m.start()] + el + tail[m.start():]

    def parts(self, chart, col, row):
        """{part name: bytes} to write: the chart, the drawing with its anchor at (col, row)
        (0-based; placed below the anchors an existing drawing has), relationships."""
        out = {self.chart_part: chart.xml()}
        target = _relative(self.drawing_part, self.chart_part)
        out[opc.rels_part(self.drawing_part)] = _add_rel(self.drawing_rels, self.chart_rid, REL_CHART,
                                                         target).encode("utf-8")
        if self.new_drawing:
            out[self.drawing_part] = (opc.XML_DECLARATION + '<xdr:wsDr xmlns:xdr="%s" xmlns:a="%s">%s</xdr:wsDr>' % (
                NS_XDR, NS_A, _anchor(col, row, self.chart_rid, 2, "图表 1", anchor_rows(chart)))).encode("utf-8")
            out[self.sheet_rels_part] = _add_rel(self.sheet_rels, self.sheet_rid, REL_DRAWING, _relative(
                self.sheet_part, self.drawing_part)).encode("utf-8")
        else:
            text = self.drawing_text
            bottoms = [_anchor_bottom(a) for a in _ANCHOR_RE.findall(text)]
            if any(b is not None for b in bottoms):
                row = max(max(b for b in bottoms if b is not None) + 2, row)
            ids = [int(i) for i in re.findall(r'<(?:\w+:)?cNvPr\b[^>]*\bid="(\d+)"', text)]
            m = re.search(r"</(\w+:)?wsDr>", text)
            p = m.group(1) or ""
            anchor = _anchor(col, row, self.chart_rid, max(ids + [1]) + 1, "图表 %d" % (len(ids) + 1),
                             anchor_rows(chart))
            if p != "xdr:":
                anchor = anchor.replace("<xdr:", "<%s" % p).replace("</xdr:", "</%s" % p)
            # the a: prefix is declared on the frame itself: the existing root may not declare it
            anchor = anchor.replace("<%sgraphicFrame " % p, '<%sgraphicFrame xmlns:a="%s" ' % (p, NS_A), 1)
            out[self.drawing_part] = (text[:m.start()] + anchor + text[m.start():]).encode("utf-8")
        return out


_ANCHOR_RE = re.compile(r"<(?:\w+:)?(?:twoCellAnchor|oneCellAnchor|absoluteAnchor)\b.*?"
                        r"</(?:\w+:)?(?:twoCellAnchor|oneCellAnchor|absoluteAnchor)>", re.S)
ROW_EMU = 190500            # a default row (15 pt = 20 px) in EMU


def _anchor_bottom(anchor):
    """The last row (0-based) an existing drawing object covers: its ``to`` cell, or its ``from``
    row plus its height for a one-cell anchor; None when it cannot be told."""
    to = re.search(r"<(?:\w+:)?to>.*?<(?:\w+:)?row>(\d+)<", anchor, re.S)
    if to:
        return int(to.group(1))
    start = re.search(r"<(?:\w+:)?from>.*?<(?:\w+:)?row>(\d+)<", anchor, re.S)
    ext = re.search(r"<(?:\w+:)?ext\b[^>]*\bcy=\"(\d+)\"", anchor)
    if start:
        return int(start.group(1)) + (int(ext.group(1)) // ROW_EMU + 1 if ext else ANCHOR_ROWS)
    return None


_CHART_F = re.compile(r"(<(?:\w+:)?f>)([^<]*)(</(?:\w+:)?f>)")


def grow_chart_refs(data, shift):
    """An existing chart part whose ranges point into the sheet rows moved or grown by ``shift``
    (``xlsx_shift.Shift``): a series that ended on the last data row takes the new rows in.
    None when nothing changed (or it is a pivot chart, which follows its pivot table)."""
    text = data.decode("utf-8")
    if "pivotSource" in text:
        return None

    def fix(m):
        old = html.unescape(m.group(2))
        new = shift.formula(old, grow=True, qualified_only=True)
        return m.group(0) if new == old else m.group(1) + opc.xml_text(new) + m.group(3)
    new = _CHART_F.sub(fix, text)
    return new.encode("utf-8") if new != text else None


class ChartJob(object):
    """One ``chart`` request through a write: the rows' tail is watched as they stream past
    (:meth:`track`), so trailing 合计 / 注： rows can be left out wherever the rows end."""

    def __init__(self, raw, fmt):
        import collections
        self.request = ChartRequest(raw, fmt)
        self.tail = collections.deque(maxlen=6)
        self.chart = None

    def track(self, rows):
        for row in rows:
            self.tail.append(row)
            yield row

    def check_names(self, header):
        """Column names that are not in ``header`` are refused before anything is written."""
        for what, text in [("categories", self.request.categories)] + [("values", v) for v in self.request.values or []]:
            if text and parse_range(text, what) is None:
                find_column(text, what, header)

    def resolve(self, sheet, header, first_row, last_row, sample, tail=None):
        self.chart = self.request.resolve(sheet, header, first_row, last_row, sample,
                                          list(self.tail) if tail is None else tail)
        return self.chart


def add_with_openpyxl(ws, chart, col, row):
    """The same chart on a sheet openpyxl is about to save (the path that replaces a sheet of an
    existing workbook re-saves it through openpyxl anyway): openpyxl writes the chart part."""
    from openpyxl.chart import BarChart, LineChart, PieChart, Reference, Series

    def ref(r):
        return Reference(ws, min_col=r.c1, min_row=r.r1, max_col=r.c2, max_row=r.r2)
    made = {"bar": BarChart, "line": LineChart, "pie": PieChart}[chart.kind]()
    if chart.kind == "bar":
        made.type = "col"
    for name_ref, name, values in chart.series:
        series = Series(ref(values), title=name if name_ref is None else None)
        if name_ref is not None:
            from openpyxl.chart.series import SeriesLabel
            from openpyxl.chart.data_source import StrRef
            series.tx = SeriesLabel(strRef=StrRef(name_ref.formula(chart.sheet)))
        made.series.append(series)
    made.set_categories(ref(chart.categories))
    if chart.title:
        made.title = chart.title
    if chart.kind != "pie" and len(chart.series) == 1:
        made.legend = None
    ws.add_chart(made, "%s%d" % (col_letter(col), row + 1))
