"""Hand-written BIFF5 (Excel 5.0/95) workbooks in a minimal OLE compound file, for tests.

No maintained library writes BIFF5 (xlwt writes BIFF8), so the few records a reader needs are
written here by the published layouts: workbook globals (BOF 0x0809 v5, CODEPAGE 0x0042, one
FONT 0x0031 and one XF 0x00E0, BOUNDSHEET 0x0085, EOF) and one worksheet (BOF, DIMENSIONS 0x0200, LABEL 0x0204 with 8-bit text in
the file's code page, NUMBER 0x0203, EOF), in a version-3 compound file with one ``Book`` stream
(padded past the 4,096-byte mini-stream cutoff, so only the FAT and one directory sector are
needed). ``make(path, rows, codec, codepage, sheet="Sheet1")``; ``small_in_regular_sectors`` puts
a short stream where ExcelLibrary puts it."""
import struct

FREE, END, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF


def _record(rid, body=b""):
    return struct.pack("<HH", rid, len(body)) + body


def book_stream(rows, codec, codepage, sheet="Sheet1"):
    name = sheet.encode(codec)
    globals_head = _record(0x0809, struct.pack("<HHHH", 0x0500, 0x0005, 0x096C, 0x07C9))
    globals_head += _record(0x0042, struct.pack("<H", codepage))
    # one font and one cell XF (index 0, General), which every cell uses
    globals_head += _record(0x0031, struct.pack("<HHHHHBBBBB", 200, 0, 0x7FFF, 400, 0, 0, 0, 0, 0, 5) + b"Arial")
    globals_head += _record(0x00E0, struct.pack("<HHHHHHHH", 0, 0, 0x0001 | (0xFFF << 4) & 0, 0x20, 0, 0, 0, 0))
    boundsheet_len = 4 + 7 + len(name)             # record header + position, flags, name
    sheet_at = len(globals_head) + boundsheet_len + 4
    out = globals_head + _record(0x0085, struct.pack("<IBBB", sheet_at, 0, 0, len(name)) + name) + _record(0x000A)
    assert len(out) == sheet_at
    width = max(len(r) for r in rows)
    out += _record(0x0809, struct.pack("<HHHH", 0x0500, 0x0010, 0x096C, 0x07C9))
    out += _record(0x0200, struct.pack("<5H", 0, len(rows), 0, width, 0))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            if value is None:
                continue
            if isinstance(value, str):
                raw = value.encode(codec)
                out += _record(0x0204, struct.pack("<HHHH", r, c, 0, len(raw)) + raw)
            else:
                out += _record(0x0203, struct.pack("<HHHd", r, c, 0, float(value)))
    return out + _record(0x000A)


def _dir_entry(name, kind, child=NOSTREAM, start=END, size=0):
    encoded = (name + "\0").encode("utf-16-le") if name else b""
    return (encoded.ljust(64, b"\0") + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", NOSTREAM, NOSTREAM, child) + b"\0" * 16 + struct.pack("<I", 0) + b"\0" * 16
            + struct.pack("<IQ", start, size))


def compound_file(stream, name="Book"):
    stream = stream.ljust(max(4096, len(stream)), b"\0")
    sectors = (len(stream) + 511) // 512
    fat = [FATSECT, END] + [2 + i + 1 if i + 1 < sectors else END for i in range(sectors)]
    assert len(fat) <= 128
    fat_sector = struct.pack("<128I", *(fat + [FREE] * (128 - len(fat))))
    directory = (_dir_entry("Root Entry", 5, child=1) + _dir_entry(name, 2, start=2, size=len(stream))
                 + _dir_entry("", 0) + _dir_entry("", 0))
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + b"\0" * 6 + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, END, 0, END, 0)
              + struct.pack("<109I", *([0] + [FREE] * 108)))
    assert len(header) == 512
    return header + fat_sector + directory + stream.ljust(sectors * 512, b"\0")


def small_in_regular_sectors(stream, name="Workbook"):
    """A compound file the way ExcelLibrary (.NET) writes small books: a stream shorter than the
    4,096-byte mini-stream cutoff stored in ordinary sectors, which the specification does not
    allow (xlrd and olefile then look in the mini stream and find nothing)."""
    assert len(stream) < 4096
    sectors = (len(stream) + 511) // 512
    fat = [FATSECT, END] + [2 + i + 1 if i + 1 < sectors else END for i in range(sectors)]
    fat_sector = struct.pack("<128I", *(fat + [FREE] * (128 - len(fat))))
    directory = (_dir_entry("Root Entry", 5, child=1) + _dir_entry(name, 2, start=2, size=len(stream))
                 + _dir_entry("", 0) + _dir_entry("", 0))
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + b"\0" * 6 + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, END, 0, END, 0)
              + struct.pack("<109I", *([0] + [FREE] * 108)))
    return header + fat_sector + directory + stream.ljust(sectors * 512, b"\0")


def make(path, rows, codec, codepage, sheet="Sheet1"):
    with open(str(path), "wb") as fh:
        fh.write(compound_file(book_stream(rows, codec, codepage, sheet)))
    return str(path)


def mini_stream_with_wrong_count(stream, name="Workbook"):
    """A compound file the way ExcelLibrary_newdoc.xls (ExcelDataReader's test data, MIT) has it:
    the short stream in the mini stream, as the specification says, but the header's count of
    mini-FAT sectors is the number of 64-byte mini sectors (17 for a 1 KB stream, where the chain
    has one sector). xlrd asserts on the count; olefile, Excel, LibreOffice and calamine follow
    the chain. Sectors: 0 FAT, 1 directory, 2 mini FAT, 3.. the mini stream container."""
    assert len(stream) < 4096
    minis = (len(stream) + 63) // 64
    container = stream.ljust(minis * 64, b"\0")
    sectors = (len(container) + 511) // 512
    fat = [FATSECT, END, END] + [3 + i + 1 if i + 1 < sectors else END for i in range(sectors)]
    fat_sector = struct.pack("<128I", *(fat + [FREE] * (128 - len(fat))))
    minifat = [i + 1 if i + 1 < minis else END for i in range(minis)]
    minifat_sector = struct.pack("<128I", *(minifat + [FREE] * (128 - len(minifat))))
    directory = (_dir_entry("Root Entry", 5, child=1, start=3, size=len(container))
                 + _dir_entry(name, 2, start=0, size=len(stream)) + _dir_entry("", 0) + _dir_entry("", 0))
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + b"\0" * 6 + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, 2, minis, END, 0)
              + struct.pack("<109I", *([0] + [FREE] * 108)))
    return header + fat_sector + directory + minifat_sector + container.ljust(sectors * 512, b"\0")


def sheet_position_past_bof(stream):
    """The stream with every BOUNDSHEET position moved past its sheet's BOF record, as in
    ExcelDataReader's Test_git_issue624.xls (MIT): the records after it line up, the BOF is
    skipped."""
    out = bytearray(stream)
    pos = 0
    while pos + 4 <= len(out):
        rid, size = struct.unpack_from("<HH", out, pos)
        if rid == 0x000A:
            break
        if rid == 0x0085:
            at = struct.unpack_from("<I", out, pos + 4)[0]
            bof_size = struct.unpack_from("<H", out, at + 2)[0]
            struct.pack_into("<I", out, pos + 4, at + 4 + bof_size)
        pos += 4 + size
    return bytes(out)
