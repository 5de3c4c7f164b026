"""Text the way Chinese office files and pages come: decoding with a reason, width, cutting.

- :func:`detect_encoding` / :func:`decode`: a BOM decides; else UTF-16 without BOM by the parity
  of its zero bytes; else strict UTF-8 (a damaged spot in a long UTF-8 export is still UTF-8);
  else GB18030, the superset of GBK/GB2312 that Chinese Excel, WPS and Notepad write as "ANSI".
  The reason is returned so a tool can tell the user what it assumed.
- :func:`width`: display width with CJK and full-width characters counted double (column widths,
  the CLI's tables, chart labels).
- :func:`cut` / :func:`cut_lines`: shorten long text and long single lines with a visible marker
  that says how much was left out, so one minified line cannot eat a whole answer.
"""
import codecs
import unicodedata

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

LABELS = {"utf-8-sig": "UTF-8（带 BOM）", "utf-8": "UTF-8", "gb18030": "GBK/GB18030", "utf-16": "UTF-16",
          "utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32": "UTF-32", "ascii": "ASCII"}


def decode_prefix(raw, encoding, errors="strict"):
    """Decode that tolerates a multi-byte character cut off at the end of a sample."""
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    return decoder.decode(raw, final=False)


def detect(raw):
    """``(codec, reason)`` for the bytes ``raw`` (a whole file or its beginning)."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, "文件开头有 %s 的字节顺序标记（BOM）" % LABELS[name]
    head = raw[:65536]
    if b"\x00" in head:
        # UTF-16 without a BOM: the zero bytes (high bytes of ASCII ',', '\n', digits) all sit on
        # one side. Chinese characters have no zero byte, so only the parity is telling.
        even, odd = head[0::2].count(0), head[1::2].count(0)
        for zeros, other, name in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
            if zeros >= 2 and other <= zeros * 0.02:
                try:
                    decode_prefix(head[:len(head) // 2 * 2], name)
                    return name, "没有 BOM，但零字节都在同一侧，是 %s" % LABELS[name]
                except UnicodeDecodeError:
                    pass
    try:
        decode_prefix(raw, "utf-8")
        return "utf-8", "按 UTF-8 解码没有错误"
    except UnicodeDecodeError:
        pass
    # Not clean UTF-8. A GBK file fails on nearly every Chinese character; a UTF-8 export with
    # a damaged spot fails a handful of times among many valid multi-byte characters.
    text = raw.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    multibyte = sum(1 for ch in text[:200000] if ord(ch) > 127) - bad
    if bad * 100 < len(raw) and multibyte > bad * 20:
        return "utf-8", "基本是 UTF-8，只有 %d 处损坏的字节（已替换为 �）" % bad
    return "gb18030", "不是 UTF-8，按中文 Windows 常用的 GBK/GB18030 解码"


def detect_encoding(raw):
    """Codec name only (see :func:`detect`)."""
    return detect(raw)[0]


def decode(raw, encoding=None):
    """``(text, codec, reason)``. ``encoding`` forces a codec; undecodable bytes become U+FFFD
    (never an exception) and the reason says how many there were."""
    if encoding:
        codec, reason = encoding, "按指定的编码 %s" % encoding
    else:
        codec, reason = detect(raw)
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError:
        text = raw.decode(codec, "replace")
        reason += "；有 %d 处无法解码的字节已替换为 �" % text.count("\ufffd")
    except LookupError:
        codec, reason = detect(raw)
        text = raw.decode(codec, "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, codec, reason


def label(codec):
    return LABELS.get(codec, codec)


def char_width(ch):
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width(text):
    """Columns ``text`` takes on screen: CJK and full-width characters count double."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def fit_width(text, columns, marker="…"):
    """``text`` shortened to at most ``columns`` display columns, ending with ``marker`` if cut."""
    if width(text) <= columns:
        return text
    room = columns - width(marker)
    out, used = [], 0
    for ch in text:
        w = char_width(ch)
        if used + w > room:
            break
        out.append(ch)
        used += w
    return "".join(out) + marker


def cut(text, limit, marker="…"):
    """``text`` at most ``limit`` characters; a cut ends with ``marker``."""
    if len(text) <= limit:
        return text
    return text[:max(0, limit - len(marker))] + marker


def cut_line(line, limit):
    """One long line shortened with a marker that says how many characters were left out."""
    if len(line) <= limit:
        return line, False
    return line[:limit] + "…（此行共 %d 字，省略 %d 字）" % (len(line), len(line) - limit), True


def cut_lines(text, line_limit):
    """Every line of ``text`` at most ``line_limit`` characters; returns (text, lines cut)."""
    out, n = [], 0
    for line in text.split("\n"):
        line, was_cut = cut_line(line, line_limit)
        n += was_cut
        out.append(line)
    return "\n".join(out), n


def human_size(n):
    """``3.1KB``-style size (binary units, at most one decimal, ``.0`` dropped)."""
    if n is None:
        return None
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            if unit == "B":
                return "%dB" % n
            text = ("%.1f" % n).rstrip("0").rstrip(".")
            return text + unit
        n /= 1024.0
    return None   # pragma: no cover
