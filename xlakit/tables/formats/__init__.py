"""Spreadsheet file formats: tell a file's real format by its content and read its cells.

Users call many things "a spreadsheet": real xlsx/xlsm, old binary xls, csv/tsv/txt in UTF-8 or
GBK, the HTML tables that business systems export under an ``.xls`` name, an xlsx renamed
``.xls``. The suffix is often a lie, so ``sniff(path)`` looks at the bytes:

- zip with an Excel workbook part -> "xlsx" (any zip: .xlsx, .xlsm, a renamed .xls); with a
  binary ``xl/workbook.bin`` instead -> "xlsb" (Excel binary workbook, ``xlsb`` module);
  other zips (docx, odt, pptx, plain zip) and broken zips -> FormatError saying what it is;
- zip with an OpenDocument spreadsheet mimetype -> "ods" (LibreOffice/WPS ``.ods``);
- OLE compound file -> "xls" when it holds a ``Workbook``/``Book`` stream (this includes WPS
  ``.et`` files, which are BIFF inside OLE like xls and go to the same reader; sniff calls them
  "et" and the book then says ``kind == "et"``); an encrypted OOXML package
  (``EncryptionInfo``/``EncryptedPackage``) or a Word/PowerPoint file -> FormatError;
- XML whose root is a SpreadsheetML 2003 ``<Workbook>`` (the ``urn:schemas-microsoft-com:
  office:spreadsheet`` namespace in the first 64 KB) -> "spreadsheetml", whatever the suffix
  (bank and ERP exports call it ``.xls``); a single-file OpenDocument spreadsheet -> "fods";
- text starting with ``<`` that has a ``<table`` in its first 64 KB -> "html";
- other decodable text -> "csv"; PDF, empty files and binary garbage -> FormatError.

``open_book(path)`` returns a Book (see ``_base.BaseBook`` for the shared interface: ``kind``,
``sheets``, ``warnings``, ``encoding``, ``delimiter``, ``sheet()``, ``rows()``, ``merges()``,
``dimensions()``, ``close()``; it is a context manager). Each format lives in its own module:
``xlsx`` (fast streaming parser — ``xlsx_sheet`` per chunk, ``xlsx_parallel`` for a second core —
openpyxl fallback), ``xls`` (xlrd), ``delimited`` (``str.split`` for quote-free text, the csv module otherwise),
``html_table`` (html.parser), ``spreadsheetml`` (SpreadsheetML 2003, streamed ElementTree),
``ods`` + ``ods_text`` (OpenDocument: a text parser with a tree-parser fallback, repeats expanded under a cap).
Cell values are None/str/int/float/bool/date/datetime/time with the same rules everywhere
(``_base``).
"""
import codecs
import re

from ... import sniff as sniffer
from ... import text as xtext
from ...crypt import office as crypt
from ...errors import os_error
from ._base import FormatError, SheetInfo, BaseBook, NOCACHE_WARNING, classify_format, serial_to_value

__all__ = ["FormatError", "SheetInfo", "BaseBook", "sniff", "open_book", "NOCACHE_WARNING", "classify_format",
           "serial_to_value"]

HEAD = sniffer.HEAD
ENCRYPTED = crypt.NEED_PASSWORD
DAMAGED = "文件已损坏或不完整（%s）。请确认文件已完整下载/复制；能用 Excel/WPS 打开的话，另存一份再试"
NOT_TABLE = ("不是表格文件（%s）。支持 xlsx/xlsm/xlsb/xls/et/ods/csv/tsv/txt，以及系统导出的网页格式和"
             " Excel 2003 XML 格式的 .xls")
# What the toolbox's document reader takes instead; the runtime names it only if it exists.
DOCUMENT_TOOL = "read_document"


