"""OCR for PDF pages: which pages need it, how a page becomes a picture, and what to say when the
engine is missing.

Which pages (``ocr`` mode):
- ``auto``: pages with no text layer, or a layer that is junk (mostly symbols), or a wrong
  invisible layer over a scan: when the first page that is one full-page picture also has text,
  that text is compared with a quick OCR of the page, and a layer that does not match is
  replaced on every such page. The comparison runs only when the engine is already installed
  (a text layer is never a reason to download 130 MB).
- ``force``: every page, text layer or not. ``off``: none (the old "this is a scan" answer).

How a page becomes a picture: a scanner's page is one image; pypdf hands it over at its own
resolution, which is the cheapest and sharpest source. Anything else (several images, vector
drawings, JBIG2/CCITT images pypdf cannot decode) is rendered by pypdfium2 at 200 dpi.
"""
import re

from .. import progress
from . import ocr
from .base import FormatError
from .pdf_bomb import check_page

RENDER_DPI = 200
MIN_DPI = 50              # a page picture below this cannot hold legible text (a placeholder)
MATCH = 0.5               # text layer vs OCR similarity below which the layer is called wrong
THUMB = 100.0             # px: width of the thumbnails that check pypdf's picture against pdfium's page
THUMB_DIFF = 32.0         # mean grey difference (0..255) past which pypdf's picture is not the page


LEADERS = re.compile(r"([.\u00b7\u2026\u2022\u22ef_\-\u2014\u2013=~*\uff0e\u3002])\1{2,}")


def junk(text):
    """A text layer that is mostly symbols (a broken font map, a bad OCR layer) is no text.
    Runs of one repeated mark (a table of contents' dot leaders, a form's underlines) are layout,
    not symbols: they are left out of the count, so a contents page with a good text layer is
    never taken for a scan."""
    chars = [c for c in LEADERS.sub("", text) if not c.isspace()]
    if not chars:
        return True
    good = sum(1 for c in chars if c.isalnum())
    return len(chars) >= 8 and good < 0.5 * len(chars)


