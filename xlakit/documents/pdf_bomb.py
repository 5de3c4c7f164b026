"""Decompression bombs in a PDF page: pictures (and drawings) whose compressed data expands past any
real document's.

Why a check of our own, before a page is called a scan: a page with no text and one picture is
handed to OCR, which decodes the picture (or has pdfium render the page, decoding it anyway). A
Flate stream of under 1 MB can expand to gigabytes; pypdf stops at 75 MB and then pdfium tries,
holding hundreds of MB for nothing (issue 34: a crafted PDF spent 37 s on an OCR install and ended
with "no text found"). So before any OCR decision the page's images are sized from what they
declare (width x height x colour components x bits) and, for Flate data, by actually inflating
it in bounded steps with the output thrown away: more output than declared, or a declared size
past :data:`MAX_PIXELS`, is a bomb, and the file is refused with a Chinese message, without OCR.

Limits: 200 million pixels is a 600 dpi A2 sheet (7016 x 9933 is A3 at 600 dpi: 70 million);
blank scans compress a thousand to one honestly, so the ratio alone is never the test, only
output beyond what the image says it holds."""
import zlib

from .base import FormatError

MAX_PIXELS = 200 * 1000 * 1000
MAX_IMAGES = 200                 # image XObjects looked at per page (forms within forms included)
STEP = 1 << 20                   # bytes inflated per step
COMPONENTS = {"/DeviceGray": 1, "/G": 1, "/CalGray": 1, "/Indexed": 1, "/I": 1, "/Separation": 1,
              "/DeviceRGB": 3, "/RGB": 3, "/CalRGB": 3, "/Lab": 3, "/DeviceCMYK": 4, "/CMYK": 4}
FLATE = ("/FlateDecode", "/Fl")

MESSAGE = ("这个 PDF 第 %d 页的%s，疑似“压缩炸弹”（恶意或严重损坏的文件），为保护电脑已停止读取，也不做文字识别。"
           "请确认文件来源；如果是正常文件，请用 PDF 阅读器打开后另存或打印成新的 PDF 再试")


class Bomb(FormatError):
    """A page whose data expands past what any real document holds (Chinese message)."""


def check_page(page, number):
    """Raise :class:`Bomb` when page ``number`` holds a decompression bomb; quiet otherwise
    (a structure it cannot follow is left to the readers, which fail on their own)."""
    for image in _images(page):
        problem = _image_problem(image)
        if problem:
            raise Bomb(MESSAGE % (number, problem))


def limit_error(exc):
    """True for pypdf's "output limit reached" (its own bomb guard, e.g. on a content stream)."""
    return type(exc).__name__ == "LimitReachedError"


def content_bomb(number):
    return Bomb(MESSAGE % (number, "内容数据解压后超过 PDF 阅读库的上限"))


def _images(page):
    seen, out = set(), []
    todo = [page.get("/Resources")]
    while todo and len(out) < MAX_IMAGES:
        resources = todo.pop()
        try:
            resources = resources.get_object() if resources is not None else None
            xobjects = resources.get("/XObject") if resources is not None else None
            xobjects = xobjects.get_object() if xobjects is not None else {}
            refs = list(xobjects.values())
        except Exception:  # noqa: BLE001 - damaged resources: nothing to look at here
            continue
        for ref in refs:
            key = (getattr(ref, "idnum", None), getattr(ref, "generation", None))
            if key[0] is not None and key in seen:
                continue
            seen.add(key)
            try:
                obj = ref.get_object()
                subtype = obj.get("/Subtype")
            except Exception:  # noqa: BLE001
                continue
            if subtype == "/Image":
                out.append(obj)
            elif subtype == "/Form":
                todo.append(obj.get("/Resources"))
    return out


def _image_problem(image):
    try:
        width, height = int(image.get("/Width", 0)), int(image.get("/Height", 0))
        bits = int(image.get("/BitsPerComponent", 8) or 8)
    except (TypeError, ValueError):
        return None
    if width <= 0 or height <= 0:
        return None
    if width * height > MAX_PIXELS:
        return "图片声明为 %d × %d 像素（%.0f 亿像素，真实扫描件远到不了）" % (width, height, width * height / 1e8)
    if image.get("/ImageMask"):
        components, bits = 1, 1
    else:
        components = _components(image.get("/ColorSpace"))
    declared = (width * components * max(bits, 1) + 7) // 8 * height
    filters = image.get("/Filter")
    try:
        filters = filters.get_object() if filters is not None else None
    except Exception:  # noqa: BLE001
        return None
    first = filters[0] if isinstance(filters, list) and filters else filters
    if first not in FLATE:
        return None
    data = getattr(image, "_data", None)          # the encoded bytes (pypdf decodes on get_data)
    if not isinstance(data, (bytes, bytearray)) or not data:
        return None
    # rows may carry a predictor byte each; a second filter (rare) may expand once more
    allowed = declared + height + STEP if not isinstance(filters, list) or len(filters) == 1 else 4 * declared + STEP
    inflated = _inflated_size(bytes(data), allowed)
    if inflated > allowed:
        return "图片数据解压后超过它声明的大小（%d 字节压缩数据解出 %.0f MB 以上，声明只有 %.1f MB）" % (
            len(data), inflated / 1048576.0, declared / 1048576.0)
    return None


def _components(space):
    try:
        space = space.get_object() if space is not None else None
        if isinstance(space, list) and space:
            if space[0] == "/ICCBased":
                return int(space[1].get_object().get("/N", 3))
            if space[0] in ("/Indexed", "/I", "/Separation", "/Pattern"):
                return 1
            if space[0] == "/DeviceN":
                return max(1, len(space[1]))
            space = space[0]
    except Exception:  # noqa: BLE001
        return 4
    return COMPONENTS.get(space, 4)       # unknown: the largest common one (no false alarms)


def _inflated_size(data, allowed):
    """Bytes ``data`` inflates to, counted in STEP pieces, stopping once past ``allowed``.
    A broken stream counts what came out before the damage."""
    for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):     # zlib header, else raw deflate
        inflater = zlib.decompressobj(wbits)
        total, pending = 0, data
        try:
            while True:
                chunk = inflater.decompress(pending, STEP)
                total += len(chunk)
                if total > allowed:
                    return total
                pending = inflater.unconsumed_tail
                if not chunk and not pending:
                    return total
        except zlib.error:
            if total:
                return total
    return 0
