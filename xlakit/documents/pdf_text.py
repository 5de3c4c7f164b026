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
moving along the line. Copies that pypdf would join into one piece (inside one TJ array, a line
redrawn after a tiny Td) are taken out glyph by glyph before extraction (``pdf_bold``); spacing
accents drawn beside their letter are joined to it afterwards (``_accents``, then NFC).
Before extraction, a CJK font without a ToUnicode map is given one for the
page's codes from its collection's table (``cid_unicode.prepare``); after it, a page whose columns
were drawn row by row is put in column order (``pdf_columns``).
"""

import re
import unicodedata

from .cid_unicode import prepare
from .pdf_bold import strip_copies
from .pdf_columns import order
from .pdf_spaces import install as _spaces

_spaces()            # word gaps in Type0 fonts without a space glyph (pdf_spaces)

LOOK_BACK = 8        # fake-bold copies follow each other; no need to look further

# Spacing accents that TeX-made and some older PDFs draw as glyphs of their own next to the
# letter ("prote\u00b4ge\u00b4"), with the combining mark each one stands for and the letters it
# may sit on (so "don\u00b4t", an acute used as an apostrophe, stays as written). ASCII ^ and `
# are left alone: in running text they are code or formulas more often than accents.
ACCENTS = {
    "\u00b4": ("\u0301", "aeiouyAEIOUY"), "\u02cb": ("\u0300", "aeiouAEIOU"),
    "\u00a8": ("\u0308", "aeiouyAEIOUY"), "\u02c6": ("\u0302", "aeiouAEIOU"),
    "\u02dc": ("\u0303", "anoANO"), "\u00b8": ("\u0327", "cCsStT"), "\u02c7": ("\u030c", "cdenrstzCDENRSTZ"),
    "\u02da": ("\u030a", "auAU"), "\u02dd": ("\u030b", "ouOU"), "\u02d8": ("\u0306", "agAG"),
}
_AFTER = re.compile("([A-Za-z])([%s])" % re.escape("".join(ACCENTS)))
_BEFORE = re.compile("([%s])([A-Za-z])" % re.escape("".join(ACCENTS)))


def _accents(text):
    """Letters and the spacing accents drawn beside them joined into one accented letter (NFC),
    the accent after the letter or, failing that, before it. Only pairs that make a letter of
    their own are joined; anything else is left as drawn."""
    if not any(c in ACCENTS for c in text):
        return text

    def after(m):
        mark, letters = ACCENTS[m.group(2)]
        joined = unicodedata.normalize("NFC", m.group(1) + mark)
        return joined if m.group(1) in letters and len(joined) == 1 else m.group(0)

    def before(m):
        mark, letters = ACCENTS[m.group(1)]
        joined = unicodedata.normalize("NFC", m.group(2) + mark)
        return joined if m.group(2) in letters and len(joined) == 1 else m.group(0)
    return _BEFORE.sub(before, _AFTER.sub(after, text))


def _position(cm, tm):
    """Where a piece starts on the page: the text matrix's origin through the current CTM."""
    x, y = tm[4], tm[5]
    return cm[0] * x + cm[2] * y + cm[4], cm[1] * x + cm[3] * y + cm[5]


def page_text(page):
    return unicodedata.normalize("NFC", _accents(_page_text(page)))


