"""Writing csv: a new file in UTF-8 with a BOM (so Excel on Chinese Windows shows it right), or
rows added to an existing csv in *its own* encoding, delimiter and line ending, so appended rows
look like the old ones to Excel and to whatever system reads the file. The existing file's
encoding is found the way the readers find it (``xlakit.text``), its delimiter by the reader's
``sniff_delimiter``.
"""
import codecs
import csv
import io
import itertools
import os
import shutil

from .. import text as xtext
from ..errors import ToolError
from .cells import is_repeated_header
from .target import real_kind

CSV_SAMPLE_BYTES = 256 * 1024


class CsvTarget:
    """How an existing csv is written: its own encoding, delimiter and line ending, so appended rows
    look like the old ones to Excel and to whatever system reads the file."""

    def __init__(self):
        self.read_encoding = None
        self.encoding = "utf-8-sig"             # for writing a whole file
        self.append_encoding = "utf-8"           # for adding to the end (never a second BOM)
        self.delimiter = ","
        self.lineterminator = "\r\n"
        self.ends_with_newline = True
        self.add_bom = False
        self.first_record = None


def _codec_name(encoding):
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return None


def inspect(path, mode):
    """Read the head of an existing csv: encoding (``xlakit.text``), delimiter (the reader's
    ``sniff_delimiter``), line ending, whether it ends with a newline, first record."""
    from .formats import delimited
    target = CsvTarget()
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        sample = fh.read(CSV_SAMPLE_BYTES)
        fh.seek(max(0, size - 4))
        tail = fh.read()
    if not sample:
        return target
    has_bom = sample.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))
    kind = real_kind(path)
    binary = (kind is not None and kind.kind not in ("text", "html", "xml", "empty", "rtf", "unknown")) or (
        not has_bom and b"\x00\x00" in sample[:4096])
    if binary:
        if mode == "overwrite":
            return target               # replaced whole anyway: write a fresh UTF-8 csv
        raise ToolError("「%s」不是文本 csv（看起来是 Excel 或其他二进制文件改了后缀），不能在末尾追加。"
                           "请确认文件，或把数据写到新文件" % os.path.basename(path))
    encoding = xtext.detect_encoding(sample)
    name = _codec_name(encoding) or "utf-8"
    text = sample.decode(encoding, errors="replace")
    unit = 1
    if name == "utf-8-sig":
        target.encoding, target.append_encoding = "utf-8-sig", "utf-8"
    elif name in ("gbk", "gb2312", "gb18030", "cp936", "hz"):
        # gb18030 is a superset of GBK (same bytes for every GBK character) and can encode any text
        target.encoding = target.append_encoding = "gb18030"
    elif name.startswith(("utf-16", "utf-32")):
        unit = 2 if name.startswith("utf-16") else 4
        family = name[:6]
        big = name.endswith("-be") or sample.startswith(b"\xfe\xff") or sample.startswith(b"\x00\x00\xfe\xff")
        # a whole new file gets the BOM again; appended text must not repeat it
        target.encoding = family if name == family else name
        target.append_encoding = family + ("-be" if big else "-le")
    elif name == "utf-8" and size <= len(sample) and all(b < 0x80 for b in sample):
        # Plain-ASCII file: any encoding fits it. Excel on Chinese Windows reads BOM-less csv as GBK,
        # so new Chinese text would show garbled; give the file a UTF-8 BOM (harmless for ASCII).
        target.encoding, target.append_encoding = "utf-8-sig", "utf-8"
        target.add_bom = True
    else:
        target.encoding = target.append_encoding = name
    target.read_encoding = encoding
    target.delimiter = delimited.sniff_delimiter(text) or ","
    if "\r\n" in text:
        target.lineterminator = "\r\n"
    elif "\n" in text:
        target.lineterminator = "\n"
    elif "\r" in text:
        target.lineterminator = "\r"
    last = tail[-unit:].decode(target.append_encoding, errors="ignore") if len(tail) >= unit else ""
    target.ends_with_newline = last in ("\n", "\r")
    for record in csv.reader(_io_lines(text), delimiter=target.delimiter):
        if any(cell.strip() for cell in record):
            target.first_record = record
            break
    return target


def _io_lines(text):
    """Lines of a decoded sample for csv.reader (keeps quoted newlines working)."""
    return io.StringIO(text.lstrip("\ufeff"), newline="")


def _count_csv_records(path, target):
    """Non-empty records of the existing file (streamed; a 1M-row csv takes about a second)."""
    count = 0
    with open(path, "r", encoding=target.read_encoding or "utf-8", errors="replace", newline="") as fh:
        for record in csv.reader(fh, delimiter=target.delimiter):
            if any(cell.strip() for cell in record):
                count += 1
    return count


def write(path, tmp, mode, exists, target, head, rest, counter, info):
    rows = itertools.chain(head, rest)
    appending = mode == "append" and exists and target.read_encoding is not None
    old_count = 0
    if appending:
        old_count = _count_csv_records(path, target)
        if head and target.first_record and is_repeated_header(head[0], target.first_record):
            rows = itertools.islice(rows, 1, None)
            info["header_skipped"] = True
        with open(tmp, "wb") as out:
            if target.add_bom:
                out.write(b"\xef\xbb\xbf")
            with open(path, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
        encoding, file_mode = target.append_encoding, "a"
    else:
        encoding, file_mode = target.encoding, "w"
    try:
        with open(tmp, file_mode, encoding=encoding, newline="") as fh:
            if appending and not target.ends_with_newline:
                fh.write(target.lineterminator)
            writer = csv.writer(fh, delimiter=target.delimiter, lineterminator=target.lineterminator)
            for row in rows:
                writer.writerow(row)
                counter[0] += 1
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end]
        raise ToolError("有字符「%s」无法用原文件的编码 %s 保存。原文件没有改动。请把数据写到 .xlsx 或新的 csv 文件"
                           "（新 csv 用 UTF-8 保存，任何字符都可以）" % (bad, encoding))
    info.update(action="appended" if appending else ("replaced_file" if exists else "new_file"),
                start_row=old_count + 1 if appending else 1,
                total_rows=old_count + counter[0],
                encoding=_codec_name(target.encoding) or target.encoding,
                delimiter=target.delimiter, bom_added=target.add_bom and appending)

