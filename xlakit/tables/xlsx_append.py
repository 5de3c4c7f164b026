"""Appending rows to an existing xlsx, or adding a sheet to it, by editing the package directly.

Why: openpyxl loads a whole workbook into memory and writes every part anew. On a yearly ledger
(a million rows) that is minutes and gigabytes, and on any workbook it drops what openpyxl does not
model (charts, pivot tables, slicers, macros' controls...). Appending needs neither, so every
append and every new sheet goes this way, whatever the size: every zip member is copied byte for
byte (its compressed bytes, same compression), except

- the one sheet, streamed in 1 MB chunks: its bytes are copied up to the last row that holds a
  value, the new rows go there (merged with formatted empty rows that follow, as in Excel), then
  the rest; ``<dimension>``, the sheet's ``<autoFilter>`` and empty merged areas in the appended
  block are fixed on the way;
- when the sheet ends with a totals block (``合计`` rows, ``注：``/``制表人：`` lines, found by
  ``xlsx_shift.totals_block`` as probe_table reads a table's end) and ``position`` is "auto",
  the rows go after the last data row instead and the block moves down, its sums kept true
  (``xlsx_shift``: references, merged areas, filter, conditional formats, validations, defined
  names follow; the calculation chain is dropped; ``fullCalcOnLoad`` where a cached value had to go);
- Excel tables of that sheet (``xl/tables/tableN.xml``) whose range ended at the old last row;
- ``xl/styles.xml`` when a cell style with a date/text number format (or a bold header font) has to
  be added; ``xl/workbook.xml`` (+ its rels and ``[Content_Types].xml``) for a new sheet or a
  filter range.

Layout: ``xlsx_parts`` (workbook, styles, raw member copy), ``xlsx_rows`` (pass 1 over the sheet,
cell rendering), ``xlsx_shift`` (rows moved under an insertion, totals), this module (the plan
and the writes).

Two streaming passes over the sheet: :func:`plan` (before the backup and the temp file, may
refuse or return None = "use openpyxl") finds the last valued row, the header row, the totals
block and the styles of the last data row; :func:`write` copies. Memory is bounded by a few MB of
the sheet stream plus the appended rows.
"""
import datetime
import html
import itertools
import re
import xml.etree.ElementTree as ET
import zipfile

from .. import opc
from ..errors import ToolError
from .cells import LIMITS, clean_xml_row, column_widths, is_repeated_header, looks_like_header, note, too_many_rows
from .target import DEFAULT_SHEET, pick_sheet
from .values import col_letter, is_summary_label, is_total_label
from .xlsx_chart import Attach, grow_chart_refs
from .xlsx_new import sheet_head_xml
from .xlsx_parts import Book, Fallback, Styles, copy_package, fix_count, parse_attrs, prefix_for, split_ref
from .xlsx_rows import CHUNK, V_RE, Renderer, cell_has_value, row_cells, row_values, row_xml, scan_sheet, shared_strings, style_attr
from .xlsx_shift import (Growth, Shift, Totals, mentions_sheet, shift_table, shift_tail, shift_workbook, totals_block,
                         totals_rows, without_calc_chain)

BIG_SHEET = 16 << 20        # above this (uncompressed), the sheet is deflated at level 1: 4x faster
REL_WORKSHEET = opc.NS_OFFICE_RELS + "/worksheet"
CT_WORKSHEET = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"


# ---------------------------------------------------------------------------------------------
# Plan

class Plan:
    pass


