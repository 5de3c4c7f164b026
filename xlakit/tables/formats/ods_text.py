"""The text parser of ``.ods`` sheets (see ``ods``): rows cut out of content.xml's bytes, no tree.

Why: a 100k-row LibreOffice ledger is 130 MB of XML; a tree walk reads it in about 20 s, this in
a few. It reads only what it is sure of; anything else raises ``_Fallback`` and ``ods`` reads the
sheet with the tree parser, so both give the same rows (the tests check that on every fixture).

Four levels, each handing what it does not know to the next:

- ``_FastRows.whole`` / the shapes in ``_FastRows.row``: a row of the same cells and attributes
  as an earlier plain row (a ledger's rows differ only in values) matched whole by that row's
  compiled shape, values read column by column;
- ``_FastRows.row``: a row of plain cells (one ``<text:p>`` of plain text at most, no span)
  from one regex ``findall``; each cell's value attribute comes
  apart from its other attributes, which repeat from row to row and are decoded once;
- ``_text_cells``: every other row, cell by cell with ``bytes.find``, attribute texts decoded
  once each, ElementTree for a cell with rich content (spans, several paragraphs, ``<text:s/>``);
- ``_Fallback`` for what neither reads with certainty (a comment, CDATA, odd quoting, a
  sub-table, text between cells...).

The value rules themselves (types, dates, durations, booleans shown TRUE/FALSE, repeats and
their caps) are ``ods``'s, shared with the tree parser.
"""
import functools
import html
import re
import time
import xml.etree.ElementTree as ET

from . import ods_cells
from .ods_cells import (_BOOL_TEXT, MAX_COLS, MAX_ROWS, REPEAT_CAPPED, CHUNK, _Fallback, _OutOfTime,
                        _Sheet, _bounded, add_row, cell_value, parse_date, parse_duration)
from ._base import MAX_EXACT, number

_NEXT_RE = re.compile(rb"<table:table(-row)?[\s/>]|</table:table>")
_ROW_OR_END_RE = re.compile(rb"<table:table-row[\s/>]|</table:table>|<table:table[\s>]")
_ATTR_B_RE = re.compile(rb'([\w.-]+:[\w.-]+)="([^"]*)"')
_XML_ENTITY_RE = re.compile(r"&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);")

# One plain cell of a row, for the row fast path: the text before it (must be blank), its
# attributes split around the one value attribute (the rest repeats, so it can key a cache) and
# its content when that is at most one plain paragraph; or a "<" that starts anything else. The pattern is
# lean (one space between attributes, as LibreOffice and WPS write them; names checked later,
# once per distinct attribute text, by _ATTRS_RE); a cell written any other way, a covered cell
# and rich content do not match, and the row then goes to ``_text_cells``.
_VALUE_NAME = rb"(?:date-|time-|boolean-|string-)?value"
_FAST_CELL_RE = re.compile(
    rb'([^<]*)(?:<table:table-cell'
    rb'((?: (?!office:' + _VALUE_NAME + rb'=)[^ =>]+="[^"]*")*)'
    rb'(?: office:(' + _VALUE_NAME + rb')="([^"]*)")?'
    rb'((?: [^ =>]+="[^"]*")*)'
    rb'(?:/>|>(<text:p>[^<]*</text:p>|<text:p/>)?</table:table-cell>)'
    rb'|(<))')      # any other "<": the row is not plain
_ATTRS_RE = re.compile(rb'(?: [\w.-]+:[\w.-]+="[^"]*")*')
_VALUE = b"\0VALUE\0"        # where a shape's value groups go (see _FastRows._shape)
_VALUE_NAMES = (b"value", b"date-value", b"time-value", b"boolean-value", b"string-value")
_VALUE_KEYS = frozenset(b"office:" + n for n in _VALUE_NAMES)
# The fast path's value types (compared by identity). Only a float 1/0 can be a boolean shown
# TRUE/FALSE; percentage and currency are plain numbers; _TEXT is every other type (the
# paragraph's text is the value).
_FLOAT, _NUMBER, _DATE, _TIME, _BOOLEAN, _STRING, _TEXT = (object() for _ in range(7))
_TYPES = {b"float": _FLOAT, b"percentage": _NUMBER, b"currency": _NUMBER, b"date": _DATE, b"time": _TIME,
          b"boolean": _BOOLEAN, b"string": _STRING}


