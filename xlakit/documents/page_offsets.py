"""Where each page of a PDF starts in read_document's text, kept on disk so window k costs what
window 1 does.

Why: the model pages a long PDF with ``next_offset``, one tool process per window, and every
window used to re-extract from page 1 (a 67-page PDF: 1.7 s for the first window, 21 s for the
last; a 300-page one would pass the 60 s limit). Extraction is deterministic, so the first
process notes the character offset of every ``【第 N 页】`` marker it writes; a later process
asking for offset X starts at the last page that begins at or before X and pads what it skipped
(``Builder.pad_to``), so every offset still means the same character of the whole document.

Layout: ``~/.xla/cache/pdf_pages/<key>.json`` = ``{"pages": [[page, offset, texted_before], ...]}``
(``texted_before``: pages with text before this one, so a window of blank trailing pages is not
mistaken for a scan). The key hashes the real path, size, mtime, the first 64 KB and this
package's converter code, so an edited file or a fixed reader never uses old offsets. Pages read
by OCR are noted too: their text is kept (``ocr_cache``) and comes out the same in every window;
only when it could not be kept are the pages after it not noted. Bounded: at
most MAX_ENTRIES files, the least recently used removed first. Nothing here is ever an error for
the user: an unreadable or unwritable cache is a miss.
"""
from . import file_cache

VERSION = 1
MAX_ENTRIES = 300
CACHE = "pdf_pages"
# the code whose output the offsets describe (OCR'd pages come from ocr_cache, made by the OCR code)
_CODE = ("pdf.py", "base.py", "page_offsets.py", "ocr.py", "ocr_pdf.py", "ocr_layout.py", "ocr_cache.py")


def cache_dir():
    return file_cache.folder(CACHE)


class PageOffsets:
    """The noted page starts of one file (empty when nothing is cached yet)."""

    def __init__(self, path):
        self.key = file_cache.key(path, VERSION, _CODE)
        self.pages = {}           # page -> (offset, texted_before)
        self.dirty = False
        self.open = True          # False after an OCR page that could not be kept (ocr_cache)
        if self.key is None:
            return
        try:
            data = file_cache.load(CACHE, self.key) or {}
            self.pages = {int(p): (int(o), int(t)) for p, o, t in data.get("pages", [])}
        except (ValueError, TypeError, AttributeError):
            self.pages = {}

    def start_before(self, offset, last_page):
        """``(page, offset, texted_before)`` of the last noted page starting at or before
        ``offset`` (page 1 at 0 when nothing fits)."""
        best = None
        for page, (start, texted) in self.pages.items():
            if start <= offset and page <= last_page and (best is None or page > best[0]):
                best = (page, start, texted)
        return best

    def note(self, page, offset, texted_before):
        if self.open and self.key is not None and self.pages.get(page) != (offset, texted_before):
            self.pages[page] = (offset, texted_before)
            self.dirty = True

    def save(self):
        if not self.dirty or self.key is None:
            return
        self.dirty = False
        file_cache.store(CACHE, self.key, {"pages": sorted([p, o, t] for p, (o, t) in self.pages.items())},
                         MAX_ENTRIES)
