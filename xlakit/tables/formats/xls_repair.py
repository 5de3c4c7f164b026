"""Damaged and old .xls files that Excel, LibreOffice and other readers still open: how the xls
reader (``xls.py``) gets xlrd to read them too, and what it tells the user about the damage.

Why: a workbook exported by an old ERP or mailed around for years opens fine in Excel while
xlrd stops with ``AssertionError`` or "list index out of range". Each repair below recovers
what the file really holds and leaves a Chinese warning saying what was damaged, so the answer
is never silently wrong:

- **shared-string count wrong or zero** (the SST record's count field): xlrd reads exactly that
  many strings, so too many ends in a ``struct.error`` and too few in cells pointing past the
  table. The strings are counted by parsing (``_tolerant_sst``): the largest count that parses.
- **a damaged cell comment** (NOTE record) or **a defined name whose formula xlrd cannot parse**:
  neither is a cell value; the book is read without it.
- **OLE container corruption** (``Workbook corruption: seen[…]``, "size exceeds expected"): first
  xlrd's own ``ignore_workbook_corruption``, then the Workbook stream as olefile reads it, handed
  to xlrd as raw BIFF (``workbook_stream``).
- **no CODEPAGE record, or a wrong one** (BIFF2-5 keep 8-bit text): the strings are scored
  against the likely code pages with the detector csv and txt files use (``xlakit.text``), and
  the book is reopened with the best one (``better_encoding``). A declared code page other than
  Windows-1252 (which writers put whatever the text) wins unless its text failed to decode.

xlrd's two parse functions are wrapped once per process (``install``); the wrappers only act when
the original fails, or when the reader asks for a recount after a sheet pointed past the table.
"""
import re
import struct
import threading

from ... import sniff
from ... import text as xtext

_state = threading.local()


def events():
    """What the repairs did since the last ``reset()`` (kind, detail) in this thread."""
    return list(getattr(_state, "events", []))


def reset(recount=False):
    _state.events = []
    _state.recount = recount


def _note(kind, detail=""):
    if not hasattr(_state, "events"):
        _state.events = []
    if (kind, detail) not in _state.events:
        _state.events.append((kind, detail))


def _parses(orig, datatab, n):
    try:
        orig(datatab, n)
        return True
    except Exception:  # noqa: BLE001 - xlrd fails with struct.error, IndexError, UnicodeDecodeError…
        return False


def _largest(orig, datatab, lo, hi):
    """The largest count in [lo, hi] that parses (``lo`` is known to parse)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _parses(orig, datatab, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _tolerant_sst(orig):
    def unpack_sst_table(datatab, nstrings):
        try:
            result = orig(datatab, nstrings)
        except Exception:  # noqa: BLE001
            found = _largest(orig, datatab, 0, nstrings)
            _note("sst", "记录说有 %d 个，实际只读得出 %d 个" % (nstrings, found))
            return orig(datatab, found)
        if nstrings == 0 or getattr(_state, "recount", False):
            # too small a count parses fine and loses the rest: look for more strings
            hi = max(1, nstrings) * 2
            while _parses(orig, datatab, hi) and hi < 1 << 24:
                hi *= 2
            found = _largest(orig, datatab, nstrings, hi)
            if found > nstrings:
                _note("sst", "记录说有 %d 个，实际有 %d 个" % (nstrings, found))
                return orig(datatab, found)
        return result
    unpack_sst_table.xla_tolerant = True
    return unpack_sst_table


def _tolerant_note(orig):
    def handle_note(self, data, txos):
        try:
            return orig(self, data, txos)
        except Exception:  # noqa: BLE001 - a comment xlrd cannot parse is skipped, not fatal
            _note("note", getattr(self, "name", ""))
    handle_note.xla_tolerant = True
    return handle_note


def _tolerant_name(orig):
    def evaluate_name_formula(bk, nobj, namex, blah=0, level=0):
        try:
            return orig(bk, nobj, namex, blah=blah, level=level)
        except Exception:  # noqa: BLE001 - a defined name's formula is not a cell value
            nobj.evaluated = 1
            nobj.result = None
            _note("name", getattr(nobj, "name", ""))
    evaluate_name_formula.xla_tolerant = True
    return evaluate_name_formula


def install(xlrd):
    """Wrap xlrd's shared-string, comment and defined-name parsers (once per process)."""
    import xlrd.book
    import xlrd.sheet
    if not all(hasattr(m, a) for m, a in ((xlrd.book, "unpack_SST_table"), (xlrd.book, "evaluate_name_formula"),
                                           (xlrd.sheet.Sheet, "handle_note"))):
        return                  # another xlrd than the pinned 2.0.x: read as xlrd does, unrepaired
    if not getattr(xlrd.book.unpack_SST_table, "xla_tolerant", False):
        xlrd.book.unpack_SST_table = _tolerant_sst(xlrd.book.unpack_SST_table)
    if not getattr(xlrd.book.evaluate_name_formula, "xla_tolerant", False):
        xlrd.book.evaluate_name_formula = _tolerant_name(xlrd.book.evaluate_name_formula)
    if not getattr(xlrd.sheet.Sheet.handle_note, "xla_tolerant", False):
        xlrd.sheet.Sheet.handle_note = _tolerant_note(xlrd.sheet.Sheet.handle_note)


