"""Word 97–2003 binary (.doc, and .wps files that WPS Office writes in the same format).

The text of a .doc is not stored in order: the File Information Block (FIB) at the start of the
``WordDocument`` stream points into a table stream (``0Table`` or ``1Table``, by a FIB flag) where
the CLX holds a piece table (PlcPcd): character-position ranges, each stored at some file offset
either "compressed" (one byte per character, cp1252 with Word's own 0x80–0x9F mapping) or as
UTF-16 (every Chinese document). Fast-saved files scatter the pieces; following the table puts
them back in reading order. The main text is the FIB's first ``ccpText`` characters; footnotes
and endnotes follow it in the same character space and come after the body under 【脚注】/【尾注】
(as docx), their auto-numbered reference marks shown as "[1]" / "[i]" where Word shows them
(``note_marks``); then headers and footers under 【页眉】/【页脚】, each distinct text once
(``_headers``). Text boxes are left out.

Special characters: fields are ``0x13 instruction 0x14 result 0x15`` and only the result is text
(``HYPERLINK "…"``, ``PAGE``, ``TOC \\o`` are not); ``0x0D`` ends a paragraph, ``0x07`` ends a
table cell or, when the paragraph properties say "table terminating paragraph" (read from the
PAPX FKPs), a row; headings come from the paragraph's style (built-in "heading 1–9") or outline
level; list labels ("一、", "1.1") from the list tables (``doc_lists``) through the paragraph's or
its style's sprmPIlfo/sprmPIlvl. Encrypted documents are decrypted first (``xlakit.crypt.office``).

Word 6.0/95 files (FIB ``nFib`` 101-105, ident not 0xA5EC) have a shorter fixed FIB, keep the
piece table in the WordDocument stream itself and store every character as one 8-bit byte (or
a double-byte pair) in the code page of the document's language (``lid``: 0x0804 -> GBK, 0x0404
-> Big5, 0x0419 -> cp1251 ...; a Mac file in Mac Roman; an English id, which English Word wrote
over Russian or Chinese text too, lets ``xlakit.text`` score the bytes): read the same way, with
paragraphs and cell marks but without the Word 97 paragraph properties (no headings). Word 2.0
and earlier are read through LibreOffice (``via_office``), or the error says which program
opens them.
"""
import bisect
import re
import struct

from . import doc_lists
from .base import FormatError, why

NAME = "doc"
LABEL = "Word 97-2003 文档（.doc）"

ENCRYPTED = ("这个 Word 文档已加密（设置了打开密码），无法读取。请在 Word/WPS 里输入密码打开，"
             "去掉密码（文件 → 信息 → 保护文档 → 用密码加密，清空）后另存一份再试")
OLD_WORD = ("这是 Word 2.0 或更早版本的文档（FIB 版本 %d），格式太旧无法直接读取。"
            "请用 Word/WPS 打开后另存为 .docx 再试")

class OldWord(FormatError):
    """A Word 2.0 or older FIB inside an OLE file: read through LibreOffice (``via_office``)."""


# Word 6/95: the document language (FIB lid) -> the code page its 8-bit text is in
LID_CODEPAGES = {0x0804: "gbk", 0x1004: "gbk", 0x0404: "cp950", 0x0C04: "cp950", 0x1404: "cp950",
                 0x0411: "cp932", 0x0412: "cp949", 0x041E: "cp874", 0x042A: "cp1258"}
_LID_FAMILIES = (("cp1250", (0x05, 0x0E, 0x15, 0x18, 0x1A, 0x1B, 0x1C, 0x24)), ("cp1251", (0x02, 0x19, 0x22, 0x23, 0x2F)),
                 ("cp1253", (0x08,)), ("cp1254", (0x1F, 0x2C)), ("cp1255", (0x0D,)), ("cp1256", (0x01, 0x20, 0x29)),
                 ("cp1257", (0x25, 0x26, 0x27)))


def lid_codepage(lid, mac=False):
    """The code page of a Word 6/95 document's 8-bit text, from its language id."""
    if mac:
        return "mac_roman"
    if lid in LID_CODEPAGES:
        return LID_CODEPAGES[lid]
    for codec, primaries in _LID_FAMILIES:
        if lid & 0x3FF in primaries:
            return codec
    return "cp1252"