def _unescape(raw):
    text = raw.decode("utf-8")
    if "&" in text:
        text = _XML_ENTITY_RE.sub(lambda m: html.unescape(m.group(0)), text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _plain_text(inner):
    """The text of ``<text:p>plain</text:p>`` (one paragraph, no markup), "" for ``<text:p/>``;
    None when the cell holds anything richer (the tree parser reads those)."""
    if inner.startswith(b"<text:p>") and inner.endswith(b"</text:p>") and inner.count(b"<") == 2:
        return _unescape(inner[8:-9])
    if inner == b"<text:p/>":
        return ""
    return None


class _Paragraphs(dict):
    """Paragraph XML (``<text:p>…</text:p>``, ``<text:p/>`` or b"") -> the value of a cell whose
    value is its text (the text, None when empty), decoded on first use: category columns repeat."""

    def __missing__(self, inner):
        value = _plain_text(inner) or None
        if len(self) < 100000:
            self[inner] = value
        return value


class _FastRows(object):
    """The values of a row of plain cells, from one regex pass over the row's XML.

    Why: a LibreOffice ledger has about 1.3 KB of XML per row of ten cells, and every number or
    date cell carries its own value in its attributes, so a per-cell cut-and-cache costs a dict
    and a regex per cell. Here the regex hands out each cell's value attribute apart from the
    rest, which repeats (style, type) and is decoded once. ``row`` gives None for anything but a
    row of plain cells (a cell with rich content, a span, a repeat past the cells budget, more
    than MAX_COLS columns, text between cells, any other element): such a
    row goes through ``_text_cells`` + ``add_row``, so the values are the same either way.

    Row shapes: the rows of a ledger repeat the same cells with the same attributes; only the
    values and paragraph texts change. A row read by the cell regex leaves its *shape* (its
    cells' attribute texts as literals, a group for each value and paragraph) as one compiled
    regex, and the next rows are matched whole against the shapes met so far (most recent
    first): one C-level match per row and no per-cell attribute lookups. A row that fits no
    shape is read cell by cell as before. The shape holds each cell's (type, repeat) from
    ``_meta``, so a row matched by a shape gives what the cell regex would give; the number of
    shapes built per sheet is bounded (a compile costs about a millisecond), after which rows
    that fit none are read cell by cell; and a sheet whose rows mostly fit no shape (more than
    MAX_SHAPES shapes in turn) stops trying them, as every failed try costs up to a whole match."""

    MAX_SHAPES = 8          # tried per row, most recent first
    MAX_BUILDS = 64         # shapes compiled per sheet

    def __init__(self):
        self.meta = {}          # (attributes before, after the value) -> (type, columns repeated)
        self.texts = {}         # paragraph XML -> its text (category columns repeat)
        self.dates = {}         # date-value -> date / datetime
        self.paragraphs = _Paragraphs()
        self.shapes = []        # [(compiled regex of a row's cells, plan)], most recently used first
        self.whole_shapes = []  # [(compiled regex of a whole row, start tag included, plan)], the same
        self.builds = 0
        self.hits = self.misses = 0     # rows a shape read / rows read by the cell regex

    def whole(self, buf, pos, budget):
        """(values, end) of the row starting at ``buf[pos:]`` (blanks, its start tag, cells,
        its end tag) when it fits a whole-row shape; None otherwise (or when a repeat passes the
        budget), and the caller then cuts the row out itself. Only rows not repeated leave such
        shapes (``row``'s ``row_tag``), and their value groups take no ``<``, so the match ends at
        the first ``</table:table-row>``, where the caller would cut."""
        shapes = self.whole_shapes
        for k, shape in enumerate(shapes):
            m = shape[0].match(buf, pos)
            if m is not None:
                if k:
                    shapes.insert(0, shapes.pop(k))
                self.hits += 1
                values = self._shaped(shape[1], m.groups(), budget)
                return None if values is None else (values, m.end())
        return None

    def row(self, body, budget, start=0, end=None, row_tag=None):
        """The values of the row ``body[start:end]``, or None; ``budget`` is add_row's (cells
        repeats may still add), charged only when the row is read here. ``row_tag``: the row's
        start tag, given for a row not repeated (its shape is then kept for ``whole`` too)."""
        if end is None:
            end = len(body)
        shapes = self.shapes
        for k, shape in enumerate(shapes):
            m = shape[0].fullmatch(body, start, end)
            if m is not None:
                if k:
                    shapes.insert(0, shapes.pop(k))
                self.hits += 1
                return self._shaped(shape[1], m.groups(), budget)
        if start or end != len(body):
            body = body[start:end]
        tail = body.rfind(b">") + 1
        if tail < len(body) and body[tail:].strip():
            return None             # text after the last cell
        cells = _FAST_CELL_RE.findall(body)
        values = self._cells(cells, budget)
        if values is not None:
            self.misses += 1
            if self.misses > 64 and self.misses * 4 > self.hits:
                self.shapes, self.whole_shapes, self.builds = [], [], self.MAX_BUILDS   # shapes do not pay here
            elif self.builds < self.MAX_BUILDS:
                self._shape(cells, row_tag)
        return values

    def _cells(self, cells, budget):
        """The row's values from the cell regex's matches, or None."""
        values = []
        col = filled = 0            # the next cell's column; len(values)
        spent = 0                   # cells added by repeats, charged to the budget at the end
        meta_cache = self.meta
        value_of = self._value
        for junk, before, vname, raw, after, inner, other in cells:
            if other or junk and junk.strip():
                return None
            meta = meta_cache.get((before, after))
            if meta is None:
                meta = self._meta(before, after)
                if meta is None:
                    return None
            vt, n = meta
            if col + n > MAX_COLS:
                return None
            value = value_of(vt, vname, raw, inner)
            if value is not None:
                if filled < col:
                    values.extend([None] * (col - filled))
                if n == 1:
                    values.append(value)
                else:               # LibreOffice repeats equal neighbours (数量 1: 单价 = 金额)
                    if n > budget[0] - spent:
                        return None     # add_row caps it and warns
                    spent += n - 1
                    values.extend([value] * n)
                filled = col + n
            col += n
        budget[0] -= spent
        return values

    def _shaped(self, plan, groups, budget):
        """The row's values from a shape's match: ``plan`` is ([(column, repeat, type, value
        attribute name, whether the paragraph is the value)] of the cells that can hold a
        value, their converters or None), ``groups`` their (value attribute, paragraph) pairs
        in order."""
        cells, convs = plan
        paragraphs = self.paragraphs
        if convs is not None:
            # one cell per column from the first, none repeated (a ledger row): the list in one
            # go, a paragraph's value straight from its cache; trailing empties dropped as below
            values = [paragraphs[inner] if conv is None else conv(raw, inner)
                      for conv, raw, inner in zip(convs, groups[0::2], groups[1::2])]
            while values and values[-1] is None:
                values.pop()
            return values
        values = []
        filled = spent = 0
        value_of = self._value
        i = 0
        for col, n, vt, vname, is_text in cells:
            raw = groups[i]
            inner = groups[i + 1]
            i += 2
            if is_text:             # the common case inline: the paragraph's value, cached
                value = paragraphs[inner]
            else:
                value = value_of(vt, vname, raw, inner)
            if value is not None:
                if filled < col:
                    values.extend([None] * (col - filled))
                if n == 1:
                    values.append(value)
                else:
                    if n > budget[0] - spent:
                        return None
                    spent += n - 1
                    values.extend([value] * n)
                filled = col + n
        budget[0] -= spent
        return values

    def _shape(self, cells, row_tag):
        """Compile the shape of a row the cell regex read (``cells``, all known to ``_meta``);
        with ``row_tag`` also its whole-row form."""
        blank = rb"[ \t\n\r\x0b\x0c]*"          # what ``junk.strip()`` leaves empty
        parts = []
        plan = []
        col = 0
        for junk, before, vname, raw, after, inner, other in cells:
            vt, n = self.meta[(before, after)]
            parts.append(blank + b"<table:table-cell" + re.escape(before))
            if vname:
                parts.append(b" office:" + vname + b'="(' + _VALUE + b')"')
            parts.append(re.escape(after))
            if inner.startswith(b"<text:p>"):
                content = b"(?:>(<text:p>[^<]*</text:p>)</table:table-cell>)"
            elif inner:
                content = b"(?:>(<text:p/>)</table:table-cell>)"
            else:
                content = b"(?:/>|></table:table-cell>)()"
            if vname or inner.startswith(b"<text:p>"):
                if not vname:
                    parts.append(b"()")
                plan.append((col, n, vt, vname, vt is _TEXT or vt is _STRING and vname != b"string-value"))
                parts.append(content)
            else:                   # no value attribute, no text: always empty
                parts.append(content.replace(b"(<text:p/>)", b"<text:p/>").replace(b"()", b""))
            col += n
        parts.append(blank)
        convs = None
        if all(cell[0] == k and cell[1] == 1 for k, cell in enumerate(plan)):
            convs = tuple(self._converter(vt, vname, is_text) for _col, _n, vt, vname, is_text in plan)
        plan = (plan, convs)
        cells_re = b"".join(parts)
        try:
            regex = re.compile(cells_re.replace(_VALUE, rb'[^"]*'))
            whole = row_tag and re.compile(blank + re.escape(row_tag) + cells_re.replace(_VALUE, rb'[^"<]*')
                                           + b"</table:table-row>")
        except (re.error, RecursionError, OverflowError):
            return
        self.builds += 1
        self.shapes.insert(0, (regex, plan))
        del self.shapes[self.MAX_SHAPES:]
        if whole:
            self.whole_shapes.insert(0, (whole, plan))
            del self.whole_shapes[self.MAX_SHAPES:]

    def _converter(self, vt, vname, is_text):
        """``conv(raw, inner)`` giving what ``_value`` gives for this type and value attribute
        (None: the paragraph's value, from ``paragraphs``)."""
        if is_text:
            return None
        if vt is _FLOAT and vname == b"value":
            return self._number
        if vt is _DATE and vname == b"date-value":
            return self._date
        return functools.partial(self._value, vt, vname)

    def _value(self, vt, vname, raw, inner):
        """One plain cell's value: its type (``_meta``), value attribute name and text, paragraph XML."""
        if vt is _STRING and vname != b"string-value" or vt is _TEXT:
            return self.paragraphs[inner]     # decoded once per distinct paragraph
        if (vt is _NUMBER or vt is _FLOAT) and vname == b"value":
            return self._number(raw, inner, vt)
        if vt is _DATE and vname == b"date-value":
            return self._date(raw, inner)
        if vt is _STRING:
            return _unescape(raw) or None
        if vt is _TIME and vname == b"time-value" and raw:
            return parse_duration(raw.decode("utf-8", "replace"))
        if vt is _BOOLEAN and vname == b"boolean-value" and \
                raw.strip().lower() in (b"true", b"1", b"false", b"0"):
            return raw.strip().lower() in (b"true", b"1")
        if inner:
            return self._text(inner) or None
        return None

    def _number(self, raw, inner, vt=_FLOAT):
        """A float/percentage/currency cell with an ``office:value``."""
        try:
            value = float(raw)
        except ValueError:
            value = None
        else:
            if value.is_integer() and -MAX_EXACT < value < MAX_EXACT:   # _base.number
                value = int(value)
            if (value == 0 or value == 1) and vt is _FLOAT and inner:
                shown = self._text(inner).strip()
                if shown in _BOOL_TEXT and _BOOL_TEXT[shown] == value:
                    value = bool(value)
        if value is None and inner:
            value = self._text(inner) or None
        return value

    def _date(self, raw, inner):
        """A date cell with an ``office:date-value`` (an empty one: the paragraph's text)."""
        if not raw:
            return self._text(inner) or None if inner else None
        value = self.dates.get(raw)
        if value is None:
            value = parse_date(raw.decode("utf-8", "replace"))
            if len(self.dates) < 100000:
                self.dates[raw] = value
        return value

    def _text(self, inner):
        """The text of a plain paragraph (``<text:p>…</text:p>`` or ``<text:p/>``), cached."""
        text = self.texts.get(inner)
        if text is None:
            text = _plain_text(inner)
            if len(self.texts) < 100000:
                self.texts[inner] = text
        return text

    def _meta(self, before, after):
        """(value type, columns repeated) of a cell's other attributes, or None when they are
        not plain ``name="value"`` pairs, hold a second value attribute or a span (the general
        path reads those)."""
        if _ATTRS_RE.fullmatch(before) is None or _ATTRS_RE.fullmatch(after) is None:
            return None
        d = dict(_ATTR_B_RE.findall(before + after))
        if _VALUE_KEYS.intersection(d):
            return None
        if b"table:number-columns-spanned" in d or b"table:number-rows-spanned" in d:
            if _bounded(d.get(b"table:number-columns-spanned"), MAX_COLS) > 1 or \
                    _bounded(d.get(b"table:number-rows-spanned"), MAX_ROWS) > 1:
                return None
        meta = (_TYPES.get(d.get(b"office:value-type"), _TEXT),
                _bounded(d.get(b"table:number-columns-repeated"), MAX_COLS))
        if len(self.meta) > 4096:
            self.meta.clear()
        self.meta[(before, after)] = meta
        return meta


def parse_text(book, info):
    """The sheet read as text: rows cut out with ``bytes.find``, cells with one regex,
    attributes decoded once per distinct attribute text; ElementTree only for a cell with
    rich content. Anything it cannot read with certainty raises _Fallback (the tree parser
    then reads the sheet), so both give the same rows; tests check that."""
    sheet = _Sheet()
    budget = [ods_cells.MAX_REPEAT_CELLS]
    capped = False
    cache = {}
    wrap = (b"<w " + b" ".join(b'xmlns:%s="%s"' % (k, v) for k, v in book._root_ns) + b">", b"</w>")
    fast = _FastRows()
    fast_row, whole_row = fast.row, fast.whole
    row_repeats = {}        # row start tag -> rows repeated, checked once per distinct tag
    index = -1
    rownum = 0
    buf = b""
    pos = 0
    eof = False
    with book._open_content() as fh:
        def more():
            chunk = fh.read(CHUNK)
            return chunk
        while True:
            m = _NEXT_RE.search(buf, pos)
            if m is None or m.end() + 1 >= len(buf):
                if eof:
                    raise _Fallback("end of data without the sheet's end")
                chunk = more()
                if not chunk:
                    eof = True
                buf = buf[pos:] + chunk
                pos = 0
                continue
            tag = m.group(0)
            if tag.startswith(b"</"):
                raise _Fallback("unbalanced table end")       # we skip inactive tables whole
            gt = buf.find(b">", m.end() - 1)
            if gt < 0:
                if eof:
                    raise _Fallback("cut tag")
                buf, pos = buf[pos:] + more(), 0
                eof = eof or not buf
                continue
            start_tag = buf[m.start():gt + 1]
            if start_tag.count(b'"') % 2 or b"='" in start_tag:
                raise _Fallback("odd attribute quoting")
            if m.group(1) is None:                  # <table:table ...>
                if b"is-sub-table" in start_tag:
                    raise _Fallback("sub-table")
                index += 1
                if start_tag.endswith(b"/>"):
                    pos = gt + 1
                    if index == info.index:
                        break
                    continue
                if index == info.index:
                    pos = gt + 1
                    # rows of this table until its end tag
                    while True:
                        hit = whole_row(buf, pos, budget)
                        if hit is not None:     # a row of a known shape, cut out and read by one match
                            values, pos = hit
                        else:
                            r = _ROW_OR_END_RE.search(buf, pos)
                            if r is None or r.end() + 1 >= len(buf):
                                if eof:
                                    raise _Fallback("end of data inside the sheet")
                                chunk = more()
                                eof = not chunk
                                buf, pos = buf[pos:] + chunk, 0
                                continue
                            found, start = r.group(0), r.start()
                            if found.startswith(b"</"):
                                if b"<!--" in buf[pos:start] or b"<![CDATA[" in buf[pos:start]:
                                    raise _Fallback("comment")
                                break
                            if start != pos and (b"<!--" in buf[pos:start] or b"<![CDATA[" in buf[pos:start]):
                                raise _Fallback("comment")
                            if found.startswith(b"<table:table ") or found.startswith(b"<table:table>"):
                                raise _Fallback("nested table")
                            gt = buf.find(b">", r.end() - 1)
                            if gt < 0:
                                if eof:
                                    raise _Fallback("cut row tag")
                                chunk = more()
                                eof = not chunk
                                buf, pos = buf[pos:] + chunk, 0
                                continue
                            row_tag = buf[start:gt + 1]
                            repeat = row_repeats.get(row_tag)
                            if repeat is None:
                                if row_tag.count(b'"') % 2 or b"='" in row_tag:
                                    raise _Fallback("odd attribute quoting")
                                repeat = 1
                                k = row_tag.find(b'number-rows-repeated="')
                                if k >= 0:
                                    repeat = _bounded(row_tag[k + 22:row_tag.find(b'"', k + 22)], MAX_ROWS)
                                if len(row_repeats) < 1024:
                                    row_repeats[row_tag] = repeat
                            if row_tag.endswith(b"/>"):
                                rownum += repeat
                                pos = gt + 1
                                continue
                            close = buf.find(b"</table:table-row>", gt)
                            if close < 0:
                                if eof:
                                    raise _Fallback("cut row")
                                chunk = more()
                                eof = not chunk
                                buf, pos = buf[pos:] + chunk, 0
                                continue
                            values = fast_row(buf, budget, gt + 1, close, row_tag) if repeat == 1 else None
                            if values is None:
                                cells = _text_cells(buf[gt + 1:close], cache, wrap)
                                rownum, cap_hit = add_row(sheet, rownum, repeat, cells, budget)
                                capped = capped or cap_hit
                            pos = close + 18
                        if values is not None:
                            # what add_row does with one row of plain cells
                            rownum += 1
                            if values and rownum <= MAX_ROWS:
                                sheet.rows.append((rownum, values))
                                if len(values) > sheet.ncols:
                                    sheet.ncols = len(values)
                                if rownum > sheet.nrows:
                                    sheet.nrows = rownum
                        if time.monotonic() > book._stop_at:
                            raise _OutOfTime(sheet, rownum)
                    break
                # another sheet: skip to its end
                end = buf.find(b"</table:table>", gt)
                while end < 0:
                    if eof:
                        raise _Fallback("end of data inside a sheet")
                    if b"<table:table " in buf[gt + 1:] or b"<table:table>" in buf[gt + 1:]:
                        raise _Fallback("nested table")
                    chunk = more()
                    eof = not chunk
                    buf = buf[gt:] + chunk
                    gt = 0
                    end = buf.find(b"</table:table>", gt)
                skipped = buf[gt + 1:end]
                if b"<table:table " in skipped or b"<table:table>" in skipped:
                    raise _Fallback("nested table")
                pos = end + 14
                continue
            raise _Fallback("row outside a table")
    if capped:
        book.warn(REPEAT_CAPPED % (info.name, ods_cells.MAX_REPEAT_CELLS))
    return sheet

def _text_cells(body, cache, wrap):
    """[(value, repeated, spanned cols, spanned rows)] of a row's inner XML."""
    cells = []
    pos = 0
    find = body.find
    while True:
        i = find(b"<table:", pos)
        if i < 0:
            if body[pos:].strip():
                raise _Fallback("unexpected content in a row")
            break
        if i != pos and body[pos:i].strip():
            raise _Fallback("unexpected content in a row")
        if body.startswith(b"<table:table-cell", i):
            covered, head, close_tag = False, i + 17, b"</table:table-cell>"
        elif body.startswith(b"<table:covered-table-cell", i):
            covered, head, close_tag = True, i + 25, b"</table:covered-table-cell>"
        else:
            raise _Fallback("unexpected element in a row")
        gt = find(b">", head)
        if gt < 0:
            raise _Fallback("cut cell")
        attrs = body[head:gt]
        if attrs.endswith(b"/"):
            attrs = attrs[:-1]
            inner = None
            pos = gt + 1
        else:
            close = find(close_tag, gt)
            if close < 0:
                raise _Fallback("cut cell")
            inner = body[gt + 1:close]
            pos = close + len(close_tag)
        if attrs and attrs[:1] not in b" \t\r\n":
            raise _Fallback("unexpected element in a row")
        key = attrs if not covered else b"#" + attrs
        meta = cache.get(key)
        if meta is None:
            if attrs.count(b'"') % 2 or b"='" in attrs:
                raise _Fallback("odd attribute quoting")
            d = dict(_ATTR_B_RE.findall(attrs))
            meta = (covered, d.get(b"office:value-type"),
                    _bounded(d.get(b"table:number-columns-repeated"), MAX_COLS),
                    1 if covered else _bounded(d.get(b"table:number-columns-spanned"), MAX_COLS),
                    1 if covered else _bounded(d.get(b"table:number-rows-spanned"), MAX_ROWS), d)
            if len(cache) > 4096:
                cache.clear()
            cache[key] = meta
        covered, vt, n, cs, rs, d = meta
        if covered:
            cells.append((None, n, 1, 1))
            continue

        value = None
        if vt in (b"float", b"percentage", b"currency"):
            raw = d.get(b"office:value")
            if raw is not None:
                try:
                    value = number(float(raw))
                except ValueError:
                    value = None
                if value is not None and (value == 0 or value == 1) and vt == b"float" and inner:
                    shown = _plain_text(inner)
                    if shown is None:
                        value = _tree_cell(body[i:pos], wrap)
                    elif shown.strip() in _BOOL_TEXT and _BOOL_TEXT[shown.strip()] == value:
                        value = bool(value)
                if value is not None:
                    cells.append((value, n, cs, rs))
                    continue
        elif vt == b"date":
            raw = d.get(b"office:date-value")
            if raw:
                cells.append((parse_date(raw.decode("utf-8", "replace")), n, cs, rs))
                continue
        elif vt == b"time":
            raw = d.get(b"office:time-value")
            if raw:
                cells.append((parse_duration(raw.decode("utf-8", "replace")), n, cs, rs))
                continue
        elif vt == b"boolean":
            raw = (d.get(b"office:boolean-value") or b"").strip().lower()
            if raw in (b"true", b"1", b"false", b"0"):
                cells.append((raw in (b"true", b"1"), n, cs, rs))
                continue
        elif vt == b"string":
            raw = d.get(b"office:string-value")
            if raw is not None:
                text = _unescape(raw)
                cells.append((text if text != "" else None, n, cs, rs))
                continue
        if inner is None or not inner.strip():
            cells.append((None, n, cs, rs))
            continue
        text = _plain_text(inner)
        if text is None:
            value = _tree_cell(body[i:pos], wrap)
        else:
            value = text if text != "" else None
        cells.append((value, n, cs, rs))
    return cells

def _tree_cell(xml, wrap):
    try:
        el = ET.fromstring(wrap[0] + xml + wrap[1])
    except ET.ParseError:
        raise _Fallback("cell XML")
    return cell_value(el[0])
