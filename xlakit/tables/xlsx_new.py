"""A new workbook, written as a minimal SpreadsheetML package straight from Python strings.

The same result as openpyxl's write-only mode (inline strings, a handful of cell styles) but about
8x faster, because openpyxl spends most of its time in its generic XML serialiser: 100k rows x 10
columns take ~1 s of cpu instead of ~8 s (bench/bench_writer.py; a million rows ~13 s), so derived
tables of a million rows fit in the time limit. The
sheet is streamed into the zip in constant memory whatever the row count; the package parts
(content types, relationships) come from ``xlakit.opc``.

``styles`` (optional, for derived tables such as pivot_table's): ``bold_rows`` / ``bold_cols``
(0-based indexes; -1 is the last row / the last cell of each row), ``number_format`` (an Excel
format code such as ``#,##0.00`` for every number cell), ``column_formats`` ({0-based column:
format code}, for the number cells of those columns: derived tables' converted money columns) and
``freeze`` ([rows, cols] kept in view); ``AUTO_MONEY`` (write_spreadsheet's new tables): money
columns in ``#,##0.00`` and 合计 rows bold, found by ``money_styles``.
Without it the output is exactly what it always was.

Every new workbook prints sensibly (``page_setup_xml``): fit to the page width, landscape when
wider than ``LANDSCAPE_COLUMNS`` columns, the header row repeated on each page and frozen on screen.

Speed (``RowXml``): a tool's rows have a handful of shapes (the classes of their cells in order),
so each shape gets a row template made once (UTF-8 bytes, column letters and style ids already in
it), and a row is one ``%``; text cells come from a memo (text -> its escaped ``<is>`` fragment),
dates from another (date -> serial). The per-cell functions (``_cell_xml``, ``_styled_cell_xml``)
remain the general path and the reference: any row the templates do not cover (a control
character to drop, a class they do not know) goes through them, and the XML is the same either
way (tests/test_writer_fast_path.py compares the two). The compressed sheet is written by a second
thread (``_ZipSink``): zlib and crc32 release the GIL, so on two cores the deflate work overlaps
building the XML.
"""
import datetime
import itertools
import operator
import queue
import threading
import zipfile

from .. import opc
from . import xlsx_chart
from .cells import (DATE_FORMAT, DATETIME_FORMAT, TIME_FORMAT, clean_xml_row, column_widths, excel_serial,
                    is_digit_text, looks_like_header, picker)
from .values import col_letter

# Cell styles (index into cellXfs below): 0 plain, 1 bold header, 2 date, 3 date+time, 4 time, 5 text.
_XF_BOLD, _XF_DATE, _XF_DATETIME, _XF_TIME, _XF_TEXT = 1, 2, 3, 4, 5
_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_REL = opc.NS_OFFICE_RELS
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml."

_PKG_CONTENT_TYPES = opc.content_types({
    "xl/workbook.xml": _CT + "sheet.main+xml",
    "xl/worksheets/sheet1.xml": _CT + "worksheet+xml",
    "xl/styles.xml": _CT + "styles+xml",
    "docProps/core.xml": opc.CT_CORE_PROPS,
    "docProps/app.xml": opc.CT_EXTENDED_PROPS,
})
_PKG_RELS = opc.relationships([
    ("rId1", opc.REL_OFFICE_DOCUMENT, "xl/workbook.xml"),
    ("rId2", opc.REL_CORE_PROPS, "docProps/core.xml"),
    ("rId3", opc.REL_EXTENDED_PROPS, "docProps/app.xml"),
])
_PKG_WORKBOOK_RELS = opc.relationships([
    ("rId1", _NS_REL + "/worksheet", "worksheets/sheet1.xml"),
    ("rId2", _NS_REL + "/styles", "styles.xml"),
])
_PKG_APP = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    '<Application>Microsoft Excel</Application></Properties>')
_PKG_CORE = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    '<dc:creator>xla</dc:creator>'
    '<dcterms:created xsi:type="dcterms:W3CDTF">%(now)s</dcterms:created>'
    '<dcterms:modified xsi:type="dcterms:W3CDTF">%(now)s</dcterms:modified>'
    '</cp:coreProperties>')
