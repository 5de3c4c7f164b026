"""PDF through pypdf, page by page with ``【第 N 页】`` markers.

Why page markers: users cite pages ("第 12 页的条款"), and a long PDF is read in windows, so the
model must know where it is. Extraction stops as soon as the requested window is full (pypdf
costs roughly 10-100 ms a page), which keeps a 300-page report well inside the time limit.

A page with no text layer is a scan: it is read by OCR (``ocr_pdf``; also wrong hidden layers
and, with ``ocr: "force"``, every page). Before that, every page's pictures are checked for
decompression bombs (``pdf_bomb``): such a file is refused at once, never OCR'd, and never the
reason for an OCR install. Without the OCR engine (or with ``ocr: "off"``) that is
said plainly, with the page count, instead of an empty success, and the text layer is kept.
An encrypted PDF is first opened with the empty password (many "protected" PDFs only restrict
printing or copying); a real open password gives a clear error.
"""
from .. import progress
from .base import FormatError, Enough, why
from .page_offsets import PageOffsets
from .pdf_bomb import check_page, content_bomb, limit_error
from .pdf_fontmap import garbled
from .pdf_holds import holds, summary
from .pdf_text import page_text

NAME = "pdf"
PROGRESS_PAGES = 20          # shorter PDFs read in a moment: no progress lines
LABEL = "PDF 文件"

SCANNED = ("这是扫描版（图片）PDF：共 %d 页，没有可提取的文字层，无法直接读出文字。"
           "需要先做文字识别（OCR），例如用 WPS/Adobe 的\u201c图片转文字\u201d功能，或让用户提供原始的 Word 文件")
PASSWORD = ("这个 PDF 设置了打开密码，没有密码读不了。请向用户要打开密码，用 password 参数传入后重试；"
            "或请用户在 PDF 阅读器里输入密码打开后，另存/打印为不带密码的 PDF")
WRONG_PASSWORD = ("密码不对，打不开这个 PDF。请向用户确认打开密码（注意大小写、全角/半角和空格）后，"
                  "用 password 参数重新传入")
NOTHING = ("这个 PDF 共 %d 页，都没有文字，也没有图片（不是扫描件，文字识别也读不出东西）：%s。"
           "请确认文件是否选对；表单要填写或查看填写内容请用 PDF 阅读器打开")
NO_AES = ("这个 PDF 用 AES 加密，当前环境缺少解密组件（%s）。请用阅读器打开后另存/打印为普通 PDF 再试")


def accepts(kind):
    if kind.kind == "pdf":
        return True, None
    return False, "不是 PDF 文件（开头没有 %PDF 标记）"


def _open(path, password=None):
    import pydeps_boot
    try:
        pypdf = pydeps_boot.ensure("pypdf")
    except pydeps_boot.DependencyError as exc:
        raise FormatError(str(exc))
    import logging
    logging.getLogger("pypdf").setLevel(logging.ERROR)   # its warnings go to stderr otherwise
    from . import pdf_cmaps, pdf_type1
    pdf_cmaps.install()                                  # the CJK CMaps pypdf lacks (EUC-JP, JIS, ...)
    pdf_type1.install()                                  # a Type1 font dictionary's /Encoding wins
    try:
        reader = pypdf.PdfReader(path, strict=False)
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types for damaged files
        reader = _repaired(pypdf, path)
        if reader is None:
            raise FormatError("PDF 文件已损坏，无法打开（%s）。请确认文件完整（下载是否中断），或用阅读器另存一份再试" % _short(exc))
    if reader.is_encrypted:
        _decrypt(reader, pydeps_boot, password)
    return reader


def _decrypt(reader, pydeps_boot, password):
    """The empty password first (many "protected" PDFs only restrict printing or copying), then
    the user's; AES needs the cryptography library, installed with the Office decryption."""
    try:
        pydeps_boot.ensure("cryptography")
    except pydeps_boot.DependencyError as exc:
        if _aes(reader):
            raise FormatError(NO_AES % exc)
    for attempt in ("", password) if password else ("",):
        try:
            if reader.decrypt(attempt):
                return
        except Exception as exc:  # noqa: BLE001 - e.g. AES without the crypto library
            if "cryptography" in str(exc) or "AES" in str(exc):
                raise FormatError(NO_AES % "cryptography 没有装上")
    raise FormatError(WRONG_PASSWORD if password else PASSWORD, encrypted=True, wrong_password=bool(password))


def _aes(reader):
    try:
        return int(reader.trailer["/Encrypt"].get_object().get("/V", 0)) >= 4
    except Exception:  # noqa: BLE001
        return False


def _repaired(pypdf, path):
    """A reader over the file with its object table rebuilt by scanning (pdf_repair), or None."""
    import io
    from .pdf_repair import rebuilt
    try:
        with open(path, "rb") as fh:
            data = rebuilt(fh.read())
        if data is None:
            return None
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        len(reader.pages)
        reader.xla_repaired = True
        return reader
    except Exception:  # noqa: BLE001 - still unreadable: the caller reports the first error
        return None


