"""Plain text and Markdown (.txt/.md and any other text the sniffer calls text).

Kept as written: a Markdown file already carries its structure, and a text file's line breaks
may matter (addresses, poems, logs). Only the encoding is decided (xlakit.text: BOM, UTF-8,
UTF-16, GB18030) and line ends normalised; runs of blank lines fold to one.
"""
import re

from .. import text as textlib

NAME = "text"
LABEL = "纯文本 / Markdown"

MAX_TEXT = 64 << 20


def accepts(kind):
    if kind.kind in ("text", "xml"):
        return True, None
    return False, "不是纯文本"


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        raw = fh.read(MAX_TEXT + 1)
    if len(raw) > MAX_TEXT:
        raw = raw[:MAX_TEXT]
        out.warnings.append("文件超过 64 MB，只读取了前 64 MB")
    text, codec, reason = textlib.decode(raw)
    out.encoding = codec
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