_PKG_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="' + _NS_MAIN + '" xmlns:r="' + _NS_REL + '">'
    '<bookViews><workbookView activeTab="0"/></bookViews>'
    '<sheets><sheet name="%(name)s" sheetId="1" r:id="rId1"/></sheets>%(names)s</workbook>')
_PKG_STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<styleSheet xmlns="' + _NS_MAIN + '">'
    '<numFmts count="3"><numFmt numFmtId="164" formatCode="' + DATE_FORMAT + '"/>'
    '<numFmt numFmtId="165" formatCode="' + DATETIME_FORMAT + '"/>'
    '<numFmt numFmtId="166" formatCode="' + TIME_FORMAT + '"/></numFmts>'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="6"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    '</styleSheet>')


# zlib level 2 instead of the default 6: a 100k-row sheet (46 MB of XML) compresses in 0.16 s instead
# of 0.61 s (level 3: 0.25 s) for a file 19% larger (6.5 vs 5.5 MB; level 3: 6.2 MB) -- time is what
# the 60 s limit counts (level 1 is no faster and 7.0 MB).
ZIP_LEVEL = 2
CHUNK_ROWS = 2000           # rows per write into the zip entry (about 1 MB of XML)

_SERIALS = {}     # date -> "<v>" text: a ledger repeats the same few hundred dates
_SERIAL_BYTES = {}  # the same as UTF-8, for RowXml


def _cell_xml(ref, value, header):
    """One <c> element. Strings are inline (no shared-string table: streaming needs no second pass).

    The exact-class tests first are the hot path of every written workbook (about a million
    cells per 100k-row table); anything else falls through to the general isinstance chain."""
    cls = value.__class__
    if cls is int:
        return '<c r="%s"><v>%d</v></c>' % (ref, value)
    if cls is float:
        return '<c r="%s"><v>%r</v></c>' % (ref, value)
    if cls is datetime.date:
        text = _SERIALS.get(value)
        if text is None:
            if len(_SERIALS) > 100000:
                _SERIALS.clear()
            text = _SERIALS[value] = repr(excel_serial(value))
        return '<c r="%s" s="%d"><v>%s</v></c>' % (ref, _XF_DATE, text)
    if isinstance(value, str):
        if not value:
            return ""
        space = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() or "\n" in value else ""
        style = ' s="1"' if header else (' s="5"' if is_digit_text(value) else "")
        return '<c r="%s"%s t="inlineStr"><is><t%s>%s</t></is></c>' % (ref, style, space, opc.xml_text(value))
    if isinstance(value, bool):
        return '<c r="%s"%s t="b"><v>%d</v></c>' % (ref, ' s="1"' if header else "", value)
    if isinstance(value, int):
        return '<c r="%s"><v>%d</v></c>' % (ref, value)
    if isinstance(value, float):
        return '<c r="%s"><v>%s</v></c>' % (ref, repr(value))
    if isinstance(value, datetime.datetime):
        style = _XF_DATETIME
    elif isinstance(value, datetime.date):
        style = _XF_DATE
    else:
        style = _XF_TIME
    return '<c r="%s" s="%d"><v>%r</v></c>' % (ref, style, excel_serial(value))


# Extra cell styles, only in the stylesheet of a workbook written with ``styles``.
_XF_NUM, _XF_BOLD_NUM, _XF_BOLD_DATE, _XF_BOLD_GENERAL, _XF_BOLD_TEXT = 6, 7, 8, 9, 10


def _styled_stylesheet(number_format, column_formats=()):
    """The stylesheet of a styled workbook: ``number_format`` is numFmt 167 (xfs 6 and 7), each of
    ``column_formats`` (distinct format codes, in order) numFmt 168+k with xfs 11+2k (plain) and
    12+2k (bold)."""
    fmt = opc.xml_attr(number_format or "General")
    more = "".join('<numFmt numFmtId="%d" formatCode="%s"/>' % (168 + k, opc.xml_attr(code))
                   for k, code in enumerate(column_formats))
    sheet = _PKG_STYLES.replace('<numFmts count="3">', '<numFmts count="%d">' % (4 + len(column_formats))).replace(
        '</numFmts>', '<numFmt numFmtId="167" formatCode="%s"/>%s</numFmts>' % (fmt, more))
    extra = ('<xf numFmtId="167" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
             '<xf numFmtId="167" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>'
             '<xf numFmtId="164" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>'
             '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
             '<xf numFmtId="49" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>')
    for k in range(len(column_formats)):
        extra += ('<xf numFmtId="%d" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
                  '<xf numFmtId="%d" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>'
                  % (168 + k, 168 + k))
    return sheet.replace('<cellXfs count="6">', '<cellXfs count="%d">' % (11 + 2 * len(column_formats))).replace(
        '</cellXfs>', extra + '</cellXfs>')


