"""Rows inserted above a ledger's totals block: moving rows down inside worksheet XML, and keeping
the totals true.

Why: a ledger usually ends with a ``合计`` row and a footer (``注：……``, ``制表人：……``); new rows
belong above them, as a user would insert them in Excel. Inserting ``n`` rows at row ``ins``
means what Excel does then: every row from ``ins`` down is renumbered, and every reference to a
moved cell follows it (cell and row numbers in the moved rows, formulas anywhere on the sheet,
merged areas, conditional formats, data validations, the filter range, defined names such as the
print area). Two rules on top of Excel's:

- a range that ends on the last data row (``SUM(C2:C20004)`` in the totals row, a filter or a
  conditional format over the data) grows over the new rows, the way an Excel table grows; this
  applies to formulas in the moved rows and to the sheet's ranges, never to formulas in the data
  rows above (a running ``SUM($C$2:C20004)`` in row 20004 must keep its meaning);
- a totals row stays true: a ``SUM``/``SUBTOTAL(9,…)`` over one column gets the new cached value
  (old value + the new rows' numbers, exact decimals as Excel's SUM sees them: numbers only), a
  plain number gets old value + the new rows' values by calc_table's rule (``SumAgg``: money text
  such as ``1,234.50`` counts). Any other formula whose text changed loses its cached value and the
  workbook is marked ``fullCalcOnLoad``, so Excel and LibreOffice compute it on open.

Formulas on *other* sheets that name this one (``台账!C20005``) follow too: a sheet whose XML
mentions the name is streamed through :meth:`Shift.formulas_above`; the others are copied as they
are. Charts' series ranges and cell comments are not moved. The answer's ``totals_updated`` lists
every cell whose total was changed.
"""
import html
import re
from decimal import Decimal

from .. import opc
from .aggregate import SkipLog, SumAgg
from .values import (INVALID, TotalsDetector, col_index, decimal_out, is_note_row, is_summary_row, number_text_like,
                     row_label, to_decimal)
from .xlsx_parts import parse_attrs
from .xlsx_rows import V_RE, cell_has_value, row_cells, row_values

_TOKEN = re.compile(
    r'"(?:[^"]|"")*"'                                   # a string literal: never a reference
    r"|\[[^\]]*\]"                                      # structured reference Table1[金额]
    r"|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?"                  # a number (1.5E10 is not cell E10)
    r"|(?P<sheet>'(?:[^']|'')+'!|[^\W\d][\w.]*!)?"
    r"(?P<a>\$?[A-Za-z]{1,3}\$?\d+)(?::(?P<b>\$?[A-Za-z]{1,3}\$?\d+))?(?![\w(.!])"
    r"|[^\W\d][\w.]*")                                  # function and defined names
_CELLREF = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)(\d+)")
_DIGITS = re.compile(r"\d+")
_F_EL = re.compile(rb"<((?:\w+:)?)f\b([^>]*?)(?:/>|>([^<]*)</(?:\w+:)?f>)")
# a cell whose first child is a formula, with its cached value (the order c > f, v is the schema's)
_F_CELL = re.compile(rb"(<(?:\w+:)?c\b[^>]*(?<!/)>)(<(?:\w+:)?f\b[^>]*?(?:/>|>[^<]*</(?:\w+:)?f>))"
                     rb"(<(?:\w+:)?v>[^<]*</(?:\w+:)?v>)?")
_CELL = re.compile(rb"<((?:\w+:)?)c\b([^>]*?)(/>|>(.*?)</(?:\w+:)?c>)", re.S)
_R_ATTR = re.compile(rb'(\sr=")([A-Za-z]*)(\d+)(")')
_REF_ATTR = re.compile(rb'(\sref=")([^"]*)(")')
# a whole-column reference (SUM(C:C)): its text stays, its value changes with the new rows
_WHOLE_COLUMN = re.compile(rb"(?<![\w.$])\$?[A-Za-z]{1,3}:\$?[A-Za-z]{1,3}(?![\w(])")
_SUM = re.compile(r"^\s*(?:SUM\(|SUBTOTAL\(\s*(?:9|109)\s*,)\s*\$?([A-Za-z]{1,3})\$?(\d+)\s*:\s*\$?([A-Za-z]{1,3})"
                  r"\$?(\d+)\s*\)\s*$", re.I)


