"""What a file is, by its bytes: one answer for every reader, without any policy.

Suffixes lie (an xlsx renamed .xls, "Word HTML" saved as .doc, a WPS file that is Word binary
inside, a PDF called .docx), and the same magic bytes used to be checked in five places. ``sniff``
looks at the content once and says what it is; each tool decides on its own what it accepts.

It is cheap and safe on any input: it reads a bounded prefix (64 KiB), the zip central directory
(never a compressed member, except a few tiny descriptor parts read with a hard output cap, so a
zip bomb costs nothing) and the OLE directory sectors (bounded count, cycle-proof). It never loads
a huge file, never raises for a damaged one (that is reported as ``damaged``), and needs only the
standard library.

``sniff(path_or_bytes) -> Kind``; ``Kind.kind`` is one of:

    xlsx xlsm xlsb docx pptx odt ods odp        zip packages, by their parts
    xls doc wps et ppt ole                      OLE compound files, by their stream names
                                                (wps/et: Word/Excel binary written by Kingsoft WPS;
                                                 ``base`` is then "doc"/"xls")
    epub                                        zip packages, by their mimetype
    pdf rtf html mhtml xml wordml text empty    by their first bytes (wordml: Word 2003 XML)
    wpd                                         WordPerfect 5.x and later documents ("\xffWPC")
    zip gzip rar 7z png jpeg gif bmp tiff webp
    unknown

plus ``detail`` (a short Chinese description a message can quote), ``encrypted`` and ``damaged``
flags, ``names`` (lower-cased zip part names or OLE stream names), ``encoding`` (a guess, for
text kinds), ``mime`` (ODF), ``size``.
"""
import io
import os
import struct
import zlib

__all__ = ["Kind", "sniff", "HEAD", "OLE_MAGIC"]

HEAD = 65536                 # bytes of prefix read for every file
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAX_CD_BYTES = 64 << 20      # a central directory bigger than this is not read
MAX_ZIP_ENTRIES = 200000
MAX_DIR_SECTORS = 8192       # OLE directory sectors followed at most
MAX_SMALL_PART = 256 << 10   # decompressed bytes read from a descriptor part ([Content_Types].xml, mimetype)

LABELS = {
    "xlsx": "Excel 工作簿（.xlsx）", "xlsm": "启用宏的 Excel 工作簿（.xlsm）",
    "xlsb": "Excel 二进制工作簿（.xlsb）", "docx": "Word 文档（.docx）", "pptx": "PowerPoint 演示文稿（.pptx）",
    "odt": "OpenDocument 文字文档（.odt）", "ods": "OpenDocument 表格（.ods）",
    "odp": "OpenDocument 演示文稿（.odp）", "xls": "Excel 97-2003 工作簿（.xls）",
    "doc": "Word 97-2003 文档（.doc）", "wps": "WPS 文字文档（Word 二进制格式）",
    "et": "WPS 表格文件（Excel 二进制格式）", "ppt": "PowerPoint 97-2003 演示文稿（.ppt）",
    "ole": "Office 复合文件", "pdf": "PDF 文件", "rtf": "RTF 文档", "html": "网页（HTML）",
    "mhtml": "单个文件网页（MHTML）", "xml": "XML 文件",
    "wordml": "Word 2003 XML 文档（WordML）", "epub": "EPUB 电子书", "text": "纯文本", "empty": "空文件",
    "zip": "zip 压缩包", "gzip": "gzip 压缩包", "rar": "RAR 压缩包", "7z": "7z 压缩包",
    "png": "PNG 图片", "jpeg": "JPEG 图片", "gif": "GIF 图片", "bmp": "BMP 图片", "tiff": "TIFF 图片",
    "webp": "WebP 图片", "wpd": "WordPerfect 文档（.wpd）", "unknown": "无法识别的二进制数据",
}


