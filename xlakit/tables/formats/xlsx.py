"""xlsx/xlsm reader: a lean streaming parser of the sheet XML, with openpyxl as the fallback.

Why not just openpyxl: the host kills a tool at 60 s and a user's ledger can have a million rows.
openpyxl read-only needs ~8 s per 100k rows (a full SAX event per tag and a cell object per
cell); even a bare expat parser needs ~4 s. The sheet XML of a real workbook is extremely
regular, so this module treats it as text instead:

- the worksheet member is decompressed in ~2 MB chunks (``zipfile`` streams it; memory stays
  flat whatever the sheet size), each chunk is cut after its last ``</row>``;
- one precompiled regular expression pulls every ``<c>`` out of a row as
  (column letters, other attributes, inner XML); the "other attributes" text (`` s="3" t="s"``)
  repeats endlessly, so its meaning (value type, date kind of the style) is computed once per
  distinct text and cached; column letters -> index is cached the same way;
- the inner XML is nearly always ``<v>...</v>``: sliced out without a second regex.
Anything unusual (attributes in another order, cells without ``r=``, rich inline strings, a
namespace prefix like ``<x:c>``) goes through slower but general code in the same module, so
the fast path never guesses.

Merges (``<mergeCell>``) sit after ``<sheetData>``: ``merges()`` finds them with a separate
decompress-and-``bytes.find`` pass (no XML parsing, ~1 s for a million rows), and ``rows()``
remembers the ones it passes so a later ``merges()`` call is free.

``XLA_XLSX_READER=openpyxl`` selects the openpyxl path (also used automatically when the fast
parser meets XML it cannot make sense of). It applies the same value rules (``_base``) — the
date decision uses this module's style table, not openpyxl's narrower one — so both paths give
identical rows; the tests check that on every fixture.
"""
import datetime
import os
import posixpath
import re
import sys
import xml.etree.ElementTree as ET
import warnings
import zipfile
import zlib

from ._base import (BaseBook, FormatError, SheetInfo, NOCACHE_WARNING, builtin_kind, classify_format,
                    number, serial_to_value, trim)

CHUNK = 2 * 1024 * 1024

_REL_NS_TAIL = "relationships"


class _ParseProblem(Exception):
    """The fast parser met XML it does not understand: switch to openpyxl."""


def _local(tag):
    return tag.rsplit("}", 1)[-1] if "}" in tag else tag


def _attr(elem, name):
    """Attribute by local name, whatever its namespace (transitional or strict OOXML)."""
    if name in elem.attrib:
        return elem.attrib[name]
    for key, value in elem.attrib.items():
        if _local(key) == name:
            return value
    return None


def _rel_id(elem):
    for key, value in elem.attrib.items():
        if key.startswith("{") and _local(key) == "id" and _REL_NS_TAIL in key:
            return value
    return None


# ---------------------------------------------------------------------------------------------
# Text decoding: XML entities and the OOXML _xHHHH_ escapes (e.g. _x000D_ for a carriage return)

_XESC_RE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_ENTITY_RE = re.compile(r"&(#[xX][0-9A-Fa-f]+|#[0-9]+|lt|gt|amp|quot|apos);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _unx(match):
    return chr(int(match.group(1), 16))


def _entity(match):
    """XML's five entities and character references (html.unescape would apply HTML's rules)."""
    ref = match.group(1)
    if ref[0] != "#":
        return _NAMED[ref]
    try:
        return chr(int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:]))
    except (ValueError, OverflowError):
        return match.group(0)