class Shift(object):
    """``n`` rows inserted at row ``ins`` of sheet ``sheet``: where every reference goes."""

    def __init__(self, ins, n, sheet):
        self.ins, self.n = ins, n
        self.sheet = sheet.lower()
        self.recalc = False            # a cached value was dropped: Excel must compute on open

    def row(self, r):
        return r + self.n if r >= self.ins else r

    def span(self, r1, r2, grow):
        lo, hi = min(r1, r2), max(r1, r2)
        if lo >= self.ins:
            lo, hi = lo + self.n, hi + self.n
        elif hi >= self.ins or (grow and hi == self.ins - 1):
            hi += self.n
        return (lo, hi) if r1 <= r2 else (hi, lo)

    # -- formulas --------------------------------------------------------------------------
    def formula(self, text, grow=False, qualified_only=False):
        """``text`` with its references to this sheet moved (``qualified_only``: only those that
        name the sheet, as in defined names)."""
        if max([int(d) for d in _DIGITS.findall(text)] or [0]) < self.ins - (1 if grow else 0):
            return text                 # cheap test first: most formulas reference rows above
        out, pos = [], 0
        for m in _TOKEN.finditer(text):
            if not m.group("a"):
                continue
            sheet = m.group("sheet")
            if sheet:
                name = sheet[:-1]
                if name.startswith("'"):
                    name = name[1:-1].replace("''", "'")
                if name.lower() != self.sheet:
                    continue
            elif qualified_only:
                continue
            a, b = _CELLREF.match(m.group("a")), m.group("b") and _CELLREF.match(m.group("b"))
            if b:
                r1, r2 = self.span(int(a.group(4)), int(b.group(4)), grow)
                new = "%s:%s" % (_ref(a, r1), _ref(b, r2))
            else:
                new = _ref(a, self.row(int(a.group(4))))
            start = m.start("a")
            out.append(text[pos:start])
            out.append(new)
            pos = m.end()
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    def ranges(self, value, grow):
        """A space-separated list of ranges (``sqref``, ``ref``) moved."""
        out = []
        for part in value.split():
            m = re.match(r"^(\$?[A-Za-z]{1,3}\$?\d+)(?::(\$?[A-Za-z]{1,3}\$?\d+))?$", part)
            if not m:
                out.append(part)
                continue
            a, b = _CELLREF.match(m.group(1)), m.group(2) and _CELLREF.match(m.group(2))
            if b:
                r1, r2 = self.span(int(a.group(4)), int(b.group(4)), grow)
                out.append("%s:%s" % (_ref(a, r1), _ref(b, r2)))
            else:
                out.append(_ref(a, self.row(int(a.group(4)))))
        return " ".join(out)

    def f_element(self, raw, grow, qualified_only=False):
        """One ``<f …>text</f>`` element (bytes) moved; returns (bytes, text changed)."""
        m = _F_EL.match(raw)
        if not m:
            return raw, False
        attrs = m.group(2)
        ref = None if qualified_only else _REF_ATTR.search(attrs)
        if ref:
            attrs = attrs[:ref.start(2)] + self.ranges(ref.group(2).decode("ascii", "replace"), grow).encode(
                "ascii") + attrs[ref.end(2):]
        text, changed = m.group(3), False
        if text:
            old = html.unescape(text.decode("utf-8"))
            new = self.formula(old, grow, qualified_only)
            if new != old:
                text, changed = opc.xml_text(new).encode("utf-8"), True
        p = m.group(1)
        if text is None:
            return b"<" + p + b"f" + attrs + b"/>", changed
        return b"<" + p + b"f" + attrs + b">" + text + b"</" + p + b"f>", changed

    # -- the rows above: formulas only -----------------------------------------------------
    def formulas_above(self, data, other_sheet=False):
        """Formulas in rows that do not move (``data``: whole rows of sheet XML; ``other_sheet``:
        rows of another sheet, where only references naming this sheet move). A formula that
        now points elsewhere loses its cached value (it may read a total that changed)."""
        if b"<f" not in data and b":f" not in data:
            return data

        def fix(m):
            f, changed = self.f_element(m.group(2), False, other_sheet)
            if not other_sheet and not changed and m.group(3) and _WHOLE_COLUMN.search(f):
                changed = True          # same text, new value: recalculated on open
            if not changed and f == m.group(2):
                return m.group(0)
            if changed and m.group(3):
                self.recalc = True
                return m.group(1) + f
            return m.group(1) + f + (m.group(3) or b"")
        return _F_CELL.sub(fix, data)

    # -- the moved rows ----------------------------------------------------------------------
    def move_row(self, raw, r, totals):
        """One row from ``ins`` down, renumbered; ``totals`` (a Totals, or None for other rows)
        updates its sums."""
        head_end = raw.find(b">") + 1
        head = raw[:head_end]
        head = re.sub(rb'(\sr=")(\d+)(")', lambda m: m.group(1) + str(self.row(int(m.group(2)))).encode() +
                      m.group(3), head, count=1)
        if head.endswith(b"/>"):
            return head
        body = raw[head_end:]

        def fix(m):
            return self._move_cell(m, totals)
        return head + _CELL.sub(fix, body)

    def _move_cell(self, m, totals):
        p, attrs, inner = m.group(1), m.group(2), m.group(4)
        rm = _R_ATTR.search(attrs)
        col = col_index(rm.group(2).decode()) + 1 if rm and rm.group(2) else None
        ref = None
        if rm:
            new_r = self.row(int(rm.group(3)))
            ref = "%s%d" % (rm.group(2).decode(), new_r)
            attrs = attrs[:rm.start(3)] + str(new_r).encode() + attrs[rm.end(3):]
        if inner is None:
            return b"<" + p + b"c" + attrs + b"/>"
        fm = _F_EL.search(inner)
        if fm:
            f, changed = self.f_element(fm.group(0), True)
            inner = inner[:fm.start()] + f + inner[fm.end():]
            if changed:
                inner = self._formula_value(inner, f, fm.group(0), ref, totals)
            elif _WHOLE_COLUMN.search(f):
                vm = V_RE.search(inner)         # SUM(C:C): same text, a new value
                if vm:
                    inner = inner[:vm.start()] + inner[vm.end():]
                    self.recalc = True
        elif totals is not None and col is not None:
            attrs, inner = totals.plain(attrs, inner, col, ref)
        return b"<" + p + b"c" + attrs + b">" + inner + b"</" + p + b"c>"

    def _formula_value(self, inner, new_f, old_f, ref, totals):
        new_text = html.unescape((_F_EL.match(new_f).group(3) or b"").decode("utf-8"))
        old_text = html.unescape((_F_EL.match(old_f).group(3) or b"").decode("utf-8"))
        vm = V_RE.search(inner)
        if totals is not None:
            value = totals.formula_value(new_text, vm.group(1).decode("ascii", "replace") if vm else None)
            totals.record(ref, "formula", "=" + old_text, "=" + new_text, value)
            if value is not None and vm:
                return inner[:vm.start(1)] + _number(value).encode("ascii") + inner[vm.end(1):]
        if vm:
            inner = inner[:vm.start()] + inner[vm.end():]
        self.recalc = True
        return inner


