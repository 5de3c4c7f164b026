"""List and heading numbers of an OpenDocument text as LibreOffice shows them ("一、", "（二）",
"1.", "1.2.", "③").

Why: like Word's automatic numbering (``numbering``), ODF numbers are not in the text. A list's
``text:style-name`` names a ``text:list-style`` whose ``text:list-level-style-number`` says, per
level, the format (``style:num-format``: "1", "a", "I", "一, 二, 三, ...", "①, ②, ③, ..."), prefix
and suffix, how many levels the label shows (``text:display-levels``) and the start value; a level
with ``text:list-level-style-bullet`` is a bullet list. Headings are numbered by the document's
``text:outline-style``. Without this a numbered ODF list came out as bullets and "一、总则" as
"总则". Counting follows LibreOffice: each list starts afresh unless it says
``text:continue-numbering="true"`` or ``text:continue-list``; a list item may set
``text:start-value``; a heading level counts on and resets the levels below it.
"""
from .numbering import format_number

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
LOEXT = "{urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0}"

FORMATS = {"1": "decimal", "a": "lowerLetter", "A": "upperLetter", "i": "lowerRoman", "I": "upperRoman",
           "": "none"}
SERIES = {"一": "chineseCounting", "壹": "chineseLegalSimplified", "①": "decimalEnclosedCircle",
          "甲": "ideographTraditional", "子": "ideographZodiac", "１": "decimalFullWidth",
          "⑴": "decimalEnclosedParen", "⒈": "decimalEnclosedFullstop"}


def _fmt(value):
    if value is None:
        return "decimal"
    if value in FORMATS:
        return FORMATS[value]
    return SERIES.get(value.strip()[:1], "decimal")


def _int(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class _Level(object):
    __slots__ = ("fmt", "prefix", "suffix", "display", "start", "template")

    def __init__(self, el):
        self.fmt = _fmt(el.get(STYLE + "num-format"))
        self.prefix = el.get(STYLE + "num-prefix") or ""
        self.suffix = el.get(STYLE + "num-suffix") or ""
        self.display = max(1, _int(el.get(TEXT + "display-levels"), 1))
        self.start = _int(el.get(TEXT + "start-value"), 1)
        self.template = el.get(LOEXT + "num-list-format")


def _label(levels, counts, level):
    """The label of an item at ``level`` (1-based) with ``counts`` per level."""
    spec = levels.get(level)
    if spec is None or spec.fmt == "none":
        return None
    if spec.template:
        text = spec.template
        for k in range(level, 0, -1):
            shown = levels.get(k)
            text = text.replace("%%%d%%" % k, format_number(counts.get(k, 1), shown.fmt if shown else "decimal"))
        return text
    parts = []
    for k in range(max(1, level - spec.display + 1), level + 1):
        shown = levels.get(k)
        parts.append(format_number(counts.get(k, 1), shown.fmt if shown else "decimal"))
    return spec.prefix + ".".join(parts) + spec.suffix


class Numbers(object):
    """The numbering of one document: list styles and the outline style, and the counters."""

    def __init__(self, roots):
        self.styles = {}            # list style name -> {level: _Level or None (bullet)}
        self.outline = {}           # heading level -> _Level
        for root in roots:
            if root is None:
                continue
            for style in root.iter(TEXT + "list-style"):
                levels = {}
                for el in style:
                    level = _int(el.get(TEXT + "level"), 0)
                    if el.tag == TEXT + "list-level-style-number":
                        levels[level] = _Level(el)
                    elif level:
                        levels[level] = None
                self.styles[style.get(STYLE + "name")] = levels
            for style in root.iter(TEXT + "outline-style"):
                for el in style.iter(TEXT + "outline-level-style"):
                    self.outline[_int(el.get(TEXT + "level"), 0)] = _Level(el)
        self.heads = {}             # heading level -> count
        self.kept = {}              # list style name / xml:id -> counts where a list stopped

    def heading(self, level, el):
        """The heading's label ("一、", "（二）") or None; counts the level on."""
        spec = self.outline.get(level)
        if spec is None or spec.fmt == "none" or el.get(TEXT + "is-list-header") == "true":
            return None
        restart = el.get(TEXT + "start-value")
        self.heads[level] = _int(restart, 0) if restart else self.heads.get(level, spec.start - 1) + 1
        for deeper in [k for k in self.heads if k > level]:
            del self.heads[deeper]
        return _label(self.outline, self.heads, level)

    def start(self, lst, style):
        """Counters for a top-level list: fresh, or those of the list it continues."""
        counts = {}
        if lst.get(TEXT + "continue-numbering") == "true" and style in self.kept:
            counts = self.kept[style]
        other = lst.get(TEXT + "continue-list")
        if other and other in self.kept:
            counts = self.kept[other]
        return counts

    def stop(self, lst, style, counts):
        self.kept[style] = counts
        ident = lst.get("{http://www.w3.org/XML/1998/namespace}id")
        if ident:
            self.kept[ident] = counts

    def item(self, style, level, counts, item):
        """The label of the next item at ``level`` (1-based) of a list in ``style``: "1.", "①",
        or None for a bullet level (the caller writes "-")."""
        levels = self.styles.get(style)
        if not levels or levels.get(level) is None:
            return None
        spec = levels[level]
        value = item.get(TEXT + "start-value")
        counts[level] = _int(value, 1) if value else counts.get(level, spec.start - 1) + 1
        for deeper in [k for k in counts if k > level]:
            del counts[deeper]
        return _label(levels, counts, level)
