"""Reader for real Excel ``.xls`` files through xlrd: Excel 97-2003 (OLE/BIFF8), Excel 5/95
(BIFF5) and the Excel 2.x-4.0 worksheets (BIFF2-4, no OLE container), damaged ones included
(``xls_repair``: broken shared-string counts, comments and containers, missing code pages).

xlrd is opened with ``formatting_info=True`` (it is what gives merged cells and each cell's
number format) and ``on_demand=True`` (sheets are loaded one at a time). Some files make xlrd
refuse formatting info; those are reopened without it (no merges then, dates still recognised).

Values follow the same rules as the xlsx reader (``_base``): date cells use this package's
serial conversion with the workbook's ``datemode`` and the cell's format decides date, date+time
or time, so an xls and its xlsx copy read the same. An .xls has at most 65,536 rows, so a sheet
is loaded whole; ``rows()`` still yields lazily.
"""
import struct

from ._base import (BaseBook, FormatError, SheetInfo, classify_format, number, serial_to_value, trim,
                    DATE, DATETIME, TIME)

from . import xls_repair as repair
import pydeps_boot  # noqa: E402 - importable once _base has put the project root on sys.path

from ...crypt.office import NEED_PASSWORD as ENCRYPTED  # noqa: E402  (xlrd met a FILEPASS the sniffing missed)
from ...errors import what_broke  # noqa: E402


def _xlrd():
    try:
        return pydeps_boot.ensure("xlrd")
    except pydeps_boot.DependencyError as exc:
        raise FormatError(str(exc))




class _Quiet(object):
    """A write-only sink for xlrd's log (``logfile=``): warnings about odd files are not answers."""

    def write(self, _text):
        return 0

    def flush(self):
        pass


_QUIET = _Quiet()