class Growth(Shift):
    """``n`` rows appended at row ``ins`` (nothing below moves): only a range that ended on the
    row above takes them in (a chart's series following its table)."""

    def row(self, r):
        return r

    def span(self, r1, r2, grow):
        lo, hi = min(r1, r2), max(r1, r2)
        if grow and hi == self.ins - 1:
            hi += self.n
        return (lo, hi) if r1 <= r2 else (hi, lo)


def _ref(m, row):
    return "%s%s%s%d" % (m.group(1), m.group(2), m.group(3), row)


def _number(value):
    return "%d" % value if isinstance(value, int) else repr(value)


class Totals(object):
    """What the new rows add to a totals row: per column, the numbers Excel's SUM counts
    (``excel``) and calc_table's exact sum rule (``rows``); the updates made (``updates``)."""

    def __init__(self, rows, start, count, strings=None):
        self.start, self.count = start, count       # where the new rows are, after insertion
        self.strings = strings or {}                # shared string index -> text (the totals rows')
        self.stale = []                             # text totals that could not be updated
        self.columns = {}
        for row in rows:
            for c, v in enumerate(row, start=1):
                if v is not None:
                    self.columns.setdefault(c, []).append(v)
        self.updates = []

    def record(self, ref, kind, old, new, value=None):
        item = {"cell": ref, "kind": kind, "old": old, "new": new}
        if kind == "formula":
            item["value"] = value
        self.updates.append(item)

    def formula_value(self, text, cached):
        """The new cached value of ``SUM(Xa:Xb)`` now covering the new rows; None if unknown."""
        m = _SUM.match(text)
        if not m or m.group(1).upper() != m.group(3).upper() or cached is None:
            return None
        lo, hi = sorted((int(m.group(2)), int(m.group(4))))
        if not (lo <= self.start and hi >= self.start + self.count - 1):
            return None
        old = to_decimal(_float(cached))
        if old is None or old is INVALID:
            return None
        total = old
        for v in self.columns.get(col_index(m.group(1).upper()) + 1, ()):
            if v.__class__ in (int, float):         # Excel's SUM skips text, booleans and blanks
                number = to_decimal(v)
                if number is not INVALID and number is not None:
                    total += number
        return decimal_out(total)

    def plain(self, attrs, inner, col, ref):
        """A plain number in a totals row: plus the new rows' values of its column. A total kept
        as text (``￥12,566,875.33``, a shared or inline string) is updated as text in the same
        style; one written another way (``1,256万``) is listed in ``stale``. -> (attrs, inner)."""
        t = re.search(rb'\st="([^"]*)"', attrs)
        values = self.columns.get(col)
        if not values:
            return attrs, inner
        kind = t.group(1) if t else b"n"
        if kind in (b"s", b"inlineStr", b"str"):
            return self._text(attrs, inner, kind, values, ref)
        vm = V_RE.search(inner)
        if kind != b"n" or not vm:
            return attrs, inner
        old = to_decimal(_float(vm.group(1).decode("ascii", "replace")))
        if old is None or old is INVALID:
            return attrs, inner
        new, n = self._sum(old, values)
        if n == 0:
            return attrs, inner         # no number among the new values: nothing to add
        self.record(ref, "value", decimal_out(old), decimal_out(new))
        return attrs, inner[:vm.start(1)] + _number(decimal_out(new)).encode("ascii") + inner[vm.end(1):]

    @staticmethod
    def _sum(old, values):
        agg = SumAgg(SkipLog())
        agg.total = Decimal(old)
        for v in values:
            agg.add(v, 0)
        return agg.total, agg.n

    def _text(self, attrs, inner, kind, values, ref):
        if kind == b"s":
            vm = V_RE.search(inner)
            index = vm.group(1).strip() if vm else b""
            text = self.strings.get(int(index)) if index.isdigit() else None
        else:
            text = _cell_text(inner)
        if not isinstance(text, str):
            return attrs, inner
        old = to_decimal(text)
        if old is None or old is INVALID:
            if old is INVALID and _MONEYISH.search(text):
                self.stale.append({"cell": ref, "text": text.strip()})
            return attrs, inner
        new, n = self._sum(old, values)
        if n == 0:
            return attrs, inner
        shown = number_text_like(text, new)
        if shown is None:
            self.stale.append({"cell": ref, "text": text.strip()})
            return attrs, inner
        self.record(ref, "value", text, shown)
        attrs = re.sub(rb'\st="[^"]*"', b' t="inlineStr"', attrs)
        space = b' xml:space="preserve"' if shown != shown.strip() else b""
        return attrs, b"<is><t" + space + b">" + opc.xml_text(shown).encode("utf-8") + b"</t></is>"


