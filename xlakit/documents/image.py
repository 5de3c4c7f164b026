"""Pictures (PNG, JPEG, BMP, TIFF, WebP, GIF first frame) read by OCR: a photographed invoice, a
screenshot of a chat or a spreadsheet, a chart the user saved.

The kind comes from ``xlakit.sniff`` (content, not suffix), so a screenshot saved as ``.dat`` or a
JPEG named ``.png`` is read as what it is. With ``ocr: "off"`` the converter declines and the
dispatcher says the file is a picture. A multi-page TIFF (a fax) is read page by page.
"""
from .base import FormatError
from . import ocr

NAME = "image"
LABEL = "图片（文字识别）"
KINDS = ("png", "jpeg", "gif", "bmp", "tiff", "webp")


def accepts(kind):
    if kind.kind in KINDS:
        return True, None
    return False, "不是图片"


def convert(path, kind, out, deadline=None):
    mode = getattr(out, "ocr", "auto")
    if mode == "off":
        raise FormatError("这是图片（%s），ocr 为 off，没有做文字识别。要读出图片里的文字，请把 ocr 设为 auto 再试" % kind.detail)
    image = ocr.open_image(path) if ocr.has_pillow() else None    # a broken file is said before loading
    reader = ocr.Reader.get(deadline)
    reader.load()
    image = image or ocr.open_image(path)          # Pillow comes with the engine
    frames = getattr(image, "n_frames", 1) if kind.kind == "tiff" else 1
    start = max(1, getattr(out, "start_page", None) or 1)
    out.page_count = frames if frames > 1 else None
    notes = []

    def frame(number):
        """Frame ``number`` as its own picture (seeking is done on this thread only)."""
        if number > frames:
            return None
        image.seek(number - 1)
        return image.copy()

    try:
        _frames(reader, frame, start, frames, out, notes)
    finally:
        reader.drop()
    if notes and not out.size:
        raise FormatError("；".join(notes) + "。如果图片里确实有文字，可能是太小、太模糊或倾斜过大，请换一张更清晰的图片再试",
                          empty_ocr=True)
    out.warnings.extend(notes)


def _frames(reader, frame, start, frames, out, notes):
    """Read the frames from ``start``; the next frame is detected while this one is recognised."""
    for number in range(start, frames + 1):
        if not reader.can_start() and number > start:
            raise ocr.OutOfTime(number)
        label = "第 %d 页" % number if frames > 1 else "图片"
        blocks, confidence, note = reader.read(lambda: frame(number), label, key=number,
                                               upcoming=(number + 1, lambda: frame(number + 1)))
        if frames > 1:
            out.page(number)
        if note:
            notes.append(note)
        ocr.emit(out, blocks)