def decode_text(raw):
    """bytes or str of XML text content -> Python str."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if "\r" in text:
        # XML end-of-line handling: a literal CR LF or CR in the file means LF. A real carriage
        # return is written as &#13; or _x000D_, which are decoded after this.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "&" in text:
        text = _ENTITY_RE.sub(_entity, text)
    if "_x" in text:
        text = _XESC_RE.sub(_unx, text)
    return text


# <t> inside <si>/<is>; <rPh> (phonetic guide) runs are dropped first.
_RPH_RE = re.compile(rb"<(?:\w+:)?rPh\b.*?</(?:\w+:)?rPh>", re.S)
_T_RE = re.compile(rb"<(?:\w+:)?t(?:\s[^>]*)?>(.*?)</(?:\w+:)?t>|<(?:\w+:)?t(?:\s[^>]*)?/>", re.S)


def _rich_text(raw):
    if b"<rPh" in raw or b":rPh" in raw:
        raw = _RPH_RE.sub(b"", raw)
    parts = _T_RE.findall(raw)
    if len(parts) == 1:
        return decode_text(parts[0])
    return decode_text(b"".join(parts))


# ---------------------------------------------------------------------------------------------
# Cell attribute text -> (type code, date kind)

_A_R = re.compile(rb'\br="([A-Za-z]*)(\d*)"')
_A_S = re.compile(rb'\bs="(\d+)"')
_A_T = re.compile(rb'\bt="(\w+)"')


def _col_index(letters):
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


class _Styles(object):
    """Which cell style indexes (``s=``) carry a date/time number format, and of which kind."""

    def __init__(self, xml_bytes):
        self.kinds = {}
        if not xml_bytes:
            return
        try:
            root = ET.fromstring(xml_bytes)
        except ET.ParseError:
            return
        custom = {}
        xfs = None
        for child in root:
            name = _local(child.tag)
            if name == "numFmts":
                for fmt in child:
                    try:
                        custom[int(_attr(fmt, "numFmtId"))] = _attr(fmt, "formatCode") or ""
                    except (TypeError, ValueError):
                        pass
            elif name == "cellXfs":
                xfs = child
        if xfs is None:
            return
        for index, xf in enumerate(x for x in xfs if _local(x.tag) == "xf"):
            try:
                fmt_id = int(_attr(xf, "numFmtId") or 0)
            except ValueError:
                continue
            kind = classify_format(custom[fmt_id]) if fmt_id in custom else builtin_kind(fmt_id)
            if kind:
                self.kinds[index] = kind


# ---------------------------------------------------------------------------------------------
# The book

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
                              "或用 Excel/WPS 打开修复后另存一份再试" % exc)
        self._names = {n.lower(): n for n in self._zip.namelist()}
        self._merge_cache = {}
        self._dim_cache = {}
        self._sst = None
        self._opx = None
        self._opx_file = None
        self.fallback_reason = None     # why the fast parser gave up on a sheet, if it did
        try:
            self._load_workbook()
        except FormatError:
            self.close()
            raise
        except (ET.ParseError, KeyError, ValueError, zipfile.BadZipFile, EOFError, OSError) as exc:
            self.close()
            raise FormatError("xlsx 文件已损坏（工作簿结构无法解析：%s）。请用 Excel/WPS 打开修复后另存一份再试" % exc)

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
            return self._zip.read(name)
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
            raise FormatError("xlsx 文件已损坏或不完整（%s 无法解压：%s）。请重新获取文件，"
                              "或用 Excel/WPS 打开修复后另存一份" % (name, exc))

    def _rels(self, part):
        """{rId: (type tail, absolute target)} of a part's relationships."""
        folder, base = posixpath.split(part)
        data = self._read(posixpath.join(folder, "_rels", base + ".rels"))
        rels = {}
        if not data:
            return rels
        for rel in ET.fromstring(data):
            target = rel.get("Target") or ""
            if rel.get("TargetMode") == "External":
                continue
            if target.startswith("/"):
                full = target.lstrip("/")
            else:
                full = posixpath.normpath(posixpath.join(folder, target))
            rels[rel.get("Id")] = ((rel.get("Type") or "").rsplit("/", 1)[-1], full)
        return rels

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
        """The shared string table, parsed once by streaming over ``</si>`` boundaries."""
        if self._sst is not None:
            return self._sst
        sst = []
        name = self._member(self._sst_part)
        if name is None:
            self._sst = sst
            return sst
        simple = re.compile(rb"<(?:\w+:)?si>\s*<(?:\w+:)?t(?:\s[^>]*)?>([^<]*)</(?:\w+:)?t>\s*</(?:\w+:)?si>"
                            rb"|<(?:\w+:)?si\s*/>|<(?:\w+:)?si\b[^>]*>(.*?)</(?:\w+:)?si>", re.S)
        append = sst.append
        m = re.search(rb"<(?:(\w+):)?sst\b", self._head(name, 4096))
        p = (m.group(1) + b":") if m and m.group(1) else b""
        for chunk in self._chunks(name, b"</" + p + b"si>"):
            for plain, rich in simple.findall(chunk):
                if rich:
                    append(_rich_text(rich))
                elif b"&" in plain or b"_x" in plain or b"\r" in plain:
                    append(decode_text(plain))
                else:
                    append(plain.decode("utf-8"))
        self._sst = sst
        return sst

    def _chunks(self, name, boundary):
        """Decompressed pieces of a member, each ending right after a ``boundary`` (flat memory)."""
        try:
            stream = self._zip.open(name)
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
            raise FormatError("xlsx 文件已损坏或不完整（%s 无法解压：%s）。请重新获取文件，"
                              "或用 Excel/WPS 打开修复后另存一份" % (name, exc))
        rest = b""
        with stream:
            while True:
                try:
                    block = stream.read(CHUNK)
                except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
                    raise FormatError("xlsx 文件已损坏或不完整（%s 解压出错：%s）。请重新获取文件，"
                                      "或用 Excel/WPS 打开修复后另存一份" % (name, exc))
                if not block:
                    break
                data = rest + block if rest else block
                cut = data.rfind(boundary)
                if cut < 0:
                    rest = data
                    continue
                cut += len(boundary)
                rest = data[cut:]
                yield data[:cut]
        if rest:
            yield rest

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
            for item in self._fast_rows(info, member):
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
                              "或用 Excel/WPS 打开修复后另存一份" % (member, exc))

    def _fast_rows(self, info, member):
        head = self._head(member)
        m = re.search(rb"<(?:(\w+):)?worksheet\b", head)
        if m is None:
            raise _ParseProblem("no worksheet root")
        p = (m.group(1) + b":") if m.group(1) else b""
        if info.index not in self._dim_cache:
            dm = re.search(rb'<(?:\w+:)?dimension\s+ref="([^"]*)"', head)
            self._dim_cache[info.index] = _dim_from_ref(dm.group(1).decode("ascii", "replace")) if dm else None
        del head
        findall = _cell_regex(p).findall
        row_open, row_close = b"<" + p + b"row", b"</" + p + b"row>"
        lro = len(row_open)
        is_tag, f_tag = b"<" + p + b"is>", b"<" + p + b"f"
        sst = None
        kinds = self.styles.kinds
        date1904 = self.date1904
        next_row = 1
        merges = []
        attr_cache = {}     # attribute text (without r=) -> (type, date kind)
        col_cache = {}      # column letters -> 0-based index
        for chunk in self._chunks(member, row_close):
            # Each chunk ends right after a </row>; splitting there gives one piece per row
            # (a piece may start with empty self-closing <row .../> tags: the row is its last
            # "<row"). The piece after the last </row> is the end of the sheet, with merges.
            pieces = chunk.split(row_close)
            tail = pieces.pop()
            if tail and b"mergeCell" in tail:
                merges.extend(_merge_refs(tail))
            for piece in pieces:
                start = piece.rfind(row_open)
                end = piece.find(b">", start)
                if start < 0 or end < 0:
                    raise _ParseProblem("</row> without <row>")
                # row number: r= is nearly always the first attribute; rows may also lack it
                if piece[start + lro:start + lro + 4] == b' r="':
                    rnum = int(piece[start + lro + 4:piece.index(b'"', start + lro + 4)])
                else:
                    rm = _A_R.search(piece[start + lro:end])
                    rnum = int(rm.group(2)) if rm and rm.group(2) else next_row
                next_row = rnum + 1
                values = []
                pos = 0
                for col, attrs, raw, itext, inner in findall(piece, end + 1):
                    # -- where: column letters (the regex takes them when r= comes first)
                    if col:
                        ci = col_cache.get(col)
                        if ci is None:
                            ci = col_cache[col] = _col_index(col.decode("ascii"))
                    else:
                        rm = _A_R.search(attrs) if b"r=" in attrs else None
                        if rm and rm.group(1):
                            ci = _col_index(rm.group(1).decode("ascii"))
                            attrs = attrs[:rm.start()] + attrs[rm.end():]
                        else:
                            ci = pos          # no r=: cells simply follow each other
                    pos = ci + 1
                    # -- the raw value text: nearly always a plain <v>...</v>, taken by the regex
                    if not raw:
                        if itext:                                   # <is><t>text</t></is>
                            if b"&" in itext or b"_x" in itext or b"\r" in itext:
                                value = decode_text(itext)
                            else:
                                value = itext.decode("utf-8")
                            if ci == len(values):
                                values.append(value)
                            else:
                                _put(values, ci, value)
                            continue
                        if not inner:
                            continue          # an empty (styled) cell or an empty string
                        raw = _inner_value(inner, p)                # formula cells: <f>..</f><v>..</v>
                        if raw is None:
                            if is_tag in inner:
                                value = _rich_text(inner)
                                if value:
                                    _put(values, ci, value)
                            elif f_tag in inner:
                                self.warn(NOCACHE_WARNING)
                            continue
                        if not raw:
                            continue
                    # -- type and date kind, computed once per distinct attribute text
                    meta = attr_cache.get(attrs)
                    if meta is None:
                        meta = attr_cache[attrs] = _cell_meta(attrs, kinds)
                    typ, dkind = meta
                    if typ == "n":
                        try:
                            if b"." in raw or b"e" in raw or b"E" in raw:
                                value = number(float(raw))
                            else:
                                value = int(raw)
                        except ValueError:
                            raise _ParseProblem("bad number %r" % raw[:40])
                        if dkind is not None:
                            value = serial_to_value(value, dkind, date1904)
                    elif typ == "s":
                        if sst is None:
                            sst = self.shared_strings()
                        try:
                            value = sst[int(raw)]
                        except (IndexError, ValueError):
                            raise _ParseProblem("bad shared string index %r" % raw[:40])
                        if not value:
                            continue
                    elif typ == "str" or typ == "inlineStr" or typ == "e":
                        value = decode_text(raw)
                        if not value:
                            continue
                    elif typ == "b":
                        value = raw.strip() in (b"1", b"true")
                    elif typ == "d":
                        value = _iso_value(decode_text(raw))
                    else:
                        raise _ParseProblem("unknown cell type %r" % typ)
                    # -- store at its column (nearly always the next one)
                    if ci == len(values):
                        values.append(value)
                    else:
                        _put(values, ci, value)
                if values:
                    trim(values)
                    if values:
                        yield rnum, values
        self._merge_cache[info.index] = _dedupe(merges)

    # -- merges / dimensions ----------------------------------------------------------------

    def merges(self, name=None):
        info, member = self._part(name)
        if member is None:
            return []
        if info.index in self._merge_cache:
            return list(self._merge_cache[info.index])
        if self.reader == "openpyxl":
            found = self._opx_merges(info)
        else:
            found = self._scan_merges(member)
        self._merge_cache[info.index] = found
        return list(found)

    def dimensions(self, name=None):
        info, member = self._part(name)
        if member is None:
            return (0, 0)
        if info.index not in self._dim_cache:
            dim = None
            head = self._head(member)
            m = re.search(rb'<(?:\w+:)?dimension\s+ref="([^"]*)"', head)
            if m:
                dim = _dim_from_ref(m.group(1).decode("ascii", "replace"))
            self._dim_cache[info.index] = dim
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
                raise FormatError("xlsx 文件无法解析（%s）。请用 Excel/WPS 打开修复后另存一份再试" % exc)
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
        done = 0
        if self._has_formula_cells(info):
            self.warn(NOCACHE_WARNING)
        for row in ws.iter_rows():
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
                done += 1
                if max_rows is not None and done >= max_rows:
                    return

    def _has_formula_cells(self, info):
        """openpyxl (data_only) shows a formula without a cached value as None, silently: find
        such cells in the XML so the openpyxl path gives the same warning as the fast path."""
        member = self._member(self._sheet_parts[info.index] or "")
        if member is None:
            return False
        m = re.search(rb"<(?:(\w+):)?worksheet\b", self._head(member))
        p = (m.group(1) + b":") if m and m.group(1) else b""
        cell_re = _cell_regex(p)
        for chunk in self._chunks(member, b"</" + p + b"c>"):
            if b"<" + p + b"f" not in chunk:
                continue
            for _col, _attrs, _raw, _itext, inner in cell_re.findall(chunk):
                if inner and b"<" + p + b"f" in inner and _inner_value(inner, p) is None \
                        and b"<" + p + b"is>" not in inner:
                    return True
        return False

    def _scan_merges(self, member):
        """<mergeCell ref=...> ranges by a plain text scan (chunks end at '>', so no tag is cut)."""
        found = []
        for chunk in self._chunks(member, b">"):
            if b"mergeCell" in chunk:
                found.extend(_merge_refs(chunk))
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