def warnings_for(found):
    """Chinese warnings for ``events()``."""
    out = []
    for kind, detail in found:
        if kind == "sst":
            out.append("这个 xls 的共享字符串表已损坏（%s），已按实际内容读取；请核对文字单元格，"
                       "最好用 Excel/WPS 打开后另存一份" % detail)
        elif kind == "name":
            out.append("文件里定义的名称「%s」的公式读不懂，已忽略这个名称（单元格内容不受影响）" % detail)
        elif kind == "note":
            out.append("工作表「%s」里有损坏的批注，已跳过批注（单元格内容不受影响）" % detail if detail else
                       "文件里有损坏的批注，已跳过批注（单元格内容不受影响）")
    return out


def is_container_damage(exc):
    text = str(exc)
    return ("corruption" in text.lower() or "size exceeds expected" in text or "CompDocError" in type(exc).__name__
            or _asserted_in_compdoc(exc))


def _asserted_in_compdoc(exc):
    """xlrd's container reader checks some header counts with a bare ``assert``: ExcelLibrary
    (.NET) writes the mini-stream allocation table's sector count as the number of mini sectors
    (17 where the chain has one sector), so xlrd refused a book whose stream olefile, Excel,
    LibreOffice and calamine read. Such an AssertionError is container damage, not a bad book."""
    if not isinstance(exc, AssertionError):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.replace("\\", "/").endswith("xlrd/compdoc.py"):
            return True
        tb = tb.tb_next
    return False


def container_damage_text(exc):
    """What xlrd's container error means, in Chinese."""
    text = str(exc)
    if "size exceeds expected" in text:
        return "数据流比目录里记录的长度更长"
    if "MSAT" in text:
        return "扇区分配表损坏"
    if "corruption" in text.lower():
        return "目录里的扇区链互相重叠"
    return "目录结构损坏"


