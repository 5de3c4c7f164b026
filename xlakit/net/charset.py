"""Which encoding a response body is in, decided the way a browser does (BOM, header, ``<meta>``
or XML declaration, then UTF-8, then GB18030). Part of ``xlakit.http``."""
import re

_CHARSET_ALIASES = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030", "cp936": "gb18030",
    "ms936": "gb18030", "windows-936": "gb18030", "csgb2312": "gb18030", "euc-cn": "gb18030", "gb18030": "gb18030",
    "big5": "big5hkscs", "x-x-big5": "big5hkscs", "utf8": "utf-8", "unicode": "utf-8",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
}
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""", re.I)
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def normalize_charset(label):
    """A Python codec name for a web charset label, or None when Python has no such codec."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        import codecs
        return codecs.lookup(label).name if label not in ("utf-8-sig",) else label
    except LookupError:
        return None


def header_charset(content_type):
    m = re.search(r"charset\s*=\s*[\"']?([^\s;\"']+)", content_type or "", re.I)
    return m.group(1) if m else None


def decode_body(data, content_type=""):
    """``(text, encoding, reason)`` for a response body, in the order a browser decides: a BOM,
    the header's charset, ``<meta charset>`` (or the XML declaration) in the first 16 KB, then
    UTF-8 if the bytes are valid UTF-8, else GB18030 (what a Chinese page without labels almost
    always is). A label that does not decode the bytes strictly loses to the next source, since
    Chinese servers often send ``charset=utf-8`` for GBK pages; nothing decodes: the first
    candidate with replacement characters."""
    if not data:
        return "", "utf-8", "empty"
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, "replace"), codec.replace("-sig", ""), "bom"
    candidates = []
    head = data[:16384]
    for reason, label in (("header", header_charset(content_type)),
                          ("meta", (_META_CHARSET.search(head) or _XML_ENCODING.search(head) or [None, None])[1])):
        if isinstance(label, bytes):
            label = label.decode("ascii", "replace")
        codec = normalize_charset(label)
        if codec and codec not in [c for c, _ in candidates]:
            candidates.append((codec, reason))
    # a Latin-1/ASCII header label is what Java servers send by default for UTF-8 pages: weak
    weak = [(c, r) for c, r in candidates if r == "header" and c in ("cp1252", "ascii", "latin-1", "iso8859-1")]
    candidates = [x for x in candidates if x not in weak]
    for codec, reason in (("utf-8", "utf-8"), ("gb18030", "gb18030")):
        if codec not in [c for c, _ in candidates]:
            candidates.append((codec, reason))
    if weak:
        candidates.insert(len(candidates) - 1, weak[0])
    for codec, reason in candidates:
        try:
            return data.decode(codec), codec, reason
        except (UnicodeDecodeError, LookupError):
            continue
    codec, reason = candidates[0]
    return data.decode(codec, "replace"), codec, reason + "+replace"