def _styled_cell_xml(ref, value, bold, numfmt, column_xf=None):
    """One <c> element of a workbook written with ``styles``: bold and number formats per cell
    (``column_xf``: the (plain, bold) xfs of the column's own number format, if it has one)."""
    if isinstance(value, str):
        if not value:
            return ""
        space = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() or "\n" in value else ""
        if is_digit_text(value):
            style = ' s="%d"' % (_XF_BOLD_TEXT if bold else _XF_TEXT)
        else:
            style = ' s="1"' if bold else ""
        return '<c r="%s"%s t="inlineStr"><is><t%s>%s</t></is></c>' % (ref, style, space, opc.xml_text(value))
    if isinstance(value, bool):
        return '<c r="%s"%s t="b"><v>%d</v></c>' % (ref, ' s="1"' if bold else "", value)
    if isinstance(value, (int, float)):
        if column_xf is not None:
            style = column_xf[1] if bold else column_xf[0]
        else:
            style = (_XF_BOLD_NUM if bold else _XF_NUM) if numfmt else (_XF_BOLD_GENERAL if bold else 0)
        text = "%d" % value if isinstance(value, int) else repr(value)
        return '<c r="%s"%s><v>%s</v></c>' % (ref, ' s="%d"' % style if style else "", text)
    if isinstance(value, datetime.datetime):
        style = _XF_DATETIME
    elif isinstance(value, datetime.date):
        style = _XF_BOLD_DATE if bold else _XF_DATE
    else:
        style = _XF_TIME
    return '<c r="%s" s="%d"><v>%r</v></c>' % (ref, style, excel_serial(value))


# ---------------------------------------------------------------------------------------------
# The fast path: one template per row shape (see the module docstring)

_NONE = type(None)
_TEMPLATE_CAP = 2000        # row shapes kept; past it a new shape takes the per-cell path
_MEMO_CAP = 100000          # texts per fragment memo (cleared when full: unique notes, IDs)


def _text_fragment(value, digit_style, style):
    """A text cell after its ``<c r="..."``: the same markup ``_cell_xml`` writes."""
    sid = digit_style if is_digit_text(value) else style
    space = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() or "\n" in value else ""
    return '%s t="inlineStr"><is><t%s>%s</t></is></c>' % (' s="%d"' % sid if sid else "", space,
                                                           opc.xml_text(value))


