"""Plain text and Markdown (.txt/.md and any other text the sniffer calls text).

Kept as written: a Markdown file already carries its structure, and a text file's line breaks
may matter (addresses, poems, logs). Only the encoding is decided (xlakit.text: BOM, UTF-8,
UTF-16, then the legacy encodings scored: GB18030, Big5, Shift-JIS, cp125x, KOI8, cp866, EBCDIC...)
and line ends normalised; runs of blank lines fold to one.

Bytes the sniffer could not place (``unknown``: it tries only UTF-8 and GB18030, so a cp866 or
cp1256 file looks binary to it) are taken too when ``xlakit.text`` finds they read as writing;
UTF-16 without a byte-order mark and text with a few stray NUL bytes are taken too (``_rescued``),
and such bytes that turn out to be a web page are read as one (``html.convert_text``), not as
their tags. Anything else gets the same "not a document" refusal as before.
"""
import re

from .. import text as textlib
from .base import FormatError
from .pdf_fontmap import plausible

NAME = "text"
LABEL = "纯文本 / Markdown"

MAX_TEXT = 64 << 20


def accepts(kind):
    if kind.kind in ("text", "xml", "unknown"):
        return True, None
    return False, "不是纯文本"


# what real writing is made of: ASCII, Latin letters, general punctuation, CJK symbols and
# punctuation, kana, CJK ideographs, Hangul, full-width forms (random bytes read as UTF-16 spread
# over the whole plane and rarely stay inside these)
_WRITING = re.compile("[\t\n\r\x20-\x7e\u00a0-\u024f\u2000-\u206f\u3000-\u30ff\u3400-\u9fff"
                      "\uac00-\ud7af\uff00-\uffef]")
_HTML = re.compile(r"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)


def _rescued(raw):
    """(text, codec) for bytes the sniffer called binary that are text after all, else None:
    UTF-16 without a byte-order mark (Chinese text in UTF-16 has almost no NUL bytes, so it does
    not look like UTF-16 to a NUL count), or text with a few stray NUL bytes (a page saved by a
    broken tool), which are dropped."""
    even = raw[:len(raw) // 2 * 2]
    found = []
    for codec in ("utf-16-le", "utf-16-be"):
        try:
            text = even.decode(codec)
        except UnicodeDecodeError:
            continue
        sample = text[:20000]
        if len(sample) >= 4 and len(_WRITING.findall(sample)) >= 0.97 * len(sample):
            # both byte orders of CJK text read as CJK: the one in everyday code pages wins
            found.append((plausible(sample[:2000]), codec == "utf-16-le", text, codec))
    if found:
        best = max(found, key=lambda f: f[:2])
        return best[2], best[3]
    nuls = raw.count(b"\x00")
    if nuls and nuls <= max(2, len(raw) // 5000):
        cleaned = raw.replace(b"\x00", b"")
        if textlib.looks_like_text(cleaned[:65536]):
            text, codec, _reason = textlib.decode(cleaned)
            sample = text[:20000]
            controls = sum(1 for c in sample if ord(c) < 32 and c not in "\t\r\n\f")
            if controls <= len(sample) // 1000:
                return text, codec
    return None


def convert(path, kind, out, deadline=None):
    rescued = None
    with open(path, "rb") as fh:
        if kind.kind == "unknown" and not textlib.looks_like_text(fh.read(65536)):
            fh.seek(0)
            rescued = _rescued(fh.read(MAX_TEXT))
            if rescued is None:
                raise FormatError("无法作为文档读取（%s），read_document 读不了。支持 docx、doc、wps、odt、pdf、pptx、ppt、"
                                  "rtf、html、md、txt。" % kind.detail, kind=kind.kind)
        fh.seek(0)
        raw = fh.read(MAX_TEXT + 1)
    if len(raw) > MAX_TEXT:
        raw = raw[:MAX_TEXT]
        out.warnings.append("文件超过 64 MB，只读取了前 64 MB")
    if rescued is not None:
        text, codec = rescued
        reason = ""
        if codec.startswith("utf-16"):
            out.warnings.append("文件是没有字节序标记（BOM）的 %s 编码文本，已按此读取" % codec.upper())
        else:
            out.warnings.append("文件里夹着 %d 个空字节（NUL），已去掉后读取" % raw.count(b"\x00"))
    else:
        text, codec, reason = textlib.decode(raw)
    out.encoding = codec
    if kind.kind == "unknown" and _HTML.match(text[:4096]):
        # a web page the sniffer could not place (a stray NUL, an encoding it does not try, a
        # charset label that lies): read as a page, not as its tags
        from .html import convert_text
        kind.kind, kind.detail, kind.encoding = "html", "网页（%s）" % textlib.label(codec), codec
        convert_text(text, out, deadline)
        return
    if kind.kind in ("text", "unknown"):
        # the sniffer's guess (UTF-8 or GB18030 only) gives way to the detector's answer
        kind.kind, kind.detail, kind.encoding = "text", "纯文本（%s）" % textlib.label(codec), codec
        if not codec.startswith("utf") and codec not in ("ascii", "gb18030"):
            out.warnings.append("文件不是 UTF-8：%s" % reason)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip("\n")
    if out.title is None:
        m = re.match(r"\s*#\s+(.+)", text)
        if m:
            out.title = m.group(1).strip()
    # Feed in blocks of paragraphs so a huge file stops early like the other formats.
    start = 0
    while start < len(text):
        end = text.find("\n\n", start + 4096)
        end = len(text) if end < 0 else end
        out.raw(text[start:end].strip("\n"))
        start = end + 2
