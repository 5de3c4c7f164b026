"""Spreadsheet file formats: tell a file's real format by its content and read its cells.

Users call many things "a spreadsheet": real xlsx/xlsm, old binary xls, csv/tsv/txt in UTF-8 or
GBK, the HTML tables that business systems export under an ``.xls`` name, an xlsx renamed
``.xls``. The suffix is often a lie, so ``sniff(path)`` looks at the bytes:

- zip with an Excel workbook part -> "xlsx" (any zip: .xlsx, .xlsm, a renamed .xls);
  other zips (docx, ods, pptx, plain zip) and broken zips -> FormatError saying what it is;
- OLE compound file -> "xls" when it holds a ``Workbook``/``Book`` stream; an encrypted OOXML
  package (``EncryptionInfo``/``EncryptedPackage``) or a Word/PowerPoint file -> FormatError;
- text starting with ``<`` that has a ``<table`` in its first 64 KB -> "html";
- other decodable text -> "csv"; PDF, empty files and binary garbage -> FormatError.

``open_book(path)`` returns a Book (see ``_base.BaseBook`` for the shared interface: ``kind``,
``sheets``, ``warnings``, ``encoding``, ``delimiter``, ``sheet()``, ``rows()``, ``merges()``,
``dimensions()``, ``close()``; it is a context manager). Each format lives in its own module:
``xlsx`` (fast streaming parser, openpyxl fallback), ``xls`` (xlrd), ``delimited`` (csv module),
``html_table`` (html.parser). Cell values are None/str/int/float/bool/date/datetime/time with
the same rules everywhere (``_base``).
"""
import codecs
import os
import zipfile

from ...runtime import tool_hint

from ._base import FormatError, SheetInfo, BaseBook, NOCACHE_WARNING, classify_format, serial_to_value

__all__ = ["FormatError", "SheetInfo", "BaseBook", "sniff", "open_book", "NOCACHE_WARNING", "classify_format",
           "serial_to_value"]

HEAD = 65536
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ENCRYPTED = "文件已加密（设置了打开密码），无法读取。请在 Excel/WPS 里去掉密码后另存一份再试"
DAMAGED = "文件已损坏或不完整（%s）。请确认文件已完整下载/复制；能用 Excel/WPS 打开的话，另存一份再试"
NOT_TABLE = "不是表格文件（%s）。支持 xlsx/xlsm/xls/csv/tsv/txt，以及系统导出的网页格式 .xls"