def plan(path, fmt, wanted, mode, info, position="auto"):
    """Whether (and how) the write can be done by editing the package: returns a Plan, or None when
    the openpyxl way is needed (replacing a sheet, an empty sheet, a chart sheet, an unusual package).
    Raises ToolError for what no way could write (a sheet that would pass Excel's last row).

    ``position`` "auto": when the sheet ends with a totals block (totals rows, footer lines), the
    new rows go above it (``p.insert`` = the last data row's place in the scan window); "end":
    after the last row holding a value."""
    try:
        with zipfile.ZipFile(path) as zf:
            book = Book(zf, path)
            target = pick_sheet(book.sheet_names, wanted, path)
            p = Plan()
            p.book, p.fmt, p.target, p.mode = book, fmt, target, mode
            p.styles_data = opc.read_part(zf, book.styles_part)
            Styles(p.styles_data).derive(0, bold=True)      # the edits write() may make must be possible
            if target is None:
                for close in (r"</(?:\w+:)?sheets>", r"</(?:\w+:)?Relationships>"):
                    if not re.search(close, book.wb_text if "sheets" in close else book.rels_text):
                        return None
                if not re.search(r"</(?:\w+:)?Types>", book.ct_text):
                    return None
                p.kind = "new_sheet"
                p.title = wanted or DEFAULT_SHEET
                return p
            index, (_name, _sid, _rid, part, kind) = book.sheet(target)
            if kind != "worksheet" or part not in book.names:
                return None
            if mode != "append":
                # replacing an empty sheet is filling it: direct, so the workbook's charts stay
                if zf.getinfo(part).file_size <= EMPTY_SHEET_MAX and _is_empty(opc.read_part(zf, part)):
                    p.kind, p.part, p.title, p.first_values = "fill", part, target, []
                    return p
                return None
            p.kind, p.index, p.part = "append", index, part
            try:
                p.scan = scan = scan_sheet(zf, part)
            except Fallback:
                if zf.getinfo(part).file_size > EMPTY_SHEET_MAX or not _is_empty(opc.read_part(zf, part)):
                    raise
                # an empty sheet (a 汇总 tab made ready, a chart's companion sheet): the rows are
                # written into it directly, so the workbook's charts and pictures stay
                p.kind, p.title, p.first_values = "fill", target, []
                return p
            wanted_ids = set()
            for cells in (scan.first_cells or {}, {c: v for c, v in scan.last_cells.items() if c <= 5}):
                for a, inner, _raw in cells.values():
                    if a.get("t") == "s":
                        m = V_RE.search(inner or b"")
                        if m and m.group(1).strip().isdigit():
                            wanted_ids.add(int(m.group(1)))
            strings = shared_strings(zf, book.sst_part, wanted_ids)
            p.first_values = row_values(scan.first_cells, strings)
            p.last_values = row_values(scan.last_cells, strings, upto=5)
            p.tables = _sheet_tables(zf, part)
            p.sheet_size = zf.getinfo(part).file_size
            p.insert = p.block_row = None
            p.cut, p.style_cells = scan.cut, scan.last_cells if scan.old_last > scan.first_row else None

            known = {}

            def strings_for(ids):
                # the shared-string table is streamed up to the highest index asked for: once
                missing = set(ids) - set(known)
                if missing:
                    known.update(shared_strings(zf, book.sst_part, missing))
                    known.update((i, None) for i in missing if i not in known)
                return known
            block = totals_block(scan, strings_for, len(p.first_values))
            if block is not None:
                p.block_row = block[1] + 1
                if position == "auto":
                    index, last_data = block
                    p.insert, p.start = index, last_data + 1
                    p.cut = scan.window_rows[index][1]
                    p.style_cells = (row_cells(scan.window_rows[index][2].group(3))
                                     if last_data > scan.first_row else None)
                    p.totals_rows, p.summary_rows = totals_rows(scan, index, strings_for)
                    p.totals_strings = known         # the totals rows' shared strings (text totals)
    except Fallback:
        return None
    except (zipfile.BadZipFile, KeyError, IndexError, AttributeError, ET.ParseError, UnicodeDecodeError, ValueError,
            OSError):
        return None
    count = info.get("row_count")
    if p.insert is not None:
        if count is not None and scan.old_last + count - 1 > LIMITS[fmt][0]:
            raise too_many_rows(fmt, count, p.start)
        return p
    # a merged area that holds the last value and reaches further down (a note over two rows) is
    # not written into: the new rows start below it
    below = scan.old_last
    moved = True
    while moved:
        moved = False
        for c1, r1, c2, r2 in scan.merges:
            if r1 <= below < r2:
                below, moved = r2, True
    p.start = below + 1
    if count is not None and p.start + count - 2 > LIMITS[fmt][0]:
        raise too_many_rows(fmt, count, p.start)
    return p