def _times(a, b):
    """The affine matrix ``a`` then ``b`` (PDF's row-vector order, as ``a b cm`` nests)."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


class _Forms:
    """Where each form XObject is drawn, so pieces inside forms get page positions.

    Why: pypdf extracts a form's text with a fresh matrix, so the visitor reports its pieces in the
    form's own space. The same form drawn twice (a label or a header stamped at two places, or
    pdfminer's issue-1113 sample, two forms that draw each other) then reports the same text at the
    same spot twice, and the fake-bold filter above dropped the second as a copy. The CTM at each
    ``Do`` is kept on a stack: it takes effect at the form's first operator (pypdf first reports
    the text pending before the ``Do`` in the outer space) and ends with the ``Do``; an image, an
    empty form, or one pypdf skips as a loop (its guard stays) never gets as far as an operator.
    A form's own /Matrix is not applied (pypdf does not say which form it is; it is nearly always
    the identity), which only matters for the positions, not the text."""

    def __init__(self):
        self.stack, self.pending = [], None

    def before(self, operator, operands, cm, tm):
        if self.pending is not None:
            self.stack.append(self.pending)
            self.pending = None
        if operator == b"Do":
            try:
                here = [float(v) for v in cm]
                self.pending = _times(here, self.stack[-1]) if self.stack else here
            except (TypeError, ValueError, IndexError):
                self.pending = self.stack[-1] if self.stack else None

    def after(self, operator, operands, cm, tm):
        if operator != b"Do":
            return
        if self.pending is not None:        # never entered: an image, an empty or a skipped form
            self.pending = None
        elif self.stack:
            self.stack.pop()

    def on_page(self, cm):
        return _times(cm, self.stack[-1]) if self.stack else cm


def _page_text(page):
    pieces = []

    fonts = {}
    forms = _Forms()

    def visit(text, cm, tm, font, size):
        try:
            cm = forms.on_page([float(v) for v in cm])
            pos = _position(cm, tm)
            scale = max(abs(cm[0]), abs(cm[3]), 1e-6) * max(abs(tm[0]), abs(tm[3]), 1e-6)
            pieces.append((text, pos, max(1.0, 0.12 * (size or 0) * scale), (size or 0) * scale,
                           _metrics(fonts, font)))
        except (TypeError, IndexError, ValueError):
            pieces.append((text, None, 0, 0, None))

    prepare(page)
    strip_copies(page)          # copies inside one line, which pypdf would join into one piece
    text = page.extract_text(visitor_text=visit, visitor_operand_before=forms.before,
                             visitor_operand_after=forms.after) or ""
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
    spaced, gaps = _spaced(kept)
    return spaced if dropped or gaps else text


def _metrics(cache, font):
    """pypdf's metrics of a simple (one-byte) font, by the font dictionary; None for a composite
    font (its text is Unicode, its widths are by CID) or one pypdf cannot read."""
    if font is None:
        return None
    key = id(font)
    if key not in cache:
        try:
            from pypdf.generic._font import Font
            metrics = Font.from_font_resource(font)
            cache[key] = None if str(metrics.sub_type).lstrip("/") == "Type0" else metrics
        except Exception:  # noqa: BLE001 - no metrics: the width is estimated
            cache[key] = None
    return cache[key]


def _width(text, size, metrics):
    """How far ``text`` advances at ``size`` (page units) and whether that is measured (the font's
    own widths) or estimated (an em per CJK character, 0.55 em for others)."""
    if metrics is not None and all(" " <= c <= "~" for c in text):
        widths = metrics.character_widths
        default = widths.get("default") or 500
        return sum(widths.get(c, default) for c in text) * size / 1000.0, True
    return sum(1.0 if ord(c) >= 0x2E80 else 0.55 for c in text) * size, False


def _spaced(pieces):
    """The pieces joined, with a space where pypdf put none between two pieces of one line that
    do not touch: the next starts left of where the last started (drawn out of order: form
    labels, table cells) or clearly beyond where the last ends (a column or cell gap: 0.8 em past
    its measured end, which leaves room for letter and word spacing, 1.5 em past an estimated
    one). pypdf judges gaps by its own running
    width, which TJ offsets and odd fonts throw off ("HandgunLong", "ScribbleStraight", "thetreaty"
    between two form columns). Returns (text, spaces added)."""
    out, gaps, last = [], 0, None
    for piece in pieces:
        chars, pos, size = piece[0], piece[1], piece[3]
        if last is not None and chars and out and pos is not None and size > 0:
            before, start, last_size, metrics = last
            if before and not before[-1].isspace() and not chars[0].isspace() \
                    and abs(pos[1] - start[1]) < 0.3 * max(size, last_size):
                width, measured = _width(before, last_size, metrics)
                beyond = start[0] + width + (0.8 if measured else 1.5) * max(size, last_size)
                if pos[0] < start[0] - 0.5 * size or pos[0] > beyond:
                    out.append(" ")
                    gaps += 1
        out.append(chars)
        if pos is not None and chars:
            last = (chars, pos, piece[3], piece[4] if len(piece) > 4 else None)
        elif chars:
            last = None
    return "".join(out), gaps
