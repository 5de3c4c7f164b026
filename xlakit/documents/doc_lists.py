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


def _records(table, fib, pair, count_format, size, most):
    """The fixed-size records after the count of a PLF (LSTF or LFO array), and where they end."""
    fc, lcb = fib.pair(pair)
    if not lcb or fc + lcb > len(table):
        return [], None
    count = struct.unpack_from(count_format, table, fc)[0]
    pos = fc + struct.calcsize(count_format)
    records = []
    for _ in range(max(0, min(count, most))):
        if pos + size > len(table):
            raise IndexError(pos)
        records.append(table[pos:pos + size])
        pos += size
    return records, pos


def read(table, fib):
    """The ``Numbering`` of a .doc (empty when it has no list tables or they do not parse)."""
    numbering = Numbering()
    try:
        lists, pos = _records(table, fib, PLF_LST, "<h", 28, 4096)
        lists = [(struct.unpack_from("<i", rec)[0], 1 if rec[26] & 0x01 else 9) for rec in lists]
        for lsid, levels in lists:          # the LVLs follow the LSTF array, list by list
            found = {}
            for ilvl in range(levels):
                found[ilvl], pos = _lvl(table, pos)
            numbering.add_list(lsid, found)
        lfos, pos = _records(table, fib, PLF_LFO, "<i", 16, 8192)
        lfos = [(struct.unpack_from("<i", rec)[0], rec[12]) for rec in lfos]
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
