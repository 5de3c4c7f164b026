"""Simple Type1 fonts: the font dictionary's /Encoding wins over the font program's own encoding.

Why: a Type1 font program (FontFile, or CFF in FontFile3/Type1C) carries a built-in encoding
(``dup 65 /H put`` in the clear part of a Type1 program, an Encoding table in CFF). pypdf reads it
for every simple Type1 font without a ToUnicode map and lets it override whatever the font
dictionary says. But the PDF specification (32000-1, 9.6.6.1 and table 114) makes the built-in
encoding only the *base* when the dictionary names none: a named /Encoding (MacRoman, WinAnsi,
Standard, MacExpert) or a /BaseEncoding replaces it, and /Differences are applied on top of
whichever base is in force. Subset fonts often carry a built-in encoding that numbers the subset's
glyphs 1, 2, 3... while the page uses MacRoman codes: pdfplumber's senate-expenditures.pdf came
out as "o(hô..i.p3xSTRx" (pypdf parses CFF encodings whenever fontTools is importable, which a
user's Python with matplotlib has). pdfminer.six and poppler follow the specification; so do we:

- /Encoding is a name, or a dictionary with /BaseEncoding: the program's encoding is not used;
- /Encoding is a dictionary with /Differences and no /BaseEncoding: the program's encoding is the
  base, the Differences win for the codes they name;
- no /Encoding: the program's encoding (pypdf's behaviour, kept).

The symbolic flag changes none of this for Type1 fonts (it matters for TrueType, which pypdf does
not read this way). Glyph names become characters through the Adobe glyph list pypdf ships and the
``uniXXXX`` / ``uXXXX`` forms; names that mean nothing (``g12``, ``glyph7``) map to nothing and
leave the code to the base encoding, as in pdfminer.

This is done by wrapping pypdf's (private) ``_cmap._parse_to_unicode`` once per process, like
``pdf_cmaps.install``: if a later pypdf moves it, reading goes on as before.
"""

_done = False


def _differences(encoding):
    """The codes a /Differences array names."""
    codes, code = set(), None
    for item in encoding.get("/Differences") or ():
        item = item.get_object() if hasattr(item, "get_object") else item
        if isinstance(item, int):
            code = int(item)
        elif code is not None:
            codes.add(code)
            code += 1
    return codes


def _filtered(original):
    def parse_to_unicode(ft):
        map_dict, int_entry = original(ft)
        try:
            if "/ToUnicode" in ft or ft.get("/Subtype") != "/Type1" or "/Encoding" not in ft or not map_dict:
                return map_dict, int_entry
            encoding = ft["/Encoding"].get_object()
            if hasattr(encoding, "keys") and "/BaseEncoding" not in encoding:
                drop = _differences(encoding)          # the program is the base; Differences win
            else:
                drop = None                            # a named base: the program is not used
        except Exception:  # noqa: BLE001 - an odd dictionary: pypdf's reading stands
            return map_dict, int_entry
        if drop is None:
            return {}, []
        if not drop:
            return map_dict, int_entry
        return ({k: v for k, v in map_dict.items() if not (isinstance(k, str) and len(k) == 1 and ord(k) in drop)},
                [c for c in int_entry if c not in drop])
    parse_to_unicode.xla_type1 = True
    return parse_to_unicode


def install():
    """Wrap pypdf's reading of font programs' encodings (once per process)."""
    global _done
    if _done:
        return
    _done = True
    try:
        from pypdf import _cmap
        original = _cmap._parse_to_unicode
    except (ImportError, AttributeError):
        return
    if not getattr(original, "xla_type1", False):
        _cmap._parse_to_unicode = _filtered(original)