def sniff(path):
    """"xlsx" | "xlsb" | "xls" | "et" | "ods" | "fods" | "spreadsheetml" | "csv" | "html": the tables'
    policy on top of ``xlakit.sniff`` (which says what the bytes are); FormatError, in Chinese
    and naming the tool to use where one fits, for everything a table reader does not take."""
    try:
        kind = sniffer.sniff(path)
    except FileNotFoundError:
        raise FormatError("找不到文件：%s。请确认路径和文件名" % path)
    except IsADirectoryError:
        raise FormatError("%s 是文件夹，不是表格文件" % path)
    except OSError as exc:
        raise os_error(exc, path, "读取")
    k = kind.kind
    if k == "unknown":
        k = _text_after_all(path, kind)
    if k == "empty":
        if kind.size == 0:
            raise FormatError("文件是空的（0 字节），没有任何数据。请确认选对了文件，或文件是否已完整保存")
        raise FormatError("文件是空的：只有编码标记或空白，没有任何数据。请确认选对了文件，或文件是否已完整保存")
    if k in ("xlsx", "xlsm"):
        if kind.damaged:
            raise FormatError(DAMAGED % "压缩结构不完整，可能只下载/复制了一部分")
        return "xlsx"
    if k == "xlsb":
        if kind.damaged:
            raise FormatError(DAMAGED % "压缩结构不完整，可能只下载/复制了一部分")
        return "xlsb"
    if kind.encrypted and k == "ole":
        raise FormatError(ENCRYPTED)
    if k in ("xls", "et"):
        return k                # Excel 2.x-4.0 worksheets (no OLE) too: xlrd reads BIFF2-4
    if k == "ods":
        if kind.damaged:
            raise FormatError(DAMAGED % "压缩结构不完整，可能只下载/复制了一部分")
        return "ods"
    if k in ("html", "xml", "text"):
        start = _markup_start(path, kind)
        if _SPREADSHEET_ML(start):
            return "spreadsheetml"
        if k == "xml" and _FLAT_ODS(start):
            return "fods"
        if start.startswith("<") and "<table" in start:
            return "html"
        if k == "text" or (k == "xml" and kind.detail == sniffer.LABELS["xml"]
                           and not start.startswith(("<?xml", "<!doctype"))):
            return "csv"        # text that merely starts with "<" (a cell such as <100)
    raise FormatError(*_refusal(kind))


def _text_after_all(path, kind):
    """"empty" / "text" / "unknown" for bytes ``xlakit.sniff`` could not name: a lone BOM, or a
    long UTF-8 export with a damaged spot (the tables decode it as xlakit.text does, the bad
    bytes shown as U+FFFD with a warning, rather than refuse the whole file), or with a few stray
    NUL bytes (dropped by the csv reader, with a warning)."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD)
    if kind.size <= len(head) and not head.lstrip(b"\xef\xbb\xbf\xff\xfe\r\n\t \x00").strip():
        return "empty"
    codec = xtext.detect_encoding(head)
    text = codecs.getincrementaldecoder(codec)("replace").decode(head, final=kind.size <= len(head))
    sample = text[:16384]
    if xtext.stray_nuls(sample, codec):
        sample = sample.replace("\x00", "")     # a few stray NULs in a text export: noise
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\r\n\f\v\x1a") or ch == "\ufffd")
    if sample and "\x00" not in sample and bad <= max(2, len(sample) // 100):
        return "text"
    return "unknown"


_WORKBOOK_RE = re.compile(r"<(?:[a-z_][\w.-]*:)?workbook[\s>/]")


def _SPREADSHEET_ML(low):
    """SpreadsheetML 2003: its namespace and a ``Workbook`` element (``<Workbook`` or a prefixed
    ``<ss:Workbook``) near the start; an Excel "web page" (HTML) names the excel namespace, not
    this one."""
    if "urn:schemas-microsoft-com:office:spreadsheet" not in low:
        return False
    m = _WORKBOOK_RE.search(low)
    return m is not None and not ("<html" in low[:m.start()] or "<table" in low[:m.start()])


def _FLAT_ODS(low):
    return "<office:document" in low and "application/vnd.oasis.opendocument.spreadsheet" in low


def _markup_start(path, kind):
    """The first 64 KB as lower-case text from the first non-blank character."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD)
    try:
        text = head.decode(kind.encoding or "utf-8", "replace")
    except LookupError:
        text = head.decode("utf-8", "replace")
    return text.lstrip("\ufeff \t\r\n").lower()


