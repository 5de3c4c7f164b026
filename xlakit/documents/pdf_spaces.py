"""Word gaps in PDFs whose composite (Type0) fonts have no space glyph: pypdf takes the width of
character code 32 for the space.

Why: TeX, and many "print to PDF" drivers, write a line as one TJ array and the gaps between words
as offsets in it (``[<...>-326<...>]TJ``); no space character is drawn. pypdf puts a space where an
offset is wider than about half a space of the font. For a Type0 (CID) font it looks the space up
by its Unicode map and, when the subset has no space glyph, falls back to the width of *code 32*,
which in a CID font is just some glyph (816/1000 in a Latin Modern subset, a full em in many CJK
fonts). Every gap then looks narrower than half a space and whole paragraphs come out as
"weneedscience. Inordertotravel" (pdfplumber's issue-598 sample; English lines in Chinese PDFs made
the same way).

What: :func:`install` wraps ``Font.from_font_resource`` once: for a Type0 font whose Unicode map
has no space and whose code 32 is not a space, the space width becomes pypdf's own rule for a
font without a space glyph (half the default width), so a word gap (about a third of an em) is a
space again and kerning (a few hundredths of an em) stays none. Every other font is untouched.

Second, pages drawn row by row across columns (forms, two-column papers, tables whose cells are
drawn right to left): the next piece of a line often starts far to the *left* of the last one
(``-18.9 -0.05 TD``: the next column's line, a hair lower). pypdf keeps it on the same line and,
seeing no gap to the right, joins the two ("outside the" + "treaty, do not" -> "thetreaty": 199
such words on one IRS form). A move back by more than :data:`BACK` ems on the same line is
never the same run of text (accents and fake bold move back by a fraction of a letter), so it
ends the line there, as a move to another line does: the words stay apart and each column's
piece reaches the page-text visitor on its own, where ``pdf_columns`` can put columns in order.
"""
_INSTALLED = []
BACK = 2.0        # ems a piece may start left of the last one and still be on its line


def install():
    if _INSTALLED:
        return
    _install_breaks()
    try:
        from pypdf.generic._font import Font
    except ImportError:      # another pypdf layout: its own rule stands
        return
    original = Font.from_font_resource.__func__

    def from_font_resource(cls, pdf_font_dict, *args, **kwargs):
        font = original(cls, pdf_font_dict, *args, **kwargs)
        try:
            fix(font)
        except Exception:  # noqa: BLE001 - a font we cannot judge keeps pypdf's value
            pass
        return font

    Font.from_font_resource = classmethod(from_font_resource)
    _INSTALLED.append(True)


def fix(font):
    """Give ``font`` a space width when it is a Type0 font without a space glyph."""
    if getattr(font, "sub_type", None) not in ("/Type0", "Type0") or font.space_char != " ":
        return
    mapping = font.character_map or {}
    if mapping.get(" ") == " " or " " in mapping.values():
        return
    default = font.character_widths.get("default") or 0
    widths = [w for k, w in font.character_widths.items() if k != "default" and w > 0]
    if not default and widths:
        default = sum(widths) / len(widths)
    font.space_width = max(1, int((default or 500) // 2))


def _install_breaks():
    try:
        from pypdf._text_extraction import _text_extractor, mult, orient
    except ImportError:      # another pypdf layout: its own rule stands
        return
    original = getattr(_text_extractor, "crlf_space_check", None)
    if original is None:
        return

    def crlf_space_check(text, cmtm_prev, cmtm_matrix, memo_cmtm, font_resource, orientations, output,
                         font_size, visitor_text, *rest, **kwargs):
        try:
            back = _moved_back(mult, orient, cmtm_prev, cmtm_matrix, font_size)
        except Exception:  # noqa: BLE001 - unknown geometry: pypdf decides
            back = False
        if not back:
            return original(text, cmtm_prev, cmtm_matrix, memo_cmtm, font_resource, orientations, output,
                            font_size, visitor_text, *rest, **kwargs)
        # what pypdf does when the text moves to another line
        if (output + text)[-1:] not in ("", "\n"):
            output += text + "\n"
            if visitor_text is not None:
                visitor_text(text + "\n", memo_cmtm[0], memo_cmtm[1], font_resource, font_size)
            text = ""
        m = mult(cmtm_matrix[1], cmtm_matrix[0])
        return text, output, cmtm_matrix[0].copy(), cmtm_matrix[1].copy(), (5, m[5], m[5])

    _text_extractor.crlf_space_check = crlf_space_check


def _moved_back(mult, orient, cmtm_prev, cmtm_matrix, font_size):
    """Does the text start more than BACK ems left of where the last piece started, on its line
    (upright text only)?"""
    m_prev = mult(cmtm_prev[1], cmtm_prev[0])
    m = mult(cmtm_matrix[1], cmtm_matrix[0])
    if orient(m) != 0 or orient(m_prev) != 0:
        return False
    em = abs(font_size) * (m[2] ** 2 + m[3] ** 2) ** 0.5
    if em <= 0:
        return False
    return abs(m[5] - m_prev[5]) < 0.8 * em and m[4] - m_prev[4] < -BACK * em
