"""Writing csv: a new file in UTF-8 with a BOM (so Excel on Chinese Windows shows it right), or
rows added to an existing csv in *its own* encoding, delimiter and line ending, so appended rows
look like the old ones to Excel and to whatever system reads the file. The existing file's
encoding is found the way the readers find it (``xlakit.text``), its delimiter by the reader's
``sniff_delimiter``.

A csv ledger that ends with a totals record (``合计,,12345.60``) and footer lines (``注：……``),
read as probe_table reads a table's end, gets the new rows *above* them (``position="auto"``): the
file is copied byte for byte up to the last data record, the new rows follow, then the block, with
each number of a totals record plus the new rows' values of its column (calc_table's exact sum
rule), written the way the old number was (decimals, thousands separators, a currency sign).
"""
import codecs
import collections
import csv
import io
import itertools
import os
import re
import shutil

from .. import text as xtext
from ..errors import ToolError
from .aggregate import SkipLog, SumAgg
from .cells import is_repeated_header
from .target import real_kind
from .values import (INVALID, TotalsDetector, col_letter, decimal_out, is_note_row, is_summary_row, number_text_like,
                     row_label, to_decimal)

CSV_SAMPLE_BYTES = 256 * 1024
BLOCK_RECORDS = 40          # a totals block (totals records, footer lines, blank lines) is short
TAIL_START = 64 * 1024


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
        self.position = "auto"


def _codec_name(encoding):
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return None


def inspect(path, mode, position="auto"):
    """Read the head of an existing csv: encoding (``xlakit.text``), delimiter (the reader's
    ``sniff_delimiter``), line ending, whether it ends with a newline, first record."""
    from .formats import delimited
    target = CsvTarget()
    target.position = position
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


class Layout(object):
    """What one streamed pass over an existing csv found: its non-empty records (``count``), the
    lines it has (``lines``), and the totals block at its end, if any: ``block_line`` (the first
    line after the last data record, 1-based), ``data_count`` (non-empty records above it) and
    ``block`` [(first line, last line, record)] of the records from there on."""
    count = 0
    lines = 0
    block_line = None
    data_count = 0
    block = ()


