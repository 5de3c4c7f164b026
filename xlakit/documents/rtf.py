"""RTF: a small tokenizer, not a regex strip.

Chinese RTF is where naive readers fail: Word and WordPad on a Chinese system write
``\\ansicpg936`` and store each GBK character as two ``\\'xx`` escapes, which are only a
character when decoded together (a font's ``\\fcharset134`` says the same per font). ``\\uN``
gives a UTF-16 unit followed by ``\\ucN`` fallback characters that must be skipped, not printed.
Destinations that hold no text (font and colour tables, stylesheet, document info, pictures,
``{\\*…}`` groups, field instructions) are skipped; field results are kept. Headers, footers and
footnotes are moved after the body, as for docx. ``\\'xx`` bytes are decoded with the code page of
the current font's ``\\fcharsetN`` (Western fonts in a Chinese document are cp1252), else the
document's ``\\ansicpgN``; nothing after the document's closing brace is read.
"""
import codecs
import re

from .base import FormatError

NAME = "rtf"
LABEL = "RTF 文档"

TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\([^a-zA-Z])|([{}])|([\r\n]+)|([^\\{}\r\n]+)")

SKIP_DEST = {
    b"fonttbl", b"colortbl", b"stylesheet", b"info", b"pict", b"object", b"objdata", b"themedata",
    b"colorschememapping", b"datastore", b"latentstyles", b"listtable", b"listoverridetable",
    b"rsidtbl", b"xmlnstbl", b"generator", b"filetbl", b"revtbl", b"fldinst", b"bkmkstart", b"bkmkend",
    b"pgdsctbl", b"wgrffmtfilter", b"mmathPr", b"operator", b"author", b"title", b"subject",
    b"keywords", b"comment", b"doccomm", b"nonshppict", b"shpinst", b"sp", b"sn", b"sv", b"listtext",
    b"pntext", b"pntxta", b"pntxtb", b"atnid", b"atnauthor", b"annotation", b"atrfstart", b"atrfend",
    b"blipuid", b"passwordhash", b"protusertbl", b"ftnsep", b"ftnsepc", b"aftnsep", b"aftnsepc",
    b"xe", b"tc", b"template", b"docvar", b"userprops", b"private",
}
AFTER_DEST = {b"header": "页眉", b"headerl": "页眉", b"headerr": "页眉", b"headerf": "页眉",
              b"footer": "页脚", b"footerl": "页脚", b"footerr": "页脚", b"footerf": "页脚",
              b"footnote": "脚注"}
