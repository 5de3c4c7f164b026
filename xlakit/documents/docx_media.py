"""Pictures in a hand-written .docx: image size from the file's own header, the inline drawing,
and the numbered caption below it.

Why by hand: the size must be known to scale the picture to the text width keeping its aspect
ratio, and reading four header layouts (PNG IHDR/pHYs, JPEG SOFn/JFIF, GIF screen descriptor, BMP
info header) is a few lines of stdlib, where an imaging library would be a download for nothing.
Everything here is checked before a byte is written: a missing, unreadable or unsupported picture
is a Chinese FormatError that says what to do.
"""
import re
import struct

from .base import FormatError

EMU_PER_TWIP = 635            # 914400 EMU per inch / 1440 twips per inch
EMU_PER_PX96 = 9525           # one pixel at 96 dpi
MAX_IMAGE_BYTES = 50 << 20

CONTENT_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp"}

# ![说明](path) alone on a line, optionally {width=60%}; the path may be wrapped in <...> when it
# holds spaces or brackets
IMAGE_LINE = re.compile(r"^[ \t]*!\[([^\]\n]*)\]\(\s*(<[^>\n]+>|[^)\n]+?)\s*(?:\s+\"[^\"\n]*\")?\)"
                        r"(?:\{\s*width\s*=\s*(\d{1,3}(?:\.\d+)?)\s*%\s*\})?[ \t]*$")


class Picture(object):
    """One picture read and checked: bytes, kind (png/jpeg/gif/bmp), pixel size, dots per inch."""

    def __init__(self, data, kind, width, height, dpi_x=96.0, dpi_y=96.0):
        self.data, self.kind = data, kind
        self.width, self.height = width, height
        self.dpi_x, self.dpi_y = dpi_x or 96.0, dpi_y or 96.0

    @property
    def ext(self):
        return "jpeg" if self.kind == "jpeg" else self.kind

    def natural_emu(self):
        """Printed size (EMU) at the picture's own resolution (96 dpi when it names none or a silly one)."""
        dx = self.dpi_x if 50 <= self.dpi_x <= 1200 else 96.0
        dy = self.dpi_y if 50 <= self.dpi_y <= 1200 else 96.0
        return int(self.width * 914400 / dx), int(self.height * 914400 / dy)


