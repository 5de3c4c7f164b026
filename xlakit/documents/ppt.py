"""PowerPoint 97-2003 (.ppt): slide text in presentation order, speaker notes labelled.

A .ppt keeps everything in the ``PowerPoint Document`` stream as records (8-byte header: version
and instance, type, length; version 0xF means a container). The file is a chain of saves: the
``Current User`` stream points at the last UserEditAtom, each edit points at the one before and
at its PersistDirectoryAtom (persist id -> stream offset); the newest entry of an id wins. The
document container's SlideListWithText (instance 0) lists the slides in presentation order
(SlidePersistAtom -> persist id of the slide container) and holds the placeholder text (titles,
bodies) as TextHeaderAtom + TextCharsAtom (UTF-16) / TextBytesAtom (8-bit: the low bytes of
UTF-16). A slide's drawing refers to that text (OutlineTextRefAtom) or carries its own text
boxes; walking the drawing in order gives the text in the order shapes were placed.

Notes: the slide atom names its notes container; the notes page's body text (text type "notes")
comes after the slide as ``【备注】``. Titles (text type 0/6) become ``##`` headings, like pptx.

A damaged edit chain falls back to reading the records front to back (the slide list text only).
Encrypted files are decrypted before they get here (``xlakit.crypt.office``).
"""
import struct

from .base import FormatError, why

NAME = "ppt"
LABEL = "PowerPoint 97-2003 演示文稿（.ppt）"

DOCUMENT, SLIDE, SLIDE_ATOM, NOTES = 0x03E8, 0x03EE, 0x03EF, 0x03F0
SLIDE_PERSIST, SLWT, USER_EDIT, PERSIST_DIR = 0x03F3, 0x0FF0, 0x0FF5, 0x1772
TEXT_HEADER, TEXT_CHARS, TEXT_BYTES, OUTLINE_REF = 0x0F9F, 0x0FA0, 0x0FA8, 0x0F9E
CLIENT_TEXTBOX, SHAPE, CLIENT_DATA, PLACEHOLDER = 0xF00D, 0xF004, 0xF011, 0x0BC3
TITLE_TYPES = (0, 6)
NOTES_TYPE = 2
# PlaceholderAtom types that are a title or a notes body (writers such as LibreOffice mark the text
# itself as "other" and say what it is only here)
PLACEHOLDER_TYPES = {0x01: 0, 0x03: 6, 0x0D: 0, 0x0F: 6, 0x11: 0, 0x06: NOTES_TYPE, 0x14: NOTES_TYPE}
MAX_DEPTH = 32
MAX_EDITS = 1000


def accepts(kind):
    if kind.kind == "ppt":
        return True, None
    return False, "不是 PowerPoint 97-2003 演示文稿（OLE 里没有 PowerPoint Document 流）"


def _header(data, pos):
    verinst, rtype, length = struct.unpack_from("<HHI", data, pos)
    return verinst & 0xF, verinst >> 4, rtype, length


def _children(data, start, end):
    """(version, instance, type, body start, body end) of each record in data[start:end]."""
    pos = start
    while pos + 8 <= end:
        ver, inst, rtype, length = _header(data, pos)
        body = pos + 8
        stop = min(body + length, end)
        yield ver, inst, rtype, body, stop
        if body + length > end:
            return
        pos = body + length