class PdfScan(object):
    """Per-document OCR state, used by ``pdf.convert`` page by page."""

    def __init__(self, path, out, deadline):
        self.path, self.out, self.deadline = path, out, deadline
        self.mode = getattr(out, "ocr", "auto") or "auto"
        self.reader = None
        self.missing = None          # the Chinese "engine missing" message, once known
        self.layer_checked = False
        self.layer_wrong = False
        self.pdfium = None
        self.pages = None            # the document's pages (pypdf), to look one page ahead
        self.read_pages = []
        self.found = 0               # OCR pages that had text
        self._last = None            # (page number, result): the layer check's OCR, reused
        from .ocr_cache import OcrPages
        self.cache = OcrPages(path)  # pages read by earlier windows: not read again

    # -- decisions --------------------------------------------------------------------------
    def wants(self, page, body):
        """Should this page be read by OCR instead of (or for want of) its text layer?"""
        if self.mode == "off" or self.missing:
            return False
        if self.mode == "force" or not body.strip() or junk(body):
            check_page(page, _index_of(page) + 1)      # never OCR (nor install for) a bomb
            return True
        if not _one_picture(page):
            return False
        check_page(page, _index_of(page) + 1)
        if not self.layer_checked:
            self.layer_checked = True
            if ocr.ready() and self.engine() is not None:
                number = _index_of(page) + 1
                self._last = (number, self._blocks(page, "第 %d 页" % number, number))
                self.layer_wrong = ocr.similarity(body, ocr.plain(self._last[1][0])) < MATCH
        return self.layer_wrong

    def engine(self):
        """The OCR reader, or None with ``missing`` set (the text layer is then kept)."""
        if self.reader is None and not self.missing:
            try:
                self.reader = ocr.Reader.get(self.deadline)
                self.reader.load()
            except ocr.Missing as exc:
                self.reader, self.missing = None, str(exc)
        return self.reader

    # -- reading ----------------------------------------------------------------------------
    def before(self, number):
        """Raise ocr.OutOfTime when pages were read by OCR and the next one may not fit in time."""
        if self.read_pages and self.reader is not None and not self.reader.can_start() \
                and self.cache.get(number) is None:
            self.reader.drop()
            raise ocr.OutOfTime(number)

    def read(self, number, page):
        """OCR page ``number`` into the builder; False when the engine is missing. Raises
        ocr.OutOfTime when there is no time for this page (not for the first one read)."""
        dpi = _picture_dpi(page)
        if dpi is not None and dpi < MIN_DPI:
            self.read_pages.append(number)
            self.out.para("〔本页只有一张分辨率很低的图片（约 %d dpi），认不出文字〕" % dpi)
            return True
        known = self.cache.get(number)
        if known is None:
            reader = self.engine()
            if reader is None:
                return False
            if self.read_pages and not reader.can_start():
                reader.drop()
                raise ocr.OutOfTime(number)
            if self._last and self._last[0] == number:
                blocks, confidence, note = self._last[1]
            else:
                blocks, confidence, note = self._blocks(page, "第 %d 页" % number, number)
            self.cache.put(number, blocks, confidence, note)
        else:
            blocks, confidence, note = known       # read by an earlier window (ocr_cache)
        self.read_pages.append(number)
        progress.report(number, getattr(self.out, "page_count", None), "文字识别（OCR）第 %d 页" % number)
        self.found += 0 if note else 1
        if note:
            self.out.para("〔%s〕" % note.replace("第 %d 页" % number, "本页"))
        else:
            self.out.para("〔本页由文字识别（OCR）读出，把握 %.0f%%〕" % (confidence * 100))
            ocr.emit(self.out, blocks)
        return True

    def _blocks(self, page, label, number=None):
        reader = ocr.Reader.get(self.deadline)
        upcoming = (number + 1, lambda: self._upcoming(number + 1)) if number else None
        return reader.read(lambda: self.picture(page, number), label, key=number, upcoming=upcoming)

    def _upcoming(self, number):
        """The picture of page ``number`` when that page will be read by OCR, to detect it while
        this one is recognised; None when it may not be (it draws text that is not known to be
        wrong, it is no scan, a placeholder picture, the last page). Decoded here, on the
        reading thread: pypdf and pdfium are only ever used from this one."""
        try:
            if self.pages is None or number > len(self.pages):
                return None
            page = self.pages[number - 1]
            if self.mode != "force":
                if not _one_picture(page) or not (self.layer_wrong or not _shows_text(page)):
                    return None
            dpi = _picture_dpi(page)
            if dpi is not None and dpi < MIN_DPI:
                return None
            return self.picture(page, number)
        except Exception:  # noqa: BLE001 - the page is then simply read when its turn comes
            return None

    def close(self):
        """The page detected ahead is not wanted any more (the window stops here)."""
        if self.reader is not None:
            self.reader.drop()

    def picture(self, page, number=None):
        """The page as a PIL image: its one full-page picture as pypdf decodes it when that is what
        a viewer shows, else the page rendered by pdfium (at the picture's own resolution when it
        is one picture, so the engine sees the pixels it would see in the same page as a PNG)."""
        index = (number - 1) if number else _index_of(page)
        image = _one_picture(page, decode=True)
        if image is not None and self._shown(index, image):
            return image
        dpi = _picture_dpi(page) if image is not None else None
        return self._pdfium()[index].render(scale=render_scale(page, dpi)).to_pil()

    def _pdfium(self):
        import pypdfium2     # part of the OCR group, on the path once the engine is loaded
        if self.pdfium is None:
            self.pdfium = pypdfium2.PdfDocument(self.path)
        return self.pdfium

    def _shown(self, index, image):
        """Does pypdf's decoding of the page's picture look like the page pdfium draws? pypdf
        silently gets some pictures wrong (an indexed picture with a hex-coded palette comes out
        black: the page read as empty), and a picture placed turned or mirrored by the page is
        decoded upright. A thumbnail of each (about 100 px wide, a few ms) settles it."""
        try:
            from PIL import ImageChops, ImageStat
            pdf_page = self._pdfium()[index]
            thumb = pdf_page.render(scale=THUMB / max(1.0, pdf_page.get_width())).to_pil().convert("L")
            ours = image.convert("L").resize(thumb.size)
            return ImageStat.Stat(ImageChops.difference(ours, thumb)).mean[0] < THUMB_DIFF
        except Exception:  # noqa: BLE001 - no verdict: pypdf's picture is read as before
            return True

    def finish(self, texted, count):
        """Warnings for the answer; the Chinese error when nothing could be read at all."""
        if self.read_pages and not self.found and texted == len(self.read_pages):
            return FormatError("这是扫描版（图片）PDF：共 %d 页，没有文字层，文字识别（OCR）也没有在页面上找到文字"
                               "（可能是空白页、照片或图形）。如果页面上确实有字，可能是太小或太模糊，"
                               "请用更高分辨率重新扫描" % count, scanned=True, pages=count)
        if self.missing and not texted:
            return ocr.Missing("这是扫描版（图片）PDF：共 %d 页，没有可提取的文字层。%s" % (count, self.missing),
                               scanned=True, pages=count)
        if self.missing:
            self.out.warnings.append("部分页面是扫描图片，没有读出。%s" % self.missing)
        if self.layer_wrong:
            self.out.warnings.append("这份扫描件自带的隐藏文字层与页面内容不符，已改用文字识别（OCR）的结果")
        if self.read_pages:
            shown = "、".join(str(n) for n in self.read_pages[:20]) + ("……" if len(self.read_pages) > 20 else "")
            self.out.warnings.append("第 %s 页是扫描图片，文字由文字识别（OCR）读出，可能有个别错字；"
                                     "〔?…〕标出的是把握不大的文字" % shown)
        return None