_compiled = {}


def _cell_regex(p):
    """The cell expression for a namespace prefix (b"" or b"x:"). Groups:
    1 column letters when r= is the first attribute; 2 the other attributes (ends with "/" for
    an empty self-closing cell); 3 the text of a cell that is exactly <v>text</v>; 4 the text of
    a plain inline string <is><t>text</t></is>; 5 any other inner XML (formulas, rich or
    space-preserving inline strings), for the slower general code."""
    if p not in _compiled:
        e = re.escape(p)
        _compiled[p] = re.compile(
            rb"<" + e + rb'c\b(?: r="([A-Z]+)\d*")?([^>]*)>'
            rb"(?:(?<!/>)(?:<" + e + rb"v>([^<]*)</" + e + rb"v></" + e + rb"c>"
            rb"|<" + e + rb"is><" + e + rb"t>([^<]*)</" + e + rb"t></" + e + rb"is></" + e + rb"c>"
            rb"|(.*?)</" + e + rb"c>))?", re.S)
    return _compiled[p]


def _prefix_of(inner):
    m = re.match(rb"<(\w+:)", inner)
    return m.group(1) if m else b""


_V_RE_CACHE = {}


def _inner_value(inner, p):
    """The text of <v> in a cell's inner XML (formula cells: <f>..</f><v>..</v>); None if absent."""
    rx = _V_RE_CACHE.get(p)
    if rx is None:
        e = re.escape(p)
        rx = _V_RE_CACHE[p] = re.compile(rb"<" + e + rb"v(?:\s[^>]*)?>(.*?)</" + e + rb"v>", re.S)
    m = rx.search(inner)
    return m.group(1) if m else None


