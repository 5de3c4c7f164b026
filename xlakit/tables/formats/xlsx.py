"""xlsx/xlsm reader: a lean streaming parser of the sheet XML, with openpyxl as the fallback.

Why not just openpyxl: the host kills a tool at 60 s and a user's ledger can have a million rows.
openpyxl read-only needs ~8 s per 100k rows (a full SAX event per tag and a cell object per
cell); even a bare expat parser needs ~4 s. The sheet XML of a real workbook is extremely
regular, so this module treats it as text instead:

- the worksheet member is decompressed in ~1 MB chunks (``zipfile`` streams it; memory stays
  flat whatever the sheet size), each chunk is cut after its last ``</row>`` and parsed by
  ``xlsx_sheet.SheetParser``; a big sheet's chunks are shared out between this process and a
  forked worker (``xlsx_parallel``: both cores, same rows in the same order);
- one precompiled regular expression pulls every ``<c>`` out of a row as
  (column letters, other attributes, inner XML); the "other attributes" text (`` s="3" t="s"``)
  repeats endlessly, so its meaning (value type, date kind of the style) is computed once per
  distinct text and cached; column letters -> index is cached the same way;
- the inner XML is nearly always ``<v>...</v>``: sliced out without a second regex; dates are
  converted once per distinct serial, inline strings and shared-string indexes decoded once per
  distinct text (bounded caches).
Anything unusual (attributes in another order, cells without ``r=``, rich inline strings, a
namespace prefix like ``<x:c>``) goes through slower but general code in the same module; XML
that text slicing cannot read right (comments, CDATA, single-quoted attributes, spaces around
``=``, white space before ``>``: see ``xlsx_xml.chunk_problem``) sends the sheet to openpyxl,
so the fast path never guesses. The zip is checked against bombs first (``xlakit.opc``).

Merges (``<mergeCell>``) sit after ``<sheetData>``: ``merges()`` finds them with a separate
decompress-and-``bytes.find`` pass (no XML parsing, ~1 s for a million rows), and ``rows()``
remembers the ones it passes so a later ``merges()`` call is free.

``XLA_XLSX_READER=openpyxl`` selects the openpyxl path (also used automatically when the fast
parser meets XML it cannot make sense of). It applies the same value rules (``_base``) — the
date decision uses this module's style table, not openpyxl's narrower one — so both paths give
identical rows; the tests check that on every fixture.
"""
import os
import re
import sys
import warnings
import xml.etree.ElementTree as ET
import zipfile
import zlib

from ... import opc
from ._base import BaseBook, FormatError, SheetInfo, merge_repeated_rows, number, serial_to_value, trim
from .xlsx_parallel import parallel_rows, start_worker, workers_wanted
from .xlsx_sheet import (CHUNK, SheetParser, double_quoted, member_chunks, single_quoted,  # noqa: F401 - CHUNK
                         worksheet_prefix)
from .xlsx_xml import (_XESC_RE, _ParseProblem, _Styles, _attr, _cell_regex, _col_index, _dedupe, _inner_value,
                       _local, _put, _rel_id, _unx, column_style_counts, dimension_ref, formula_text, merge_refs,
                       parse_sst_fast, parse_sst_slow, sst_prefix, strip_comments)
from ...errors import what_broke


SST_PIECE = 256 * 1024      # shared-string table read in pieces of this size (see shared_strings)