def regular_sector_stream(path):
    """The Workbook/Book stream read through the regular FAT even when it is shorter than the
    mini-stream cutoff. ExcelLibrary (a .NET writer) stores small workbooks that way; the
    specification says such a stream lives in the mini stream, so xlrd and olefile read noise
    ("目录结构损坏"), while Excel, LibreOffice and calamine follow the sector chain the directory
    gives. None when the container does not fit this reading."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:8] != b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" or len(data) < 512:
            return None
        size = 1 << struct.unpack_from("<H", data, 0x1E)[0]
        if size not in (512, 4096):
            return None
        n_fat, first_dir = struct.unpack_from("<II", data, 0x2C)
        first_difat, n_difat = struct.unpack_from("<II", data, 0x44)
        difat = list(struct.unpack_from("<109I", data, 0x4C))
        sector = first_difat
        for _ in range(min(n_difat, 1000)):
            if sector >= 0xFFFFFFFA:
                break
            at = (sector + 1) * size
            entries = struct.unpack_from("<%dI" % (size // 4), data, at)
            difat += list(entries[:-1])
            sector = entries[-1]
        fat = []
        for sec in difat[:n_fat]:
            at = (sec + 1) * size
            if sec >= 0xFFFFFFFA or at + size > len(data):
                return None
            fat += struct.unpack_from("<%dI" % (size // 4), data, at)

        def chain(start, limit):
            out, sec, seen = bytearray(), start, set()
            while sec < len(fat) and sec not in seen and len(out) < limit:
                seen.add(sec)
                out += data[(sec + 1) * size:(sec + 2) * size]
                sec = fat[sec]
            return bytes(out)

        directory = chain(first_dir, 1 << 20)
        for at in range(0, len(directory) - 127, 128):
            length = struct.unpack_from("<H", directory, at + 64)[0]
            name = directory[at:at + max(0, length - 2)].decode("utf-16-le", "replace")
            if directory[at + 66] == 2 and name.lower() in ("workbook", "book"):
                start, stream_size = struct.unpack_from("<II", directory, at + 116)
                stream = chain(start, stream_size)[:stream_size]
                return stream if len(stream) == stream_size and stream[:2] == b"\x09\x08" else None
    except (OSError, struct.error, IndexError):
        return None
    return None


_BOF_IDS = (0x0809, 0x0409, 0x0209, 0x0009)
# the farthest a sheet's recorded position may sit past its BOF record (a BIFF8 BOF is 20 bytes)
_BOF_SLACK = 32


def sheet_offsets_fixed(stream):
    """(stream with each BOUNDSHEET position moved back onto its sheet's BOF record, how many).

    Some writers (ExcelDataReader's Test_git_issue624.xls) record a sheet's position just past
    its BOF record instead of at it: xlrd expects a BOF there and refuses the sheet ("expected
    BOF"), while Excel, LibreOffice and calamine read on from the records that follow. A
    position that is not a BOF and has one at most ``_BOF_SLACK`` bytes before it (with no other
    record boundary problem: the BOF is found by walking the record chain) is moved onto it; the
    bytes and lengths stay the same, so nothing else moves."""
    out = bytearray(stream)
    starts, bofs, pos = [], [], 0
    while pos + 4 <= len(out):
        rid, size = struct.unpack_from("<HH", out, pos)
        starts.append(pos)
        if rid in _BOF_IDS:
            bofs.append(pos)
        pos += 4 + size
    boundsheets, pos = [], 0
    while pos + 4 <= len(out):           # the workbook globals: up to their EOF
        rid, size = struct.unpack_from("<HH", out, pos)
        if rid == 0x000A:
            break
        if rid == 0x0085 and size >= 4:
            boundsheets.append(pos + 4)
        pos += 4 + size
    count = 0
    for field in boundsheets:
        at = struct.unpack_from("<I", out, field)[0]
        if at + 2 <= len(out) and struct.unpack_from("<H", out, at)[0] in _BOF_IDS:
            continue
        before = [b for b in bofs if 0 < b < at and at - b <= _BOF_SLACK]
        if before:
            struct.pack_into("<I", out, field, before[-1])
            count += 1
    return bytes(out), count


def rich_strings_as_labels(stream):
    """(stream with every RSTRING record (0x00D6) renamed LABEL (0x0204), how many): the same
    bytes and lengths, so BOUNDSHEET offsets stay right (see XlsBook._without_rich_strings)."""
    out = bytearray(stream)
    pos, count = 0, 0
    while pos + 4 <= len(out):
        rid, size = struct.unpack_from("<HH", out, pos)
        if rid == 0x00D6:
            struct.pack_into("<H", out, pos, 0x0204)
            count += 1
        pos += 4 + size
    return bytes(out), count


def workbook_stream(path):
    """The raw BIFF Workbook (or Book) stream as olefile reads it, or None."""
    ole = sniff.open_ole(path)
    if ole is None:
        return None
    try:
        for name in ("Workbook", "Book", "WORKBOOK", "BOOK"):
            if ole.exists(name):
                return ole.openstream(name).read()
    except Exception:  # noqa: BLE001
        return None
    finally:
        ole.close()
    return None


# ---------------------------------------------------------------------------------------------
# 8-bit text of BIFF2-5 files

_SAME = {"iso-8859-1": "cp1252", "latin_1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252"}


def _codec(name):
    name = (name or "").lower().replace("_", "-")
    return _SAME.get(name, xtext.codec_for_label(name) or name)


# Declared code pages that are no evidence: Windows-1252 is what many non-Excel writers put in
# the CODEPAGE record whatever the text is (Cyrillic or GBK bytes under "1252").
_OVERRIDABLE = frozenset(["cp1252"])
# what a failed decode leaves: replacement characters, C1 controls (bytes a code page lacks)
_FAILED = re.compile("[\ufffd\x80-\x9f]")


def better_encoding(book, limit=4000):
    """``(codec, reason)`` when the 8-bit text of an xlrd ``book`` (BIFF < 8) reads better in
    another code page than the one xlrd used, else None. The strings are turned back into the
    file's bytes with xlrd's codec and scored as a csv would be."""
    if getattr(book, "biff_version", 80) >= 80:
        return None
    used = book.encoding or "iso-8859-1"
    pieces = list(book.sheet_names())
    size = 0
    try:
        for index in range(book.nsheets):
            sh = book.sheet_by_index(index)
            for r in range(min(sh.nrows, 500)):
                for v in sh.row_values(r):
                    if isinstance(v, str) and v and not v.isascii():
                        pieces.append(v)
                        size += len(v)
                if size > limit:
                    break
            if size > limit:
                break
    except Exception:  # noqa: BLE001 - the caller reads the book anyway
        return None
    if book.codepage is not None and _codec(used) not in _OVERRIDABLE and not any(
            _FAILED.search(p) for p in pieces):
        # a declared code page wins unless its text failed to decode: short Cyrillic cells
        # (р., OOО with a Latin O) may score better in another code page, but the file says 1251
        return None
    try:
        raw = "\n".join(p for p in pieces if not p.isascii()).encode(used)
    except (UnicodeEncodeError, LookupError):
        return None
    if not raw:
        return None
    scores = dict(xtext.score_candidates(raw))
    best, top = xtext.guess_legacy(raw)
    current = scores.get(_codec(used), -9.0)
    if _codec(best) == _codec(used) or top <= current + 0.25:
        return None
    if book.codepage is None:
        why = "文件里没有记录文字用的编码"
    else:
        why = "文件记录的编码是 %s，但按它读出的文字不成文" % xtext.label(_codec(used))
    return best, "%s，按内容判断是 %s，已按它读取" % (why, xtext.label(best))