def render_scale(page, dpi=None):
    """pdfium's scale for a page: the page's one picture at its own resolution (``dpi``), else
    RENDER_DPI; never past ``ocr.MAX_SIDE`` on the long side (the engine would shrink it again)."""
    scale = (dpi or RENDER_DPI) / 72.0
    try:
        longest = max(float(page.mediabox.width), float(page.mediabox.height))
        return min(scale, ocr.MAX_SIDE / max(1.0, longest))
    except Exception:  # noqa: BLE001 - a page without a usable box: the plain scale
        return scale


def _picture_dpi(page):
    """Resolution of a page that is one picture and nothing else (None otherwise)."""
    try:
        xobjects = page["/Resources"]["/XObject"].get_object()
        images = [ref.get_object() for ref in xobjects.values()]
        if len(images) != 1 or images[0].get("/Subtype") != "/Image":
            return None
        return int(float(images[0]["/Width"]) * 72.0 / float(page.mediabox.width))
    except Exception:  # noqa: BLE001 - anything unusual is simply rendered and read
        return None


def _shows_text(page):
    """Does the page's content draw any text (a BT operator)? A bare scan's content only places
    its picture. Unknown counts as text."""
    try:
        contents = page.get_contents()
        return contents is None or b"BT" in contents.get_data()
    except Exception:  # noqa: BLE001 - unknown: count it as text
        return True


def _index_of(page):
    try:
        return page.page_number
    except Exception:  # noqa: BLE001 - older pypdf
        return 0


def _one_picture(page, decode=False):
    """The page's only image when it covers the page (a scan); with ``decode`` the PIL image,
    turned by the page's /Rotate, else just True/None. None when the page is anything else."""
    try:
        resources = page.get("/Resources") or {}
        xobjects = resources.get("/XObject") if hasattr(resources, "get") else None
        if not xobjects:
            return None
        xobjects = xobjects.get_object()
        images = [ref.get_object() for ref in xobjects.values()]
        if len(images) != 1 or images[0].get("/Subtype") != "/Image":
            return None
        w, h = float(images[0].get("/Width", 0)), float(images[0].get("/Height", 0))
        box = page.mediabox
        pw, ph = float(box.width), float(box.height)
        if not (w and h and pw and ph) or abs(w / h - pw / ph) > 0.03 * (pw / ph) or w < pw:
            return None
        if not decode:
            return True
        image = page.images[0].image
        rotate = (page.get("/Rotate") or 0) % 360
        if rotate:
            image = image.rotate(-rotate, expand=True)
        if image.mode == "1" or image.mode == "L" and images[0].get("/Decode") == [1, 0]:
            image = image.convert("L")
        return image
    except Exception:  # noqa: BLE001 - an image pypdf cannot decode is rendered by pdfium instead
        return None