# \fcharsetN -> code page. 0 is ANSI_CHARSET, i.e. Western: a Chinese Word document writes its
# Latin fonts with it, and their \'xx bytes (\'b7 = "·") are cp1252 even under \ansicpg936.
# 1 (DEFAULT_CHARSET) means "the document's code page".
CHARSET_CP = {0: "cp1252", 1: None, 2: "symbol", 77: "mac_roman", 128: "cp932", 129: "cp949", 130: "johab",
              134: "gbk", 136: "cp950", 161: "cp1253", 162: "cp1254", 163: "cp1258", 177: "cp1255",
              178: "cp1256", 186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250", 255: "cp437"}
SYMBOLS = {b"emdash": "\u2014", b"endash": "\u2013", b"lquote": "\u2018", b"rquote": "\u2019",
           b"ldblquote": "\u201c", b"rdblquote": "\u201d", b"bullet": "\u2022", b"emspace": "\u2003",
           b"enspace": "\u2002", b"qmspace": "\u2005", b"zwj": "", b"zwnj": ""}


_DBCS = ("gbk", "cp936", "cp950", "cp932", "cp949")


def accepts(kind):
    if kind.kind == "rtf":
        return True, None
    return False, "不是 RTF 文档（开头没有 {\\rtf）"


def _codec(cp):
    if not cp:
        return "cp1252"
    name = cp if isinstance(cp, str) else ("gbk" if cp == 936 else "cp%d" % cp)
    if name == "symbol":
        return "cp1252"
    try:
        codecs.lookup(name)
        return name
    except LookupError:
        return "cp1252"


class _Group:
    __slots__ = ("skip", "uc", "font", "dest", "fonttbl", "after")

    def __init__(self, parent=None):
        if parent is None:
            self.skip, self.uc, self.font, self.dest, self.fonttbl, self.after = False, 1, None, None, False, None
        else:
            self.skip, self.uc, self.font, self.dest = parent.skip, parent.uc, parent.font, parent.dest
            self.fonttbl, self.after = parent.fonttbl, parent.after


class _Reader:
    def __init__(self, data, out, deadline):
        self.data = data
        self.out = out
        self.deadline = deadline
        self.ansi = "cp1252"
        self.fonts = {}            # font number -> codec
        self.font_num = None       # font being defined in \fonttbl
        self.default_font = None
        self.bytes = bytearray()   # pending \'xx bytes, decoded together
        self.bytes_codec = None
        self.body = []             # text of the current paragraph
        self.cells = []
        self.after = []            # (label, text) moved after the body
        self.target = self.body
        self.level = None          # \outlinelevelN of the current paragraph
        self.listed = False        # \lsN: the paragraph is a list item

    def codec_for(self, group):
        font = group.font if group.font is not None else self.default_font
        return self.fonts.get(font) or self.ansi

    def flush_bytes(self):
        if self.bytes:
            raw, codec = bytes(self.bytes), self.bytes_codec or self.ansi
            if codec == "cp1252" and self.ansi in _DBCS:
                # A Western font in a Chinese document: Word also writes Chinese runs under it when
                # \dbch picks the CJK font, so a run that is whole GBK stays GBK; a lone \'b7 is "·".
                try:
                    raw.decode(self.ansi)
                    codec = self.ansi
                except UnicodeDecodeError:
                    pass
            self.target.append(raw.decode(codec, "replace"))
            self.bytes = bytearray()

    def emit(self, text, group):
        if group.skip:
            return
        self.flush_bytes()
        self.target.append(text)

    def end_para(self, group):
        if group.skip:
            return
        self.flush_bytes()
        if group.after is not None:
            self.target.append("\n")
            return
        text = "".join(self.body)
        self.body[:] = []
        if self.cells:
            # a paragraph inside a table cell: keep it in the cell
            self.body.append(text + " ")
            return
        level, self.level = self.level, None
        listed, self.listed = self.listed, False
        if level is not None and level < 6:
            self.out.heading(level + 1, text)
        elif listed:
            self.out.item(text)
        else:
            self.out.para(text)

    def run(self):
        stack = [_Group()]
        group = stack[0]
        skip_count = 0      # fallback characters still to drop after \uN
        expect_dest = False
        for n, m in enumerate(TOKEN.finditer(self.data)):
            if self.deadline is not None and n % 20000 == 0:
                self.deadline.check("读取 RTF 文档")
            word, arg, hexbyte, sym, brace, newline, text = m.groups()
            if brace is not None:
                skip_count = 0
                if brace == b"{":
                    group = _Group(group)
                    stack.append(group)
                    expect_dest = True
                    continue
                self.flush_bytes()
                closing = stack.pop() if len(stack) > 1 else stack[0]
                if closing.after is not None and (len(stack) == 0 or stack[-1].after is None):
                    text_after = "".join(self.target).strip()
                    if text_after:
                        self.after.append((closing.after, text_after))
                    self.target = self.body
                group = stack[-1]
                expect_dest = False
                if len(stack) == 1:
                    break           # the document's last "}": what follows (NULs, mail junk) is not text
                continue
            first = expect_dest
            expect_dest = False
            if newline is not None:
                continue
            if text is not None:
                if skip_count:
                    drop = min(skip_count, len(text))
                    text = text[drop:]
                    skip_count -= drop
                if not text:
                    continue
                if group.fonttbl:
                    self._font_name(text, group)
                    continue
                if group.skip:
                    continue
                if any(b > 127 for b in text):     # raw 8-bit text (not valid RTF, but common)
                    if not self.bytes:
                        self.bytes_codec = self.codec_for(group)
                    self.bytes.extend(text)
                    continue
                self.emit(text.decode("latin-1"), group)
                continue
            if hexbyte is not None:
                if skip_count:
                    skip_count -= 1
                    continue
                if group.skip or group.fonttbl:
                    continue
                codec = self.codec_for(group)
                if self.bytes and codec != self.bytes_codec:
                    self.flush_bytes()
                self.bytes_codec = codec
                self.bytes.append(int(hexbyte, 16))
                continue
            if sym is not None:
                if sym == b"*":
                    # {\*\dest ...}: an optional destination we do not know. Only at the start of a
                    # group: a stray \* in the middle of one marks nothing, and skipping from there
                    # dropped the rest of the group's text.
                    if first:
                        group.skip = True
                    continue
                if skip_count:
                    skip_count -= 1
                    continue
                if sym in (b"\\", b"{", b"}"):
                    self.emit(sym.decode(), group)
                elif sym == b"~":
                    self.emit("\u00a0", group)
                elif sym == b"_":
                    self.emit("-", group)
                elif sym in (b"\n", b"\r"):
                    self.end_para(group)
                continue
            # control word
            value = int(arg) if arg is not None else None
            if skip_count and word not in (b"u",):
                skip_count -= 1
                continue
            if first and word in SKIP_DEST:
                if word == b"fonttbl":
                    group.fonttbl = True
                    group.skip = True
                else:
                    group.skip = True
                continue
            if first and word in AFTER_DEST and not group.skip:
                self.flush_bytes()
                group.after = AFTER_DEST[word]
                self.target = []
                continue
            if word == b"ansicpg" and value:
                self.ansi = _codec(value)
            elif word == b"deff" and value is not None:
                self.default_font = value
            elif word == b"f" and value is not None:
                if group.fonttbl:
                    self.font_num = value
                else:
                    group.font = value
            elif word == b"fcharset" and group.fonttbl and self.font_num is not None:
                cp = CHARSET_CP.get(value)
                if cp:
                    self.fonts[self.font_num] = _codec(cp)
            elif word == b"cpg" and group.fonttbl and self.font_num is not None and value:
                self.fonts[self.font_num] = _codec(value)
            elif word == b"uc" and value is not None:
                group.uc = max(0, value)
            elif word == b"u" and value is not None:
                # one UTF-16 unit; a surrogate pair is joined and a lone surrogate becomes U+FFFD
                # when the builder hands out the text (base.fix_surrogates)
                self.emit(chr((value + 65536 if value < 0 else value) & 0xFFFF), group)
                skip_count = group.uc
            elif word in (b"par", b"sect", b"page", b"column"):
                self.end_para(group)
            elif word == b"outlinelevel" and value is not None and not group.skip:
                self.level = value
            elif word == b"ls" and value and not group.skip:
                self.listed = True
            elif word == b"pard" and not group.skip:
                self.level = None
                self.listed = False
            elif word == b"line":
                self.emit("\n", group)
            elif word == b"tab":
                self.emit("\t", group)
            elif word in (b"cell", b"nestcell"):
                if not group.skip:
                    self.flush_bytes()
                    if word == b"cell":
                        self.cells.append("".join(self.body))
                        self.body[:] = []
                    else:
                        self.body.append(" ")
            elif word == b"row":
                if not group.skip:
                    self.flush_bytes()
                    if "".join(self.body).strip():
                        self.cells.append("".join(self.body))
                    self.body[:] = []
                    self.out.row(self.cells)
                    self.cells = []
            elif word in SYMBOLS:
                self.emit(SYMBOLS[word], group)
            elif word == b"bin" and value:
                pass    # binary data follows; rare outside \pict, which is skipped anyway
        self.flush_bytes()
        if self.cells:
            self.out.row(self.cells)
            self.cells = []
        if "".join(self.body).strip():
            self.out.para("".join(self.body))
        seen = set()
        for label, text in self.after:
            if text in seen:
                continue
            seen.add(text)
            self.out.section(label)
            self.out.para(text)

    def _font_name(self, text, group):
        pass


def convert(path, kind, out, deadline=None):
    with open(path, "rb") as fh:
        data = fh.read()
    convert_data(data, out, deadline)


def convert_data(data, out, deadline=None):
    """RTF given as bytes: a file's content, or a part of another document (a .docx ``w:altChunk``)."""
    start = data.find(b"{\\rtf")
    if start < 0:
        # UTF-16 saved RTF (rare): decode and re-encode as 7-bit with \u escapes
        raise FormatError("RTF 文件的开头标记缺失，文件可能已损坏")
    _Reader(data[start:], out, deadline).run()