# Word's mapping of 0x80-0x9F in compressed pieces ([MS-DOC] 2.4.1); other bytes are Latin-1.
_WORD_8BIT = {
    0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
    0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
    0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
    0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
}
_WORD_8BIT_TABLE = {k: v for k, v in _WORD_8BIT.items()}

SPECIAL = re.compile(r"[\x00-\x1f\xa0\u2002-\u2003]")
HEADING_NAME = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.I)


def accepts(kind):
    if kind.kind in ("doc", "wps"):
        return True, None
    return False, "不是 Word 97-2003 二进制文档（OLE 里没有 WordDocument 流）"


def decode_compressed(data):
    """Bytes of a compressed piece -> text (cp1252 as Word maps it)."""
    return data.decode("latin-1").translate(_WORD_8BIT_TABLE)


class Fib:
    """The few FIB fields the text needs."""

    def __init__(self, wd):
        if len(wd) < 0x22:
            raise FormatError("Word 文档的 WordDocument 流太短（%d 字节），文件已损坏" % len(wd))
        self.ident, self.nfib = struct.unpack_from("<HH", wd, 0)
        flags = struct.unpack_from("<H", wd, 0x0A)[0]
        self.complex = bool(flags & 0x0004)
        self.encrypted = bool(flags & 0x0100)
        self.table = "1Table" if flags & 0x0200 else "0Table"
        self.obfuscated = bool(flags & 0x8000)
        self.fc_min = struct.unpack_from("<I", wd, 0x18)[0]
        self.word95 = False
        self.old = self.nfib < 0x65                     # Word 2.0 and earlier
        if self.old:
            return
        if self.ident != 0xA5EC and self.nfib < 0xC1:
            self._word95(wd)
            return
        self._word97(wd)

    def _word95(self, wd):
        """The fixed FIB of Word 6.0/95: ccpText at 0x34, the CLX at 0x160 of the same stream."""
        if len(wd) < 0x168:
            raise FormatError("Word 6.0/95 文档的文件头（FIB）不完整，文件已损坏")
        self.word95 = True
        self.ext_char = bool(struct.unpack_from("<H", wd, 0x0A)[0] & 0x1000)   # pieces flagged like Word 97's
        self.lid = struct.unpack_from("<H", wd, 0x06)[0]
        self.codepage = lid_codepage(self.lid, mac=struct.unpack_from("<H", wd, 0x14)[0] == 256)
        self.ccp_text = struct.unpack_from("<I", wd, 0x34)[0]
        self.fc_mac = struct.unpack_from("<I", wd, 0x1C)[0]
        self.clx = struct.unpack_from("<II", wd, 0x160)
        self.table = "WordDocument"
        self.fclcb = ()

    def _word97(self, wd):
        pos = 0x20
        csw = struct.unpack_from("<H", wd, pos)[0]
        pos += 2 + csw * 2
        cslw = struct.unpack_from("<H", wd, pos)[0]
        lw = struct.unpack_from("<%dI" % min(cslw, 22), wd, pos + 2)
        pos += 2 + cslw * 4
        self.ccp_text = lw[3] if len(lw) > 3 else 0
        # the stories after the main text, in character-position order (footnotes, headers,
        # macros, comments, endnotes, ...): where the footnotes and the endnotes start and end
        sizes = [lw[i] if len(lw) > i else 0 for i in range(3, 9)]
        self.ccp_ftn, self.ccp_hdd, self.ccp_edn = sizes[1], sizes[2], sizes[5]
        self.edn_start = sum(sizes[:5])
        ncount = struct.unpack_from("<H", wd, pos)[0]
        pos += 2
        self.fclcb = struct.unpack_from("<%dI" % (min(ncount, 200) * 2), wd, pos)

    def pair(self, index):
        if 2 * index + 1 >= len(self.fclcb):
            return 0, 0
        return self.fclcb[2 * index], self.fclcb[2 * index + 1]


class Piece:
    __slots__ = ("cp", "cp_end", "fc", "compressed")

    def __init__(self, cp, cp_end, fc, compressed):
        self.cp, self.cp_end, self.fc, self.compressed = cp, cp_end, fc, compressed