_T_TEXT = re.compile(rb"<(?:\w+:)?t\b[^>]*>([^<]*)</(?:\w+:)?t>")
_MONEYISH = re.compile(r"\d[\d,，.]*\s*(?:万|亿|%|‰|元)|[￥¥$]\s*\d")


def _cell_text(inner):
    """The text of an inline (``<is><t>``) or formula-string (``<v>``) cell."""
    parts = _T_TEXT.findall(inner)
    if parts:
        return html.unescape(b"".join(parts).decode("utf-8", "replace"))
    vm = V_RE.search(inner)
    return html.unescape(vm.group(1).decode("utf-8", "replace")) if vm else None


def _float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None



# ---------------------------------------------------------------------------------------------
# Where the totals block starts (read as probe_table reads a table's end)

BLOCK_ROWS = 40         # a totals block (totals rows, footer lines, blank rows between) is short


def totals_block(scan, strings_for, width):
    """``(index, row number)`` in ``scan.window_rows`` of the last data row when the sheet ends
    with totals rows and/or footer lines under its data; None otherwise. ``strings_for(ids)``
    returns {shared string index: text}; ``width`` is the header's width (a footer line is a lone
    text cell in a table wider than one column)."""
    rows = scan.window_rows
    looked = []
    for i in range(scan.last_index, max(-1, scan.last_index - BLOCK_ROWS), -1):
        looked.append((i, row_cells(rows[i][2].group(3))))
    ids = set()
    for _i, cells in looked:
        for a, inner, _raw in cells.values():
            if a.get("t") == "s":
                m = V_RE.search(inner or b"")
                if m and m.group(1).strip().isdigit():
                    ids.add(int(m.group(1)))
    strings = strings_for(ids)
    is_total = TotalsDetector()
    below = False
    for i, cells in looked:
        if not any(cell_has_value(c[1]) for c in cells.values()):
            continue                    # an empty (formatted) row inside the block
        values = [v if v != "" else None for v in row_values(cells, strings)]
        if is_total(values) or is_note_row(values, width) or is_summary_row(values):
            # (read from the end, a 平均/最高 row is in a footer run reaching the end: FooterRun)
            below = True
            continue
        r = parse_attrs(rows[i][2].group(1)).get("r", "")
        return (i, int(r)) if below and r.isdigit() else None
    return None