class RowXml(object):
    """``row(r, values, flag)`` -> the ``<row>`` element as UTF-8 bytes, or None when the row must
    take the per-cell path (text with a character XML cannot hold, a cell class the templates do
    not know).

    ``bold(c, n, flag)``: is cell ``c`` of an ``n``-cell row bold (``flag`` is the caller's per-row
    key: the header row, a bold row); ``number_style(c, bold)``: the style id of a number cell in
    column ``c``; ``date_style(bold)``; ``text_styles(bold)``: (digit text, other text) style ids.
    0 is no ``s`` attribute. Templates are keyed by (flag, the cells' classes).

    Why bytes and ``%``: measured on a ledger row, ``bytes % tuple`` with UTF-8 fragments is about
    4x faster than ``str.format`` (no wide-string building, no final encode). A row's values are
    gathered grouped by what each needs, with a few C-level calls (the row number; the text
    fragments of each text group (texts sharing styles) through one ``map(memo.get, ...)``; the
    date serials likewise; numbers and bools as they are, for ``%d`` / ``%r``; datetimes and times
    one by one), and one ``itemgetter`` puts them in document order, the row number repeated for
    each cell reference."""

    def __init__(self, bold, number_style, date_style, text_styles):
        self.bold = bold
        self.number_style = number_style
        self.date_style = date_style
        self.text_styles = text_styles
        self.templates = {}
        self.memos = {}             # (digit style, text style) -> {text: fragment bytes}
        self.letters = []

    def _template(self, shape, flag):
        """(format bytes, order picker, text groups, dates picker, plain picker, serials picker),
        or False for a shape with a class the templates do not know."""
        while len(self.letters) < len(shape):
            self.letters.append(col_letter(len(self.letters)))
        n = len(shape)
        kinds = []                  # (column, kind, style)
        groups = {}                 # (digit style, text style) -> text columns
        dates, plain, serials = [], [], []
        for c, cls in enumerate(shape):
            if cls is _NONE:
                continue
            bold = self.bold(c, n, flag)
            if cls is str:
                styles = self.text_styles(bold)
                groups.setdefault(styles, []).append(c)
                kinds.append((c, "text", None))
            elif cls is bool:
                plain.append(c)
                kinds.append((c, "bool", ' s="1"' if bold else ""))
            elif cls is int or cls is float:
                plain.append(c)
                sid = self.number_style(c, bold)
                kinds.append((c, "int" if cls is int else "float", ' s="%d"' % sid if sid else ""))
            elif cls is datetime.date:
                dates.append(c)
                kinds.append((c, "serial", self.date_style(bold)))
            elif cls is datetime.datetime or cls is datetime.time:
                serials.append(c)
                kinds.append((c, "serial", _XF_DATETIME if cls is datetime.datetime else _XF_TIME))
            else:
                return False
        slot = {}                   # column -> its index in the gathered values (0: the row number)
        for c in [c for columns in groups.values() for c in columns] + dates + plain + serials:
            slot[c] = len(slot) + 1
        pieces = ['<row r="%s">']
        order = [0]
        for c, kind, style in kinds:
            ref = '<c r="%s%%s"' % self.letters[c]
            if kind == "text":
                pieces.append(ref + "%s")
            elif kind == "bool":
                pieces.append(ref + style + ' t="b"><v>%d</v></c>')
            elif kind == "int":
                pieces.append(ref + style + "><v>%d</v></c>")
            elif kind == "float":
                pieces.append(ref + style + "><v>%r</v></c>")
            else:
                pieces.append(ref + ' s="%d"><v>%%s</v></c>' % style)
            order += [0, slot[c]]
        pieces.append("</row>")
        texts = [(self.memos.setdefault(styles, {}), picker(columns), styles) for styles, columns in groups.items()]
        return ("".join(pieces).encode("ascii"), operator.itemgetter(*order), texts, picker(dates),
                picker(plain), picker(serials))

    def row(self, r, values, flag=False):
        if "" in values:                            # an empty text is no cell, like None
            values = [None if v.__class__ is str and not v else v for v in values]
        shape = tuple(map(type, values))
        plan = self.templates.get((flag, shape))
        if plan is None:
            plan = self._template(shape, flag)
            if len(self.templates) < _TEMPLATE_CAP:
                self.templates[(flag, shape)] = plan
        if plan is False:
            return None
        fmt, order, texts, dates, plain, serials = plan
        got = [b"%d" % r]
        for memo, pick, styles in texts:
            start = len(got)
            got.extend(map(memo.get, pick(values)))
            if None in got:
                for j, value in enumerate(pick(values), start):
                    if got[j] is None:
                        if opc.ILLEGAL_XML_RE.search(value):
                            return None             # cleaned and counted by the per-cell path
                        if len(memo) >= _MEMO_CAP:
                            memo.clear()
                        got[j] = memo[value] = _text_fragment(value, *styles).encode("utf-8")
        if dates is not None:
            start = len(got)
            got.extend(map(_SERIAL_BYTES.get, dates(values)))
            if None in got:
                for j, value in enumerate(dates(values), start):
                    if got[j] is None:
                        if len(_SERIAL_BYTES) > 100000:
                            _SERIAL_BYTES.clear()
                        got[j] = _SERIAL_BYTES[value] = repr(excel_serial(value)).encode("ascii")
        if plain is not None:
            got.extend(plain(values))
        if serials is not None:
            got.extend([repr(excel_serial(v)).encode("ascii") for v in serials(values)])
        return fmt % order(got)