def pieces(table, fc_clx, lcb_clx):
    """The PlcPcd of the CLX (Prc entries skipped)."""
    clx = table[fc_clx:fc_clx + lcb_clx]
    pos = 0
    while pos < len(clx) and clx[pos] == 0x01:              # Prc: clxt, cbGrpprl, grpprl
        if pos + 3 > len(clx):
            break
        cb = struct.unpack_from("<h", clx, pos + 1)[0]
        pos += 3 + max(cb, 0)
    if pos >= len(clx) or clx[pos] != 0x02:
        raise FormatError("Word 文档的文本索引（piece table）损坏，无法读取。请用 Word/WPS 打开后另存一份再试")
    lcb = struct.unpack_from("<I", clx, pos + 1)[0]
    plc = clx[pos + 5:pos + 5 + lcb]
    n = (len(plc) - 4) // 12
    if n <= 0:
        return []
    cps = struct.unpack_from("<%dI" % (n + 1), plc, 0)
    out = []
    for i in range(n):
        pcd = plc[4 * (n + 1) + 8 * i:4 * (n + 1) + 8 * i + 8]
        fc_raw = struct.unpack_from("<I", pcd, 2)[0]
        compressed = bool(fc_raw & 0x40000000)
        fc = fc_raw & 0x3FFFFFFF
        if compressed:
            fc //= 2
        if cps[i + 1] > cps[i]:
            out.append(Piece(cps[i], cps[i + 1], fc, compressed))
    return out


# ---------------------------------------------------------------- paragraph properties

def _sprm_size(sprm, data, pos):
    spra = sprm >> 13
    if spra in (0, 1):
        return 1
    if spra in (2, 4, 5):
        return 2
    if spra == 3:
        return 4
    if spra == 7:
        return 3
    # variable: first byte is the size; sprmTDefTable (0xD608) and sprmPChgTabs (0xC615) differ
    if sprm == 0xD608 and pos + 2 <= len(data):
        return struct.unpack_from("<H", data, pos)[0] + 1
    if sprm == 0xC615 and pos < len(data) and data[pos] == 255:
        return 1 + (data[pos + 1] * 4 + 1 if pos + 1 < len(data) else 0) + \
            (data[pos + 2 + data[pos + 1] * 4] * 3 + 1 if pos + 2 + data[pos + 1] * 4 < len(data) else 0)
    return 1 + (data[pos] if pos < len(data) else 0)


class Papx:
    __slots__ = ("istd", "ttp", "in_table", "itap", "inner_ttp", "inner_cell", "outline", "list", "ilvl", "ilfo")

    def __init__(self):
        self.istd = 0
        self.ttp = self.in_table = self.inner_ttp = self.inner_cell = False
        self.itap = 0
        self.outline = None
        self.list = False
        self.ilvl = None       # None: not set here (the style's level applies)
        self.ilfo = None       # None: not set here; 0: explicitly no list


def _parse_papx(grpprl):
    p = Papx()
    if len(grpprl) >= 2:
        p.istd = struct.unpack_from("<H", grpprl, 0)[0]
    pos = 2
    while pos + 2 <= len(grpprl):
        sprm = struct.unpack_from("<H", grpprl, pos)[0]
        pos += 2
        size = _sprm_size(sprm, grpprl, pos)
        val = grpprl[pos] if pos < len(grpprl) else 0
        if sprm == 0x2417:
            p.ttp = bool(val)
        elif sprm == 0x2416:
            p.in_table = bool(val)
            p.itap = max(p.itap, 1 if val else 0)
        elif sprm == 0x6649 and pos + 4 <= len(grpprl):
            p.itap = struct.unpack_from("<i", grpprl, pos)[0]
        elif sprm == 0x244C:
            p.inner_ttp = bool(val)
        elif sprm == 0x244B:
            p.inner_cell = bool(val)
        elif sprm == 0x2640:
            p.outline = val
        elif sprm == 0x260A:
            p.ilvl = min(val, 8)
        elif sprm == 0x460B and pos + 2 <= len(grpprl):
            p.ilfo = struct.unpack_from("<h", grpprl, pos)[0]
            p.list = p.ilfo != 0
        pos += size
    return p


