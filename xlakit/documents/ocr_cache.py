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
import hashlib
import json
import os
import tempfile

from ..fs import paths

VERSION = 1
MAX_ENTRIES = 200
_HERE = os.path.dirname(os.path.abspath(__file__))
_CODE = ("ocr.py", "ocr_pdf.py", "ocr_layout.py", "ocr_turn.py", "ocr_cache.py", "image.py")


def cache_dir():
    return paths.xla_dir("cache", "ocr_pages")


def _key(path):
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            head = fh.read(65536)
        stamp = max(os.stat(os.path.join(_HERE, name)).st_mtime_ns for name in _CODE
                    if os.path.exists(os.path.join(_HERE, name)))
    except (OSError, ValueError):
        return None
    digest = hashlib.sha256()
    for part in (VERSION, os.path.realpath(path), st.st_size, st.st_mtime_ns, stamp):
        digest.update(str(part).encode("utf-8", "surrogatepass") + b"\0")
    digest.update(head)
    return digest.hexdigest()[:40]


class OcrPages:
    """The OCR results noted for one file: ``get(n)`` -> (blocks, confidence, note) or None."""

    def __init__(self, path):
        self.key = _key(path)
        self.pages = {}
        if self.key is None:
            return
        name = os.path.join(cache_dir(), self.key + ".json")
        try:
            with open(name, "r", encoding="utf-8") as fh:
                data = json.load(fh)
            for number, (blocks, confidence, note) in data.get("pages", {}).items():
                self.pages[int(number)] = ([(str(k), str(t)) for k, t in blocks], float(confidence),
                                           None if note is None else str(note))
            os.utime(name)
        except (OSError, ValueError, TypeError, AttributeError):
            self.pages = {}

    def get(self, number):
        return self.pages.get(number)

    def put(self, number, blocks, confidence, note):
        """Note a page and write the file at once: the process may be stopped by the host."""
        if self.key is None:
            return
        self.pages[number] = ([(k, t) for k, t in blocks], float(confidence or 0), note)
        folder = cache_dir()
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".ocr-", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"pages": {str(n): [list(map(list, b)), c, t] for n, (b, c, t) in self.pages.items()}},
                          fh, ensure_ascii=False)
            os.replace(tmp, os.path.join(folder, self.key + ".json"))
            _prune(folder)
        except OSError:
            pass


def _prune(folder):
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
        if len(names) <= MAX_ENTRIES:
            return
        dated = sorted((os.stat(os.path.join(folder, n)).st_mtime, n) for n in names)
        for _mtime, name in dated[:len(names) - MAX_ENTRIES]:
            os.unlink(os.path.join(folder, name))
    except OSError:
        pass
