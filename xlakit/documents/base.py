"""The one result type every converter fills, and the limits they share.

A converter does not build a string: it feeds a ``Builder`` with headings, paragraphs, list items,
table rows and page markers. The builder turns them into one markdown-like text (``# 标题``,
``- 项``, ``单元格 | 单元格``, ``【第 3 页】``) and stops the converter, by raising ``Enough``, as
soon as the window the caller asked for is full: a 300-page PDF read from offset 0 costs the
first pages only.
"""
import re
import zipfile

from ..errors import FormatError, what_broke

__all__ = ["Builder", "Document", "Enough", "FormatError", "zip_read", "zip_xml", "clean_inline", "fix_surrogates",
           "MAX_PART"]

MAX_PART = 200 << 20          # decompressed bytes we accept for one XML part of a package
_SPACES = re.compile(r"[ \u00a0]+")
_TABS = re.compile(r"[ \u00a0]*\t[\t \u00a0]*")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def fix_surrogates(text):
    """``text`` with UTF-16 surrogates made whole: a pair (RTF's ``\\u-10179?\\u-8704?``, a PDF
    string cut per code unit) becomes its character, a lone one U+FFFD. A lone surrogate cannot
    be written as UTF-8 at all, and used to make the tool print nothing."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class Enough(Exception):
    """Raised by the builder when the requested window is full; the dispatcher catches it."""


def clean_inline(text):
    """One paragraph's text: control characters gone, runs of spaces folded, ends trimmed."""
    text = _CTRL.sub("", text.replace("\r", ""))
    lines = [_SPACES.sub(" ", _TABS.sub("\t", line)).strip(" \t\u3000") for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


# What a library's English error means, in the words the user gets (the contract: Chinese only).
_WHY = (
    (r"not a zip file|bad magic number|end-of-central-directory|zipfile", "不是完整的 zip 压缩包"),
    (r"truncated file header|bad crc|error -3 while decompressing|invalid (stored )?block|invalid distance",
     "压缩数据损坏"),
    (r"not a stream|no such (file|stream)|cannot find|not found in", "复合文件里缺少应有的数据流"),
    (r"not an ole2|ole2? structured storage|invalid ole|fat|sector|minifat|incomplete ole", "复合文件结构已损坏或不完整"),
    (r"no element found|unclosed token|unexpected end|ended unexpectedly|eof|truncated|incomplete", "文件在结尾处被截断（可能没有下载或复制完整）"),
    (r"not well-formed|mismatched tag|junk after document|undefined entity|syntax error|xml", "XML 内容不合法"),
    (r"startxref|xref|trailer", "找不到 PDF 的交叉引用表"),
    (r"password|decrypt|encrypt", "加密信息无法处理"),
    (r"permission denied|access is denied", "没有读取权限"),
    (r"memory", "内存不够"),
)


def why(exc):
    """A short Chinese reason for a library exception ("File is not a zip file" ->
    "不是完整的 zip 压缩包"); the line and column of an XML error are kept, English never. The
    documents' own wording first, else the general one (``errors.what_broke``, which also keeps
    the library's text for the log)."""
    general = what_broke(exc)               # also keeps the library's own text for the log
    text = str(exc) or ""
    if text and not re.search(r"[A-Za-z]", text):
        return text                         # already ours (Chinese, or numbers only)
    low = text.lower()
    for pattern, meaning in _WHY:
        if re.search(pattern, low):
            where = re.search(r"line (\d+), column (\d+)", low)
            if where and "XML" in meaning:
                return "%s（第 %s 行第 %s 列附近）" % (meaning, where.group(1), where.group(2))
            return meaning
    return general


class Builder:
    """Collects blocks; ``stop_at`` (characters) ends extraction early with ``Enough``."""

    def __init__(self, stop_at=None, deadline=None):
        self.parts = []
        self.size = 0
        self.stop_at = stop_at
        self.deadline = deadline
        self.blocks = 0
        self.title = None
        self.pages = 0              # page markers written (PDF, slides)
        self.marks = 0              # characters those markers take (has_content leaves them out)
        self._count = 0
        self.warnings = []
        self.page_count = None      # pages or slides in the whole file, when the format knows
        self.encoding = None        # text formats: the codec used
        self.password = None        # a PDF's open password (pdf.py); never put into text or warnings
        self.skip_to = None         # the caller reads from this offset: a converter that can jump
                                    # (pdf, by page) may pad what comes before it (pad_to)

    def _add(self, text):
        if self.parts:
            self.parts.append("\n")
            self.size += 1
        self.parts.append(text)
        self.size += len(text)
        self.blocks += 1
        self._count += 1
        if self._count % 200 == 0 and self.deadline is not None:
            self.deadline.check("读取文档")
        if self.stop_at is not None and self.size > self.stop_at:
            raise Enough()

    def next_offset(self):
        """Where the next block's text will start in the whole document."""
        return self.size + (1 if self.parts else 0)

    def pad_to(self, offset):
        """Stand in for skipped blocks with blanks of the same length, so the next block starts
        at ``offset`` and every offset keeps meaning the same character of the whole document
        (the caller only returns text from ``skip_to`` on, which is never padding)."""
        if offset > 0 and not self.parts:
            self.parts.append(" " * (offset - 1))     # _add puts the "\n" before the next block
            self.size = offset - 1

    def para(self, text, clean=True):
        text = clean_inline(text) if clean else text
        if text:
            self._add(text)

    def heading(self, level, text):
        text = clean_inline(text).replace("\n", " ")
        if not text:
            return
        level = max(1, min(6, int(level or 1)))
        if self.title is None and level == 1:
            self.title = fix_surrogates(text)
        self._add("#" * level + " " + text)

    def item(self, text, level=0, marker="-"):
        text = clean_inline(text)
        if text:
            gap = "" if marker[-1:] in "、）】．" else " "     # "一、总则", "（一）范围", but "1. 范围"
            self._add("  " * max(0, min(level, 8)) + marker + gap + text.replace("\n", " "))

    def row(self, cells):
        cells = [clean_inline(c).replace("\n", " ") for c in cells]
        while cells and not cells[-1]:
            cells.pop()
        if any(cells):
            self._add(" | ".join(cells))

    def page(self, number):
        self.pages += 1
        before = self.size
        self._add("【第 %d 页】" % number)
        self.marks += self.size - before

    def has_content(self):
        """Anything besides page markers: a deck of picture-only slides has markers and no text."""
        return self.size > self.marks

    def section(self, name):
        """A label before the parts that come after the body (footnotes, headers and footers)."""
        self._add("【%s】" % name)

    def raw(self, text):
        """Text kept as it is (plain text and markdown files), still split into lines for paging."""
        if text:
            self._add(text)

    def text(self):
        return fix_surrogates("".join(self.parts))


class Document:
    """What read() returns: the text (markdown-like), and what it is."""

    def __init__(self, text, format, title=None, complete=True, pages=None, detail=None, warnings=None,
                 converter=None, blocks=0):
        self.text = text
        self.format = format              # the sniffed kind ("docx", "doc", "pdf", ...)
        self.title = title
        self.complete = complete          # False when extraction stopped once the window was full
        self.pages = pages                # page or slide count when the format has pages
        self.detail = detail
        self.warnings = list(warnings or [])
        self.converter = converter
        self.blocks = blocks
        self.encrypted = False            # read with a password (or Office's default one)


def zip_read(zf, name, cap=MAX_PART):
    """One member of a package, refusing a member that inflates beyond ``cap`` (zip bombs)."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        return None
    if info.file_size > cap:
        raise FormatError("文档里的部件 %s 解压后过大（%d MB），可能是损坏文件或压缩炸弹，已停止读取" % (
            name, info.file_size >> 20))
    try:
        with zf.open(info) as fh:
            data = fh.read(cap + 1)
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, ValueError) as exc:
        raise FormatError("文档已损坏，部件 %s 无法解压（%s）。请确认文件完整，或用 Word/WPS 打开后另存一份再试" % (name, why(exc)))
    if len(data) > cap:
        raise FormatError("文档里的部件 %s 解压后过大，可能是损坏文件或压缩炸弹，已停止读取" % name)
    return data


def zip_xml(zf, name):
    """One XML member of a package parsed (``zip_read``'s limits), or None when missing or broken."""
    data = zip_read(zf, name)
    if data is None:
        return None
    import xml.etree.ElementTree as ET
    try:
        return ET.fromstring(data)
    except ET.ParseError:
        return None
