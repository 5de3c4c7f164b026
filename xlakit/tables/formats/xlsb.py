"""Reader for Excel binary workbooks (``.xlsb``): BIFF12 records inside an OPC zip, standard library only.

Why our own parser: .xlsb is what Excel users pick for big sheets (Chinese finance and ERP exports
use it); the format is a plain stream of records, so a small parser reads it at about the speed of
the fast xlsx path without a third-party wheel. The package is the xlsx one with ``.bin`` parts:
``xl/workbook.bin`` (sheet names, visibility, the 1904 flag), ``xl/sharedStrings.bin``,
``xl/styles.bin`` (number formats -> which cells are dates) and ``xl/worksheets/sheetN.bin``;
the relationship parts (``.rels``) are still XML and go through ``xlakit.opc`` like the zip-bomb
check.

A record is ``type`` (1-2 bytes, 7 bits each, high bit = more), ``size`` (1-4 bytes, likewise),
then ``size`` bytes. Cell records carry ``col`` (u32) and a style index (low 24 bits of a u32);
the "short" cells (types 12-18, written by SheetJS and newer Excel) leave the column out: it is
the previous cell's plus one. Numbers are IEEE doubles or RK numbers (30 bits, integer or the
high half of a double, optionally x100). Values follow the same rules as every other reader
(``_base``): integral floats become int, a style whose format shows a date gives a date/datetime/
time, error cells read as Excel shows them (``#DIV/0!``), empty strings as empty. Formula records
always carry their cached result, so there is nothing to warn about there.

Sheets stream: the sheet part is decompressed in CHUNK pieces and records are cut across piece
boundaries; merges (``BrtMergeCell``, after the cell data) are remembered by a rows pass, or found
by a records-only pass when asked first.
"""
import os
import struct
import zipfile
import zlib

from ... import opc
from ._base import BaseBook, FormatError, SheetInfo, builtin_kind, classify_format, number, serial_to_value, trim
from ...errors import what_broke

CHUNK = 1 << 20

# record types
ROW_HDR, BLANK, RK, ERROR, BOOL, REAL, ST, ISST = 0, 1, 2, 3, 4, 5, 6, 7
FMLA_STRING, FMLA_NUM, FMLA_BOOL, FMLA_ERROR = 8, 9, 10, 11
SHORT_BLANK, SHORT_RK, SHORT_ERROR, SHORT_BOOL, SHORT_REAL, SHORT_ST, SHORT_ISST = 12, 13, 14, 15, 16, 17, 18
SST_ITEM, FMT, XF = 19, 44, 47
WB_PROP, BUNDLE_SH = 153, 156
BEGIN_SHEET_DATA, END_SHEET_DATA, WS_DIM, MERGE_CELL = 145, 146, 148, 176
BEGIN_CELL_XFS, END_CELL_XFS = 617, 618

ERRORS = {0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!",
          0x2A: "#N/A", 0x2B: "#GETTING_DATA"}

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_CELL = struct.Struct("<II")          # col, style (low 24 bits)
_F64 = struct.Struct("<d")
_RK_HIGH = struct.Struct("<Q")
_U16 = struct.Struct("<H")
_RECT = struct.Struct("<IIII")        # first row, last row, first col, last col

DAMAGED = "xlsb 文件已损坏或不完整（%s）。请确认文件已完整下载/复制，或用 Excel/WPS 打开后另存为 .xlsx 再试"


class _Broken(Exception):
    """A record that does not fit the format (cut short, an impossible length)."""


def records(data, pos=0, end=None):
    """``(type, start, stop)`` of each whole record in ``data[pos:end]``; stops at a record that
    is cut off by ``end`` and returns (via StopIteration's value) where that one starts."""
    end = len(data) if end is None else end
    while pos < end:
        start = pos
        b = data[pos]
        pos += 1
        rtype = b & 0x7F
        if b & 0x80:
            if pos >= end:
                return start
            b = data[pos]
            pos += 1
            rtype |= (b & 0x7F) << 7
        size = shift = 0
        for _ in range(4):
            if pos >= end:
                return start
            b = data[pos]
            pos += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if pos + size > end:
            return start
        yield rtype, pos, pos + size
        pos += size
    return pos


