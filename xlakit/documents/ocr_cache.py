"""What OCR read on each page of a file, kept on disk so the next window goes on from there.

Why: a scan is read window by window, one tool process per window. Each process used to OCR
the pages before its window again (a second or more each), so a window asking for
``next_offset`` of a long scan ran out of time on pages already shown and came back empty or
with the same pages again: a 30-page scan never reached its end. The recognised blocks of each
page are therefore kept; a later window rebuilds the earlier pages from them in milliseconds
(the same text, so every offset means the same character as before) and spends its time on the
pages not read yet.

Layout: ``~/.xla/cache/ocr_pages/<key>.json`` = ``{"pages": {"<n>": [blocks, confidence, note]}}``.
The key hashes the real path, size, mtime, the first 64 KB and the OCR code's own files, so an
edited file or a changed reader never reuses old text. Bounded like ``page_offsets``: at most
MAX_ENTRIES files, least recently used removed first. A cache that cannot be read or written is
a miss, never an error for the user.
"""
from . import file_cache

VERSION = 1
MAX_ENTRIES = 200
CACHE = "ocr_pages"
_CODE = ("ocr.py", "ocr_pdf.py", "ocr_layout.py", "ocr_turn.py", "ocr_cache.py", "image.py")


def cache_dir():
    return file_cache.folder(CACHE)


class OcrPages:
    """The OCR results noted for one file: ``get(n)`` -> (blocks, confidence, note) or None."""

    def __init__(self, path):
        self.key = file_cache.key(path, VERSION, _CODE)
        self.pages = {}
        if self.key is None:
            return
        try:
            data = file_cache.load(CACHE, self.key) or {}
            for number, (blocks, confidence, note) in data.get("pages", {}).items():
                self.pages[int(number)] = ([(str(k), str(t)) for k, t in blocks], float(confidence),
                                           None if note is None else str(note))
        except (ValueError, TypeError, AttributeError):
            self.pages = {}

    def get(self, number):
        return self.pages.get(number)

    def put(self, number, blocks, confidence, note):
        """Note a page and write the file at once: the process may be stopped by the host."""
        if self.key is None:
            return
        self.pages[number] = ([(k, t) for k, t in blocks], float(confidence or 0), note)
        file_cache.store(CACHE, self.key, {"pages": {str(n): [list(map(list, b)), c, t]
                                                   for n, (b, c, t) in self.pages.items()}}, MAX_ENTRIES)