def _refusal(kind):
    """(message, tool) for a file that is not a table."""
    k, detail = kind.kind, kind.detail
    if kind.damaged and k == "zip":
        return DAMAGED % "压缩结构不完整，可能只下载/复制了一部分", None
    if k in ("docx", "doc", "wps", "odt", "pptx", "ppt", "odp", "rtf", "pdf", "wordml", "epub"):
        return "这是%s，不是表格" % detail, DOCUMENT_TOOL
    if k == "xml":
        return "这是 XML 文件，里面没有表格（<table>），无法按表格读取", DOCUMENT_TOOL
    if k in ("html", "mhtml"):
        return "这是网页文件，里面没有表格（<table>），无法按表格读取", DOCUMENT_TOOL
    if k == "zip":
        if "iWork" in detail:
            return "这是 Apple Numbers 等 iWork 文档，请在 Numbers 里导出为 Excel（.xlsx）再试", None
        if kind.encrypted:
            return NOT_TABLE % "这是加密的 zip 压缩包", None
        return NOT_TABLE % "这是一个 zip 压缩包，里面没有 Excel 工作簿；如是压缩的表格，请先解压", None
    if k == "ole":
        return NOT_TABLE % ("这是%s，但里面没有 Excel 工作簿" % detail), None
    if k == "unknown":
        return NOT_TABLE % "内容是无法识别的二进制数据，可能已损坏或是别的程序的文件", None
    return NOT_TABLE % ("这是%s" % detail), None


def open_book(path, password=None, _plain=False, **options):
    """Open ``path`` with the reader its content calls for. Raises FormatError.

    ``password``: the open password of an encrypted workbook (``xlakit.crypt.office``: OOXML, legacy xls
    RC4/CryptoAPI; Excel's default "VelvetSweatshop" needs none). The book then reads a private
    decrypted copy, has ``cacheable`` False (nothing of it goes to the page cache) and removes the
    copy on ``close()``.
    ``options`` go to the reader (``reader="openpyxl"`` for xlsx, ``reader="tree"`` for ods; used
    by tests)."""
    try:
        raw = sniffer.sniff(path)
    except OSError:
        raw = None                      # sniff() below says what is wrong with the path
    if raw is not None and not _plain and crypt.office_encrypted(path, raw):
        plain = crypt.decrypt(path, password)
        try:
            book = open_book(plain.path, _plain=True, **options)
        except BaseException:
            plain.close()
            raise
        book.cacheable = False
        book.decrypted = True
        closer = book.close

        def close():
            try:
                closer()
            finally:
                plain.close()
        book.close = close
        if plain.default_password:
            book.warn("文件用 Excel 的默认密码加密（作者设了\u201c建议只读\u201d），已直接打开")
        return book
    kind = sniff(path)
    if kind == "xlsx":
        from .xlsx import XlsxBook
        return XlsxBook(path, **options)
    if kind == "xlsb":
        from .xlsb import XlsbBook
        return XlsbBook(path)
    if kind in ("xls", "et"):
        from .xls import XlsBook
        book = XlsBook(path)
        book.kind = kind            # a WPS .et says so in read_spreadsheet's "format"
        return book
    if kind in ("ods", "fods"):
        from .ods import OdsBook
        return OdsBook(path, flat=kind == "fods", reader=options.get("reader"))
    if kind == "spreadsheetml":
        from .spreadsheetml import SpreadsheetMLBook
        return SpreadsheetMLBook(path)
    if kind == "html":
        from .html_table import HtmlBook
        return HtmlBook(path)
    from .delimited import DelimitedBook
    return DelimitedBook(path)