class XlsxBook(BaseBook):
    kind = "xlsx"

    def __init__(self, path, reader=None):
        BaseBook.__init__(self, path)
        reader = reader or os.environ.get("XLA_XLSX_READER", "").strip().lower() or "fast"
        self.reader = "openpyxl" if reader == "openpyxl" else "fast"
        if os.environ.get("XLA_DEBUG") == "1":      # lets tests see which path a spawned tool took
            sys.stderr.write("xlsx reader: %s\n" % self.reader)
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise FormatError("文件已损坏或不完整（xlsx 压缩结构无法打开：%s）。请确认文件已完整下载/复制，"
                              "或用 Excel/WPS 打开修复后另存一份再试" % what_broke(exc))
        try:
            opc.check_package(self._zip, os.path.basename(path))
        except FormatError:
            self._zip.close()
            raise
        # part names compared case-insensitively and with "/" for the backslashes Windows tools write
        self._names = {n.replace("\\", "/").lower().lstrip("/"): n for n in self._zip.namelist()}
        self._merge_cache = {}
        self._dim_cache = {}
        self._quotes = {}          # sheet index -> its attributes are written in single quotes
        self._sst = None
        self._opx = None
        self._opx_file = None
        self._workers = []              # live xlsx_parallel workers (ended by close())
        self._early = {}                # sheet index -> (parser, row end tag, worker) started by merges()
        self._rows_started = set()      # sheet indexes whose rows were (being) read
        self._parsers = {}              # sheet index -> the fast parser reading its rows (see project)
        self.fallback_reason = None     # why the fast parser gave up on a sheet, if it did
        try:
            self._load_workbook()
        except FormatError:
            self.close()
            raise
        except (ET.ParseError, KeyError, ValueError, zipfile.BadZipFile, EOFError, OSError) as exc:
            self.close()
            raise FormatError("xlsx 文件已损坏（工作簿结构无法解析：%s）。请用 Excel/WPS 打开修复后另存一份再试" % what_broke(exc))

    # -- zip members ------------------------------------------------------------------------

    def _member(self, path):
        """The real member name for a (case-insensitive) path, or None."""
        path = path.lstrip("/")
        return self._names.get(path.lower())

    def _read(self, path):
        name = self._member(path)
        if name is None:
            return None
        try:
            return opc.read_part(self._zip, name, label=os.path.basename(self.path))
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
            raise FormatError("xlsx 文件已损坏或不完整（%s 无法解压：%s）。请重新获取文件，"
                              "或用 Excel/WPS 打开修复后另存一份" % (name, what_broke(exc)))

    def _rels(self, part):
        """{rId: (type tail, absolute target)} of a part's relationships."""
        return opc.parse_rels(self._read(opc.rels_part(part)), part)

    def _load_workbook(self):
        wb_part = "xl/workbook.xml"
        for _rid, (typ, target) in self._rels("").items():
            if typ == "officeDocument" and self._member(target):
                wb_part = target
                break
        data = self._read(wb_part)
        if data is None:
            raise FormatError("这个 zip 文件里没有 Excel 工作簿（缺少 xl/workbook.xml），不是 xlsx 表格")
        self._wb_part = wb_part
        root = ET.fromstring(data)
        rels = self._rels(wb_part)
        self.date1904 = False
        self._sheet_parts = []
        for child in root:
            name = _local(child.tag)
            if name == "workbookPr":
                flag = (_attr(child, "date1904") or "").lower()
                self.date1904 = flag in ("1", "true")
            elif name == "sheets":
                for sh in child:
                    if _local(sh.tag) != "sheet":
                        continue
                    state = (_attr(sh, "state") or "visible").lower()
                    typ, target = rels.get(_rel_id(sh), ("", None))
                    self.sheets.append(SheetInfo(_attr(sh, "name") or "Sheet%d" % (len(self.sheets) + 1),
                                                 state in ("hidden", "veryhidden"), len(self.sheets)))
                    # chartsheets/dialogsheets have no cells: keep their name, read them as empty
                    self._sheet_parts.append(target if typ == "worksheet" or typ == "" else None)
        self._sst_part = self._styles_part = None
        for _rid, (typ, target) in rels.items():
            if typ == "sharedStrings":
                self._sst_part = target
            elif typ == "styles":
                self._styles_part = target
        self._sst_part = self._sst_part or "xl/sharedStrings.xml"
        self._styles_part = self._styles_part or "xl/styles.xml"
        self.styles = _Styles(self._read(self._styles_part))

    # -- shared strings ---------------------------------------------------------------------

    def shared_strings(self):
        """The shared string table, parsed once: streaming over ``</si>`` boundaries by text when
        the XML is plain, else through a real XML parser (CDATA, comments, odd quoting)."""
        if self._sst is not None:
            return self._sst
        name = self._member(self._sst_part)
        if name is None:
            self._sst = []
            return self._sst
        p = sst_prefix(self._head(name, 4096))
        # small pieces: the expression's matches of one piece are a list of tuples, several times
        # the size of the text, and a peak here stays in the process (and in a forked worker)
        sst = parse_sst_fast(member_chunks(self._zip, name, b"</" + p + b"si>", SST_PIECE), p)
        if sst is None:
            try:
                with self._zip.open(name) as stream:
                    sst = parse_sst_slow(stream)
            except (ET.ParseError, zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise FormatError("xlsx 文件已损坏（共享字符串表无法解析：%s）。请用 Excel/WPS 打开修复后另存一份再试" % what_broke(exc))
        self._sst = sst
        return sst

    def _chunks(self, name, boundary):
        """Decompressed pieces of a member, each ending right after a ``boundary`` (flat memory)."""
        return member_chunks(self._zip, name, boundary)

    # -- sheets -----------------------------------------------------------------------------

    def _part(self, name):
        info = self.sheet(name)
        part = self._sheet_parts[info.index]
        member = self._member(part) if part else None
        if part and member is None:
            raise FormatError("xlsx 文件不完整：工作表「%s」的数据（%s）缺失。请用 Excel/WPS 打开修复后另存一份" % (
                info.name, part))
        return info, member

    def rows(self, name=None, max_rows=None):
        info, member = self._part(name)
        if member is None:
            return iter(())
        if self.reader == "openpyxl":
            return self._opx_rows(info, max_rows)
        return self._fast_rows_or_fallback(info, member, max_rows)

    def _fast_rows_or_fallback(self, info, member, max_rows):
        done = 0
        last = 0
        try:
            for item in merge_repeated_rows(self._fast_rows(info, member, max_rows)):
                last = item[0]
                yield item
                done += 1
                if max_rows is not None and done >= max_rows:
                    return
        except (_ParseProblem, ValueError, IndexError, KeyError, UnicodeDecodeError, OverflowError) as exc:
            # XML the fast parser does not understand (CDATA, odd producers…) or a bug in it:
            # fall back to openpyxl, resuming after the rows already given out.
            self.fallback_reason = "%s: %s" % (type(exc).__name__, exc)
            for item in self._opx_rows(info, None):
                if item[0] <= last:
                    continue
                yield item
                done += 1
                if max_rows is not None and done >= max_rows:
                    return

    def _head(self, member, size=65536):
        """The first bytes of a member (for its namespace prefix and <dimension>)."""
        try:
            with self._zip.open(member) as stream:
                return stream.read(size)
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, NotImplementedError, ValueError, zlib.error) as exc:
            raise FormatError("xlsx 文件已损坏或不完整（%s 无法解压：%s）。请重新获取文件，"
                              "或用 Excel/WPS 打开修复后另存一份" % (member, what_broke(exc)))

    def _sheet_parser(self, info, member):
        """(a fresh parser for the sheet, its row end tag)."""
        head = self._head(member)
        p = worksheet_prefix(head)
        self._quotes[info.index] = single_quoted(head)
        if info.index not in self._dim_cache:
            self._dim_cache[info.index] = dimension_ref(head)

        def note(row, col, formula):
            self.note_formula_without_value(info.name, row, col, formula)

        return SheetParser(p, self.styles.kinds, self.date1904, self.shared_strings, note), b"</" + p + b"row>"

    def _fast_rows(self, info, member, max_rows=None):
        self._rows_started.add(info.index)
        early = self._early.pop(info.index, None)
        if early is not None and max_rows is None:
            parser, boundary, worker = early
            self._parsers[info.index] = parser
            yield from parallel_rows(self, self.path, member, boundary, parser, worker)
        else:
            if early is not None:
                early[2].close()
                self._workers.remove(early[2])
            parser, boundary = self._sheet_parser(info, member)
            self._parsers[info.index] = parser
            if self._quotes.get(info.index):
                for n, chunk in enumerate(self._chunks(member, boundary)):
                    yield from parser.rows(double_quoted(chunk), n)
            elif workers_wanted(self._zip.getinfo(member).file_size, max_rows) > 1 and self._sst_ready():
                yield from parallel_rows(self, self.path, member, boundary, parser)
            else:
                for n, chunk in enumerate(self._chunks(member, boundary)):
                    yield from parser.rows(chunk, n)
        self._merge_cache[info.index] = _dedupe(parser.merges)

    def project(self, name, columns):
        """The consumer of the rows being read needs only ``columns`` (0-based, holding 0-2): the
        fast parser, and the worker's copy, build only those cells from the next chunk on where
        that gives the same answer (``SheetParser.rows``). ``XLA_XLSX_PROJECT=0`` turns it off."""
        if os.environ.get("XLA_XLSX_PROJECT", "").strip() == "0":
            return
        info, member = self._part(name)
        parser = self._parsers.get(info.index) if info is not None else None
        if parser is None:
            return
        parser.project(columns)
        if parser.wanted is not None:
            for worker in self._workers:
                if worker.member == member:
                    worker.project(parser.wanted)

    def _start_early(self, info, member):
        """Before the merges scan of a big sheet (``Table`` asks for merges before the first row):
        start the worker now, so it parses the first chunks while this process scans. The rows
        read next take them over (a preview with ``max_rows`` ends it instead)."""
        if info.index in self._early or info.index in self._rows_started:
            return          # (merges asked after a partial read: the rows will not be read again)
        if workers_wanted(self._zip.getinfo(member).file_size, None) < 2:
            return
        try:
            parser, boundary = self._sheet_parser(info, member)
        except _ParseProblem:
            return
        if self._quotes.get(info.index):
            return          # its chunks are rewritten first (double_quoted): one process reads it
        if self._sst_ready():
            worker = start_worker(self, self.path, member, boundary, parser)
            if worker is not None:
                self._early[info.index] = (parser, boundary, worker)

    def _sst_ready(self):
        """Shared strings parsed before a worker is forked (it must not read our zip handle);
        False if the table cannot be read here (one process then meets the error as usual)."""
        if self._member(self._sst_part) is None:
            return True
        try:
            self.shared_strings()
        except FormatError:
            return False
        return True

    # -- merges / dimensions / number formats --------------------------------------------------

    def number_formats(self, name=None, first_row=1, rows=200):
        """The most common money/number format per column among the styled cells of the given
        rows (see ``BaseBook.number_formats``), from the first MB of the sheet's XML."""
        info, member = self._part(name)
        if member is None or not self.styles.codes:
            return {}
        head = self._head(member, 1 << 20)
        m = re.search(rb"<(?:(\w+):)?worksheet\b", head)
        p = (m.group(1) + b":") if m and m.group(1) else b""
        out = {}
        for col, counts in column_style_counts(head, p, first_row, first_row + rows - 1).items():
            by_code = {}
            for style, n in counts.items():
                code = self.styles.codes.get(style)
                if code:
                    by_code[code] = by_code.get(code, 0) + n
            if by_code:
                out[col] = max(sorted(by_code), key=lambda c: by_code[c])
        return out

    def merges(self, name=None):
        info, member = self._part(name)
        if member is None:
            return []
        if info.index in self._merge_cache:
            return list(self._merge_cache[info.index])
        if self.reader == "openpyxl":
            found = self._opx_merges(info)
        else:
            self._start_early(info, member)
            found = self._scan_merges(member)
        self._merge_cache[info.index] = found
        return list(found)

    def dimensions(self, name=None):
        info, member = self._part(name)
        if member is None:
            return (0, 0)
        if info.index not in self._dim_cache:
            self._dim_cache[info.index] = dimension_ref(self._head(member))
        return self._dim_cache[info.index]

    # -- openpyxl path ----------------------------------------------------------------------

    def _openpyxl(self):
        if self._opx is None:
            import pydeps_boot
            try:
                openpyxl = pydeps_boot.ensure("openpyxl")
            except pydeps_boot.DependencyError as exc:
                raise FormatError(str(exc))
            try:
                with warnings.catch_warnings():
                    # "no default style", "unknown extension"…: noise for the user, not errors
                    warnings.simplefilter("ignore")
                    # a file object, not the path: openpyxl refuses names ending in .xls,
                    # and an xlsx renamed .xls is common
                    self._opx_file = open(self.path, "rb")
                    wb = openpyxl.load_workbook(self._opx_file, read_only=True, data_only=True)
            except Exception as exc:  # noqa: BLE001 - openpyxl raises many types on broken files
                self._close_opx_file()
                raise FormatError("xlsx 文件无法解析（%s）。请用 Excel/WPS 打开修复后另存一份再试" % what_broke(exc))
            # Dates are decided by this module's rules (Chinese built-in formats, etc.), so stop
            # openpyxl converting on its own and hand us the raw serials.
            wb._date_formats = set()
            wb._timedelta_formats = set()
            self._share_strings_with(wb)
            self._opx = wb
        return self._opx

    def _share_strings_with(self, wb):
        """Give openpyxl's sheets this module's shared string table.

        openpyxl's own table drops ``x005F_`` blindly (so ``_x005F_x0041_``, the escaped text
        "_x0041_", turns into "A") and leaves other ``_xHHHH_`` escapes undecoded. Every string
        of the openpyxl path is decoded once, afterwards, like inline strings; so the table
        handed over is re-escaped ("_x" -> "_x005F_x") where needed, which that decoding undoes
        exactly. If this module cannot read the table, openpyxl keeps its own."""
        try:
            table = [t.replace("_x", "_x005F_x") if "_x" in t else t for t in self.shared_strings()]
        except (FormatError, ValueError, UnicodeDecodeError, re.error):
            return
        for ws in wb.worksheets:
            if hasattr(ws, "_shared_strings"):
                ws._shared_strings = table

    def _opx_sheet(self, info):
        wb = self._openpyxl()
        if info.name not in wb.sheetnames:
            raise FormatError("openpyxl 读不到工作表「%s」（文件结构不规范）。请用 Excel/WPS 打开后另存一份再试" % info.name)
        return wb[info.name]

    def _opx_rows(self, info, max_rows):
        ws = self._opx_sheet(info)
        # the <dimension> written by some programs is wrong; read-only openpyxl would stop there
        ws.reset_dimensions()
        kinds = self.styles.kinds
        date1904 = self.date1904
        self._note_uncached_formulas(info)
        done = 0
        for item in merge_repeated_rows(self._opx_values(ws, kinds, date1904)):
            yield item
            done += 1
            if max_rows is not None and done >= max_rows:
                return

    @staticmethod
    def _opx_cell_rows(ws):
        """openpyxl's rows as the sheet XML has them. Its ``iter_rows`` drops a ``<row>`` whose
        number came before (one element per cell, see ``merge_repeated_rows``); its row parser
        gives every element, so the parser is used when this openpyxl version has it."""
        parse = getattr(ws, "_get_source", None)
        try:
            from openpyxl.worksheet._reader import WorkSheetParser
        except ImportError:
            parse = None
        if parse is None or not hasattr(ws, "_get_row"):
            for row in ws.iter_rows():
                yield row
            return
        wb = ws.parent
        with ws._get_source() as src:
            parser = WorkSheetParser(src, ws._shared_strings, data_only=wb.data_only, epoch=wb.epoch,
                                     date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
            for _idx, row in parser.parse():
                yield ws._get_row(row, 1, None, False)

    def _opx_values(self, ws, kinds, date1904):
        for row in self._opx_cell_rows(ws):
            values = []
            rnum = None
            for cell in row:
                value = getattr(cell, "value", None)
                if rnum is None and getattr(cell, "row", None):
                    rnum = cell.row
                if value is None or value == "":
                    continue
                col = getattr(cell, "column", None)
                ci = (col - 1) if col else len(values)
                dtype = getattr(cell, "data_type", "n")
                if isinstance(value, bool):
                    pass                        # (bool is an int: keep it out of the next branch)
                elif isinstance(value, (int, float)):
                    value = number(value) if isinstance(value, float) else value
                    kind = kinds.get(getattr(cell, "_style_id", 0) or 0)
                    if kind:
                        value = serial_to_value(value, kind, date1904)
                elif isinstance(value, str):
                    if dtype == "f" or (dtype == "n" and value.startswith("=")):
                        continue
                    if "_x" in value:
                        value = _XESC_RE.sub(_unx, value)
                _put(values, ci, value)
            if rnum is None:
                continue
            trim(values)
            if values:
                yield rnum, values

    def _note_uncached_formulas(self, info):
        """openpyxl (data_only) shows a formula without a cached value as None, silently: find
        such cells in the XML so the openpyxl path gives the same count and example as the fast
        path."""
        member = self._member(self._sheet_parts[info.index] or "")
        if member is None:
            return
        m = re.search(rb"<(?:(\w+):)?worksheet\b", self._head(member))
        p = (m.group(1) + b":") if m and m.group(1) else b""
        cell_re = _cell_regex(p)
        f_tag, is_tag = b"<" + p + b"f", b"<" + p + b"is>"
        row_re = re.compile(rb"<" + re.escape(p) + rb'row\b[^>]*?\br="(\d+)"')
        rnum = 0
        for chunk in self._chunks(member, b"</" + p + b"row>"):
            if f_tag not in chunk:
                continue
            for piece in chunk.split(b"</" + p + b"row>"):
                rm = row_re.match(piece, max(piece.rfind(b"<" + p + b"row"), 0))
                rnum = int(rm.group(1)) if rm else rnum + 1
                if f_tag not in piece:
                    continue
                pos = 0
                for col, attrs, _raw, _itext, inner in cell_re.findall(piece):
                    ci = _col_index(col.decode("ascii")) if col else pos
                    pos = ci + 1
                    if not inner or f_tag not in inner or is_tag in inner:
                        continue
                    raw = _inner_value(inner, p)
                    if raw is None or (not raw and b't="' not in attrs):
                        self.note_formula_without_value(info.name, rnum, ci, formula_text(inner, p))

    def _scan_merges(self, member):
        """<mergeCell ref=...> ranges by a plain text scan (chunks end at '>', so no tag is cut)."""
        found = []
        carry = b""
        for chunk in self._chunks(member, b">"):
            # a commented-out <mergeCell> is not a merge ("!" first: one memchr, "<!--" is rare)
            if carry or (b"!" in chunk and b"<!--" in chunk):
                chunk, carry = strip_comments(carry, chunk)
            if b"mergeCell" in chunk:
                found.extend(merge_refs(chunk))
        return _dedupe(found)

    def _opx_merges(self, info):
        # Read-only worksheets do not expose merged cells; the ranges come from the XML, the
        # same way as on the fast path (there is only one way to write <mergeCell ref=...>).
        return self._scan_merges(self._member(self._sheet_parts[info.index] or ""))

    def _close_opx_file(self):
        fh = getattr(self, "_opx_file", None)
        if fh is not None:
            fh.close()
            self._opx_file = None

    def close(self):
        for worker in list(getattr(self, "_workers", ())):
            worker.close()
        self._workers = []
        self._early = {}
        if self._opx is not None:
            try:
                self._opx.close()
            except Exception:  # noqa: BLE001
                pass
            self._opx = None
        self._close_opx_file()
        z = getattr(self, "_zip", None)
        if z is not None:
            z.close()
            self._zip = None


# ---------------------------------------------------------------------------------------------
# helpers for the fast path
