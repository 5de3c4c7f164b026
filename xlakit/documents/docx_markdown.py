"""The markdown subset write_document accepts, parsed into blocks (no XML here).

Split from docx_write.py along its seam: ``parse`` turns what a model writes into blocks
(headings, paragraphs, lists with their levels, pipe tables, pictures, TOC, page breaks,
orientation switches); ``runs`` cuts a paragraph into bold/italic/code runs (``*斜体*`` may touch CJK,
never a Latin letter or digit); ``strip_invalid`` drops what XML 1.0 cannot hold before anything is
written, so what is read back is what was asked for. docx_write renders the blocks; write_document
uses ``plain`` for the answer's text.
"""
import re

from . import docx_layout, docx_media

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)([-*+•·])[ \t]+(.*)$")
_NUMBER = re.compile(r"^([ \t]*)(\d{1,3})[.)、][ \t]+(.*)$")
_RULE = re.compile(r"^[ \t]*(?:-[ \t]*){3,}$|^[ \t]*(?:\*[ \t]*){3,}$|^[ \t]*(?:_[ \t]*){3,}$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_PAGEBREAK = re.compile(r"^[ \t]*\\newpage[ \t]*$|^[ \t]*<pagebreak\s*/?>[ \t]*$", re.I)


def strip_invalid(text):
    """``text`` without the characters XML 1.0 cannot hold (C0 controls other than tab and line
    breaks, U+FFFE/U+FFFF), and how many were removed: they are dropped before anything is
    written, so what is read back is what was asked for."""
    cleaned, n = _BAD_XML.subn("", text)
    return cleaned, n




# ---------------------------------------------------------------- markdown subset -> blocks

def parse(text):
    """Blocks: ("h", level, text) ("p", text) ("li", kind, level, text, list_no) ("table", rows,
    header) ("rule",) ("pagebreak",) ("quote", text) ("img", caption, path, width_pct or None)
    ("toc",) ("orient", "landscape" | "portrait")."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = []
    para = []
    list_no = 0
    in_list = None     # "bullet" / "number" of the list being continued
    levels = {}        # nesting level -> (kind, list_no) of the list going on at that level

    def end_para():
        if para:
            blocks.append(("p", "\n".join(para)))
            para[:] = []

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            end_para()
            in_list = None if (i + 1 < len(lines) and not (_BULLET.match(lines[i + 1]) or _NUMBER.match(lines[i + 1]))) else in_list
            i += 1
            continue
        m = _HEADING.match(line)
        if m:
            end_para()
            in_list = None
            blocks.append(("h", len(m.group(1)), m.group(2)))
            i += 1
            continue
        if _PAGEBREAK.match(line):
            end_para()
            blocks.append(("pagebreak",))
            i += 1
            continue
        mi = docx_media.IMAGE_LINE.match(line)
        if mi:
            end_para()
            in_list = None
            pct = float(mi.group(3)) if mi.group(3) else None
            blocks.append(("img", mi.group(1).strip(), mi.group(2).strip().strip("<>").strip(), pct))
            i += 1
            continue
        if docx_layout.TOC_LINE.match(line):
            end_para()
            blocks.append(("toc",))
            i += 1
            continue
        mo = docx_layout.ORIENT_LINE.match(line)
        if mo:
            end_para()
            blocks.append(("orient", docx_layout.orientation_of(mo.group(1))))
            i += 1
            continue
        if _RULE.match(line) and not para:
            blocks.append(("rule",))
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith("|") and stripped.count("|") >= 2:
            end_para()
            in_list = None
            rows = []
            header = False
            while i < len(lines) and lines[i].strip().startswith("|"):
                row_line = lines[i].strip()
                if _TABLE_SEP.match(row_line):
                    if len(rows) == 1:
                        header = True
                    i += 1
                    continue
                rows.append(_split_row(row_line))
                i += 1
            blocks.append(("table", rows, header))
            continue
        mb = _BULLET.match(line)
        mn = None if mb else _NUMBER.match(line)
        if (mb or mn) and not (mb and _RULE.match(line)):
            end_para()
            kind = "bullet" if mb else "number"
            m = mb or mn
            level = min(len(m.group(1).replace("\t", "    ")) // 2, 8)
            # Each nesting level keeps its own list: "1. 2. (nested bullets) 3." goes on at 3
            # after the bullets instead of starting again at 1; a deeper list ends when an item
            # of a shallower level comes, so the next nested list starts afresh.
            if in_list is None:
                levels.clear()
            for deeper in [d for d in levels if d > level]:
                del levels[deeper]
            if levels.get(level, (None, 0))[0] != kind:
                list_no += 1
                levels[level] = (kind, list_no)
            in_list = kind
            blocks.append(("li", kind, level, m.group(3), levels[level][1]))
            i += 1
            continue
        if stripped.startswith(">"):
            end_para()
            blocks.append(("quote", stripped.lstrip(">").strip()))
            i += 1
            continue
        in_list = None
        para.append(line.strip())
        i += 1
    end_para()
    return blocks


def _split_row(line):
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [c.strip().replace("\\|", "|") for c in cells]


# *italic* must not touch an ASCII letter or digit on the outside (so "a*b*c" and "2*3*4" stay
# as written), but may touch CJK text: Chinese has no spaces, "这是*斜体*的" is italic.
_INLINE = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<![*A-Za-z0-9_])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![*A-Za-z0-9_])"
                     r"|`([^`\n]+)`")


def runs(text):
    """[(text, bold, italic, code)] for one paragraph's inline markup."""
    out = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], False, False, False))
        if m.group(1) is not None:
            inner = m.group(1)
            # *italic* inside bold
            for sub, _b, it, code in runs(inner):
                out.append((sub, True, it, code))
        elif m.group(2) is not None:
            out.append((m.group(2), False, True, False))
        else:
            out.append((m.group(3), False, False, True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False, False, False))
    return [r for r in out if r[0]]


def plain(text):
    """What read_document gives back for one paragraph's inline markup (for the read-back check)."""
    return "".join(r[0] for r in runs(text))
