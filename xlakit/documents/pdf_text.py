"""One PDF page's text through pypdf, with fake-bold copies removed and CJK fonts without a
ToUnicode map read through their collection's CID table (``cid_unicode``).

Why: PDF printers without a bold face (common in Chinese government and company PDFs) fake bold
by drawing the same text two to four times, shifted by a fraction of a point. pypdf then returns
every copy ("安徽安徽安徽安徽"), because each one is a real drawing. Viewers show it once, and so
must we: pypdf's text visitor reports each piece it puts into the page text with its position;
a piece whose text repeats one of the last few pieces at (almost) the same spot is a copy. The
page text is rebuilt from the pieces only when a copy was found and the pieces add up exactly to
what pypdf returned (otherwise pypdf's own text stands), so a page without fake bold is returned
untouched, and text that really repeats ("哈哈哈哈", a row of dashes) is kept: it is drawn once,
moving along the line. Before extraction, a CJK font without a ToUnicode map is given one for the
page's codes from its collection's table (``cid_unicode.prepare``); after it, a page whose columns
were drawn row by row is put in column order (``pdf_columns``).
"""

from .cid_unicode import prepare
from .pdf_bold import strip_copies
from .pdf_columns import order

LOOK_BACK = 8        # fake-bold copies follow each other; no need to look further


def _position(cm, tm):
    """Where a piece starts on the page: the text matrix's origin through the current CTM."""
    x, y = tm[4], tm[5]
    return cm[0] * x + cm[2] * y + cm[4], cm[1] * x + cm[3] * y + cm[5]


def page_text(page):
    pieces = []

    def visit(text, cm, tm, _font, size):
        try:
            pos = _position(cm, tm)
            scale = max(abs(cm[0]), abs(cm[3]), 1e-6) * max(abs(tm[0]), abs(tm[3]), 1e-6)
            pieces.append((text, pos, max(1.0, 0.12 * (size or 0) * scale), (size or 0) * scale))
        except (TypeError, IndexError, ValueError):
            pieces.append((text, None, 0, 0))

    prepare(page)
    strip_copies(page)          # copies inside one line, which pypdf would join into one piece
    text = page.extract_text(visitor_text=visit) or ""
    if not pieces or "".join(p[0] for p in pieces) != text:
        return text
    kept, recent, dropped = [], [], 0
    for piece in pieces:
        chars, pos = piece[0], piece[1]
        if chars.strip() and pos is not None:
            tol = piece[2]
            if any(t == chars and abs(p[0] - pos[0]) <= tol and abs(p[1] - pos[1]) <= tol for t, p in recent):
                dropped += 1
                continue
            recent = (recent + [(chars, pos)])[-LOOK_BACK:]
        kept.append(piece)
    columns = order([(p[0], p[1], p[3]) for p in kept])
    if columns is not None:
        return columns
    return "".join(p[0] for p in kept) if dropped else text