def _cell_meta(attrs, kinds):
    t = _A_T.search(attrs)
    typ = t.group(1).decode("ascii") if t else "n"
    s = _A_S.search(attrs)
    dkind = kinds.get(int(s.group(1))) if (s and typ == "n") else None
    return typ, dkind


def _put(values, ci, value):
    n = len(values)
    if ci < n:
        values[ci] = value
    else:
        if ci > n:
            values.extend([None] * (ci - n))
        values.append(value)


_MERGE_RE = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="([^"]+)"')
_REF_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")


def _merge_refs(chunk):
    out = []
    for ref in _MERGE_RE.findall(chunk):
        box = _range(ref.decode("ascii", "replace"))
        if box:
            out.append(box)
    return out


def _range(ref):
    parts = ref.split(":")
    a = _REF_RE.match(parts[0])
    b = _REF_RE.match(parts[-1])
    if not a or not b:
        return None
    r1, c1 = int(a.group(2)), _col_index(a.group(1)) + 1
    r2, c2 = int(b.group(2)), _col_index(b.group(1)) + 1
    return (min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2))


def _dedupe(boxes):
    seen, out = set(), []
    for box in boxes:
        if box not in seen:
            seen.add(box)
            out.append(box)
    return out


def _dim_from_ref(ref):
    """'A1:J1000001' -> (1000001, 10); 'B2' -> (2, 2); a lone 'A1' -> None: some writers put
    that whatever the size, so it says nothing."""
    if ref.strip().upper() in ("", "A1", "$A$1"):
        return None
    box = _range(ref)
    if not box:
        return None
    return (box[2], box[3])


def _iso_value(text):
    """t="d" cells (strict OOXML) hold ISO 8601 text."""
    text = text.strip()
    try:
        if "T" in text or " " in text:
            moment = datetime.datetime.fromisoformat(text.replace("Z", "").replace("T", " "))
            return moment
        if ":" in text:
            return datetime.time.fromisoformat(text)
        return datetime.date.fromisoformat(text)
    except ValueError:
        return text