EMPTY_SHEET_MAX = 1 << 20
_SHEETDATA_RE = re.compile(rb"<((?:\w+:)?)sheetData\b[^>]*?(?:/>|>.*?</(?:\w+:)?sheetData>)", re.S)


def _is_empty(data):
    """A sheet without a single cell holding a value (formatted empty rows are fine)."""
    m = _SHEETDATA_RE.search(data)
    if not m:
        return False
    return not any(cell_has_value(c[1]) for rm in re.finditer(rb"<(?:\w+:)?row\b[^>]*>(.*?)</(?:\w+:)?row>",
                                                            m.group(0), re.S)
                   for c in row_cells(rm.group(1)).values())


def _sheet_tables(zf, part):
    rels_name = opc.rels_part(part)
    if rels_name not in zf.namelist():
        return []
    rels = opc.parse_rels(opc.read_part(zf, rels_name), part)
    return [t for k, t in rels.values() if k == "table" and t in zf.namelist()]




# ---------------------------------------------------------------------------------------------
# Writing

def write(tmp, plan, head, rest, stats, counter, info):
    if plan.kind in ("new_sheet", "fill"):
        _write_new_sheet(tmp, plan, head, rest, stats, counter, info)
    else:
        _write_append(tmp, plan, head, rest, stats, counter, info)
    info["sheets"] = plan.book.sheet_names + ([plan.title] if plan.kind == "new_sheet" else [])