def all_records(data):
    """Every record of a small part read whole; a cut-off tail is damage."""
    gen = records(data)
    while True:
        try:
            yield next(gen)
        except StopIteration as stop:
            if stop.value is not None and stop.value < len(data):
                raise _Broken("记录在第 %d 字节处被截断" % stop.value)
            return


def wide_string(data, pos, stop):
    """An XLWideString at ``pos`` -> (text, position after it)."""
    if pos + 4 > stop:
        raise _Broken("字符串长度缺失")
    n = _U32.unpack_from(data, pos)[0]
    pos += 4
    if n == 0xFFFFFFFF:                 # XLNullableWideString: null
        return None, pos
    end = pos + 2 * n
    if end > stop:
        raise _Broken("字符串超出记录")
    return data[pos:end].decode("utf-16-le", "surrogatepass"), end


def rk_value(raw):
    if raw & 2:
        value = _I32.unpack(_U32.pack(raw))[0] >> 2
    else:
        value = _F64.unpack(_RK_HIGH.pack((raw & 0xFFFFFFFC) << 32))[0]
    if raw & 1:
        value = value / 100.0
    return value


class XlsbBook(BaseBook):
    kind = "xlsb"

    def __init__(self, path):
        BaseBook.__init__(self, path)
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise FormatError(DAMAGED % ("压缩结构无法打开：%s" % what_broke(exc)))
        self._sst = None
        self._merge_cache = {}
        self._dim_cache = {}
        try:
            opc.check_package(self._zip, os.path.basename(path))
            self._names = {n.replace("\\", "/").lower().lstrip("/"): n for n in self._zip.namelist()}
            self._load_workbook()
        except FormatError:
            self.close()
            raise
        except (_Broken, KeyError, ValueError, struct.error, zipfile.BadZipFile, EOFError, OSError,
                UnicodeDecodeError) as exc:
            self.close()
            raise FormatError(DAMAGED % ("工作簿结构无法解析：%s" % what_broke(exc)))

    # -- parts ----------------------------------------------------------------------------------

    def _member(self, part):
        return self._names.get((part or "").lstrip("/").lower())

    def _read(self, part):
        name = self._member(part)
        if name is None:
            return None
        try:
            return opc.read_part(self._zip, name, label=os.path.basename(self.path))
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, zlib.error) as exc:
            raise FormatError(DAMAGED % ("%s 无法解压：%s" % (name, what_broke(exc))))

    def _load_workbook(self):
        wb_part = "xl/workbook.bin"
        for _rid, (typ, target) in opc.parse_rels(self._read("_rels/.rels"), "").items():
            if typ == "officeDocument" and self._member(target):
                wb_part = target
        data = self._read(wb_part)
        if data is None:
            raise FormatError(DAMAGED % "缺少 xl/workbook.bin")
        rels = opc.parse_rels(self._read(opc.rels_part(wb_part)), wb_part)
        self.date1904 = False
        self._sheet_parts = []
        for rtype, pos, stop in all_records(data):
            if rtype == WB_PROP and stop - pos >= 4:
                self.date1904 = bool(_U32.unpack_from(data, pos)[0] & 1)
            elif rtype == BUNDLE_SH:
                state = _U32.unpack_from(data, pos)[0]
                rel_id, p = wide_string(data, pos + 8, stop)
                name, _p = wide_string(data, p, stop)
                typ, target = rels.get(rel_id or "", ("", None))
                self.sheets.append(SheetInfo(name or "Sheet%d" % (len(self.sheets) + 1), state != 0, len(self.sheets)))
                self._sheet_parts.append(target if typ in ("worksheet", "") else None)
        sst_part = styles_part = None
        for _rid, (typ, target) in rels.items():
            if typ == "sharedStrings":
                sst_part = target
            elif typ == "styles":
                styles_part = target
        self._sst_part = sst_part or "xl/sharedStrings.bin"
        self._kinds = self._styles(self._read(styles_part or "xl/styles.bin"))

    def _styles(self, data):
        """Date kind (or None) of each cell style, by its number format."""
        if not data:
            return []
        formats = {}
        kinds = []
        in_xfs = False
        for rtype, pos, stop in all_records(data):
            if rtype == FMT:
                code, _p = wide_string(data, pos + 2, stop)
                formats[_U16.unpack_from(data, pos)[0]] = code or ""
            elif rtype == BEGIN_CELL_XFS:
                in_xfs = True
            elif rtype == END_CELL_XFS:
                in_xfs = False
            elif rtype == XF and in_xfs:
                fmt_id = _U16.unpack_from(data, pos + 2)[0]
                code = formats.get(fmt_id)
                kinds.append(classify_format(code) if code is not None else builtin_kind(fmt_id))
        return kinds

    def shared_strings(self):
        if self._sst is None:
            data = self._read(self._sst_part)
            table = []
            if data:
                try:
                    for rtype, pos, stop in all_records(data):
                        if rtype == SST_ITEM:
                            table.append(wide_string(data, pos + 1, stop)[0] or "")
                except (_Broken, struct.error) as exc:
                    self.warn("共享字符串表有损坏（%s），只读出了前 %d 个字符串；引用其余字符串的单元格读作空值"
                              % (what_broke(exc), len(table)))
            self._sst = table
        return self._sst

    def _part(self, name):
        info = self.sheet(name)
        part = self._sheet_parts[info.index]
        member = self._member(part) if part else None
        if part and member is None:
            raise FormatError(DAMAGED % ("工作表「%s」的数据（%s）缺失" % (info.name, part)))
        return info, member

    def _stream(self, member):
        """(data, record type, start, stop) for every record of a sheet part, streamed."""
        try:
            stream = self._zip.open(member)
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
            raise FormatError(DAMAGED % ("%s 无法解压：%s" % (member, what_broke(exc))))
        rest = b""
        with stream:
            while True:
                try:
                    block = stream.read(CHUNK)
                except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
                    raise FormatError(DAMAGED % ("%s 解压出错：%s" % (member, what_broke(exc))))
                if not block:
                    break
                data = rest + block if rest else block
                gen = records(data)
                while True:
                    try:
                        rtype, pos, stop = next(gen)
                    except StopIteration as done:
                        cut = done.value if done.value is not None else len(data)
                        break
                    yield data, rtype, pos, stop
                rest = data[cut:]
        if rest:
            self.warn("工作表数据在结尾处被截断（文件可能不完整），已读出截断前的内容")

    # -- rows -----------------------------------------------------------------------------------

    def rows(self, name=None, max_rows=None):
        info, member = self._part(name)
        if member is None:
            return iter(())
        return self._rows(info, member, max_rows)

    def _rows(self, info, member, max_rows):
        kinds = self._kinds
        nkinds = len(kinds)
        date1904 = self.date1904
        sst = None
        merges = []
        values = []
        rownum = 0
        col = -1
        done = 0
        unpack_cell = _CELL.unpack_from
        unpack_f64 = _F64.unpack_from
        unpack_u32 = _U32.unpack_from
        in_data = False
        try:
            for data, rtype, pos, stop in self._stream(member):
                if rtype > 18:
                    if rtype == MERGE_CELL:
                        r0, r1, c0, c1 = _RECT.unpack_from(data, pos)
                        merges.append((r0 + 1, c0 + 1, r1 + 1, c1 + 1))
                    elif rtype == BEGIN_SHEET_DATA:
                        in_data = True
                    elif rtype == END_SHEET_DATA:
                        in_data = False
                    elif rtype == WS_DIM and info.index not in self._dim_cache:
                        r0, r1, c0, c1 = _RECT.unpack_from(data, pos)
                        self._dim_cache[info.index] = (r1 + 1, c1 + 1)
                    continue
                if rtype == ROW_HDR:
                    if not in_data:
                        continue
                    if values:
                        trim(values)
                        if values:
                            yield rownum, values
                            done += 1
                            if max_rows is not None and done >= max_rows:
                                return
                    values = []
                    rownum = unpack_u32(data, pos)[0] + 1
                    col = -1
                    continue
                if rtype < SHORT_BLANK:
                    col, style = unpack_cell(data, pos)
                    style &= 0xFFFFFF
                    vpos = pos + 8
                else:
                    col += 1
                    style = unpack_u32(data, pos)[0] & 0xFFFFFF
                    vpos = pos + 4
                    rtype -= 11             # short types map onto the full ones: 13 -> 2 (RK)...
                if rtype == BLANK:
                    continue
                if rtype == REAL or rtype == FMLA_NUM:
                    value = number(unpack_f64(data, vpos)[0])
                elif rtype == RK:
                    value = number(rk_value(unpack_u32(data, vpos)[0]))
                elif rtype == ISST:
                    if sst is None:
                        sst = self.shared_strings()
                    i = unpack_u32(data, vpos)[0]
                    value = sst[i] if i < len(sst) else None
                    if not value:
                        continue
                    _put(values, col, value)
                    continue
                elif rtype == ST or rtype == FMLA_STRING:
                    value = wide_string(data, vpos, stop)[0]
                    if not value:
                        continue
                    _put(values, col, value)
                    continue
                elif rtype == BOOL or rtype == FMLA_BOOL:
                    _put(values, col, bool(data[vpos]))
                    continue
                elif rtype == ERROR or rtype == FMLA_ERROR:
                    code = data[vpos]
                    _put(values, col, ERRORS.get(code, "#ERR%d" % code))
                    continue
                else:
                    continue
                if style and style < nkinds:
                    dkind = kinds[style]
                    if dkind is not None:
                        value = serial_to_value(value, dkind, date1904)
                _put(values, col, value)
        except (struct.error, IndexError, _Broken) as exc:
            self.warn("工作表「%s」第 %d 行附近的数据已损坏（%s），只读出了之前的内容" % (info.name, rownum, what_broke(exc)))
        if values:
            trim(values)
            if values:
                yield rownum, values
        self._merge_cache[info.index] = merges

    # -- merges / dimensions --------------------------------------------------------------------

    def merges(self, name=None):
        info, member = self._part(name)
        if member is None:
            return []
        if info.index not in self._merge_cache:
            found = []
            try:
                for data, rtype, pos, _stop in self._stream(member):
                    if rtype == MERGE_CELL:
                        r0, r1, c0, c1 = _RECT.unpack_from(data, pos)
                        found.append((r0 + 1, c0 + 1, r1 + 1, c1 + 1))
            except struct.error:
                pass
            self._merge_cache[info.index] = found
        return list(self._merge_cache[info.index])

    def dimensions(self, name=None):
        info, member = self._part(name)
        if member is None:
            return (0, 0)
        if info.index not in self._dim_cache:
            dims = None
            try:
                for data, rtype, pos, _stop in self._stream(member):
                    if rtype == WS_DIM:
                        r0, r1, c0, c1 = _RECT.unpack_from(data, pos)
                        dims = (r1 + 1, c1 + 1)
                        break
                    if rtype == BEGIN_SHEET_DATA:
                        break
            except struct.error:
                pass
            self._dim_cache[info.index] = dims
        return self._dim_cache[info.index]

    def close(self):
        z = getattr(self, "_zip", None)
        if z is not None:
            z.close()
            self._zip = None


def _put(values, ci, value):
    n = len(values)
    if ci == n:
        values.append(value)
    elif ci < n:
        values[ci] = value
    else:
        values.extend([None] * (ci - n))
        values.append(value)