class _ZipSink(object):
    """The sheet's zip entry, written by a second thread: ``write`` hands over a chunk (at most
    ``depth`` wait, so memory stays bounded) while the caller builds the next one; zlib's deflate
    and crc32 release the GIL, so the two overlap on a machine with two cores. ``close`` waits for
    the thread and raises what it raised (a full disk)."""

    def __init__(self, raw, depth=3):
        self.raw = raw
        self.chunks = queue.Queue(depth)
        self.error = None
        self.thread = threading.Thread(target=self._run, name="xlsx-deflate")
        self.thread.daemon = True
        self.thread.start()

    def _run(self):
        while True:
            chunk = self.chunks.get()
            if chunk is None:
                return
            if self.error is None:
                try:
                    self.raw.write(chunk)
                except BaseException as exc:    # kept for close(); keep draining so write() never blocks
                    self.error = exc

    def write(self, data):
        if self.error is not None:
            self.close()
        self.chunks.put(data)

    def close(self, quiet=False):
        """Wait for the thread; raise its error unless ``quiet`` (the caller is raising its own)."""
        if self.thread.is_alive():
            self.chunks.put(None)
            self.thread.join()
        if self.error is not None and not quiet:
            error, self.error = self.error, None
            raise error


def _stream_sheet(raw, head_xml, rows, fast, slow_cells, stats, counter, tail_xml):
    """The sheet part: ``head_xml``, a ``<row>`` for each ``(r, values, flag)`` of ``rows`` (the
    template's if ``fast`` (a ``RowXml``) covers it, else ``slow_cells(r, values, flag)``'s cells
    after dropping control characters), ``tail_xml``; written in chunks of ``CHUNK_ROWS`` rows."""
    sink = _ZipSink(raw)
    try:
        parts = [head_xml.encode("utf-8")]
        buffered = 0
        for r, values, flag in rows:
            xml = fast.row(r, values, flag)
            if xml is None:
                clean_xml_row(values, stats)
                xml = ('<row r="%d">%s</row>' % (r, slow_cells(r, values, flag))).encode("utf-8")
            parts.append(xml)
            counter[0] += 1
            buffered += 1
            if buffered >= CHUNK_ROWS:
                sink.write(b"".join(parts))
                parts, buffered = [], 0
        parts.append(tail_xml.encode("utf-8"))
        sink.write(b"".join(parts))
    except BaseException:
        sink.close(quiet=True)
        raise
    sink.close()


def _shown(value, numfmt):
    """A number as its format shows it (``1,234.50``, one more for bold), for column widths."""
    if not numfmt or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    decimals = len(numfmt.split(".", 1)[1]) if "." in numfmt else 0
    return "{:,.{}f}".format(value, decimals) + "  "


def _lookahead(rows):
    """(row, is_last) pairs, so a style for the last row (-1) works on a stream."""
    it = iter(rows)
    try:
        prev = next(it)
    except StopIteration:
        return
    for row in it:
        yield prev, False
        prev = row
    yield prev, True


def sheet_head_xml(freeze_rows, freeze_cols, widths, selected=True, fit_page=False):
    """A worksheet's XML up to ``<sheetData>``: frozen panes (rows above / columns left of the
    split), column widths. Every writer that makes a sheet (new workbook, styled report, a sheet
    added to an existing workbook) starts it with this. ``fit_page`` adds the ``sheetPr`` that
    lets ``page_setup_xml``'s fit-to-width take effect."""
    parts = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
             '<worksheet xmlns="%s" xmlns:r="%s">%s<sheetViews><sheetView %sworkbookViewId="0">'
             % (_NS_MAIN, _NS_REL, '<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>' if fit_page else "",
                'tabSelected="1" ' if selected else "")]
    fr, fc = freeze_rows, freeze_cols
    if fr or fc:
        top_left = "%s%d" % (col_letter(fc), fr + 1)
        pane = "bottomRight" if fr and fc else ("bottomLeft" if fr else "topRight")
        parts.append('<pane%s%s topLeftCell="%s" activePane="%s" state="frozen"/>'
                     '<selection pane="%s" activeCell="%s" sqref="%s"/>' % (
                         ' xSplit="%d"' % fc if fc else "", ' ySplit="%d"' % fr if fr else "",
                         top_left, pane, pane, top_left, top_left))
    parts.append('</sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>')
    if widths:
        parts.append("<cols>%s</cols>" % "".join(
            '<col min="%d" max="%d" width="%s" customWidth="1"/>' % (i + 1, i + 1, w)
            for i, w in enumerate(widths)))
    parts.append("<sheetData>")
    return "".join(parts)


