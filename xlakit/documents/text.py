"""Plain text and Markdown (.txt/.md and any other text the sniffer calls text).

Kept as written: a Markdown file already carries its structure, and a text file's line breaks
may matter (addresses, poems, logs). Only the encoding is decided (xlakit.text: BOM, UTF-8,
UTF-16, then the legacy encodings scored: GB18030, Big5, Shift-JIS, cp125x, KOI8, cp866, EBCDIC...)
and line ends normalised; runs of blank lines fold to one.

Bytes the sniffer could not place (``unknown``: it tries only UTF-8 and GB18030, so a cp866 or
cp1256 file looks binary to it) are taken too when ``xlakit.text`` finds they read as writing;
anything else gets the same "not a document" refusal as before.
"""
import re

from .. import text as textlib
from .base import FormatError

NAME = "text"
LABEL = "纯文本 / Markdown"

MAX_TEXT = 64 << 20


def accepts(kind):
    if kind.kind in ("text", "xml", "unknown"):
        return True, None
    return False, "不是纯文本"


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        if kind.kind == "unknown" and not textlib.looks_like_text(fh.read(65536)):
            raise FormatError("无法作为文档读取（%s），read_document 读不了。支持 docx、doc、wps、odt、pdf、pptx、ppt、"
                              "rtf、html、md、txt。" % kind.detail, kind=kind.kind)
        fh.seek(0)
        raw = fh.read(MAX_TEXT + 1)
    if len(raw) > MAX_TEXT:
        raw = raw[:MAX_TEXT]
        out.warnings.append("文件超过 64 MB，只读取了前 64 MB")
    text, codec, reason = textlib.decode(raw)
    out.encoding = codec
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