def sniff(path):
    """"xlsx" | "xls" | "csv" | "html", decided by content; FormatError otherwise."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
    except FileNotFoundError:
        raise FormatError("找不到文件：%s。请确认路径和文件名" % path)
    except IsADirectoryError:
        raise FormatError("%s 是文件夹，不是表格文件" % path)
    except OSError as exc:
        raise FormatError("无法读取文件 %s：%s。请确认文件没有被其他程序独占" % (path, exc.strerror or exc))
    if size == 0 or not head:
        raise FormatError("文件是空的（0 字节），没有任何数据。请确认选对了文件，或文件是否已完整保存")
    if size <= len(head) and not head.lstrip(b"\xef\xbb\xbf\xff\xfe\r\n\t \x00").strip():
        raise FormatError("文件是空的：只有编码标记或空白，没有任何数据。请确认选对了文件，或文件是否已完整保存")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06") or head.startswith(b"PK\x07\x08"):
        return _sniff_zip(path)
    if head.startswith(OLE_MAGIC):
        return _sniff_ole(path, head)
    if head.startswith(b"%PDF"):
        raise FormatError("这是 PDF 文件，不是表格。" + tool_hint("read_document", "请用 read_document 读取其中的文字和表格"))
    if head[:4] in (b"\x09\x04\x06\x00", b"\x09\x02\x06\x00", b"\x09\x00\x04\x00"):
        raise FormatError("这是 Excel 2.x–4.0 的老格式工作表，无法直接读取。请用 Excel/WPS 打开后另存为 .xlsx 再试")
    for magic, what in ((b"\x89PNG", "PNG 图片"), (b"\xff\xd8\xff", "JPEG 图片"), (b"GIF8", "GIF 图片"),
                        (b"Rar!", "RAR 压缩包"), (b"7z\xbc\xaf", "7z 压缩包"), (b"\x1f\x8b", "gzip 压缩包"),
                        (b"{\\rtf", "RTF 文档")):
        if head.startswith(magic):
            raise FormatError(NOT_TABLE % ("这是%s" % what))
    text = _text_of(head, size > len(head))
    if text is None:
        raise FormatError(NOT_TABLE % "内容是无法识别的二进制数据，可能已损坏或是别的程序的文件")
    start = text.lstrip("\ufeff \t\r\n")
    if start.startswith("<"):
        low = start[:HEAD].lower()
        if "urn:schemas-microsoft-com:office:spreadsheet" in low and "<workbook" in low:
            raise FormatError("这是 Excel 2003 XML 表格（SpreadsheetML），暂不支持直接读取。"
                              "请用 Excel/WPS 打开后另存为 .xlsx 再试")
        if "<table" in low:
            return "html"
        if low.startswith("<?xml") or low.startswith("<!doctype") or low.startswith("<html"):
            raise FormatError("这是网页或 XML 文件，里面没有表格（<table>），无法按表格读取。" +
                              tool_hint("read_document", "如需读取文字，请用 read_document"))
    return "csv"


def _text_of(head, cut):
    """``head`` decoded as text, or None when it looks binary (NULs, control bytes)."""
    from .delimited import detect_encoding
    enc = detect_encoding(head)
    # A few undecodable bytes (a damaged line in a big export) still make a text file; many
    # make binary data.
    decoder = codecs.getincrementaldecoder(enc)("replace")
    text = decoder.decode(head, final=not cut)
    if not text:
        return None
    sample = text[:16384]
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\r\n\f\v\x1a") or ch == "\ufffd")
    if "\x00" in sample or bad > max(2, len(sample) // 100):
        return None
    return text


def _sniff_zip(path):
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            lower = set(n.lower() for n in names)
            if "xl/workbook.xml" in lower or any(n.startswith("xl/workbook") and n.endswith(".xml") for n in lower):
                return "xlsx"
            if "xl/workbook.bin" in lower:
                raise FormatError("这是 Excel 二进制工作簿（.xlsb），暂不支持。请用 Excel/WPS 另存为 .xlsx 再试")
            mime = ""
            if "mimetype" in lower:
                try:
                    mime = zf.read("mimetype")[:200].decode("ascii", "replace").strip()
                except (KeyError, zipfile.BadZipFile, OSError, RuntimeError, EOFError):
                    mime = ""
    except zipfile.BadZipFile:
        raise FormatError(DAMAGED % "压缩结构不完整，可能只下载/复制了一部分")
    except (OSError, EOFError, ValueError) as exc:
        raise FormatError(DAMAGED % exc)
    if "spreadsheet" in mime and "opendocument" in mime:
        raise FormatError("这是 OpenDocument 表格（.ods），请用 WPS/Excel 另存为 .xlsx")
    if "opendocument.text" in mime:
        raise FormatError("这是 OpenDocument 文字文档（.odt），不是表格。" + tool_hint("read_document", "请用 read_document 读取"))
    if "word/document.xml" in lower:
        raise FormatError("这是 Word 文档（.docx），不是表格。" + tool_hint("read_document", "请用 read_document 读取"))
    if "ppt/presentation.xml" in lower:
        raise FormatError("这是 PowerPoint 演示文稿（.pptx），不是表格。" + tool_hint("read_document", "请用 read_document 读取"))
    if any(n.endswith(".numbers") or n.startswith("index/") for n in lower) and any(
            n.endswith(".iwa") for n in lower):
        raise FormatError("这是 Apple Numbers 表格，请在 Numbers 里导出为 Excel（.xlsx）再试")
    raise FormatError(NOT_TABLE % "这是一个 zip 压缩包，里面没有 Excel 工作簿；如是压缩的表格，请先解压")


def _ole_streams(path, head):
    """Lower-cased names of the streams/storages in an OLE compound file."""
    import pydeps_boot
    try:
        olefile = pydeps_boot.ensure("olefile")
    except pydeps_boot.DependencyError:
        olefile = None
    if olefile is not None:
        try:
            ole = olefile.OleFileIO(path)
        except Exception as exc:  # noqa: BLE001 - olefile raises plain IOError/OSError variants
            raise FormatError(DAMAGED % ("OLE 结构无法解析：%s" % exc))
        try:
            return set("/".join(parts).lower() for parts in ole.listdir(streams=True, storages=True))
        finally:
            ole.close()
    # Without olefile: directory entries store their names in UTF-16LE; look for the ones we need.
    with open(path, "rb") as fh:
        data = fh.read(64 * 1024 * 1024)
    found = set()
    for name in ("Workbook", "Book", "EncryptionInfo", "EncryptedPackage", "WordDocument",
                 "PowerPoint Document"):
        if name.encode("utf-16-le") + b"\x00\x00" in data:
            found.add(name.lower())
    return found


def _sniff_ole(path, head):
    names = _ole_streams(path, head)
    if "encryptioninfo" in names or "encryptedpackage" in names:
        raise FormatError(ENCRYPTED)
    if "workbook" in names or "book" in names:
        return "xls"
    if "worddocument" in names:
        raise FormatError("这是 Word 文档（.doc），不是表格。" + tool_hint("read_document", "请用 read_document 读取"))
    if "powerpoint document" in names:
        raise FormatError("这是 PowerPoint 演示文稿（.ppt），不是表格。" + tool_hint("read_document", "请用 read_document 读取"))
    raise FormatError(NOT_TABLE % "这是 Office 复合文件，但里面没有 Excel 工作簿")


def open_book(path, **options):
    """Open ``path`` with the reader its content calls for. Raises FormatError.

    ``options`` go to the reader (``reader="openpyxl"`` for xlsx, used by tests)."""
    kind = sniff(path)
    if kind == "xlsx":
        from .xlsx import XlsxBook
        return XlsxBook(path, **options)
    if kind == "xls":
        from .xls import XlsBook
        return XlsBook(path)
    if kind == "html":
        from .html_table import HtmlBook
        return HtmlBook(path)
    from .delimited import DelimitedBook
    return DelimitedBook(path)