# Printing: a new table prints the way a person expects, not one column per page. Wider than this
# many columns -> landscape; always fit all columns to the page width (as many pages down as it
# takes), repeat the header row on every page, narrow margins, A4.
LANDSCAPE_COLUMNS = 8


def page_setup_xml(width):
    """``<pageMargins/><pageSetup/>`` for a sheet ``width`` columns wide (goes after sheetData)."""
    return ('<printOptions horizontalCentered="1"/>'
            '<pageMargins left="0.4" right="0.4" top="0.6" bottom="0.6" header="0.3" footer="0.3"/>'
            '<pageSetup paperSize="9" orientation="%s" fitToWidth="1" fitToHeight="0"/>'
            % ("landscape" if width > LANDSCAPE_COLUMNS else "portrait"))


def print_titles_xml(title, header, areas=None):
    """The workbook's ``definedNames``: the header row repeated on every printed page; ``areas``
    [(c1, r1, c2, r2)] (1-based) the print area: with a chart beside the table, the table and the
    chart are two areas, each printed on its own pages, so "fit to one page wide" fits the table
    and not the table plus the chart (which shrank a printed table to 4 pt)."""
    quoted = "'%s'" % title.replace("'", "''")
    names = []
    if areas:
        names.append('<definedName name="_xlnm.Print_Area" localSheetId="0">%s</definedName>' % opc.xml_text(",".join(
            "%s!$%s$%d:$%s$%d" % (quoted, col_letter(c1 - 1), r1, col_letter(c2 - 1), r2) for c1, r1, c2, r2 in areas)))
    if header:
        names.append('<definedName name="_xlnm.Print_Titles" localSheetId="0">%s!$1:$1</definedName>' % opc.xml_text(quoted))
    return "<definedNames>%s</definedNames>" % "".join(names) if names else ""