class XlsBook(BaseBook):
    kind = "xls"

    def __init__(self, path):
        BaseBook.__init__(self, path)
        xlrd = self._xlrd = _xlrd()
        repair.install(xlrd)
        self._book = None
        self.formatting = True
        self._source = {"filename": path}
        self._options = {}
        repair.reset()
        self._book = self._open()
        better = repair.better_encoding(self._book)
        if better:
            self._options["encoding_override"] = better[0]
            self._book.release_resources()
            self._book = self._open()
            self.warn(better[1])
        self._report_repairs()
        book = self._book
        visibility = getattr(book, "_sheet_visibility", None) or []
        for i, name in enumerate(book.sheet_names()):
            hidden = bool(visibility[i]) if i < len(visibility) else False
            self.sheets.append(SheetInfo(name, hidden, i))
        self.date1904 = bool(book.datemode)
        self._loaded = {}
        self._kinds = {}          # xf index -> date kind (None for plain numbers)

    def _open(self):
        """The xlrd book, recovering what a damaged container still holds (``xls_repair``)."""
        kw = dict(self._options, on_demand=True, logfile=_QUIET)
        try:
            # xlrd prints its warnings to stdout by default, which would break the one-JSON answer
            return self._try(kw)
        except FormatError:
            raise
        except Exception as exc:  # noqa: BLE001 - xlrd raises bare errors of many kinds
            first = exc
        if repair.is_container_damage(first):
            for extra, note in ((dict(ignore_workbook_corruption=True), "忽略目录损坏"),
                                ("stream", "直接读取工作簿数据流"), ("sectors", "按扇区链读取工作簿数据流")):
                try:
                    if extra in ("stream", "sectors"):
                        data = (repair.workbook_stream if extra == "stream" else repair.regular_sector_stream)(self.path)
                        if data is None:
                            continue
                        self._source = {"file_contents": data}
                        book = self._try(kw)
                    else:
                        book = self._try(dict(kw, **extra))
                        self._options.update(extra)
                except Exception:  # noqa: BLE001 - a damaged stream may even look encrypted: not believed
                    self._source = {"filename": self.path}
                    continue
                self.warn("这个 xls 文件的 OLE 容器有损坏（%s），已%s读出内容；请核对结果，最好用 Excel/WPS 打开后"
                          "另存一份" % (repair.container_damage_text(first), note))
                return book
        detail = repair.container_damage_text(first) if repair.is_container_damage(first) else what_broke(first)
        raise FormatError("xls 文件已损坏或格式不受支持（%s）。请用 Excel/WPS 打开后另存为 .xlsx 再试" % detail)

    def _try(self, kw):
        """open_workbook with formatting info, else without it (some files make xlrd refuse it)."""
        xlrd = self._xlrd
        if "filename" in self._source:
            args, kw = (self._source["filename"],), kw
        else:
            args, kw = (), dict(kw, file_contents=self._source["file_contents"])
        try:
            return xlrd.open_workbook(*args, formatting_info=self.formatting, **kw)
        except Exception as exc:  # noqa: BLE001
            if _encrypted(exc):
                raise FormatError(ENCRYPTED)
            if not self.formatting:
                raise
        try:
            book = xlrd.open_workbook(*args, formatting_info=False, **kw)
        except Exception as exc:  # noqa: BLE001
            if _encrypted(exc):
                raise FormatError(ENCRYPTED)
            raise
        self.formatting = False
        return book

    def _report_repairs(self):
        for note in repair.warnings_for(repair.events()):
            if note not in self._warnings:
                self.warn(note)

    def _load(self, index):
        """One sheet; a cell pointing past the shared-string table (its count field too small)
        makes the book be reopened with the strings counted."""
        try:
            return self._book.sheet_by_index(index)
        except IndexError:
            if getattr(self, "_recounted", False):
                raise
        self._recounted = True
        repair.reset(recount=True)
        self._book.release_resources()
        self._book = self._open()
        self._loaded = {}
        try:
            return self._book.sheet_by_index(index)
        finally:
            self._report_repairs()
            repair.reset()

    def _sheet(self, name):
        info = self.sheet(name)
        sh = self._loaded.get(info.index)
        if sh is None:
            try:
                try:
                    sh = self._load(info.index)
                except (AssertionError, struct.error) as exc:
                    sh = self._without_rich_strings(info.index, exc)
                except Exception as exc:  # noqa: BLE001 - xlrd's XLRDError; anything else is raised again
                    if "expected bof" not in str(exc).lower():
                        raise
                    sh = self._with_sheet_offsets_fixed(info.index, exc)
                self._report_repairs()
            except Exception as exc:  # noqa: BLE001
                if _encrypted(exc):
                    raise FormatError(ENCRYPTED)
                raise FormatError("xls 文件的工作表「%s」已损坏，无法读取（%s）。请用 Excel/WPS 打开后另存为 .xlsx 再试" % (
                    info.name, what_broke(exc)))
            for index in list(self._loaded):      # keep one sheet in memory at a time
                try:
                    self._book.unload_sheet(index)
                except Exception:  # noqa: BLE001 - only frees memory
                    pass
            self._loaded = {info.index: sh}
        return sh

    def _without_rich_strings(self, index, exc):
        """Reload with every RSTRING cell read as a plain LABEL. Far-East Excel 95 (BIFF5) writes
        phonetic (furigana) data after a rich string's formatting runs, which xlrd's parser
        asserts against (or, with fewer bytes than the run count says, fails to unpack: SheetJS's
        biff5/phonetic_text.xls), so the whole sheet was refused although Excel, LibreOffice and
        calamine read it. The record id is rewritten in place (same length, offsets intact);
        LABEL reads the text and ignores what follows it. Only the text's formatting runs are
        lost. ``exc`` is raised again when there is no rich string to blame."""
        data = repair.workbook_stream(self.path) if "filename" in self._source else self._source["file_contents"]
        if data is None:
            raise exc
        fixed, count = repair.rich_strings_as_labels(data)
        if not count:
            raise exc
        self._source = {"file_contents": fixed}
        self._book.release_resources()
        self._book = self._open()
        self._loaded = {}
        sheet = self._load(index)
        self.warn("这个 xls 里有 %d 个带注音/格式的文字单元格（远东版 Excel 95 写的），已按普通文字读出，"
                  "文字不受影响" % count)
        return sheet

    def _with_sheet_offsets_fixed(self, index, exc):
        """Reload with the sheets' recorded positions moved onto their BOF records
        (``repair.sheet_offsets_fixed``): a writer that records a sheet's position just past its
        BOF made xlrd refuse the sheet that Excel, LibreOffice and calamine read. ``exc`` is
        raised again when there is nothing to move."""
        data = repair.workbook_stream(self.path) if "filename" in self._source else self._source["file_contents"]
        fixed, count = repair.sheet_offsets_fixed(data) if data is not None else (None, 0)
        if not count:
            raise exc
        self._source = {"file_contents": fixed}
        self._book.release_resources()
        self._book = self._open()
        self._loaded = {}
        sheet = self._load(index)
        self.warn("这个 xls 文件记录的工作表位置有偏差（%d 个工作表），已按实际位置读出；请核对结果" % count)
        return sheet

    def _date_kind(self, sh, r, c, value):
        """DATE / DATETIME / TIME for a date cell, from its format (or its value without one)."""
        if self.formatting:
            try:
                xf_index = sh.cell_xf_index(r, c)
            except Exception:  # noqa: BLE001
                xf_index = None
            if xf_index is not None:
                if xf_index not in self._kinds:
                    kind = None
                    try:
                        xf = self._book.xf_list[xf_index]
                        fmt = self._book.format_map.get(xf.format_key)
                        kind = classify_format(fmt.format_str) if fmt is not None else None
                    except (IndexError, AttributeError):
                        kind = None
                    self._kinds[xf_index] = kind
                kind = self._kinds[xf_index]
                if kind:
                    return kind
        # xlrd said "date" but the format is unknown: decide by the value itself
        if 0 <= value < 1:
            return TIME
        return DATE if float(value).is_integer() else DATETIME

    def rows(self, name=None, max_rows=None):
        sh = self._sheet(name)
        return self._rows(sh, max_rows)

    def _rows(self, sh, max_rows):
        xlrd = self._xlrd
        T_EMPTY, T_TEXT, T_NUMBER, T_DATE = xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_TEXT, xlrd.XL_CELL_NUMBER, xlrd.XL_CELL_DATE
        T_BOOL, T_ERROR, T_BLANK = xlrd.XL_CELL_BOOLEAN, xlrd.XL_CELL_ERROR, xlrd.XL_CELL_BLANK
        errors = xlrd.error_text_from_code
        done = 0
        for r in range(sh.nrows):
            types = sh.row_types(r)
            raw = sh.row_values(r)
            values = []
            for c, (t, v) in enumerate(zip(types, raw)):
                if t == T_EMPTY or t == T_BLANK:
                    value = None
                elif t == T_TEXT:
                    value = v if v != "" else None
                elif t == T_NUMBER:
                    value = number(v)
                elif t == T_DATE:
                    value = serial_to_value(number(v), self._date_kind(sh, r, c, v), self.date1904)
                elif t == T_BOOL:
                    value = bool(v)
                elif t == T_ERROR:
                    value = errors.get(v, "#ERR%s" % v)
                else:
                    value = v
                values.append(value)
            trim(values)
            if values:
                yield r + 1, values
                done += 1
                if max_rows is not None and done >= max_rows:
                    return

    def merges(self, name=None):
        sh = self._sheet(name)
        return [(rlo + 1, clo + 1, rhi, chi) for rlo, rhi, clo, chi in (sh.merged_cells or [])]

    def dimensions(self, name=None):
        sh = self._sheet(name)
        return (sh.nrows, sh.ncols)

    def close(self):
        if self._book is not None:
            try:
                self._book.release_resources()
            except Exception:  # noqa: BLE001
                pass
            self._book = None
        self._loaded = {}


def _encrypted(exc):
    text = str(exc).lower()
    return "encrypt" in text or "filepass" in text or "password" in text
