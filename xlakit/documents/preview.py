"""Let the model see what it made: a small PNG of a written PDF's first page(s) and the layout
facts a person checks before handing a file in (pages, the fonts really embedded, text running
off the page).

Why: the assistant cannot open the PDF; a broken page (a table cut at the right edge, every
typeface fallen back to one sans font, a title alone on a page) is only caught when the user
prints it. With ``preview: true`` write_document answers with the picture by the images
convention and these facts, so the model can fix the text and write again.

The page is rendered by pypdfium2 (the OCR group's renderer, in pydeps when installed); without
it by poppler's ``pdftoppm`` when that is on PATH (Linux and macOS machines with LibreOffice often
have it; text off the page is then counted from ``pdftotext -bbox``). pypdfium2 is not installed
on the spot: it comes with the OCR group (about 100 MB with its models), too much to fetch inside
one write; the note names the command that installs it. Without either renderer the facts still
come (they are read from the PDF's bytes) and the note says why there is no picture. The PNG is
written by ``xlakit.raster.png`` (no Pillow needed).

``XLA_PREVIEW_RENDERER`` (tests): ``pdftoppm`` skips pypdfium2, ``none`` skips both.
"""
import base64
import os
import re
import shutil
import subprocess

MAX_PAGES = 2
WIDTH = 560                     # px: enough to read headings and see the layout, small in the answer


def fonts(data):
    """The font names a PDF embeds or names (subset prefixes dropped), in order of first use."""
    out = []
    for m in re.finditer(rb"/BaseFont\s*/([A-Z]{6}\+)?([^\s/<>\[\]()]+)", data):
        name = m.group(2).decode("latin-1")
        name = re.sub(r"#([0-9A-Fa-f]{2})", lambda h: chr(int(h.group(1), 16)), name)
        if name not in out:
            out.append(name)
    return out


def render(path, pages=1):
    """([(png bytes, page number)], overflow {page: characters off the page}, note or None)."""
    forced = os.environ.get("XLA_PREVIEW_RENDERER", "")
    try:
        if forced in ("pdftoppm", "none"):
            raise ImportError(forced)
        import pypdfium2
    except ImportError:
        poppler = shutil.which("pdftoppm") if forced != "none" else None
        if poppler:
            return _render_poppler(poppler, path, pages)
        return [], {}, _no_renderer_note()
    return _render_pdfium(pypdfium2, path, pages)


def _no_renderer_note():
    try:
        import pydeps_boot
        how = "运行「%s」安装文字识别组件（含 pypdfium2）" % pydeps_boot.group_command("ocr")
    except Exception:       # the note must come whatever the installer can say
        how = "安装文字识别组件（含 pypdfium2）"
    return ("没有预览图：这台电脑既没有页面渲染库 pypdfium2，也没有 poppler 的 pdftoppm。%s，或安装 poppler"
            "（Linux：apt install poppler-utils；macOS：brew install poppler）后就有；页数、字体照常给出" % how)


def _render_poppler(poppler, path, pages):
    """pdftoppm's PNGs of the first pages, WIDTH pixels wide; text off the page from pdftotext -bbox."""
    from ..fs import files
    from ..raster import png
    count = min(pages, MAX_PAGES)
    images = []
    with files.scratch("xla-preview-") as work:
        stem = os.path.join(work, "p")
        try:
            subprocess.run([poppler, "-png", "-f", "1", "-l", str(count), "-scale-to-x", str(WIDTH), "-scale-to-y", "-1",
                            path, stem], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=20, check=True)
        except (OSError, subprocess.SubprocessError):
            return [], _overflow_poppler(path), "pdftoppm 没能渲染这个 PDF，所以没有预览图；页数、字体照常给出"
        for name in sorted(os.listdir(work)):
            m = re.match(r"p-0*(\d+)\.png$", name)
            if m:
                with open(os.path.join(work, name), "rb") as fh:
                    # decoded and written again: pdftoppm's PNG is about three times larger, and carries no DPI
                    w, h, rgb = png.decode(fh.read())
                images.append((png.encode(w, h, rgb, dpi=72.0 * WIDTH / 595.0), int(m.group(1))))
    return sorted(images, key=lambda x: x[1]), _overflow_poppler(path), None


def _overflow_poppler(path):
    """{page: words off the page} from ``pdftotext -bbox`` (beside pdftoppm), {} without it."""
    tool = shutil.which("pdftotext")
    if not tool:
        return {}
    try:
        xml = subprocess.run([tool, "-bbox", "-l", "20", path, "-"], stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=20).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for n, page in enumerate(re.split(r"<page ", xml)[1:]):
        size = re.match(r'width="([\d.]+)" height="([\d.]+)"', page)
        if not size:
            continue
        w, h = float(size.group(1)), float(size.group(2))
        off = 0
        for box in re.finditer(r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)', page):
            x0, y0, x1, y1 = (float(box.group(k)) for k in range(1, 5))
            if x1 > w + 1 or x0 < -1 or y0 < -1 or y1 > h + 1:
                off += len(box.group(5))
        if off:
            out[n + 1] = off
    return out


def _render_pdfium(pypdfium2, path, pages):
    from ..raster import png
    images, overflow = [], {}
    doc = pypdfium2.PdfDocument(path)
    try:
        for index in range(min(len(doc), 20)):
            page = doc[index]
            w, h = page.get_size()
            text = page.get_textpage()
            off = 0
            for i in range(text.count_chars()):
                left, bottom, right, top = text.get_charbox(i)
                if right > w + 1 or left < -1 or bottom < -1 or top > h + 1:
                    off += 1
            if off:
                overflow[index + 1] = off
            if index < min(pages, MAX_PAGES):
                bitmap = page.render(scale=WIDTH / float(w), rev_byteorder=True)
                bw, bh, stride, n = bitmap.width, bitmap.height, bitmap.stride, bitmap.n_channels
                raw = bytes(bitmap.buffer)
                rgb = bytearray(bw * bh * 3)
                for y in range(bh):
                    row = raw[y * stride:y * stride + bw * n]
                    if n == 3:
                        rgb[y * bw * 3:(y + 1) * bw * 3] = row
                    else:
                        rgb[y * bw * 3:(y + 1) * bw * 3] = bytes(b for k, b in enumerate(row) if k % n < 3)
                images.append((png.encode(bw, bh, rgb, dpi=72.0 * WIDTH / w), index + 1))
    finally:
        doc.close()
    return images, overflow, None


def preview(path, name, pages=1):
    """What write_document adds to its answer: ``preview`` facts and ``images``."""
    with open(path, "rb") as fh:
        data = fh.read()
    from .pdf_out import _pages
    shots, overflow, note = render(path, pages)
    facts = {"pages": _pages(data), "fonts": fonts(data), "overflow": overflow}
    if note:
        facts["note"] = note
    images = [{"name": "%s_第%d页.png" % (name, n), "mime": "image/png", "data": base64.b64encode(png).decode("ascii")}
              for png, n in shots]
    return facts, images