def _write_parts(zf, title, styles_xml, header=False, attach=None):
    """Every part of a one-sheet workbook except the sheet itself (which is streamed after)
    and a chart's parts (``attach``: written by ``_chart_parts`` once the rows are known)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    zf.writestr("[Content_Types].xml", attach.ct_text if attach is not None else _PKG_CONTENT_TYPES)
    zf.writestr("_rels/.rels", _PKG_RELS)
    zf.writestr("docProps/app.xml", _PKG_APP)
    zf.writestr("docProps/core.xml", _PKG_CORE % {"now": now})
    if attach is None:      # with a chart, the workbook (its print area) follows the rows: _chart_parts
        zf.writestr("xl/workbook.xml", _PKG_WORKBOOK % {"name": opc.xml_attr(title),
                                                        "names": print_titles_xml(title, header)})
    zf.writestr("xl/_rels/workbook.xml.rels", _PKG_WORKBOOK_RELS)
    zf.writestr("xl/styles.xml", styles_xml)


def _attach(chart):
    if chart is None:
        return None
    return xlsx_chart.Attach(set(), None, "xl/worksheets/sheet1.xml", _PKG_CONTENT_TYPES)


def _chart_parts(zf, chart, attach, title, head, header, width, counter):
    """The chart's parts, after the sheet: its ranges need the number of rows written. It sits
    one blank column right of the table, level with the header."""
    if chart is None:
        return
    first = 2 if header else 1
    data = head[1:] if header else head
    resolved = chart.resolve(title, head[0] if header else None, first, counter[0], data)
    for name, content in attach.parts(resolved, width + 1, 0).items():
        zf.writestr(name, content)
    areas = [(1, 1, max(width, 1), max(counter[0], 1)),
             (width + 2, 1, width + 1 + xlsx_chart.ANCHOR_COLS, xlsx_chart.anchor_rows(resolved) + 1)]
    zf.writestr("xl/workbook.xml", _PKG_WORKBOOK % {"name": opc.xml_attr(title),
                                                    "names": print_titles_xml(title, header, areas)})


MONEY_FORMAT = "#,##0.00"
AUTO_MONEY = "money"        # ``styles`` for a table a person typed (write_spreadsheet): ``money_styles``
_MONEY_WORDS = ("金额", "额", "元", "价", "费", "收入", "成本", "工资", "薪", "款", "税", "利润", "支出", "预算",
                "余额", "奖金", "报销", "营收", "销售", "amount", "price", "cost", "revenue", "salary", "total")


def money_styles(head):
    """Styles for a plain table (no ``styles`` given): its money columns as numbers in
    ``#,##0.00`` (mixed "15184" / "1801.93" read as one kind of figure, and print aligned), the
    header row and the 合计 rows among the rows seen bold. A money column: a header naming money
    (金额, 单价, 费用, 收入, …; not a code's name) over numbers, or numbers with cents (no more than
    two decimals, some above 100). None when the table has no money column."""
    from .values import is_code_name, is_total_label
    if not head or not looks_like_header(head[0]) or len(head) < 2:
        return None
    names = head[0]
    formats = {}
    for c, name in enumerate(names):
        values = [row[c] for row in head[1:] if c < len(row) and row[c] is not None and row[c] != ""]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not numbers or len(numbers) < 0.8 * len(values):
            continue
        label = str(name or "").strip().lower()
        if label and is_code_name(label):
            continue
        named = any(w in label for w in _MONEY_WORDS) and not any(w in label for w in ("率", "比", "%", "数量", "个数"))
        cents = [v for v in numbers if isinstance(v, float) and v != int(v)]
        priced = cents and all(abs(round(v, 2) - v) < 1e-9 for v in cents) and max(abs(v) for v in numbers) >= 100
        if named or priced:
            formats[c] = MONEY_FORMAT
    if not formats:
        return None
    bold = [0] + [r for r, row in enumerate(head) if r and row and is_total_label(row[0])]
    return {"column_formats": formats, "bold_rows": bold, "freeze": [1, 0]}


def write_new(tmp, title, head, rest, stats, counter, styles=None, chart=None):
    """A new workbook with one sheet, written streaming (constant memory whatever the row count).
    ``chart``: an ``xlsx_chart.ChartJob`` drawn beside the rows."""
    borders = styles is not None            # a table a person hands in, not a derived copy
    if styles == AUTO_MONEY:
        styles = money_styles(head)
    if styles:
        return _write_styled(tmp, title, head, rest, stats, counter, styles, chart)
    header = bool(head) and looks_like_header(head[0])
    widths = column_widths(head)
    width = max([len(r) for r in head] or [0])
    letters = []

    def slow_cells(r, row, is_header):
        while len(letters) < len(row):
            letters.append(col_letter(len(letters)))
        return "".join(_cell_xml("%s%d" % (letters[c], r), v, is_header) for c, v in enumerate(row) if v is not None)

    fast = RowXml(bold=lambda c, n, is_header: is_header, number_style=lambda c, bold: 0,
                  date_style=lambda bold: _XF_DATE, text_styles=lambda bold: (1, 1) if bold else (_XF_TEXT, 0))
    rows = ((r, row, header and r == 1) for r, row in enumerate(itertools.chain(head, rest), start=1))
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as zf:
        attach = _attach(chart)
        _write_parts(zf, title, with_border_dxf(_PKG_STYLES) if borders else _PKG_STYLES, header, attach)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as raw:
            _stream_sheet(raw, sheet_head_xml(1 if header else 0, 0, widths, fit_page=True), rows, fast, slow_cells,
                          stats, counter, _sheet_tail(width, attach, borders))
        _chart_parts(zf, chart, attach, title, head, header, width, counter)


def _sheet_tail(width, attach, borders=False):
    return "</sheetData>" + (border_rule_xml(width) if borders else "") + page_setup_xml(width) + (
        attach.drawing_element().decode("utf-8") if attach else "") + "</worksheet>"


# Thin borders on a table a person hands in (write_spreadsheet, pivot_table, derived tables with
# their own styles): a conditional format over the table's columns that draws thin lines around
# every cell of a row holding anything. Why a rule and not a border in every cell's style: empty
# cells (a blank 备注) are no cells in a streamed sheet, so per-cell borders would leave holes, and
# the fast path writes most cells without a style at all (one attribute more per cell on a
# million-cell sheet); a rule costs nothing per cell, has no holes, reaches rows the user adds
# below, and prints in Excel, WPS and LibreOffice. Its look is dxf 0 of the stylesheet.
BORDER_DXF = ('<dxfs count="1"><dxf><border><left style="thin"><color rgb="FF808080"/></left>'
              '<right style="thin"><color rgb="FF808080"/></right><top style="thin"><color rgb="FF808080"/></top>'
              '<bottom style="thin"><color rgb="FF808080"/></bottom></border></dxf></dxfs>')


def border_rule_xml(width):
    """The ``conditionalFormatting`` of the table's ``width`` columns (after sheetData)."""
    if width < 1:
        return ""
    last = col_letter(width - 1)
    return ('<conditionalFormatting sqref="A1:%s1048576"><cfRule type="expression" dxfId="0" priority="1">'
            '<formula>COUNTA($A1:$%s1)&gt;0</formula></cfRule></conditionalFormatting>' % (last, last))