def _write_append(tmp, plan, head, rest, stats, counter, info):
    """The new rows spliced into the sheet: after the last valued row (merged with formatted
    empty rows that follow, as in Excel), or above the totals block, which moves down."""
    book, scan = plan.book, plan.scan
    styles = Styles(plan.styles_data)
    rows = list(itertools.chain(head, rest))
    if rows and is_repeated_header(rows[0], plan.first_values):
        rows = rows[1:]
        info["header_skipped"] = True
    start = plan.start
    inserting = plan.insert is not None and bool(rows)
    new_last = (scan.old_last if inserting else start - 1) + len(rows)
    if new_last > LIMITS[plan.fmt][0]:
        raise too_many_rows(plan.fmt, len(rows), start)
    if rows and not inserting:
        if plan.block_row is not None:
            note(stats, "after_totals", str(plan.block_row))        # position=end asked for it
        elif scan.old_last > scan.first_row and any(is_total_label(v) or is_summary_label(v) for v in plan.last_values if v):
            note(stats, "after_totals", str(scan.old_last))
    p = scan.prefix.decode()
    ren = Renderer(styles, book.date1904, p)
    base_style = {}
    for col, (a, _inner, _raw) in (plan.style_cells or {}).items():
        if a.get("s", "").isdigit():
            base_style[col] = int(a["s"])
    trailing = {} if inserting else {r: (attrs, cells, raw) for r, attrs, cells, raw in scan.trailing}
    ncols = max([len(r) for r in rows] or [0])
    pieces = [trailing.pop(r)[2].decode("utf-8") for r in sorted(trailing) if r < start]
    letters = []
    for i, row in enumerate(rows):
        r = start + i
        clean_xml_row(row, stats)
        while len(letters) < len(row):
            letters.append(col_letter(len(letters)))
        old = trailing.pop(r, None)
        old_cells = old[1] if old else {}
        out = {}
        for c, v in enumerate(row, start=1):
            existing = old_cells.get(c)
            base = base_style.get(c, 0)
            if existing is not None and existing[0].get("s", "").isdigit():
                base = int(existing[0]["s"])
            if v is None:
                if existing is None and base:
                    out[c] = '<%sc r="%s%d"%s/>' % (p, letters[c - 1], r, style_attr(base))
                continue
            xml = ren.cell("%s%d" % (letters[c - 1], r), v, base)
            if xml:
                out[c] = xml
        for c, cell in old_cells.items():
            if c not in out:            # formatting of a prepared cell the new row leaves empty
                out[c] = cell[2].decode("utf-8")
        attrs = ""
        if old:
            attrs = re.sub(r'\s(?:r|spans)="[^"]*"', "", " " + old[0].decode("utf-8")).rstrip()
            if attrs and not attrs.startswith(" "):
                attrs = " " + attrs
        pieces.append(row_xml(p, r, attrs, [out[c] for c in sorted(out)]))
        counter[0] += 1
    for r in sorted(trailing):
        pieces.append(trailing[r][2].decode("utf-8"))
    block = "".join(pieces).encode("utf-8")

    shift = totals = None
    replaced, late, dropped = {}, [], []
    if inserting:
        # the totals block and everything under it move down by len(rows), their sums updated
        shift = Shift(start, len(rows), plan.target)
        totals = Totals(rows, start, len(rows), getattr(plan, "totals_strings", None))
        moved = []
        for _s, _e, rm in scan.window_rows[plan.insert + 1:]:
            r = int(parse_attrs(rm.group(1)).get("r") or 0)
            moved.append(shift.move_row(rm.group(0), r, totals if r in plan.totals_rows else None))
        block += b"".join(moved)
        total_last = new_last
        with zipfile.ZipFile(book.path) as zf:
            for _name, _sid, _rid, other, kind in book.sheets:
                if kind == "worksheet" and other != plan.part and other in book.names and \
                        mentions_sheet(zf, other, plan.target):
                    replaced[other] = _other_sheet(book, other, shift)
    else:
        total_last = max(new_last, start - 1)
    charts = _charts(book, plan, shift if shift is not None else Growth(start, len(rows), plan.target), bool(rows))
    replaced.update(charts)
    attach = None
    added = []
    job = getattr(plan, "chart", None)
    if job is not None:
        ct = replaced.get("[Content_Types].xml", book.ct_text.encode("utf-8")).decode("utf-8")
        with zipfile.ZipFile(book.path) as zf:
            attach = Attach(book.names, lambda name: opc.read_part(zf, name), plan.part, ct)
        replaced["[Content_Types].xml"] = attach.ct_text.encode("utf-8")
        header = plan.first_values if looks_like_header(plan.first_values) else None
        data_last = start + len(rows) - 1 if inserting else total_last
        chart = job.resolve(plan.target, header, scan.first_row + (1 if header else 0), data_last, rows,
                            [] if inserting else None)
        for name, content in attach.parts(chart, max(scan.max_col, ncols) + 1, scan.first_row - 1).items():
            if name in book.names:
                replaced[name] = content
            else:
                added.append((name, content))
    replaced[plan.part] = lambda out: _stream_sheet(book, plan, out, block, start, total_last, ncols, stats, shift,
                                                    attach)
    for t in plan.tables:
        with zipfile.ZipFile(book.path) as zf:
            data = opc.read_part(zf, t)
        if shift is not None:
            new = shift_table(data, shift)
        else:
            new = _grow_table(data, scan.old_last, total_last, ncols) if rows else None
        if new is not None:
            replaced[t] = new
    if shift is not None:
        # workbook.xml is written after the sheet: only then is it known whether a formula lost
        # its cached value (and Excel must recalculate on open)
        replaced[book.wb_part] = lambda out: out.write(shift_workbook(book.wb_text, shift).encode("utf-8"))
        late.append(book.wb_part)
        rels, ct, chain = without_calc_chain(book)
        if chain:
            dropped.append(chain)
            replaced[book.rels_part] = rels.encode("utf-8")
            replaced["[Content_Types].xml"] = ct.encode("utf-8")
    else:
        wb = _grow_filter_name(book, plan.index, scan.old_last, total_last) if rows else None
        if wb is not None:
            replaced[book.wb_part] = wb.encode("utf-8")
    if styles.changed:
        replaced[book.styles_part] = styles.data()
    level = 1 if plan.sheet_size > BIG_SHEET else 6
    small = [plan.part] if plan.sheet_size + len(block) < (1 << 31) else []
    copy_package(tmp, book, replaced, added=added, level=level, small=small, dropped=dropped, late=late)
    if charts:
        info["charts_updated"] = len(charts)
    info.update(start_row=start, total_rows=total_last, sheet=plan.target, direct=True,
                action="inserted_above_totals" if inserting else "appended")
    if inserting:
        info["totals_updated"] = totals.updates
        info["totals_moved"] = {"from": start, "to": start + len(rows)}
        stale = totals.stale + [{"row": r + len(rows), "label": label}
                                for r, label in sorted((getattr(plan, "summary_rows", None) or {}).items())]
        if stale:
            info["totals_stale"] = stale
        info["recalc_on_open"] = shift.recalc