class ParaProps:
    """Paragraph properties by file offset of the paragraph mark (PlcBtePapx -> PapxFkp)."""

    def __init__(self, wd, table, fib):
        self.starts, self.ends, self.props = [], [], []
        fc, lcb = fib.pair(13)
        if not lcb or fc + lcb > len(table):
            return
        n = (lcb - 4) // 8
        if n <= 0:
            return
        pns = struct.unpack_from("<%dI" % n, table, fc + 4 * (n + 1))
        runs = []
        for pn in pns:
            off = (pn & 0x3FFFFF) * 512
            page = wd[off:off + 512]
            if len(page) < 512:
                continue
            crun = page[511]
            if not crun or 4 * (crun + 1) + 13 * crun > 511:
                continue
            rgfc = struct.unpack_from("<%dI" % (crun + 1), page, 0)
            for i in range(crun):
                bx = page[4 * (crun + 1) + 13 * i]
                if bx == 0:
                    props = Papx()
                else:
                    at = bx * 2
                    cb = page[at] if at < 512 else 0
                    if cb:
                        grpprl = page[at + 1:at + 1 + 2 * cb - 1]
                    else:
                        cb2 = page[at + 1] if at + 1 < 512 else 0
                        grpprl = page[at + 2:at + 2 + 2 * cb2]
                    try:
                        props = _parse_papx(grpprl)
                    except (struct.error, IndexError):
                        props = Papx()
                runs.append((rgfc[i], rgfc[i + 1], props))
        runs.sort(key=lambda r: r[0])
        for start, end, props in runs:
            self.starts.append(start)
            self.ends.append(end)
            self.props.append(props)

    def __bool__(self):
        return bool(self.starts)

    def at(self, fc):
        i = bisect.bisect_right(self.starts, fc) - 1
        if i >= 0 and fc < self.ends[i]:
            return self.props[i]
        return None


def read_styles(table, fib):
    """The stylesheet: (istd -> heading level, istd -> (ilfo, ilvl) of the style's list).

    Heading levels come from the built-in sti 1-9 or a "heading N" name; a style's list from the
    sprmPIlfo/sprmPIlvl of its paragraph UPX, inherited along istdBase (Chinese templates number
    "标题 1" through the style, the paragraphs carry no list of their own)."""
    fc, lcb = fib.pair(1)
    headings, own, bases = {}, {}, {}
    if not lcb or fc + lcb > len(table):
        return headings, {}
    stsh = table[fc:fc + lcb]
    try:
        cb_stshi = struct.unpack_from("<H", stsh, 0)[0]
        cstd, cb_base = struct.unpack_from("<HH", stsh, 2)
        pos = 2 + cb_stshi
        for istd in range(min(cstd, 4000)):
            if pos + 2 > len(stsh):
                break
            cb = struct.unpack_from("<H", stsh, pos)[0]
            std = stsh[pos + 2:pos + 2 + cb]
            pos += 2 + cb
            if cb < 10:
                continue
            sti = struct.unpack_from("<H", std, 0)[0] & 0x0FFF
            stk_base = struct.unpack_from("<H", std, 2)[0]
            bases[istd] = stk_base >> 4
            level = sti if 1 <= sti <= 9 else None
            cch = struct.unpack_from("<H", std, cb_base)[0] if len(std) > cb_base + 2 else 0
            if level is None and cch:
                name = std[cb_base + 2:cb_base + 2 + 2 * cch].decode("utf-16-le", "replace")
                m = HEADING_NAME.match(name.split(",")[0].strip())
                if m:
                    level = int(m.group(1))
            if level:
                headings[istd] = level
            upx = cb_base + 2 + 2 * cch + 2
            if stk_base & 0x0F == 1 and upx + 2 <= len(std):      # paragraph style: first UPX is its PAPX
                size = struct.unpack_from("<H", std, upx)[0]
                papx = _parse_papx(std[upx + 2:upx + 2 + size])
                own[istd] = (papx.ilfo, papx.ilvl)
    except struct.error:
        pass
    lists = {}
    for istd in own:
        ilfo = ilvl = None
        seen, at = set(), istd
        while at in own and at not in seen and (ilfo is None or ilvl is None):
            seen.add(at)
            ilfo = own[at][0] if ilfo is None else ilfo
            ilvl = own[at][1] if ilvl is None else ilvl
            at = bases.get(at)
        if ilfo:
            lists[istd] = (ilfo, ilvl or 0)
    return headings, lists


# ---------------------------------------------------------------- text

def _open(path):
    import pydeps_boot
    try:
        olefile = pydeps_boot.ensure("olefile")
    except pydeps_boot.DependencyError as exc:
        raise FormatError(str(exc))
    try:
        return olefile.OleFileIO(path)
    except Exception as exc:  # noqa: BLE001 - olefile raises several plain exception types
        raise FormatError("Word 文档的复合文件结构已损坏（%s），无法读取。请确认文件完整，或用 Word/WPS 打开后另存一份再试" % why(exc))