def with_border_dxf(styles_xml):
    """A stylesheet with ``BORDER_DXF`` (dxfs go after cellStyles)."""
    return styles_xml.replace("</cellStyles>", "</cellStyles>" + BORDER_DXF, 1)


def _write_styled(tmp, title, head, rest, stats, counter, styles, chart=None):
    """``write_new`` with bold rows/columns, a number format and frozen panes (see the docstring)."""
    bold_rows = set(int(i) for i in styles.get("bold_rows") or ())
    bold_cols = set(int(i) for i in styles.get("bold_cols") or ())
    numfmt = styles.get("number_format") or None
    freeze = styles.get("freeze")
    if freeze is None:
        freeze = (1, 0) if head and looks_like_header(head[0]) else (0, 0)
    fr, fc = int(freeze[0] or 0), int(freeze[1] or 0)
    by_column = dict((int(c), code) for c, code in (styles.get("column_formats") or {}).items())
    codes = sorted(set(by_column.values()))
    column_xf = dict((c, (11 + 2 * codes.index(code), 12 + 2 * codes.index(code))) for c, code in by_column.items())
    widths = column_widths([[_shown(v, by_column.get(c, numfmt)) for c, v in enumerate(row)] for row in head])
    width = max([len(r) for r in head] or [0])
    header = bool(head) and fr >= 1
    letters = []

    def bold(c, n, row_bold):
        return row_bold or c in bold_cols or (c == n - 1 and -1 in bold_cols)

    def number_style(c, bold):
        xf = column_xf.get(c)
        if xf is not None:
            return xf[1] if bold else xf[0]
        return (_XF_BOLD_NUM if bold else _XF_NUM) if numfmt else (_XF_BOLD_GENERAL if bold else 0)

    def slow_cells(r, row, row_bold):
        while len(letters) < len(row):
            letters.append(col_letter(len(letters)))
        n = len(row)
        return "".join(_styled_cell_xml("%s%d" % (letters[c], r), v, bold(c, n, row_bold), numfmt, column_xf.get(c))
                       for c, v in enumerate(row) if v is not None)

    fast = RowXml(bold=bold, number_style=number_style,
                  date_style=lambda bold: _XF_BOLD_DATE if bold else _XF_DATE,
                  text_styles=lambda bold: (_XF_BOLD_TEXT, 1) if bold else (_XF_TEXT, 0))
    rows = ((r, row, (r - 1) in bold_rows or (last and -1 in bold_rows))
            for r, (row, last) in enumerate(_lookahead(itertools.chain(head, rest)), start=1))
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as zf:
        attach = _attach(chart)
        _write_parts(zf, title, with_border_dxf(_styled_stylesheet(numfmt, codes)), header, attach)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as raw:
            _stream_sheet(raw, sheet_head_xml(fr, fc, widths, fit_page=True), rows, fast, slow_cells,
                          stats, counter, _sheet_tail(width, attach, True))
        _chart_parts(zf, chart, attach, title, head, header, width, counter)
