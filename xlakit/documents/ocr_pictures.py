"""Pictures inside a docx or pptx whose text is all in pictures (a pasted scan, screenshots on
slides): when the converter found no text at all, each picture in the package's media folder is
read by OCR, in the order the package names them (image1, image2, ... is insertion order).

Only then: a document with real text keeps its text, and its logos and photos are not read.
"""
import re
import zipfile

from . import ocr
from .base import FormatError, zip_read

MEDIA = {"docx": "word/media/", "pptx": "ppt/media/"}
PICTURE = re.compile(r"\.(png|jpe?g|bmp|gif|tiff?|webp)$", re.I)
MIN_BYTES = 2048          # icons and bullets are not worth a second of OCR


def _natural(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def read(path, kind, out, deadline=None):
    try:
        with zipfile.ZipFile(path) as zf:
            names = sorted((i.filename for i in zf.infolist() if i.filename.startswith(MEDIA[kind.kind])
                            and PICTURE.search(i.filename) and i.file_size >= MIN_BYTES), key=_natural)
            if not names:
                return
            reader = ocr.Reader.get(deadline)
            try:
                reader.load()
            except ocr.Missing as exc:
                out.warnings.append("文档里只有图片，没有文字：%s" % exc)
                return
            notes = []
            for number, name in enumerate(names, 1):
                if not reader.can_start() and number > 1:
                    out.warnings.append("时间不够，文档里 %d 张图片只识别了前 %d 张" % (len(names), number - 1))
                    return
                try:
                    image = ocr.open_image(zip_read(zf, name))
                except FormatError as exc:
                    notes.append("图片 %d 无法识别：%s" % (number, exc))
                    continue
                if len(names) > 1:
                    out.section("图片 %d" % number)
                blocks, _conf, note = reader.read(image, "图片 %d" % number)
                if note:
                    notes.append(note)
                ocr.emit(out, blocks)
            out.warnings.append("文档里只有图片，以上文字由文字识别（OCR）从 %d 张图片读出，可能有个别错字" % len(names))
            out.warnings.extend(notes)
    except (zipfile.BadZipFile, OSError):
        return