def load(path, shown):
    """A Picture for the file at ``path`` (``shown`` is how the user wrote it, for messages)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise FormatError("图片「%s」读不出来（%s）。请确认文件存在且有读取权限" % (shown, exc.strerror or exc))
    if len(data) > MAX_IMAGE_BYTES:
        raise FormatError("图片「%s」超过 50 MB，放进文档会太大。请先压缩或缩小图片" % shown)
    return parse(data, shown)


def parse(data, shown="图片"):
    head = data[:32]
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n"):
            return _png(data)
        if head.startswith(b"\xff\xd8"):
            return _jpeg(data, shown)
        if head[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return _checked(Picture(data, "gif", w, h), shown)
        if head.startswith(b"BM"):
            return _bmp(data, shown)
    except (struct.error, IndexError, ValueError):
        raise FormatError("图片「%s」已损坏（文件头不完整），无法放进文档。请重新生成或另存这张图片" % shown)
    kind = ("WebP" if head[:4] == b"RIFF" and head[8:12] == b"WEBP" else
            "SVG" if b"<svg" in data[:512].lower() else
            "TIFF" if head[:4] in (b"II*\x00", b"MM\x00*") else "未知格式")
    raise FormatError("图片「%s」是 %s，Word 文档里只能放 PNG、JPEG、GIF、BMP 图片。请先转换成 PNG 再写入" % (shown, kind))


def _checked(pic, shown):
    if pic.width <= 0 or pic.height <= 0 or pic.width > 100000 or pic.height > 100000:
        raise FormatError("图片「%s」的尺寸不对（%d×%d 像素），可能已损坏。请重新生成这张图片" % (shown, pic.width, pic.height))
    return pic


def _png(data):
    w, h = struct.unpack(">II", data[16:24])
    dpi_x = dpi_y = 96.0
    pos = 8
    while pos + 8 <= len(data) and pos < 1 << 20:
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        if ctype == b"pHYs" and length == 9:
            px, py, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            if unit == 1:                       # pixels per metre
                dpi_x, dpi_y = px * 0.0254, py * 0.0254
            break
        if ctype in (b"IDAT", b"IEND"):
            break
        pos += 12 + length
    return _checked(Picture(data, "png", w, h, dpi_x, dpi_y), "PNG")


def _jpeg(data, shown):
    pos, dpi = 2, (96.0, 96.0)
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            pos += 1
            continue
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            pos += 1 if marker == 0xFF else 2
            continue
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        seg = data[pos + 4:pos + 2 + length]
        if marker == 0xE0 and seg[:5] == b"JFIF\x00" and len(seg) >= 12:
            unit, dx, dy = struct.unpack(">BHH", seg[7:12])
            if unit == 1:
                dpi = (float(dx), float(dy))
            elif unit == 2:
                dpi = (dx * 2.54, dy * 2.54)
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            h, w = struct.unpack(">HH", seg[1:5])
            return _checked(Picture(data, "jpeg", w, h, dpi[0], dpi[1]), shown)
        if marker == 0xDA:
            break
        pos += 2 + length
    raise FormatError("JPEG 图片「%s」里找不到尺寸信息，可能已损坏。请重新生成或另存这张图片" % shown)


def _bmp(data, shown):
    header = struct.unpack("<I", data[14:18])[0]
    if header == 12:
        w, h = struct.unpack("<HH", data[18:22])
        return _checked(Picture(data, "bmp", w, h), shown)
    w, h = struct.unpack("<ii", data[18:26])
    px, py = struct.unpack("<ii", data[38:46]) if header >= 40 else (0, 0)
    return _checked(Picture(data, "bmp", abs(w), abs(h), px * 0.0254, py * 0.0254), shown)


def fit(pic, text_width_twips, text_height_twips, width_pct=None):
    """(cx, cy) in EMU: ``width_pct`` of the text width when given, else the text width (a small
    picture is not blown up past twice its own size); never taller than 80% of the text height;
    the aspect ratio is always kept."""
    nat_w, nat_h = pic.natural_emu()
    full = text_width_twips * EMU_PER_TWIP
    if width_pct:
        cx = full * min(max(width_pct, 1.0), 100.0) / 100.0
    else:
        cx = min(full, 2 * nat_w)
    cy = cx * nat_h / float(nat_w)
    max_h = text_height_twips * EMU_PER_TWIP * 0.8
    if cy > max_h:
        cx, cy = cx * max_h / cy, max_h
    return int(cx), int(cy)


def drawing_xml(rel_id, cx, cy, shape_id, name, descr):
    """One inline picture run (namespaces declared on the spot, so it can go into any document
    whatever prefixes that document binds)."""
    from xml.sax.saxutils import quoteattr
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    return ('<w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
            'distT="0" distB="0" distL="0" distR="0"><wp:extent cx="%d" cy="%d"/>'
            '<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="%d" name=%s descr=%s/>'
            '<wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="%s" noChangeAspect="1"/></wp:cNvGraphicFramePr>'
            '<a:graphic xmlns:a="%s"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
            '<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr>'
            '<pic:cNvPr id="%d" name=%s descr=%s/><pic:cNvPicPr><a:picLocks noChangeAspect="1" noChangeArrowheads="1"/>'
            '</pic:cNvPicPr></pic:nvPicPr><pic:blipFill><a:blip xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
            'r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/>'
            '<a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>'
            '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>'
            % (cx, cy, shape_id, quoteattr(name), quoteattr(descr), a, a, shape_id, quoteattr(name), quoteattr(descr),
               rel_id, cx, cy))


def caption_xml(style_id, number, text, esc, label="图"):
    """The caption paragraph: 图 N + the text, N a SEQ field (Word renumbers on update, the number
    written is already right so every reader shows it without an update)."""
    body = ('<w:r><w:t xml:space="preserve">%s </w:t></w:r>'
            '<w:fldSimple w:instr=" SEQ %s \\* ARABIC "><w:r><w:t>%d</w:t></w:r></w:fldSimple>' % (label, label, number))
    if text:
        body += '<w:r><w:t xml:space="preserve"> %s</w:t></w:r>' % esc(text)
    return '<w:p><w:pPr><w:pStyle w:val="%s"/></w:pPr>%s</w:p>' % (style_id, body)


def caption_style_xml(style_id, east_asia_font, latin_font):
    return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="caption"/><w:basedOn w:val="Normal"/>'
            '<w:next w:val="Normal"/><w:uiPriority w:val="35"/><w:unhideWhenUsed/><w:qFormat/>'
            '<w:pPr><w:spacing w:before="60" w:after="240"/><w:ind w:firstLineChars="0" w:firstLine="0"/>'
            '<w:jc w:val="center"/></w:pPr><w:rPr><w:rFonts w:ascii="%s" w:hAnsi="%s" w:eastAsia="%s" w:cs="%s"/>'
            '<w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>'
            % (style_id, latin_font, latin_font, east_asia_font, latin_font))


def picture_para_xml(run_xml):
    """The paragraph holding the picture: centred, kept with its caption, no first-line indent,
    single spacing so a line grid does not clip it."""
    return ('<w:p><w:pPr><w:keepNext/><w:spacing w:before="120" w:after="0" w:line="240" w:lineRule="auto"/>'
            '<w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="center"/></w:pPr>%s</w:p>' % run_xml)
