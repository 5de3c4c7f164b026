"""Let the model see what it made: a small PNG of a written PDF's first page(s) and the layout
facts a person checks before handing a file in (pages, the fonts really embedded, text running
off the page).

Why: the assistant cannot open the PDF; a broken page (a table cut at the right edge, every
typeface fallen back to one sans font, a title alone on a page) is only caught when the user
prints it. With ``preview: true`` write_document answers with the picture by the images
convention and these facts, so the model can fix the text and write again.

The page is rendered by pypdfium2 (the OCR group's renderer, in pydeps when installed); without
it the facts still come (they are read from the PDF's bytes) and a note says why there is no
picture. The PNG is written by ``xlakit.raster.png`` (no Pillow needed).
"""
import base64
import re

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
    try:
        import pypdfium2
    except ImportError:
        return [], {}, "没有安装页面渲染库（pypdfium2，文字识别组件的一部分），所以没有预览图；装好 OCR 组件后就有"
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