class Kind:
    """The answer of ``sniff``. Compare ``kind.kind``; ``str(kind)`` is the kind too."""

    __slots__ = ("kind", "detail", "encrypted", "damaged", "names", "encoding", "mime", "size", "base")

    def __init__(self, kind, detail=None, encrypted=False, damaged=False, names=(), encoding=None,
                 mime=None, size=0, base=None):
        self.kind = kind
        self.detail = detail or LABELS.get(kind, kind)
        self.encrypted = encrypted
        self.damaged = damaged
        self.names = frozenset(names)
        self.encoding = encoding
        self.mime = mime
        self.size = size
        self.base = base or kind

    @property
    def label(self):
        return LABELS.get(self.kind, self.kind)

    def __str__(self):
        return self.kind

    def __repr__(self):
        flags = "".join((" encrypted" if self.encrypted else "", " damaged" if self.damaged else ""))
        return "<Kind %s%s: %s>" % (self.kind, flags, self.detail)


def sniff(source):
    """Tell what ``source`` (a path, bytes, or a seekable binary file object) is. Never raises for
    bad content; a missing or unreadable path raises the usual OSError."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return _sniff_stream(io.BytesIO(data), len(data))
    if hasattr(source, "read") and hasattr(source, "seek"):
        source.seek(0, os.SEEK_END)
        size = source.tell()
        source.seek(0)
        return _sniff_stream(source, size)
    path = os.fspath(source)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        return _sniff_stream(fh, size)


def _sniff_stream(fh, size):
    head = fh.read(HEAD)
    if not head:
        return Kind("empty", "文件是空的（0 字节）", size=size)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08") or (head[:2] == b"PK" and size > 22 and
                                                                   _find_eocd(fh, size) is not None):
        kind = _sniff_zip(fh, size, head)
    elif head.startswith(OLE_MAGIC):
        kind = _sniff_ole(fh, size, head)
    else:
        kind = _sniff_magic(head, size)
    kind.size = size
    return kind


# ---------------------------------------------------------------- simple magic and text

MAGIC = (
    (b"%PDF-", "pdf"), (b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpeg"), (b"GIF87a", "gif"),
    (b"GIF89a", "gif"), (b"II*\x00", "tiff"), (b"MM\x00*", "tiff"), (b"\x1f\x8b", "gzip"),
    (b"Rar!\x1a\x07", "rar"), (b"7z\xbc\xaf\x27\x1c", "7z"),
)


def _sniff_magic(head, size):
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return Kind(kind)
    # A PDF may carry junk (a mail header, a BOM) before %PDF; readers accept it within 1 KiB.
    if b"%PDF-" in head[:1024]:
        return Kind("pdf", "PDF 文件（开头有多余数据）")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Kind("webp")
    if head[:2] == b"BM" and len(head) >= 26 and head[6:10] == b"\x00\x00\x00\x00" and \
            struct.unpack_from("<I", head, 14)[0] in (12, 40, 52, 56, 64, 108, 124):
        return Kind("bmp")
    if head[:4] in (b"\x09\x04\x06\x00", b"\x09\x02\x06\x00", b"\x09\x00\x04\x00"):
        return Kind("xls", "Excel 2.x–4.0 老格式工作表（不是 OLE 复合文件）", mime="application/vnd.ms-excel.biff4")
    if head[:4] == b"\xffWPC" and len(head) >= 16:
        # WordPerfect 5.x-X9 (and other WordPerfect Corel products): product 1 = WordPerfect,
        # file type 10 = a document; a non-zero key at 12 means a password.
        if head[8] == 1 and head[9] == 10:
            return Kind("wpd", encrypted=head[12:14] != b"\x00\x00")
        return Kind("unknown", "WordPerfect 的其他文件（不是文档：类型 %d/%d）" % (head[8], head[9]))
    if head[:2] in (b"\x9b\xa5", b"\xdb\xa5") and len(head) >= 128:
        return Kind("doc", "Word 1.0/2.0 老格式文档（不是 OLE 复合文件）", base="doc")
    stripped = head.lstrip(b"\xef\xbb\xbf\r\n\t ")
    if stripped[:5] == b"{\\rtf":
        return Kind("rtf")
    text, encoding = _decode_text(head, size > len(head))
    if text is None:
        return Kind("unknown")
    body = text.lstrip("\ufeff \t\r\n\x00")
    if not body:
        return Kind("empty", "文件只有空白或编码标记，没有内容", encoding=encoding)
    if body.startswith("{\\rtf"):
        return Kind("rtf", "RTF 文档（%s 编码）" % encoding, encoding=encoding)
    markup = _markup_kind(body)
    if markup:
        return Kind(markup[0], markup[1], encoding=encoding)
    return Kind("text", "纯文本（%s）" % encoding, encoding=encoding)


HTML_STARTS = ("<!doctype html", "<html", "<head", "<body", "<meta", "<title", "<table", "<div", "<p>", "<p ",
               "<h1", "<h2", "<br", "<span", "<font", "<center", "<style", "<script", "<link", "<ul", "<ol",
               "<pre", "<form")


def _markup_kind(body):
    low = body[:8192].lower()
    if low.startswith(("mime-version:", "from:", "content-type: multipart", "x-mimeole")) and \
            "multipart/related" in low[:4096]:
        return "mhtml", "单个文件网页（MHTML，常见于 Word 另存的 .mht/.doc）"
    if not low.startswith("<"):
        return None
    rest = low
    # skip an XML declaration and leading comments
    for _ in range(20):
        rest = rest.lstrip()
        if rest.startswith("<?xml"):
            end = rest.find("?>")
            rest = rest[end + 2:] if end >= 0 else ""
        elif rest.startswith("<!--"):
            end = rest.find("-->")
            rest = rest[end + 3:] if end >= 0 else ""
        else:
            break
    word_html = "urn:schemas-microsoft-com:office:word" in low
    if rest.startswith(HTML_STARTS) or ("<html" in low[:2048] and rest.startswith("<!doctype")):
        if word_html:
            return "html", "Word 另存的网页（Word HTML）"
        if "urn:schemas-microsoft-com:office:excel" in low:
            return "html", "Excel 另存的网页（HTML 表格）"
        return "html", None
    if rest.startswith("<!doctype") and "html" in rest[:200]:
        return "html", None
    if "<html" in low and ("<body" in low or "<head" in low):
        return "html", None
    if "urn:schemas-microsoft-com:office:spreadsheet" in low and "<workbook" in low:
        return "xml", "Excel 2003 XML 表格（SpreadsheetML）"
    if "http://schemas.microsoft.com/office/word/2003/wordml" in low:
        return "wordml", None
    if "<office:document" in low and "urn:oasis:names:tc:opendocument" in low:
        return "xml", "OpenDocument 单文件 XML（.fodt/.fods）"
    if rest.startswith("<") and rest[1:2].isalpha() or rest.startswith("<!doctype"):
        return "xml", None
    return None


def _decode_text(head, cut):
    """(text, encoding) of a prefix that looks like text; (None, None) when it looks binary."""
    if head.startswith(b"\xff\xfe") or head.startswith(b"\xfe\xff"):
        enc = "utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be"
        data = head[2:]
        data = data[:len(data) // 2 * 2]
        text = data.decode(enc, "replace")
        return (text, "utf-16") if _texty(text) else (None, None)
    if head.startswith(b"\xef\xbb\xbf"):
        text = _decode_cut(head[3:], "utf-8", cut)
        return (text, "utf-8-sig") if text is not None and _texty(text) else (None, None)
    sample = head[:4096]
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    if len(sample) >= 8 and odd_nuls > len(sample) // 4 and even_nuls < len(sample) // 20:
        data = head[:len(head) // 2 * 2]
        text = data.decode("utf-16-le", "replace")
        return (text, "utf-16-le") if _texty(text) else (None, None)
    if len(sample) >= 8 and even_nuls > len(sample) // 4 and odd_nuls < len(sample) // 20:
        data = head[:len(head) // 2 * 2]
        text = data.decode("utf-16-be", "replace")
        return (text, "utf-16-be") if _texty(text) else (None, None)
    if b"\x00" in sample:
        return None, None
    for enc in ("utf-8", "gb18030"):
        text = _decode_cut(head, enc, cut)
        if text is not None and _texty(text):
            return text, ("ascii" if enc == "utf-8" and max(head) < 128 else enc)
    # A long UTF-8 export with a few damaged bytes is still UTF-8 text (the same rule as
    # xlakit.text.detect): few replacements among many valid multi-byte characters.
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    multibyte = sum(1 for ch in text if ord(ch) > 127) - bad
    if bad and bad * 100 < len(head) and multibyte > bad * 20 and _texty(text.replace("\ufffd", "")):
        return text, "utf-8"
    text = head.decode("gb18030", "replace")
    if _texty(text):
        return text, "gb18030"
    return None, None


def _decode_cut(data, enc, cut):
    """Strict decode, allowing a character cut at the end of a prefix."""
    for trim in range(0, 4 if cut else 1):
        try:
            return data[:len(data) - trim].decode(enc)
        except UnicodeDecodeError:
            continue
    return None


def _texty(text):
    sample = text[:16384]
    if not sample:
        return True         # nothing after a BOM: empty text, not binary (the caller says "empty")
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\r\n\f\v\x1a\x1b") or ch == "\ufffd")
    return "\x00" not in sample and bad <= max(2, len(sample) // 100)


# ---------------------------------------------------------------- zip packages

def _find_eocd(fh, size):
    """(offset of the end-of-central-directory record, its bytes) or None."""
    back = min(size, 65535 + 22 + 20)
    fh.seek(size - back)
    tail = fh.read(back)
    pos = tail.rfind(b"PK\x05\x06")
    while pos >= 0:
        if len(tail) - pos >= 22:
            return size - back + pos, tail[pos:pos + 22], tail[:pos]
        pos = tail.rfind(b"PK\x05\x06", 0, pos)
    return None


class _Entry:
    __slots__ = ("name", "method", "csize", "usize", "offset", "flags")

    def __init__(self, name, method, csize, usize, offset, flags):
        self.name, self.method, self.csize, self.usize, self.offset, self.flags = \
            name, method, csize, usize, offset, flags


def _zip_entries(fh, size):
    """Entries from the central directory (a dict name -> _Entry, lower-cased keys), or None when
    the directory cannot be found (a truncated download)."""
    found = _find_eocd(fh, size)
    if found is None:
        return None
    eocd_pos, eocd, before = found
    _sig, _disk, _cd_disk, _n_disk, total, cd_size, cd_offset, _clen = struct.unpack("<IHHHHIIH", eocd)
    if total == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:
        loc = before[-20:] if len(before) >= 20 else b""
        if loc[:4] == b"PK\x06\x07":
            z64_off = struct.unpack_from("<Q", loc, 8)[0]
            fh.seek(z64_off)
            rec = fh.read(56)
            if rec[:4] == b"PK\x06\x06" and len(rec) >= 56:
                total, cd_size, cd_offset = struct.unpack_from("<QQQ", rec, 32)
                eocd_pos = z64_off
    if cd_size > MAX_CD_BYTES or cd_size > eocd_pos:
        return None
    # Data prepended to the archive (self-extractors, mail headers) shifts every offset.
    delta = eocd_pos - cd_size - cd_offset
    if delta < 0:
        delta = 0
    fh.seek(cd_offset + delta)
    cd = fh.read(cd_size)
    entries = {}
    pos = 0
    while pos + 46 <= len(cd) and len(entries) < MAX_ZIP_ENTRIES:
        if cd[pos:pos + 4] != b"PK\x01\x02":
            break
        (flags, method, csize, usize, nlen, xlen, clen, offset) = (
            struct.unpack_from("<H", cd, pos + 8)[0], struct.unpack_from("<H", cd, pos + 10)[0],
            struct.unpack_from("<I", cd, pos + 20)[0], struct.unpack_from("<I", cd, pos + 24)[0],
            struct.unpack_from("<H", cd, pos + 28)[0], struct.unpack_from("<H", cd, pos + 30)[0],
            struct.unpack_from("<H", cd, pos + 32)[0], struct.unpack_from("<I", cd, pos + 42)[0])
        raw = cd[pos + 46:pos + 46 + nlen]
        name = raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        # Windows tools write part names with backslashes ("xl\\workbook.xml"); readers accept them
        entries[name.replace("\\", "/").lower().lstrip("/")] = _Entry(name, method, csize, usize, offset + delta, flags)
        pos += 46 + nlen + xlen + clen
    return entries


def _local_entries(head):
    """Names from the local headers in the prefix: what a truncated zip still tells. Members
    written with a data descriptor have no size up front, so every signature is looked at."""
    entries = {}
    pos = head.find(b"PK\x03\x04")
    while 0 <= pos and pos + 30 <= len(head) and len(entries) < 10000:
        flags, method = struct.unpack_from("<HH", head, pos + 6)
        csize, usize, nlen, xlen = struct.unpack_from("<IIHH", head, pos + 18)
        raw = head[pos + 30:pos + 30 + nlen]
        if len(raw) == nlen and nlen:
            name = raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")
            entries[name.replace("\\", "/").lower().lstrip("/")] = _Entry(name, method, csize, usize, pos, flags)
        pos = head.find(b"PK\x03\x04", pos + 30)
    return entries


def _read_small(fh, entry, cap=MAX_SMALL_PART):
    """At most ``cap`` decompressed bytes of one member ('' on any trouble, never a bomb)."""
    if entry.flags & 0x1:
        return b""
    try:
        fh.seek(entry.offset)
        local = fh.read(30)
        if local[:4] != b"PK\x03\x04":
            return b""
        nlen, xlen = struct.unpack_from("<HH", local, 26)
        fh.seek(entry.offset + 30 + nlen + xlen)
        raw = fh.read(min(entry.csize if entry.csize else cap, cap * 4 + 1024))
        if entry.method == 0:
            return raw[:cap]
        if entry.method == 8:
            return zlib.decompressobj(-15).decompress(raw, cap)
    except (OSError, zlib.error, struct.error, ValueError, OverflowError):
        return b""
    return b""


ODF_MIMES = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.text-template": "odt",
    "application/vnd.oasis.opendocument.text-master": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/vnd.oasis.opendocument.presentation-template": "odp",
}


def _sniff_zip(fh, size, head):
    entries = _zip_entries(fh, size)
    damaged = False
    if entries is None:
        entries = _local_entries(head)
        damaged = True
    names = set(entries)
    kind = _classify_zip(fh, entries, names)
    if damaged:
        kind.damaged = True
        kind.detail += "（文件不完整：压缩包目录缺失，可能只下载/复制了一部分）"
    kind.names = frozenset(names)
    return kind


def _classify_zip(fh, entries, names):
    types = b""
    if "[content_types].xml" in entries:
        types = _read_small(fh, entries["[content_types].xml"]).lower()
    # the usual xl/workbook.xml, or any layout whose content types name a workbook part
    if any(n.startswith("xl/workbook") and n.endswith(".xml") for n in names) or \
            b"spreadsheetml.sheet.main+xml" in types or b"spreadsheetml.template.main+xml" in types or \
            b"ms-excel.sheet.macroenabled.main+xml" in types:
        macro = b"macroenabled.main" in types or "xl/vbaproject.bin" in names
        return Kind("xlsm" if macro else "xlsx")
    if "xl/workbook.bin" in names:
        return Kind("xlsb")
    if any(n.startswith("word/") and n.endswith(".xml") and "document" in n for n in names) or \
            b"wordprocessingml.document.main" in types or b"ms-word.document.macroenabled" in types:
        if b"macroenabled" in types or "word/vbaproject.bin" in names:
            return Kind("docx", "启用宏的 Word 文档（.docm）")
        if b"template.main" in types:
            return Kind("docx", "Word 模板（.dotx）")
        return Kind("docx")
    if "ppt/presentation.xml" in names or b"presentationml.presentation.main" in types or \
            b"presentationml.slideshow.main" in types:
        return Kind("pptx")
    mime = ""
    if "mimetype" in entries:
        mime = _read_small(fh, entries["mimetype"], 200).decode("ascii", "replace").strip()
    if not mime and "meta-inf/manifest.xml" in entries and "content.xml" in names:
        manifest = _read_small(fh, entries["meta-inf/manifest.xml"]).decode("utf-8", "replace")
        for candidate in ODF_MIMES:
            if candidate + '"' in manifest:
                mime = candidate
                break
    if mime in ODF_MIMES:
        # saved with a password: the parts are encrypted, the manifest says how (xlakit.crypt.odf)
        locked = "meta-inf/manifest.xml" in entries and \
            b"encryption-data" in _read_small(fh, entries["meta-inf/manifest.xml"])
        return Kind(ODF_MIMES[mime], mime=mime, encrypted=locked)
    if mime == "application/epub+zip" or (not mime and "meta-inf/container.xml" in names and
                                           any(n.endswith(".opf") for n in names)):
        return Kind("epub", mime="application/epub+zip")
    if mime.startswith("application/vnd.oasis.opendocument"):
        return Kind("zip", "OpenDocument 的其他类型（%s）" % mime, mime=mime)
    if any(n.endswith(".iwa") for n in names):
        return Kind("zip", "Apple iWork 文档（Pages/Numbers/Keynote）")
    if "doc.xml" in names or any(n.startswith("doc_0/") for n in names):
        return Kind("zip", "OFD 版式文档（国产电子公文格式）")
    if any(entries[n].flags & 0x1 for n in names):
        return Kind("zip", "加密的 zip 压缩包", encrypted=True)
    return Kind("zip")


# ---------------------------------------------------------------- OLE compound files

ENDOFCHAIN = 0xFFFFFFFE
FREESECT = 0xFFFFFFFF


class _Ole:
    """The directory of a compound file, read lazily sector by sector (no whole-FAT load)."""

    def __init__(self, fh, size, head):
        self.fh = fh
        self.size = size
        self.shift = struct.unpack_from("<H", head, 0x1E)[0]
        if self.shift not in (9, 12):
            raise ValueError("sector size")
        self.ssize = 1 << self.shift
        self.first_dir = struct.unpack_from("<I", head, 0x30)[0]
        self.first_difat = struct.unpack_from("<I", head, 0x44)[0]
        self.n_difat = struct.unpack_from("<I", head, 0x48)[0]
        self.difat = list(struct.unpack_from("<109I", head, 0x4C))
        self._difat_next = self.first_difat
        self._difat_read = 0
        self._fat_cache = {}

    def sector(self, sid):
        pos = (sid + 1) << self.shift
        if pos + self.ssize > self.size + self.ssize:   # a last sector may be short
            raise ValueError("sector beyond the end")
        self.fh.seek(pos)
        return self.fh.read(self.ssize)

    def _fat_sector_id(self, index):
        per = self.ssize // 4 - 1
        while index >= len(self.difat) and self._difat_next not in (ENDOFCHAIN, FREESECT) and \
                self._difat_read < max(self.n_difat, 1) and self._difat_read < 4096:
            data = self.sector(self._difat_next)
            vals = struct.unpack("<%dI" % (per + 1), data[:self.ssize])
            self.difat.extend(vals[:per])
            self._difat_next = vals[per]
            self._difat_read += 1
        if index >= len(self.difat):
            raise ValueError("FAT sector missing")
        return self.difat[index]

    def next(self, sid):
        per = self.ssize // 4
        index, slot = divmod(sid, per)
        fat = self._fat_cache.get(index)
        if fat is None:
            fsid = self._fat_sector_id(index)
            if fsid in (ENDOFCHAIN, FREESECT):
                raise ValueError("FAT sector missing")
            data = self.sector(fsid)
            fat = struct.unpack("<%dI" % (len(data) // 4), data[:len(data) // 4 * 4])
            if len(self._fat_cache) > 64:
                self._fat_cache.clear()
            self._fat_cache[index] = fat
        return fat[slot] if slot < len(fat) else ENDOFCHAIN

    def entries(self):
        """[(name, type, start, size)] of every directory entry, in directory order."""
        out = []
        seen = set()
        sid = self.first_dir
        while sid not in (ENDOFCHAIN, FREESECT) and sid not in seen and len(seen) < MAX_DIR_SECTORS:
            seen.add(sid)
            data = self.sector(sid)
            for off in range(0, len(data) - 127, 128):
                raw = data[off:off + 128]
                nlen = struct.unpack_from("<H", raw, 64)[0]
                etype = raw[66]
                if etype not in (1, 2, 5) or not 2 <= nlen <= 64:
                    continue
                name = raw[:nlen - 2].decode("utf-16-le", "replace")
                start, size = struct.unpack_from("<IQ", raw, 116)
                if self.ssize == 512:
                    size &= 0xFFFFFFFF
                out.append((name, etype, start, size))
            sid = self.next(sid)
        return out


def _root_streams(ole):
    """Lower-cased names of the entries directly under the root storage (the red-black tree of
    the root's children), so a Word document embedded in a workbook (its own WordDocument
    stream inside an ``MBD...`` storage) does not make the workbook look like a document."""
    slots = []
    seen = set()
    sid = ole.first_dir
    while sid not in (ENDOFCHAIN, FREESECT) and sid not in seen and len(seen) < MAX_DIR_SECTORS:
        seen.add(sid)
        data = ole.sector(sid)
        for off in range(0, len(data) - 127, 128):
            raw = data[off:off + 128]
            nlen = struct.unpack_from("<H", raw, 64)[0]
            name = raw[:max(0, min(nlen, 64) - 2)].decode("utf-16-le", "replace").lower()
            left, right, child = struct.unpack_from("<III", raw, 68)
            slots.append((name, raw[66], left, right, child))
        sid = ole.next(sid)
    if not slots or slots[0][1] != 5:
        return None
    out, stack, visited = set(), [slots[0][4]], set()
    while stack:
        i = stack.pop()
        if i >= len(slots) or i in visited or len(visited) > 4096:
            continue
        visited.add(i)
        name, _etype, left, right, _child = slots[i]
        out.add(name)
        stack += [left, right]
    return out


def ole_entries(source):
    """The OLE directory entries of a path or bytes (for converters that want stream sizes)."""
    if isinstance(source, (bytes, bytearray)):
        fh, size = io.BytesIO(bytes(source)), len(source)
        return _Ole(fh, size, fh.read(512)).entries()
    size = os.path.getsize(source)
    with open(source, "rb") as fh:
        return _Ole(fh, size, fh.read(512)).entries()


def open_ole(path):
    """olefile's reader for an OLE2 container (olefile through pydeps), or None when olefile cannot
    be had or the container is too broken to open: callers that only look inside (is it encrypted,
    where is the raw Workbook stream) then leave the verdict to the format's reader."""
    try:
        import pydeps_boot
        olefile = pydeps_boot.ensure("olefile")
    except Exception:  # noqa: BLE001 - no pydeps_boot on the path, or DependencyError
        return None
    try:
        return olefile.OleFileIO(path)
    except Exception:  # noqa: BLE001 - olefile raises several kinds on broken containers
        return None


