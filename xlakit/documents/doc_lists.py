"""Automatic numbering of Word 97-2003 .doc files: the list tables of the table stream (PlfLst:
LSTF + LVL, PlfLfo: LFO + LFOLVL overrides), turned into ``numbering.Numbering`` lists so the
labels come out as Word shows them ("一、", "（一）", "1.1", "①") with the same counting rules as
docx. A paragraph names its list by ``sprmPIlfo`` (1-based LFO index) and ``sprmPIlvl``, directly
or through its style; the LFO names the LST by ``lsid``. The counts run per LST, as Word's do per
abstractNum, and an LFO override with ``fStartAt`` restarts its list instance.
"""
import struct

from .numbering import Level, Numbering

# MSONFC codes ([MS-DOC] 2.9.x) as the number-format names of numbering.format_number
NFC = {0: "decimal", 1: "upperRoman", 2: "lowerRoman", 3: "upperLetter", 4: "lowerLetter", 5: "ordinal",
       10: "ideographDigital", 11: "japaneseCounting", 14: "decimalFullWidth", 15: "decimalHalfWidth",
       17: "japaneseDigitalTenThousand", 18: "decimalEnclosedCircle", 19: "decimalFullWidth2",
       22: "decimalZero", 23: "bullet", 26: "decimalEnclosedFullstop", 27: "decimalEnclosedParen",
       28: "decimalEnclosedCircleChinese", 29: "ideographEnclosedCircle", 30: "ideographTraditional",
       31: "ideographZodiac", 33: "taiwaneseCounting", 34: "ideographLegalTraditional",
       35: "taiwaneseCountingThousand", 36: "taiwaneseDigital", 37: "chineseCounting",
       38: "chineseLegalSimplified", 39: "chineseCountingThousand", 255: "none"}

PLF_LST, PLF_LFO = 73, 74          # FibRgFcLcb97 pairs


def _lvl(data, pos):
    """One LVL at ``pos``: (Level, position after it)."""
    start, nfc, flags = struct.unpack_from("<iBB", data, pos)
    cb_chpx, cb_papx, restart_lim = struct.unpack_from("<BBB", data, pos + 24)
    pos += 28 + cb_papx + cb_chpx
    cch = struct.unpack_from("<H", data, pos)[0]
    xst = data[pos + 2:pos + 2 + 2 * cch].decode("utf-16-le", "replace")
    pos += 2 + 2 * cch
    # the placeholders are the characters 0-8 (the level whose count goes there); %N in docx terms
    template = "".join("%%%d" % (ord(c) + 1) if ord(c) < 9 else c for c in xst)
    fmt = NFC.get(nfc, "decimal")
    no_restart = bool(flags & 0x08)
    level = Level(fmt, template, start, restart_lim if no_restart else None, bool(flags & 0x04))
    return level, pos


def read(table, fib):
    """The ``Numbering`` of a .doc (empty when it has no list tables or they do not parse)."""
    numbering = Numbering()
    try:
        fc, lcb = fib.pair(PLF_LST)
        if not lcb or fc + lcb > len(table):
            return numbering
        count = struct.unpack_from("<h", table, fc)[0]
        pos = fc + 2
        lists = []
        for _ in range(max(0, min(count, 4096))):
            lsid, = struct.unpack_from("<i", table, pos)
            simple = bool(table[pos + 26] & 0x01)
            lists.append((lsid, 1 if simple else 9))
            pos += 28
        for lsid, levels in lists:          # the LVLs follow the LSTF array, list by list
            found = {}
            for ilvl in range(levels):
                found[ilvl], pos = _lvl(table, pos)
            numbering.add_list(lsid, found)
        fc, lcb = fib.pair(PLF_LFO)
        if not lcb or fc + lcb > len(table):
            return numbering
        count = struct.unpack_from("<i", table, fc)[0]
        pos = fc + 4
        lfos = []
        for _ in range(max(0, min(count, 8192))):
            lsid, = struct.unpack_from("<i", table, pos)
            lfos.append((lsid, table[pos + 12]))
            pos += 16
        for index, (lsid, clfolvl) in enumerate(lfos, 1):
            pos += 4                             # LFOData.cp
            starts, levels = {}, {}
            for _ in range(clfolvl):
                start, flags = struct.unpack_from("<iI", table, pos)
                pos += 8
                ilvl = flags & 0x0F
                if flags & 0x20:                 # fFormatting: a whole LVL replaces the list's
                    levels[ilvl], pos = _lvl(table, pos)
                    starts[ilvl] = levels[ilvl].start
                elif flags & 0x10:               # fStartAt
                    starts[ilvl] = start
            numbering.add_num(index, lsid, starts, levels)
    except (struct.error, IndexError):
        pass
    return numbering