def _charts(book, plan, shift, grow):
    """The workbook's own charts that plot this sheet's table follow it: a series that ended on
    the last data row takes the new rows in (``xlsx_chart.grow_chart_refs``)."""
    if not grow:
        return {}
    out = {}
    with zipfile.ZipFile(book.path) as zf:
        for name in sorted(book.names):
            if name.startswith("xl/charts/chart") and name.endswith(".xml"):
                new = grow_chart_refs(opc.read_part(zf, name), shift)
                if new is not None:
                    out[name] = new
    return out


def _other_sheet(book, part, shift):
    """Another sheet streamed with its formulas that name the target sheet moved."""
    def write(out):
        with zipfile.ZipFile(book.path) as zf, zf.open(part) as fh:
            carry = b""
            while True:
                chunk = fh.read(CHUNK)
                if not chunk:
                    break
                data = carry + chunk
                k = data.rfind(b"row>")          # whole rows only: a formula never spans two writes
                k = k + 4 if k >= 0 else 0
                out.write(shift.formulas_above(data[:k], other_sheet=True))
                carry = data[k:]
            out.write(shift.formulas_above(carry, other_sheet=True))
    return write


def _stream_sheet(book, plan, out, block, start, new_last, ncols, stats, shift=None, attach=None):
    """Pass 2: the sheet's bytes with the new rows spliced in at ``plan.cut``. With ``shift``
    (rows inserted above a totals block), formulas in the rows above that point below the
    insertion are moved too, and so is everything after ``</sheetData>``."""
    scan = plan.scan
    cut = plan.cut
    with zipfile.ZipFile(book.path) as zf, zf.open(plan.part) as fh:
        head = b""
        while len(head) < scan.head_end:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            head += chunk
        top = head[:scan.head_end]
        top = _fix_dimension(top, new_last, max(scan.max_col, ncols), shift)
        out.write(top)
        pending = head[scan.head_end:]
        offset = scan.head_end              # stream offset of pending[0]
        carry = b""                         # the unfinished row of the last chunk (formulas kept whole)
        row_end = b"</" + scan.prefix + b"row>"
        while offset + len(pending) < cut:
            if shift is None:
                out.write(pending)
            else:
                data = carry + pending
                k = data.rfind(row_end)
                k = k + len(row_end) if k >= 0 else 0
                out.write(shift.formulas_above(data[:k]))
                carry = data[k:]
            offset += len(pending)
            pending = fh.read(CHUNK)
            if not pending:
                raise ToolError("工作表数据在读取中途结束，文件可能已损坏。原文件没有改动")
        if shift is None:
            out.write(pending[:cut - offset])
        else:
            out.write(shift.formulas_above(carry + pending[:cut - offset]))
        out.write(block)
        # what follows </sheetData> (merge areas, filters, page setup) is small: edit it whole
        rest = pending[cut - offset:]
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            rest += chunk
        tail = rest[scan.close - cut:]       # the trailing / moved rows are in ``block`` already
        if shift is None:
            tail = _fix_tail(tail, scan.old_last, new_last, start, ncols, stats)
        else:
            tail = shift_tail(tail, shift)
        if attach is not None:
            tail = attach.sheet_tail(tail, scan.prefix)
        out.write(tail)


