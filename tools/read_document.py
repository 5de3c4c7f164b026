"""read_document: the text of a document (docx, doc incl. Word 6/95, wps, odt, pdf, pptx, ppt, WordML, epub, rtf, html, md, txt).

Why a tool: the model cannot open a binary Word file, and a raw dump of XML or PDF operators
wastes the answer. The format is decided by content (``xlakit.sniff``), so a .doc that is really
RTF, Word HTML or a docx, and a WPS .wps that is Word binary inside, are read as what they are.
Structure survives as light markdown: ``#`` headings, ``-``/``1.`` list items, table rows as
``单元格 | 单元格``, ``【第 N 页】`` page markers (PDF, slides), and labelled ``【脚注】``/``【页眉】``/
``【页脚】`` parts after the body.

Parameters:
    path       the document; a bare name is looked up in the workspace ~/.xla/workspace.
    offset     character offset to start from (0 = beginning); pass the previous ``next_offset``.
    max_chars  at most this many characters of text (default: as much as fits the output cap).
    ocr        "auto" (default: OCR for pictures and scanned pages only), "off", "force" (every PDF page).
    start_page first page to read (PDF, multi-page TIFF); pass the previous ``next_page``. Offsets
               count in the whole document once a window has reached that page (OCR'd pages are
               kept in ~/.xla/cache/ocr_pages, so following ``next_offset`` through a scan goes
               on exactly where the last window stopped and never OCRs a page twice).
    password   the open password of an encrypted docx/xlsx/pptx/doc/ppt or PDF (Excel's default
               "VelvetSweatshop" needs none); without it such a file asks for one, a wrong one
               says so. It is never repeated in the answer.

Returns one shape: ``text`` (this window only, never repeated as a paragraph list), ``offset``,
``returned_chars``, ``next_offset`` (null at the end), ``truncated``, ``total_chars`` (null while
the rest of a long document has not been extracted: extraction stops once the window is full),
``format`` (the real format found), ``format_name``, ``title``, ``pages`` (PDF/pptx), and
``warnings`` (pages without text, damage). Pictures and scans are read by OCR
(``xlakit.documents.ocr``): then ``ocr`` says pages read, seconds and confidence per page, and
``next_page`` is set when OCR stopped before the deadline (continue with ``start_page``).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit import documents  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import FormatError, InputError  # noqa: E402

SLACK = 2000       # characters extracted past the window, so "is there more" is known


def main(params):
    path = paths.resolve_read(params["path"])
    offset = params.get("offset") or 0
    max_chars = params.get("max_chars")
    if offset < 0:
        raise InputError("offset 不能是负数。从头读传 0，接着读传上次返回的 next_offset")
    if max_chars is not None and max_chars < 1:
        raise InputError("max_chars 至少为 1；不传则按输出上限尽量多给")
    window = min(max_chars or rt.OUTPUT_LIMIT, rt.OUTPUT_LIMIT)
    start_page = params.get("start_page")
    if start_page and start_page > 1:
        # Offsets count in the whole document whenever an earlier window noted where that page
        # starts (page_offsets; OCR'd pages included): start_page then only says where to begin.
        # A page never reached before is read on its own, its offsets counted from that page.
        known = documents.page_start(path, start_page)
        if known is not None:
            offset, start_page = offset or known, None
    try:
        doc = documents.read(path, stop_at=offset + window + SLACK, deadline=rt.deadline,
                             ocr=params.get("ocr") or "auto", start_page=start_page,
                             skip_to=offset, password=params.get("password"))
    except FormatError as exc:
        refused = exc.extra.pop("refused", None)
        if refused and os.environ.get("XLA_DEBUG"):
            sys.stderr.write("converters refused: %r\n" % (refused,))
        raise
    for note in doc.warnings:
        rt.warn(note)
    base = {"path": path, "format": doc.format, "format_name": doc.detail, "title": doc.title}
    if doc.pages is not None:
        base["pages"] = doc.pages
    if doc.encrypted:
        base["encrypted"] = True
    if getattr(doc, "ocr", None):
        base["ocr"] = doc.ocr
    if getattr(doc, "next_page", None):
        base["next_page"] = doc.next_page
        rt.warn("文字识别较慢，时间不够，这次读到第 %d 页之前；接着读请传 offset=next_offset（或 start_page=%d），"
                "已识别的页不会重复识别" % (doc.next_page, doc.next_page))
    if offset > len(doc.text) and doc.complete:
        raise InputError("offset=%d 超过了文档总长度 %d 字。从头读请传 offset=0" % (offset, len(doc.text)))
    if not doc.text.strip():
        base["message"] = "文档里没有文字内容（可能只有图片、图形或空白页）"
    result = rt.page_text(doc.text, offset=offset, max_chars=max_chars, base=base)
    if not doc.complete:
        result["total_chars"] = None
        if result["next_offset"] is None:     # cannot happen with SLACK > 0, kept for safety
            result["next_offset"] = offset + result["returned_chars"]
            result["truncated"] = True
    return result


if __name__ == "__main__":
    rt.run(main)