def read_streams(path):
    """(WordDocument bytes, table bytes, Fib); raises FormatError for encrypted/old/broken files."""
    ole = _open(path)
    try:
        return _read_streams(ole)
    except FormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - olefile/struct on a damaged file
        raise FormatError("Word 文档已损坏，无法读取（%s）。请确认文件完整，或用 Word/WPS 打开后另存一份再试" % why(exc))
    finally:
        ole.close()


def _read_streams(ole):
    if True:
        if not ole.exists("WordDocument"):
            raise FormatError("这个 Office 复合文件里没有 Word 正文（WordDocument 流），不是 Word 文档")
        wd, damaged = _stream(ole, "WordDocument")
        fib = Fib(wd)
        fib.repaired = damaged
        if fib.ident != 0xA5EC and fib.nfib >= 0xC1 and not fib.old:
            raise FormatError("Word 文档的文件头（FIB）无法识别，文件可能已损坏。请用 Word/WPS 打开后另存一份再试")
        if fib.old:
            raise OldWord(OLD_WORD % fib.nfib)
        if fib.encrypted or fib.obfuscated:
            raise FormatError(ENCRYPTED)
        if fib.word95:
            return wd, wd, fib
        if not ole.exists(fib.table):
            raise FormatError("Word 文档缺少表格流 %s，文件已损坏或不完整。请用 Word/WPS 打开后另存一份再试" % fib.table)
        table, damaged = _stream(ole, fib.table)
        fib.repaired = fib.repaired or damaged
    return wd, table, fib


def _stream(ole, name):
    """(bytes of the stream ``name``, whether its directory entry was damaged). A directory entry
    whose type byte says "storage" while it has no children, a size and a first sector is a
    stream with one damaged byte (a fuzzed POI file has its 1Table so): its sectors are read as
    the stream's, as LibreOffice does, instead of refusing a readable document."""
    try:
        return ole.openstream(name).read(), False
    except OSError:
        entry = ole.direntries[ole._find(name)]
        children = getattr(entry, "kids", None) or []
        if entry.entry_type != 1 or children or not entry.size:      # 1: STGTY_STORAGE
            raise
        return ole._open(entry.isectStart, entry.size).read(), True


def convert(path, kind, out, deadline=None):
    if "worddocument" not in kind.names and not kind.damaged:
        from . import via_office         # Word for Windows 1.0/2.0: not an OLE file at all
        via_office.read(path, "word2", out, deadline)
        return
    try:
        wd, table, fib = read_streams(path)
    except OldWord:
        from . import via_office
        via_office.read(path, "word2", out, deadline)
        return
    if getattr(fib, "repaired", False):
        out.warnings.append("这个 Word 文件的内部目录有损坏（数据流被标成了文件夹），已按原数据读出，内容可能不完整。"
                            "建议用 Word/WPS 打开后另存一份")
    if fib.word95:
        _word95(wd, fib, out, deadline)
        return
    fc_clx, lcb_clx = fib.pair(33)
    if lcb_clx and fc_clx + lcb_clx <= len(table):
        plist = pieces(table, fc_clx, lcb_clx)
    else:   # no CLX (some old converters): one piece at fcMin, guessed width
        plist = [Piece(0, fib.ccp_text, fib.fc_min, False)]
    props = ParaProps(wd, table, fib)
    headings, style_lists = read_styles(table, fib)
    lists = doc_lists.read(table, fib)
    notes = note_marks(table, fib)
    _emit(wd, plist, fib.ccp_text, props, headings, out, deadline, lists=(lists, style_lists), marks=notes[0])
    _notes(wd, plist, fib, props, headings, out, deadline, (lists, style_lists), notes[1])
    _headers(wd, plist, table, fib, props, headings, out, deadline, (lists, style_lists))