def totals_rows(scan, index, strings_for):
    """Row numbers of the totals rows below window row ``index`` (those whose sums are updated),
    and {row number: label} of the summary rows there holding a plain number (平均, 最高: no sum
    to extend, reported as not updated)."""
    rows = scan.window_rows[index + 1:]
    out = set()
    cells_list = [(parse_attrs(rm.group(1)).get("r", ""), row_cells(rm.group(3))) for _s, _e, rm in rows]
    ids = set()
    for _r, cells in cells_list:
        for a, inner, _raw in cells.values():
            if a.get("t") == "s":
                m = V_RE.search(inner or b"")
                if m and m.group(1).strip().isdigit():
                    ids.add(int(m.group(1)))
    strings = strings_for(ids)
    is_total = TotalsDetector()
    summary = {}
    for r, cells in cells_list:
        if not r.isdigit():
            continue
        values = [v if v != "" else None for v in row_values(cells, strings)]
        if is_total(values):
            out.add(int(r))
        elif is_summary_row(values) and any(
                a.get("t") in (None, "n") and V_RE.search(inner or b"") and not _F_EL.search(inner or b"")
                for a, inner, _raw in cells.values()):
            summary[int(r)] = row_label(values).strip()
    return out, summary


# ---------------------------------------------------------------------------------------------
# The sheet's other parts, the tables and the workbook

_TAIL_REF = re.compile(rb'(<(?:\w+:)?(\w+)\b[^>]*?\s(ref|sqref)=")([^"]*)(")')
_TAIL_FORMULA = re.compile(rb"(<(?:\w+:)?(?:formula[12]?|f)\b[^>]*>)([^<]*)(<)")
_TAIL_SQREF_EL = re.compile(rb"(<(?:\w+:)?sqref>)([^<]*)(<)")
_BRK = re.compile(rb'(<(?:\w+:)?brk\b[^>]*?\sid=")(\d+)(")')