def _sniff_ole(fh, size, head):
    damaged = False
    try:
        entries = _Ole(fh, size, head).entries()
    except (ValueError, struct.error, OSError, IndexError):
        entries = []
        damaged = True
    if not entries:
        # Fall back on the names as UTF-16 in the prefix: enough to classify most files.
        entries = []
        for name in ("WordDocument", "Workbook", "Book", "PowerPoint Document", "EncryptionInfo",
                     "EncryptedPackage", "WpsCustomData", "1Table", "0Table"):
            if name.encode("utf-16-le") + b"\x00\x00" in head:
                entries.append((name, 2, 0, 0))
        damaged = True
    names = frozenset(e[0].lower() for e in entries)
    roots = None
    if not damaged and "worddocument" in names and ("workbook" in names or "book" in names):
        try:       # both streams: which one is the file itself and which is embedded?
            roots = _root_streams(_Ole(fh, size, head))
        except (ValueError, struct.error, OSError, IndexError):
            roots = None
    kind = _classify_ole(frozenset(roots) if roots else names)
    kind.names = names
    if damaged:
        kind.damaged = True
        kind.detail += "（复合文件结构损坏或不完整）"
    return kind


def _classify_ole(names):
    kingsoft = "wpscustomdata" in names or "ksoproductbuildver" in names
    if "encryptedpackage" in names and "encryptioninfo" in names:
        return Kind("ole", "加密的 Office 文档（设置了打开密码的 docx/xlsx/pptx）", encrypted=True)
    if "worddocument" in names:
        if kingsoft:
            return Kind("wps", base="doc")
        return Kind("doc")
    if "workbook" in names or "book" in names:
        detail = None if "workbook" in names else "Excel 5.0/95 工作簿（.xls）"
        if kingsoft:
            return Kind("et", detail, base="xls")
        return Kind("xls", detail)
    if "powerpoint document" in names:
        return Kind("ppt")
    if "matost" in names or ("contents" in names and "spelling" in names):
        return Kind("ole", "Microsoft Works 文档（.wps，非 WPS Office）")
    if any(n.startswith("__substg1.0_") for n in names):
        return Kind("ole", "Outlook 邮件（.msg）")
    if "visiodocument" in names:
        return Kind("ole", "Visio 绘图（.vsd）")
    return Kind("ole")
