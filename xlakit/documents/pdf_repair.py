"""A PDF whose cross-reference table is missing or broken, made readable by scanning for its
objects, as PDF readers (pdftotext, Acrobat) do.

Why: a truncated upload, a hand-made generator or a mail gateway that rewrote line ends leaves a
PDF without a valid ``startxref``; pypdf then refuses it ("startxref not found") while every
viewer opens it. The objects themselves are intact, so this finds every ``N G obj`` header (the
last one of a number wins, as in an incremental update), takes ``/Root`` (and ``/Info``) from the
last trailer or else the catalog object, and appends a fresh xref table and trailer. Objects
packed in object streams (PDF 1.5+) are reached through their stream objects as far as pypdf
manages; nothing here raises: no catalog found means no repair.
"""
import re

_OBJ = re.compile(rb"(?<![0-9])(\d{1,10})[ \t\r\n\f\x00]+(\d{1,5})[ \t\r\n\f\x00]+obj\b")
_TRAILER_REF = re.compile(rb"/(Root|Info)[ \t\r\n]+(\d{1,10})[ \t\r\n]+(\d{1,5})[ \t\r\n]+R")
_CATALOG = re.compile(rb"/Type[ \t\r\n]*/Catalog\b")


def rebuilt(data):
    """``data`` with a new xref table and trailer appended, or None when no catalog is found."""
    offsets = {}
    for m in _OBJ.finditer(data):
        offsets[int(m.group(1))] = (m.start(), int(m.group(2)))
    if not offsets:
        return None
    refs = {}
    at = data.rfind(b"trailer")
    if at >= 0:
        for m in _TRAILER_REF.finditer(data, at, at + 4096):
            refs.setdefault(m.group(1), (int(m.group(2)), int(m.group(3))))
    if b"Root" not in refs:
        for num, (start, gen) in sorted(offsets.items()):
            end = data.find(b"endobj", start)
            if _CATALOG.search(data, start, end if end > 0 else start + 4096):
                refs[b"Root"] = (num, gen)
                break
    if b"Root" not in refs:
        return None
    size = max(offsets) + 1
    out = bytearray(data)
    if not out.endswith(b"\n"):
        out += b"\n"
    xref = len(out)
    out += b"xref\n0 %d\n" % size
    for num in range(size):
        if num in offsets:
            out += b"%010d %05d n \n" % offsets[num]
        else:
            out += b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root %d %d R" % ((size,) + refs[b"Root"])
    if b"Info" in refs:
        out += b" /Info %d %d R" % refs[b"Info"]
    out += b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
