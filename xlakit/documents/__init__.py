"""Documents: every format a Chinese office hands over, turned into one markdown-like text.

One module per format (``docx``, ``odt``, ``doc`` (also .wps), ``pdf``, ``pptx``, ``ppt``, ``wordml`` (Word 2003 XML), ``epub``, ``rtf``, ``html``
(also MHTML), ``text`` (txt/md)). Each has ``NAME``, ``LABEL``, ``accepts(kind) -> (bool, reason)``
(cheap: it looks only at what ``xlakit.sniff`` found) and ``convert(path, kind, out, deadline)``
feeding a ``base.Builder``. ``read()`` sniffs the file, asks every converter in ``CONVERTERS``
order, runs the first that accepts, and when none does raises a FormatError that says what the
file is and why each converter refused. Adding a format is adding a module and one line here.

The format is decided by content, never by suffix: a ``.doc`` that is really RTF, Word HTML or a
docx is read as what it is.

Pictures go through OCR (``ocr``, ``image``): image files, PDF pages without a usable text layer,
and docx/pptx files whose only content is pictures. ``ocr`` is ``"auto"`` (only where there is
no text), ``"off"`` or ``"force"`` (also pages that have a text layer); a converter finds the mode
and the first page wanted on the builder (``out.ocr``, ``out.start_page``). OCR stops before the
deadline with ``Document.next_page`` set: the caller continues from there.
"""
import importlib

from ..crypt import office as crypt
from ..errors import FormatError, os_error
from ..sniff import sniff
from .base import Builder, Document, Enough
from . import ocr as _ocr
from . import ocr_pictures as _ocr_pictures

CONVERTERS = ("docx", "odt", "doc", "pdf", "pptx", "ppt", "wordml", "epub", "rtf", "html", "image", "text", "via_office")

# Kinds no converter takes, with the advice that fits them.
OTHER_TOOLS = {
    "xlsx": ("read_spreadsheet", "这是 Excel 表格，不是文档"), "xlsm": ("read_spreadsheet", "这是 Excel 表格，不是文档"),
    "xls": ("read_spreadsheet", "这是 Excel 表格，不是文档"), "et": ("read_spreadsheet", "这是 WPS 表格，不是文档"),
    "ods": ("read_spreadsheet", "这是 OpenDocument 表格，不是文档"),
    "png": ("", "这是图片"), "jpeg": ("", "这是图片"), "gif": ("", "这是图片"), "bmp": ("", "这是图片"),
    "tiff": ("", "这是图片"), "webp": ("", "这是图片"),
}


def page_start(path, page):
    """Where page ``page`` of a PDF starts in read_document's text (the whole document's
    offsets), when an earlier window noted it (``page_offsets``); None when not known."""
    if not page or page <= 1:
        return 0
    from .page_offsets import PageOffsets
    noted = PageOffsets(path).pages.get(int(page))
    return noted[0] if noted else None


def converter(name):
    return importlib.import_module("." + name, __name__)


def read(path, stop_at=None, deadline=None, kind=None, ocr="auto", start_page=None, skip_to=None, password=None, _plain=False):
    """Convert ``path``; stop once more than ``stop_at`` characters are out (``complete`` False).
    ``ocr``: "auto" | "off" | "force"; ``start_page``: first page to read (PDF, multi-page TIFF).
    ``skip_to``: the offset the caller will show text from; a PDF then starts at the page holding
    it and the text before is blank padding of the same length (``page_offsets``).
    ``password``: the open password of an encrypted Office file (``xlakit.crypt.office`` decrypts it to a
    private copy that is read instead) or PDF (pypdf); never echoed anywhere. ``_plain``: this is
    that copy (a decrypted .ppt keeps its EncryptedSummary stream, so it is not asked again)."""
    try:
        kind = kind or sniff(path)
    except OSError as exc:
        raise os_error(exc, None, "读取")
    if kind.kind == "empty":
        raise FormatError("文件是空的，没有任何内容（%s）。请确认选对了文件，或文件是否已完整保存" % kind.detail)
    if not _plain and crypt.office_encrypted(path, kind):
        with crypt.decrypt(path, password) as plain:
            doc = read(plain.path, stop_at, deadline, None, ocr, start_page, skip_to, _plain=True)
        doc.encrypted = True
        if plain.default_password:
            doc.warnings.append("文件用 Office 的默认密码加密（作者设了\u201c建议只读\u201d），已直接打开")
        return doc
    if kind.encrypted:
        raise FormatError("文档已加密（%s），无法读取。请在 Word/WPS 里输入密码打开，取消密码后另存一份再试" % kind.detail)
    refused = {}
    errors = []
    for name in CONVERTERS:
        mod = converter(name)
        ok, why = mod.accepts(kind)
        if not ok:
            refused[name] = why
            continue
        out = Builder(stop_at=stop_at, deadline=deadline)
        out.ocr, out.start_page, next_page = ocr, start_page, None
        out.password = password   # a PDF's open password (Office files were decrypted above)
        out.skip_to = skip_to     # the caller shows text from here on: a PDF may start at that page
        complete = True
        try:
            mod.convert(path, kind, out, deadline)
            if not out.has_content() and ocr != "off" and kind.kind in ("docx", "pptx"):
                _ocr_pictures.read(path, kind, out, deadline)
        except Enough:
            complete = False
        except _ocr.OutOfTime as stop:
            complete, next_page = False, stop.page
        except FormatError as exc:
            if kind.damaged and not exc.extra.get("scanned"):
                raise FormatError("%s。文件似乎不完整（%s），请确认已完整下载/复制" % (str(exc).rstrip("。"), kind.detail), **exc.extra)
            errors.append(exc)
            break
        if kind.damaged:
            out.warnings.append("文件不完整或已损坏（%s），读出的内容可能缺失" % kind.detail)
        doc = Document(out.text(), kind.kind, title=out.title, complete=complete, pages=out.page_count,
                       detail=kind.detail, warnings=out.warnings, converter=name, blocks=out.blocks)
        doc.next_page = next_page
        doc.ocr = _ocr.summary()
        return doc
    if errors:
        raise errors[0]
    tool, why = OTHER_TOOLS.get(kind.kind, (None, None))
    message = "%s（%s），read_document 读不了。" % (why or "无法作为文档读取", kind.detail)
    if kind.kind in ("zip", "gzip", "rar", "7z"):
        message += "如是压缩包，请先解压再读取里面的文件。"
    elif kind.kind not in OTHER_TOOLS:
        message += "支持 docx、doc、wps、odt、pdf、pptx、ppt、rtf、html、md、txt。"
    raise FormatError(message, tool=tool or None, kind=kind.kind,
                      refused=dict((k, v) for k, v in refused.items()))