def _scan_csv(path, target):
    """One streamed pass (a 1M-row csv takes about a second): record count and where the totals
    block starts (read as probe_table reads a table's end)."""
    layout = Layout()
    last = collections.deque(maxlen=BLOCK_RECORDS)
    with open(path, "r", encoding=target.read_encoding or "utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter=target.delimiter)
        before = 0
        for record in reader:
            if any(cell.strip() for cell in record):
                layout.count += 1
            last.append((before + 1, reader.line_num, record))
            before = reader.line_num
        layout.lines = reader.line_num
    if not target.first_record:
        return layout
    width = len(target.first_record)
    is_total = TotalsDetector()
    seen_block, nonempty_after = False, 0
    items = list(last)
    for i in range(len(items) - 1, -1, -1):
        first, end, record = items[i]
        values = [cell if cell.strip() else None for cell in record]
        if not any(v is not None for v in values):
            continue
        if is_total(values) or is_note_row(values, width) or is_summary_row(values):
            # (a summary row read from the end is in a footer run that reaches the end: FooterRun)
            seen_block = True
            nonempty_after += 1
            continue
        if seen_block and end < layout.lines:
            layout.block_line = end + 1
            layout.data_count = layout.count - nonempty_after
            layout.block = items[i + 1:]
        break
    return layout


def _line_start(path, lines_from_end, ends_with_newline, unit, encoding):
    """Byte offset where the last ``lines_from_end`` lines of the file start (lines end with
    CRLF, LF or CR, as Python's universal newlines count them)."""
    size = os.path.getsize(path)
    span = TAIL_START
    while True:
        start = max(0, size - span)
        start -= (size - start) % unit
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read()
        text = data.decode(encoding, errors="replace") if unit > 1 else data
        cr, lf = ("\r", "\n") if unit > 1 else (b"\r", b"\n")
        pos = len(text)
        if ends_with_newline:
            pos -= 2 if text[pos - 2:pos] == cr + lf else 1
        found = 0
        while pos > 0:
            ch = text[pos - 1:pos]
            if ch == lf or ch == cr:
                found += 1
                if found == lines_from_end:
                    break
                pos -= 2 if ch == lf and text[pos - 2:pos - 1] == cr else 1
            else:
                pos -= 1
        if found == lines_from_end:
            if unit > 1:
                return size - len(text[pos:].encode(encoding))
            return start + pos
        if start == 0:
            return None
        span *= 4


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _update_totals(record, new_rows, number, updates):
    """A totals record with each number plus the new rows' values of its column."""
    out = list(record)
    for c, cell in enumerate(record):
        old = to_decimal(cell) if cell.strip() else None
        if old is None or old is INVALID or number_text_like(cell, old) is None:
            continue
        agg = SumAgg(SkipLog())
        agg.total = old
        for row in new_rows:
            if c < len(row) and row[c] is not None:
                agg.add(row[c], 0)
        if not agg.n:
            continue
        out[c] = number_text_like(cell, agg.total)
        updates.append({"cell": "%s%d" % (col_letter(c), number), "kind": "value",
                        "old": decimal_out(old), "new": agg.result()})
    return out


def _block_text(path, offset, layout, target, new_rows, first_number, updates, stale=None):
    """The totals block as it will follow the new rows: raw text, totals records updated; summary
    records with numbers (平均, 最高: not a sum to extend) listed in ``stale``."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        raw = fh.read()
    text = raw.decode(target.append_encoding)          # strict: the block must round-trip exactly
    lines = _LINE.findall(text)
    if len(lines) != layout.lines - layout.block_line + 1:
        return None
    is_total = TotalsDetector()
    out, number = [], first_number
    for first, end, record in layout.block:
        chunk = "".join(lines[first - layout.block_line:end - layout.block_line + 1])
        values = [cell if cell.strip() else None for cell in record]
        if any(v is not None for v in values):
            if is_total(values):
                new = _update_totals(record, new_rows, number, updates)
                if new != record:
                    ending = re.search(r"(\r\n|\r|\n)\Z", chunk)
                    buf = io.StringIO()
                    csv.writer(buf, delimiter=target.delimiter, lineterminator="").writerow(new)
                    chunk = buf.getvalue() + (ending.group(1) if ending else "")
            elif stale is not None and is_summary_row(values) and any(
                    to_decimal(v) not in (None, INVALID) for v in values if v is not None):
                stale.append({"row": number, "label": row_label(values).strip()})
            number += 1
        out.append(chunk)
    return "".join(out)


def write(path, tmp, mode, exists, target, head, rest, counter, info):
    rows = itertools.chain(head, rest)
    appending = mode == "append" and exists and target.read_encoding is not None
    layout = Layout()
    block = None
    if appending:
        layout = _scan_csv(path, target)
        if head and target.first_record and is_repeated_header(head[0], target.first_record):
            rows = itertools.islice(rows, 1, None)
            info["header_skipped"] = True
        offset = None
        if layout.block_line and target.position == "auto":
            unit = 2 if target.append_encoding.startswith("utf-16") else 4 if target.append_encoding.startswith(
                "utf-32") else 1
            offset = _line_start(path, layout.lines - layout.block_line + 1, target.ends_with_newline, unit,
                                 target.append_encoding)
        if offset is not None:
            rows = list(rows)           # the totals need every new row; a ledger's append is small
            updates, stale = [], []
            try:
                block = _block_text(path, offset, layout, target, rows, layout.data_count + len(rows) + 1, updates,
                                    stale)
            except UnicodeDecodeError:
                block = None
        with open(tmp, "wb") as out:
            if target.add_bom:
                out.write(b"\xef\xbb\xbf")
            with open(path, "rb") as src:
                if block is None:
                    shutil.copyfileobj(src, out, 1 << 20)
                else:
                    _copy_bytes(src, out, offset)
        encoding, file_mode = target.append_encoding, "a"
    else:
        encoding, file_mode = target.encoding, "w"
    try:
        with open(tmp, file_mode, encoding=encoding, newline="") as fh:
            if appending and block is None and not target.ends_with_newline:
                fh.write(target.lineterminator)
            writer = csv.writer(fh, delimiter=target.delimiter, lineterminator=target.lineterminator)
            for row in rows:
                writer.writerow(row)
                counter[0] += 1
            if block is not None:
                fh.write(block)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end]
        raise ToolError("有字符「%s」无法用原文件的编码 %s 保存。原文件没有改动。请把数据写到 .xlsx 或新的 csv 文件"
                           "（新 csv 用 UTF-8 保存，任何字符都可以）" % (bad, encoding))
    old_count = layout.count
    inserted = block is not None and counter[0] > 0
    info.update(action="inserted_above_totals" if inserted else "appended" if appending else (
                    "replaced_file" if exists else "new_file"),
                start_row=(layout.data_count if block is not None else old_count) + 1 if appending else 1,
                total_rows=old_count + counter[0],
                encoding=_codec_name(target.encoding) or target.encoding,
                delimiter=target.delimiter, bom_added=target.add_bom and appending)
    if inserted:
        info["totals_updated"] = updates
        info["totals_moved"] = {"from": layout.data_count + 1, "to": layout.data_count + counter[0] + 1}
        if stale:
            info["totals_stale"] = stale
    elif appending and layout.block_line and counter[0]:
        info["after_totals"] = layout.data_count + 1          # position=end: the rows went below


def _copy_bytes(src, out, count):
    left = count
    while left > 0:
        block = src.read(min(1 << 20, left))
        if not block:
            break
        out.write(block)
        left -= len(block)