def _fix_dimension(head, new_last, ncols, shift=None):
    m = re.search(rb'(<(?:\w+:)?dimension\b[^>]*?\bref=")([^"]*)(")', head)
    if not m:
        return head
    box = split_ref(m.group(2).decode("ascii", "replace"))
    c1, r1 = (box[0], box[1]) if box else (1, 1)
    c2 = max(box[2] if box else 1, ncols, 1)
    r2 = box[3] if box else 1
    if shift is not None:
        r2 = shift.row(r2)
    ref = "%s%d:%s%d" % (col_letter(c1 - 1), r1, col_letter(c2 - 1), max(new_last, r2))
    return head[:m.start(2)] + ref.encode("ascii") + head[m.end(2):]


def _fix_tail(tail, old_last, new_last, start, ncols, stats):
    def grow_filter(m):
        box = split_ref(m.group(2).decode("ascii", "replace"))
        if not box or box[3] != old_last or new_last == old_last:
            return m.group(0)
        ref = "%s%d:%s%d" % (col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
        return m.group(1) + ref.encode("ascii") + m.group(3)
    tail = re.sub(rb'(<(?:\w+:)?autoFilter\b[^>]*?\bref=")([^"]*)(")', grow_filter, tail, count=1)

    m = re.search(rb"<(?:\w+:)?mergeCells\b[^>]*>(.*?)</(?:\w+:)?mergeCells>", tail, re.S)
    if m and new_last > old_last:
        kept, dropped = [], []
        for cell in re.findall(rb"<(?:\w+:)?mergeCell\b[^>]*?/>|<(?:\w+:)?mergeCell\b.*?</(?:\w+:)?mergeCell>",
                               m.group(1), re.S):
            ref = parse_attrs(cell).get("ref", "")
            box = split_ref(ref)
            if box and box[1] >= start and box[0] <= max(ncols, 1):
                dropped.append(ref)
            else:
                kept.append(cell)
        if dropped:
            for ref in dropped:
                note(stats, "unmerged", ref)
            if kept:
                body = fix_count(m.group(0).decode("utf-8"), "mergeCells", len(kept))
                opening = re.match(r"<[^>]*>", body).group(0)
                close = re.search(rb"</(?:\w+:)?mergeCells>", m.group(0)).group(0)
                new = opening.encode("utf-8") + b"".join(kept) + close
            else:
                new = b""
            tail = tail[:m.start()] + new + tail[m.end():]
    return tail


def _grow_table(data, old_last, new_last, ncols):
    """An Excel table that ended at the old last row (and has no totals row) grows with the rows."""
    text = data.decode("utf-8")
    m = re.search(r"<(?:\w+:)?table\b[^>]*>", text)
    if not m:
        return None
    head = m.group(0)
    a = dict(re.findall(r'([\w:]+)="([^"]*)"', head))
    box = split_ref(a.get("ref"))
    if not box or box[3] != old_last or int(a.get("totalsRowCount") or 0) or ncols > box[2]:
        return None
    ref = "%s%d:%s%d" % (col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
    new_head = re.sub(r'\bref="[^"]*"', 'ref="%s"' % ref, head, count=1)
    text = text[:m.start()] + new_head + text[m.end():]

    def fix_filter(fm):
        fbox = split_ref(fm.group(2))
        if not fbox or fbox[3] != old_last:
            return fm.group(0)
        return fm.group(1) + "%s%d:%s%d" % (col_letter(fbox[0] - 1), fbox[1], col_letter(fbox[2] - 1),
                                            new_last) + fm.group(3)
    text = re.sub(r'(<(?:\w+:)?autoFilter\b[^>]*?\bref=")([^"]*)(")', fix_filter, text, count=1)
    return text.encode("utf-8")


def _grow_filter_name(book, index, old_last, new_last):
    """The hidden name Excel keeps for a sheet's filter range follows the grown filter."""
    text = book.wb_text
    pat = re.compile(r'(<(?:\w+:)?definedName\b[^>]*name="_xlnm\._FilterDatabase"[^>]*>)([^<]*)(<)')
    changed = [False]

    def fix(m):
        if 'localSheetId="%d"' % index not in m.group(1):
            return m.group(0)
        value = html.unescape(m.group(2))
        sheet, bang, ref = value.rpartition("!")
        box = split_ref(ref)
        if not bang or not box or box[3] != old_last:
            return m.group(0)
        new = "%s!$%s$%d:$%s$%d" % (sheet, col_letter(box[0] - 1), box[1], col_letter(box[2] - 1), new_last)
        changed[0] = True
        return m.group(1) + opc.xml_text(new) + m.group(3)
    text = pat.sub(fix, text)
    return text if changed[0] else None


# ---------------------------------------------------------------------------------------------
# A new sheet

def _new_sheet_entry(book, title):
    """(part, workbook, rels, content types) with a new worksheet ``title`` registered."""
    n = 1
    while "xl/worksheets/sheet%d.xml" % n in book.names:
        n += 1
    part = "xl/worksheets/sheet%d.xml" % n
    k = 1
    while "rId%d" % k in book.rel_ids:
        k += 1
    rid = "rId%d" % k
    sheet_id = max([int(s[1]) for s in book.sheets if str(s[1]).isdigit()] or [0]) + 1

    wb = book.wb_text
    m = re.search(r"</(\w+:)?sheets>", wb)
    p = m.group(1) or ""
    r_prefix = prefix_for(wb, opc.NS_OFFICE_RELS)
    if r_prefix:
        el = '<%ssheet name="%s" sheetId="%d" %s:id="%s"/>' % (p, opc.xml_attr(title), sheet_id, r_prefix, rid)
    else:
        el = '<%ssheet xmlns:r="%s" name="%s" sheetId="%d" r:id="%s"/>' % (
            p, opc.NS_OFFICE_RELS, opc.xml_attr(title), sheet_id, rid)
    wb = wb[:m.start()] + el + wb[m.start():]
    rels = book.rels_text
    rm = re.search(r"</(\w+:)?Relationships>", rels)
    rp = rm.group(1) or ""
    rels = rels[:rm.start()] + '<%sRelationship Id="%s" Type="%s" Target="worksheets/sheet%d.xml"/>' % (
        rp, rid, REL_WORKSHEET, n) + rels[rm.start():]
    ct = book.ct_text
    cm = re.search(r"</(\w+:)?Types>", ct)
    cp = cm.group(1) or ""
    ct = ct[:cm.start()] + '<%sOverride PartName="/%s" ContentType="%s"/>' % (cp, part, CT_WORKSHEET) + ct[cm.start():]
    return part, wb, rels, ct


def _write_new_sheet(tmp, plan, head, rest, stats, counter, info):
    """A new sheet, or (``plan.kind`` "fill") rows written into an existing empty sheet: its
    settings before and after the cells (views, widths, page setup, a drawing) stay."""
    book = plan.book
    styles = Styles(plan.styles_data)
    title = plan.title
    replaced = {}
    if plan.kind == "fill":
        part, ct = plan.part, book.ct_text
        with zipfile.ZipFile(book.path) as zf:
            old = opc.read_part(zf, part)
        m = _SHEETDATA_RE.search(old)
        prefix = m.group(1).decode("utf-8")
        before, after = old[:m.start()].decode("utf-8"), old[m.end():]
    else:
        part, wb, rels, ct = _new_sheet_entry(book, title)
        replaced = {book.wb_part: wb.encode("utf-8"), book.rels_part: rels.encode("utf-8")}
        prefix = ""

    header = bool(head) and looks_like_header(head[0])
    ren = Renderer(styles, book.date1904, prefix)
    bold = styles.derive(0, bold=True) if header else None
    # every style the rows can need exists before styles.xml is copied (it precedes the sheet)
    ren.cell("A1", "1", 0)
    for probe in (datetime.date(2000, 1, 1), datetime.datetime(2000, 1, 1, 1), datetime.time(1)):
        ren.cell("A1", probe, 0)
    widths = column_widths(head)
    job = getattr(plan, "chart", None)
    attach = None
    if job is not None:
        with zipfile.ZipFile(book.path) as zf:
            attach = Attach(book.names | {part}, lambda name: opc.read_part(zf, name), part, ct)
        ct = attach.ct_text

    if plan.kind == "fill" and not prefix:
        # the empty sheet gets what a new one has (header frozen, widths); its other settings stay
        ours = sheet_head_xml(1 if header else 0, 0, widths, selected=False)
        ours = ours[ours.index("<sheetViews>"):ours.index("<sheetData>")]
        for pat in (r"<sheetViews\b.*?</sheetViews>|<sheetViews\b[^>]*/>", r"<sheetFormatPr\b[^>]*?(?:/>|>.*?</sheetFormatPr>)",
                    r"<cols\b.*?</cols>"):
            before = re.sub(pat, "", before, count=1, flags=re.S)
        before += ours.replace("<sheetView ", "<sheetView tabSelected=\"1\" ", 1) if re.search(
            r'tabSelected="(?:1|true)"', old.decode("utf-8", "replace")) else ours

    def sheet(out):
        if plan.kind == "fill":
            parts = [before + "<%ssheetData>" % prefix]
        else:
            parts = [sheet_head_xml(1 if header else 0, 0, widths, selected=False)]
        letters = []
        buffered = 0
        for r, row in enumerate(itertools.chain(head, rest), start=1):
            if r > LIMITS[plan.fmt][0]:
                raise too_many_rows(plan.fmt, r, 1)
            clean_xml_row(row, stats)
            while len(letters) < len(row):
                letters.append(col_letter(len(letters)))
            is_header = header and r == 1
            cells = "".join(ren.cell("%s%d" % (letters[c], r), v, 0, bold if is_header else None)
                            for c, v in enumerate(row) if v is not None)
            parts.append('<%srow r="%d">%s</%srow>' % (prefix, r, cells, prefix))
            counter[0] += 1
            buffered += 1
            if buffered >= 2000:
                out.write("".join(parts).encode("utf-8"))
                parts, buffered = [], 0
        if plan.kind == "fill":
            tail = ("</%ssheetData>" % prefix).encode("utf-8") + after
            out.write("".join(parts).encode("utf-8") + (attach.sheet_tail(tail, prefix) if attach else tail))
        else:
            parts.append("</sheetData>%s</worksheet>" % (attach.drawing_element().decode("utf-8") if attach else ""))
            out.write("".join(parts).encode("utf-8"))

    replaced["[Content_Types].xml"] = ct.encode("utf-8")
    if styles.changed:
        replaced[book.styles_part] = styles.data()
    added, late = [], []
    if plan.kind == "fill":
        replaced[part] = sheet
    else:
        added.append((part, sheet))
    if attach is not None:
        chart_parts = {}

        def chart_part(name):
            # the ranges need the rows the sheet (written just before) held
            def write(out):
                if not chart_parts:
                    data = head[1:] if header else head
                    chart = job.resolve(title, head[0] if header else None, 2 if header else 1, counter[0], data)
                    chart_parts.update(attach.parts(chart, max([len(r) for r in head] or [0]) + 1, 0))
                out.write(chart_parts[name])
            return write
        for name in (attach.chart_part, attach.drawing_part, opc.rels_part(attach.drawing_part),
                     attach.sheet_rels_part):
            if name in book.names:
                replaced[name] = chart_part(name)
                late.append(name)
            else:
                added.append((name, chart_part(name)))
    copy_package(tmp, book, replaced, added=added, late=late)
    action = {"new_sheet": "new_sheet", "fill": "appended" if plan.mode == "append" else "replaced_sheet"}[plan.kind]
    info.update(action=action, sheet=title, start_row=1,
                total_rows=counter[0], direct=True)