def _text(data, rtype, body, stop):
    raw = data[body:stop]
    if rtype == TEXT_CHARS:
        return raw[:len(raw) // 2 * 2].decode("utf-16-le", "replace")
    return raw.decode("latin-1")


class _Deck:
    def __init__(self, data, current_user):
        self.data = data
        self.offsets = {}
        self.doc_ref = None
        self._persist(current_user)
        if not self.offsets:
            self._scan()

    def _persist(self, current_user):
        data = self.data
        if len(current_user) < 20:
            return
        edit = struct.unpack_from("<I", current_user, 16)[0]
        seen = set()
        while edit and edit not in seen and len(seen) < MAX_EDITS and edit + 8 + 28 <= len(data):
            seen.add(edit)
            _ver, _inst, rtype, _length = _header(data, edit)
            if rtype != USER_EDIT:
                break
            last_edit, persist_dir, doc_ref = struct.unpack_from("<III", data, edit + 8 + 8)
            if self.doc_ref is None:
                self.doc_ref = doc_ref
            self._directory(persist_dir)
            edit = last_edit

    def _scan(self):
        """The edits front to back when ``Current User`` leads nowhere (a decrypted copy, a
        damaged file): later directories override earlier ones, the last edit names the document."""
        data = self.data
        found = {}
        for _ver, _inst, rtype, b, e in _children(data, 0, len(data)):
            if rtype == PERSIST_DIR:
                self.offsets = {}
                self._directory(b - 8)
                found.update(self.offsets)
            elif rtype == USER_EDIT and e - b >= 20:
                self.doc_ref = struct.unpack_from("<I", data, b + 16)[0]
        self.offsets = found

    def _directory(self, pos):
        data = self.data
        if pos + 8 > len(data) or _header(data, pos)[2] != PERSIST_DIR:
            return
        length = _header(data, pos)[3]
        cur, end = pos + 8, min(pos + 8 + length, len(data))
        while cur + 4 <= end:
            entry = struct.unpack_from("<I", data, cur)[0]
            first, count = entry & 0xFFFFF, entry >> 20
            cur += 4
            for i in range(count):
                if cur + 4 > end:
                    break
                self.offsets.setdefault(first + i, struct.unpack_from("<I", data, cur)[0])   # newest first
                cur += 4

    def record(self, ref, want):
        """(body start, body end) of persist object ``ref`` when it is a ``want`` record."""
        pos = self.offsets.get(ref)
        if pos is None or pos + 8 > len(self.data):
            return None
        _ver, _inst, rtype, length = _header(self.data, pos)
        if rtype != want:
            return None
        return pos + 8, min(pos + 8 + length, len(self.data))


def _slide_lists(data, body, stop):
    """{instance: [(persist ref, slide id, [(text type, text), ...]), ...]} of the document's SLWT
    lists."""
    lists = {}
    for ver, inst, rtype, b, e in _children(data, body, stop):
        if rtype != SLWT or ver != 0xF:
            continue
        entries = lists.setdefault(inst, [])
        ttype = None
        for _v, _i, t, cb, ce in _children(data, b, e):
            if t == SLIDE_PERSIST and ce - cb >= 16:
                ref, _flags, _n, slide_id = struct.unpack_from("<IIII", data, cb)
                entries.append((ref, slide_id, []))
                ttype = None
            elif t == TEXT_HEADER and ce - cb >= 4:
                ttype = struct.unpack_from("<I", data, cb)[0]
            elif t in (TEXT_CHARS, TEXT_BYTES) and entries:
                entries[-1][2].append((ttype, _text(data, t, cb, ce)))
    return lists


def _drawing_texts(data, body, stop, outline, depth=0):
    """[(text type, text)] of a slide's or notes page's shapes, in drawing order; a shape that
    refers to the slide list's text (OutlineTextRefAtom) takes ``outline[index]``."""
    found = []
    if depth > MAX_DEPTH:
        return found
    for ver, _inst, rtype, b, e in _children(data, body, stop):
        if rtype == SHAPE:
            kind = _placeholder(data, b, e)
            for _v, _i, t, cb, ce in _children(data, b, e):
                if t == CLIENT_TEXTBOX:
                    found.extend(_textbox(data, cb, ce, outline, kind))
                elif t != CLIENT_DATA and _v == 0xF:
                    found.extend(_drawing_texts(data, cb, ce, outline, depth + 1))
        elif rtype == CLIENT_TEXTBOX:
            found.extend(_textbox(data, b, e, outline, None))
        elif ver == 0xF:
            found.extend(_drawing_texts(data, b, e, outline, depth + 1))
    return found


def _placeholder(data, body, stop):
    """The text type a shape's PlaceholderAtom implies (title, notes), or None."""
    for _v, _i, t, b, e in _children(data, body, stop):
        if t == CLIENT_DATA:
            for _v2, _i2, t2, cb, ce in _children(data, b, e):
                if t2 == PLACEHOLDER and ce - cb >= 5:
                    return PLACEHOLDER_TYPES.get(data[cb + 4])
    return None


def _textbox(data, body, stop, outline, kind):
    found = []
    ttype = None
    for _v, _i, t, cb, ce in _children(data, body, stop):
        if t == TEXT_HEADER and ce - cb >= 4:
            ttype = struct.unpack_from("<I", data, cb)[0]
        elif t in (TEXT_CHARS, TEXT_BYTES):
            found.append((ttype if kind is None else kind, _text(data, t, cb, ce)))
        elif t == OUTLINE_REF and ce - cb >= 4:
            index = struct.unpack_from("<I", data, cb)[0]
            if 0 <= index < len(outline):
                found.append(("ref", index))
    return found


def _notes_ref(data, body, stop):
    for _v, _i, rtype, b, e in _children(data, body, stop):
        if rtype == SLIDE_ATOM and e - b >= 20:
            return struct.unpack_from("<I", data, b + 16)[0]
    return 0


def _emit(out, texts, notes=False):
    for ttype, text in texts:
        text = text.replace("\x0b", "\n")
        if notes:
            for line in text.split("\r"):
                out.para(line)
        elif ttype in TITLE_TYPES:
            out.heading(2, text.replace("\r", " "))
        else:
            for line in text.split("\r"):
                out.para(line)


def _slide_texts(deck, data, ref, outline):
    """The slide's texts in drawing order, slide-list texts nobody referred to appended."""
    where = deck.record(ref, SLIDE)
    if where is None:
        return list(outline), 0
    drawn = _drawing_texts(data, where[0], where[1], outline)
    used = set(i for t, i in drawn if t == "ref")
    texts = [outline[i] if t == "ref" else (t, i) for t, i in drawn]
    texts += [item for n, item in enumerate(outline) if n not in used]
    return texts, _notes_ref(data, where[0], where[1])


def convert(path, kind, out, deadline=None):
    import pydeps_boot
    try:
        olefile = pydeps_boot.ensure("olefile")
    except pydeps_boot.DependencyError as exc:
        raise FormatError(str(exc))
    try:
        ole = olefile.OleFileIO(path)
    except Exception as exc:  # noqa: BLE001 - olefile raises plain exceptions for damage
        raise FormatError("演示文稿的复合文件结构已损坏（%s），无法读取。请确认文件完整，或用 PowerPoint/WPS 另存一份再试" % why(exc))
    try:
        if not ole.exists("PowerPoint Document"):
            raise FormatError("这个 Office 复合文件里没有 PowerPoint 正文（PowerPoint Document 流），不是演示文稿")
        data = ole.openstream("PowerPoint Document").read()
        current = ole.openstream("Current User").read() if ole.exists("Current User") else b""
    finally:
        ole.close()
    try:
        _read(data, current, out, deadline)
    except (struct.error, IndexError, ValueError) as exc:
        raise FormatError("演示文稿已损坏，无法读取（%s）。请用 PowerPoint/WPS 打开后另存一份再试" % why(exc))


def _read(data, current, out, deadline):
    deck = _Deck(data, current)
    where = deck.record(deck.doc_ref, DOCUMENT) if deck.doc_ref is not None else None
    if where is None:                       # broken edit chain: the last document container in the stream
        for ver, _inst, rtype, b, e in _children(data, 0, len(data)):
            if rtype == DOCUMENT and ver == 0xF:
                where = (b, e)
        if where is None:
            raise FormatError("演示文稿里找不到文档记录，文件已损坏。请用 PowerPoint/WPS 打开后另存一份再试")
        out.warnings.append("演示文稿的保存记录不完整，只读出了幻灯片占位符里的文字")
    lists = _slide_lists(data, where[0], where[1])
    slides = lists.get(0, [])
    notes_pages = dict((slide_id, (ref, texts)) for ref, slide_id, texts in lists.get(2, []))
    out.page_count = len(slides)
    for number, (ref, _slide_id, outline) in enumerate(slides, 1):
        if deadline is not None:
            deadline.check("读取演示文稿")
        out.page(number)
        texts, notes_ref = _slide_texts(deck, data, ref, outline)
        _emit(out, texts)
        if notes_ref in notes_pages:
            notes = _notes(deck, data, *notes_pages[notes_ref])
            if notes:
                out.section("备注")
                _emit(out, notes, notes=True)


def _notes(deck, data, ref, outline):
    where = deck.record(ref, NOTES)
    if where is None:
        drawn = list(outline)
    else:
        drawn = [outline[i] if t == "ref" else (t, i) for t, i in _drawing_texts(data, where[0], where[1], outline)]
    # the notes body; writers that do not mark it (LibreOffice: "other" text, no placeholder) too,
    # but never the slide-number field ("*") or a title copied onto the notes page
    return [(t, s) for t, s in drawn if t in (NOTES_TYPE, 4, None) and s.strip() and s.strip() != "*"]