def _short(exc):
    return why(exc)          # pypdf's messages are English: the user gets their meaning in Chinese


def convert(path, kind, out, deadline=None):
    reader = _open(path, getattr(out, "password", None))
    try:
        count = len(reader.pages)
    except Exception as exc:  # noqa: BLE001
        raise FormatError("PDF 文件的页面结构已损坏（%s），无法读取" % _short(exc))
    out.page_count = count
    if getattr(reader, "xla_repaired", False):
        out.warnings.append("PDF 的交叉引用表缺失或损坏，已按文件里的对象重新建立后读取，个别内容可能缺失")
    try:
        meta = reader.metadata
        if meta and meta.title and str(meta.title).strip():
            out.title = str(meta.title).strip()
    except Exception:  # noqa: BLE001 - broken info dictionaries are common and harmless
        pass
    from .ocr_pdf import PdfScan
    scan = PdfScan(path, out, deadline)
    scan.pages = reader.pages
    empty_pages = []
    texted = 0
    first = min(max(1, getattr(out, "start_page", None) or 1), max(count, 1))
    # Later windows start at the page they need, not at page 1 (page_offsets).
    offsets = None
    if first == 1 and getattr(out, "ocr", "auto") != "force":
        offsets = PageOffsets(path)
        jump = offsets.start_before(out.skip_to or 0, count) if out.skip_to else None
        if jump and jump[0] > 1:
            first, texted = jump[0], jump[2]
            out.pad_to(jump[1])
    try:
        _pages(reader, out, deadline, scan, offsets, first, count, empty_pages, texted)
    finally:
        scan.close()
        if offsets is not None:
            offsets.save()


def _pages(reader, out, deadline, scan, offsets, first, count, empty_pages, texted):
    bare = {}
    garbled_pages = []
    for number in range(first, count + 1):
        if offsets is not None:      # noted first: a window stopped here lets the next start here
            offsets.note(number, out.next_offset(), texted)
        scan.before(number)          # OCR pages are slow: stop in time, saying where to go on
        if deadline is not None:
            deadline.check("读取 PDF（已读到第 %d 页，共 %d 页）" % (number, count))
        if count >= PROGRESS_PAGES:
            progress.report(number - 1, count, "读取 PDF 第 %d 页，共 %d 页" % (number, count))
        try:
            page = reader.pages[number - 1]
            text = page_text(page)      # pypdf's text, fake-bold copies dropped
        except Enough:
            raise
        except Exception as exc:  # noqa: BLE001 - one broken page must not lose the others
            if limit_error(exc):            # pypdf's own bomb guard on the content: refuse the file
                raise content_bomb(number)
            out.warnings.append("第 %d 页无法解析（%s），已跳过" % (number, _short(exc)))
            continue
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        body = "\n".join(line for line in lines if line.strip())
        out.page(number)
        if not body.strip():
            check_page(page, number)      # a bomb is refused before the page is called a scan
        kind = None if body.strip() or getattr(out, "ocr", "auto") == "force" else holds(page)
        if kind not in (None, "picture"):
            empty_pages.append(number)
            bare[number] = kind           # blank, form or comments only: no scan, no OCR
            out.para("〔本页%s，没有文字〕" % summary({number: kind}).split("页", 1)[1])
            continue
        if scan.wants(page, body) and scan.read(number, page):
            texted += 1
            if offsets is not None and scan.cache.key is None:
                offsets.open = False       # OCR text kept nowhere: not ours to promise stable offsets for
        elif body.strip():
            texted += 1
            if garbled(body):
                garbled_pages.append(number)
            out.para(body)
        else:
            empty_pages.append(number)
            if not texted and len(empty_pages) >= 50 and number - first + 1 == len(empty_pages):
                break   # fifty text-less pages in a row from the start: a scan; no need to read on
    failure = scan.finish(texted, count)
    if failure is not None:
        raise failure
    scans = [n for n in empty_pages if n not in bare]
    if not texted:
        if not scans and bare:
            raise FormatError(NOTHING % (count, summary(bare)), pages=count)
        also = "（另外%s）" % summary(bare) if bare else ""
        raise FormatError(SCANNED % count + also, scanned=True, pages=count)
    if scans:
        shown = "、".join(str(n) for n in scans[:20]) + ("……" if len(scans) > 20 else "")
        out.warnings.append("第 %s 页没有文字层（可能是扫描图片），这些页的内容读不出来" % shown)
    if bare:
        out.warnings.append("这些页没有文字：%s" % summary(bare))
    if garbled_pages:
        shown = "、".join(str(n) for n in garbled_pages[:20]) + ("……" if len(garbled_pages) > 20 else "")
        out.warnings.append("第 %s 页的文字层像是乱码（字体缺少正确的编码信息），这些页读出的文字不可信；"
                            "可以用 ocr=\"force\" 按页面图像重新识别，或请用户提供原始文件" % shown)