def _roman(n):
    out = ""
    for value, digits in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                          (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + digits, n - value
    return out


def note_marks(table, fib):
    """({cp: "[1]"} of the body's auto-numbered note references, {cp: "[1]"} of each note
    story's own mark). Word shows a reference as a superscript number where the 0x02 character
    stands; LibreOffice's text shows it too, and without it a reader cannot tell which note
    belongs where. The PlcffndRef / PlcfendRef (FIB pairs 2 and 46) hold the references' CPs and
    an FRD each (non-zero: auto-numbered; zero: a custom mark, which is ordinary text already);
    PlcffndTxt / PlcfendTxt (3 and 47) where each note's story starts. Numbers as Word's
    defaults: footnotes 1, 2, 3, endnotes i, ii, iii (a document that chose other formats or
    restarts per page shows other marks; the pairing stays right)."""
    body, stories = {}, {}
    if fib.word95 or fib.old:
        return body, stories
    for (ref_pair, txt_pair, base, fmt) in ((2, 3, fib.ccp_text, str), (46, 47, fib.edn_start, _roman)):
        fc, lcb = fib.pair(ref_pair)
        if lcb < 6 or fc + lcb > len(table) or (lcb - 4) % 6:
            continue
        n = (lcb - 4) // 6
        cps = struct.unpack_from("<%di" % n, table, fc)
        frds = struct.unpack_from("<%dh" % n, table, fc + 4 * (n + 1))
        fc_t, lcb_t = fib.pair(txt_pair)
        starts = ()
        if lcb_t >= 8 and fc_t + lcb_t <= len(table):
            starts = struct.unpack_from("<%di" % (lcb_t // 4), table, fc_t)
        number = 0
        for k, (cp, frd) in enumerate(zip(cps, frds)):
            if not frd:
                continue
            number += 1
            body[cp] = "[%s]" % fmt(number)
            if k < len(starts) - 1:
                stories[base + starts[k]] = "[%s]" % fmt(number)
    return body, stories


def _notes(wd, plist, fib, props, headings, out, deadline, lists, marks=None):
    """Footnotes and endnotes after the body under 【脚注】/【尾注】, as the docx reader puts them
    (without them a note's text is simply missing), each after its mark ("[1]", ``note_marks``).
    The closing guard paragraph is not text."""
    for label, start, size in (("脚注", fib.ccp_text, fib.ccp_ftn), ("尾注", fib.edn_start, fib.ccp_edn)):
        if size <= 0 or start + size > max((p.cp_end for p in plist), default=0):
            continue
        if not _has_text(wd, plist, start, start + size):
            continue
        out.section(label)
        _emit(wd, plist, (start, start + size), props, headings, out, deadline, lists=lists, marks=marks)


def _headers(wd, plist, table, fib, props, headings, out, deadline, lists):
    """Headers and footers after the notes under 【页眉】/【页脚】, each distinct text once, as the
    docx reader puts them. The header story (after the footnotes) is cut by the PlcfHdd (FIB pair
    11): six separator stories, then six per section: even header, odd header, even footer, odd
    footer, first-page header, first-page footer; an empty story has no characters."""
    fc, lcb = fib.pair(11)
    start = fib.ccp_text + fib.ccp_ftn
    if not fib.ccp_hdd or lcb < 8 or fc + lcb > len(table):
        return
    if start + fib.ccp_hdd > max((p.cp_end for p in plist), default=0):
        return
    from .base import Builder
    cps = struct.unpack_from("<%di" % (lcb // 4), table, fc)
    found, seen = {"页眉": [], "页脚": []}, set()
    for i in range(6, len(cps) - 1):
        lo, hi = cps[i], cps[i + 1]
        if not 0 <= lo < hi <= fib.ccp_hdd or not _has_text(wd, plist, start + lo, start + hi):
            continue
        story = Builder(deadline=deadline)          # what the story shows (a field without a result: nothing)
        _emit(wd, plist, (start + lo, start + hi), props, headings, story, deadline, lists=lists)
        blocks = [b for b in story.parts[0::2] if b.strip()]
        if blocks and "\n".join(blocks) not in seen:
            seen.add("\n".join(blocks))
            found["页眉" if (i - 6) % 6 in (0, 1, 4) else "页脚"].append(blocks)
    for label in ("页眉", "页脚"):
        for blocks in found[label]:
            out.section(label)
            for block in blocks:
                out.raw(block)


def _has_text(wd, plist, start, end):
    """Any visible character (beyond marks and paragraph ends) in the characters [start, end)."""
    return bool(_story_text(wd, plist, start, end))


def _story_text(wd, plist, start, end):
    """The characters [start, end) without marks, paragraph ends and surrounding spaces (field
    instructions included: enough to tell stories apart and empty ones from the rest)."""
    got = []
    for piece in plist:
        lo, hi = max(piece.cp, start), min(piece.cp_end, end)
        if lo >= hi:
            continue
        width = 1 if piece.compressed else 2
        raw = wd[piece.fc + (lo - piece.cp) * width:piece.fc + (hi - piece.cp) * width]
        text = decode_compressed(raw) if piece.compressed else raw[:len(raw) // 2 * 2].decode("utf-16-le", "replace")
        got.append(text)
    return "".join(got).strip(" \t\r\n\x02\x07\x0b\x0c\x01\x08\x13\x14\x15")


def _word95(wd, fib, out, deadline):
    """Word 6.0/95 text: the 8-bit pieces (or the one run from fcMin) in the FIB's code page."""
    fc_clx, lcb_clx = fib.clx
    plist = None
    if fib.complex and lcb_clx and fc_clx + lcb_clx <= len(wd):
        plist = pieces(wd, fc_clx, lcb_clx)
        for piece in plist:                      # every Word 6 character is one byte at fc
            if fib.ext_char:
                continue
            if piece.compressed:
                piece.fc *= 2
            piece.compressed = True
    if not plist:
        plist = [Piece(0, fib.ccp_text, fib.fc_min, True)]
    from .. import text as textlib
    codec = fib.codepage
    if codec == "cp1252":       # an English-language Word often wrote Russian or Chinese text
        sample = b"".join(wd[p.fc:p.fc + min(p.cp_end - p.cp, 65536)] for p in plist[:64])[:65536]
        found, score = textlib.guess_legacy(sample) if any(b > 0x7F for b in sample) else (None, 0)
        if found and score > 0.5 and found not in ("cp1252", "latin-1", "iso8859-1", "iso8859-15"):
            codec = found
    out.warnings.append("这是 Word 6.0/95 文档，只读出了文字（按 %s 编码），标题和列表格式没有保留" % (
        "GBK（简体中文）" if codec == "gbk" else textlib.label(codec)))
    _emit(wd, plist, fib.ccp_text, None, {}, out, deadline,
          decode=lambda raw: raw.decode(codec, "replace"))


_RUBY = re.compile(r"\\o\s*(?:\\a[dlrc]?)?\s*\(\s*\\s\s*\\up\s*-?\d+\s*\((.*?)\)\s*,(.*)\)\s*$", re.S)


def eq_text(instruction):
    """What an EQ field shows, for the one kind that carries text: phonetic guides (Word's 拼音指南
    / ふりがな, ``EQ \\* jc2 \\* "Font:..." \\* hps10 \\o\\ad(\\s\\up 9(とうきょう),東京)``) -> "東京（とうきょう）".
    Word writes no result for EQ fields, so without this the text is lost. None for the rest."""
    body = instruction.strip()
    if not body.upper().startswith("EQ"):
        return None
    m = _RUBY.search(body)
    if not m:
        return None
    ruby, base = m.group(1).strip(), m.group(2).strip()
    return "%s（%s）" % (base, ruby) if ruby else base


class _State:
    def __init__(self, out, props, headings, lists=None):
        self.out = out
        self.numbering, self.style_lists = lists or (None, {})
        self.props = props
        self.headings = headings
        self.buf = []          # text of the current paragraph
        self.cells = []        # finished cells of the current row
        self.fields = []       # open fields: True once past the separator
        self.instr = []        # each open field's instruction text (for EQ fields, which have no result)
        self.last_cell_mark = False

    def visible(self):
        return all(self.fields)

    def flush_para(self, papx):
        text = "".join(self.buf)
        self.buf = []
        if papx is not None and (papx.in_table or papx.itap > 0):
            if papx.itap > 1 or papx.inner_cell or papx.inner_ttp:
                self.buf.append(text + " ")      # nested table: keep inside the outer cell
                return
            self.buf.append(text + "\n")         # a paragraph inside a cell: the cell continues
            return
        if self.cells:                          # a row that never got its end mark
            self.out.row(self.cells)
            self.cells = []
        level = None
        if papx is not None:
            level = self.headings.get(papx.istd)
            if level is None and papx.outline is not None and papx.outline < 6:
                level = papx.outline + 1
        label, ilvl = self.label(papx, text)
        if level:
            if label and label != "-":
                text = label + ("" if label[-1] in "、）)】．" else " ") + text.strip()
            self.out.heading(level, text)
        elif label:
            self.out.item(text, ilvl, label)
        else:
            self.out.para(text)

    def label(self, papx, text):
        """(list label as Word shows it or None, level) of a paragraph. An empty numbered paragraph still counts, as in Word and the docx reader."""
        if papx is None:
            return None, 0
        ilfo, ilvl = papx.ilfo, papx.ilvl
        style = self.style_lists.get(papx.istd)
        if ilfo is None and style:
            ilfo = style[0]
        if ilvl is None:
            ilvl = style[1] if style and ilfo == style[0] else 0
        if not ilfo or ilfo < 0:
            return None, ilvl
        if self.numbering is None:
            return "-", ilvl
        if str(ilfo) not in self.numbering.nums:
            return None, ilvl                    # no such list (or no list table): Word shows no label
        return self.numbering.label(str(ilfo), ilvl), ilvl

    def cell_mark(self, papx):
        text = "".join(self.buf)
        self.buf = []
        if papx is not None:
            if papx.ttp or papx.inner_ttp and papx.itap <= 1:
                if text.strip():
                    self.cells.append(text)
                self.out.row(self.cells)
                self.cells = []
                return
            self.cells.append(text)
            return
        # No paragraph properties: a mark right after a cell mark ends the row (Word writes the
        # row-end mark as its own paragraph).
        if self.last_cell_mark and not text:
            self.out.row(self.cells)
            self.cells = []
        else:
            self.cells.append(text)

    def finish(self):
        if self.buf and "".join(self.buf).strip():
            self.flush_para(None)
        if self.cells:
            self.out.row(self.cells)
            self.cells = []


def _emit(wd, plist, ccp_text, props, headings, out, deadline, decode=decode_compressed, lists=None, marks=None):
    """The paragraphs of the characters [0, ccp_text) (the main text; all when 0), or of a
    (start, end) range (a footnote or endnote story). ``marks``: {cp: text} shown for the note
    reference characters (0x02) at those positions."""
    st = _State(out, props if props else None, headings, lists)
    start, limit = ccp_text if isinstance(ccp_text, tuple) else (0, ccp_text)
    limit = limit or max((p.cp_end for p in plist), default=0)
    for n, piece in enumerate(plist):
        if piece.cp >= limit:
            break
        if piece.cp_end <= start:
            continue
        width = 1 if piece.compressed else 2
        skip = max(start - piece.cp, 0)
        base = piece.fc + skip * width             # the file offset of this slice's first character
        count = min(piece.cp_end, limit) - piece.cp - skip
        raw = wd[base:base + count * width]
        text = decode(raw) if piece.compressed else raw[:len(raw) // 2 * 2].decode("utf-16-le", "replace")
        if deadline is not None and n % 64 == 0:
            deadline.check("读取 Word 文档")
        pos = 0
        for m in SPECIAL.finditer(text):
            i = m.start()
            if i > pos and st.visible():
                st.buf.append(text[pos:i])
                st.last_cell_mark = False
            elif i > pos and st.fields and not st.fields[-1]:
                st.instr[-1].append(text[pos:i])
            pos = i + 1
            ch = text[i]
            if ch == "\x13":
                st.fields.append(False)
                st.instr.append([])
                continue
            if ch == "\x14":
                if st.fields:
                    st.fields[-1] = True
                continue
            if ch == "\x15":
                if st.fields:
                    had_result = st.fields.pop()
                    shown = None if had_result else eq_text("".join(st.instr[-1]))
                    st.instr.pop()
                    if shown and st.visible():
                        st.buf.append(shown)     # ruby / phonetic guides: an EQ field has no result
                continue
            if not st.visible():
                if ch not in "\r\x07":
                    continue
                # a paragraph mark inside a field instruction: the field spans paragraphs (TOC)
            fc = base + i * width
            if ch == "\r":
                st.flush_para(props.at(fc) if props else None)
                st.last_cell_mark = False
            elif ch == "\x07":
                st.cell_mark(props.at(fc) if props else None)
                st.last_cell_mark = True
            elif ch in "\x0b\x0c\x0e":
                st.buf.append("\n")
            elif ch == "\t":
                st.buf.append("\t")
            elif ch == "\x1e":
                st.buf.append("-")
            elif ch in "\xa0\u2002\u2003":
                st.buf.append(" ")
            elif ch == "\x02" and marks:
                shown = marks.get(piece.cp + skip + i)
                if shown:
                    st.buf.append(shown)
            # 0x01 pictures, 0x02 note references, 0x05 comments, 0x08 drawings, 0x1f soft hyphen: none
        if pos < len(text) and st.visible():
            st.buf.append(text[pos:])
            st.last_cell_mark = False
        elif pos < len(text) and st.fields and not st.fields[-1]:
            st.instr[-1].append(text[pos:])
    st.finish()