def shift_tail(tail, shift):
    """What follows ``</sheetData>``: merged areas, hyperlinks (moved as Excel moves them), the
    filter, conditional formats and data validations (also grown over the new rows when they
    ended on the last data row), their formulas, manual page breaks."""
    def ref(m):
        grow = m.group(3) == b"sqref" or m.group(2) == b"autoFilter"
        value = m.group(4).decode("ascii", "replace")
        return m.group(1) + shift.ranges(value, grow).encode("ascii") + m.group(5)

    def formula(m):
        old = html.unescape(m.group(2).decode("utf-8"))
        new = shift.formula(old)
        return m.group(0) if new == old else m.group(1) + opc.xml_text(new).encode("utf-8") + m.group(3)

    def sqref(m):
        return m.group(1) + shift.ranges(m.group(2).decode("ascii", "replace"), True).encode("ascii") + m.group(3)

    tail = _TAIL_REF.sub(ref, tail)
    tail = _TAIL_FORMULA.sub(formula, tail)
    tail = _TAIL_SQREF_EL.sub(sqref, tail)
    return _BRK.sub(lambda m: m.group(1) + str(shift.row(int(m.group(2)))).encode() + m.group(3), tail)


def shift_table(data, shift):
    """An Excel table of the sheet (``xl/tables/tableN.xml``): its range and filter moved, grown
    when they ended on the last data row. None when nothing changed."""
    new = _TAIL_REF.sub(lambda m: m.group(1) + shift.ranges(m.group(4).decode("ascii", "replace"), True).encode(
        "ascii") + m.group(5), data)
    return new if new != data else None


_DEFINED = re.compile(r"(<(?:\w+:)?definedName\b[^>]*>)([^<]*)(<)")
_CALCPR = re.compile(r"<(\w+:)?calcPr\b([^>]*?)(/?)>")
# CT_Workbook's children after calcPr: a new calcPr goes before the first of them
_AFTER_CALCPR = re.compile(r"<(?:\w+:)?(?:oleSize|customWorkbookViews|pivotCaches|smartTagPr|smartTagTypes|"
                           r"webPublishing|fileRecoveryPr|webPublishObjects|extLst)\b|</(?:\w+:)?workbook>")


def shift_workbook(text, shift):
    """workbook.xml: defined names that point into the sheet (print area, filter range, named
    ranges) follow the rows; ``fullCalcOnLoad`` when a cached value was dropped."""
    def name(m):
        old = html.unescape(m.group(2))
        new = shift.formula(old, grow=True, qualified_only=True)
        return m.group(0) if new == old else m.group(1) + opc.xml_text(new) + m.group(3)
    text = _DEFINED.sub(name, text)
    if shift.recalc:
        m = _CALCPR.search(text)
        if m:
            attrs = re.sub(r'\sfullCalcOnLoad="[^"]*"', "", m.group(2))
            text = text[:m.start()] + "<%scalcPr%s fullCalcOnLoad=\"1\"%s>" % (
                m.group(1) or "", attrs, m.group(3)) + text[m.end():]
        else:
            at = _AFTER_CALCPR.search(text)
            p = re.match(r"(?:<\?[^>]*\?>\s*)?<(\w+:)?workbook\b", text)
            prefix = (p.group(1) or "") if p else ""
            text = text[:at.start()] + '<%scalcPr fullCalcOnLoad="1"/>' % prefix + text[at.start():]
    return text


def without_calc_chain(book):
    """(workbook rels, content types, calcChain part or None) with the calculation chain left out:
    it lists formula cells by address, and after rows moved Excel would find it wrong (and call
    the file damaged); it is only a cache, rebuilt on the next calculation."""
    part = "xl/calcChain.xml"
    if part not in book.names:
        return book.rels_text, book.ct_text, None
    rels = re.sub(r'<(?:\w+:)?Relationship\b[^>]*?Type="[^"]*/calcChain"[^>]*/>', "", book.rels_text)
    ct = re.sub(r'<(?:\w+:)?Override\b[^>]*?PartName="/xl/calcChain\.xml"[^>]*/>', "", book.ct_text)
    return rels, ct, part


def mentions_sheet(zf, part, sheet):
    """Whether worksheet ``part`` may hold a formula naming ``sheet`` (a cheap streamed search)."""
    names = [sheet.encode("utf-8") + b"!", (sheet.replace("'", "''")).encode("utf-8") + b"'!",
             opc.xml_text(sheet).encode("utf-8") + b"!"]
    keep = max(len(n) for n in names)
    tail = b""
    with zf.open(part) as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                return False
            data = tail + chunk
            if any(n in data for n in names):
                return True
            tail = data[-keep:]
