"""csv / tsv / txt reader (also tab-separated text that a system saved as ``.xls``).

Every value is ``str`` (empty -> ``None``): numbers are table_io's business, and long digit
strings (ID cards, bank cards, order numbers with leading zeros) must stay exactly as written.
The one rewrite done here is Excel's own "keep as text" trick, ``="00123"``, which exports use
so Excel does not eat leading zeros: it is read as ``00123``.

Encoding: a BOM decides (utf-8-sig, utf-16); else strict UTF-8 if the sample decodes; else
gb18030 (a superset of GBK/GB2312, what Chinese Excel/WPS write as "ANSI"). UTF-16 without a BOM
needs real evidence (``xlakit.text``); a few stray NUL bytes in other text are dropped as it is
decoded (``_NulFree``), with a warning. The sample is the
first 4 MB; if a later part of a "UTF-8" file does not decode, the bad bytes show as U+FFFD and
a warning says so, instead of failing half way.

Delimiter: among ``,`` ``\\t`` ``;`` ``|`` the one that splits the first ~50 records into the
most consistent number of fields (more than one), default ``,``.

Speed: a million-row export must read in about a second, and the csv module plus a Python call
per cell cost twice that. So the text is read in blocks of whole lines; a block without any
``"`` (no quoting, hence no ``="..."`` either), lone ``\\r`` or NUL is cut with ``str.split``,
one C call per line, which gives exactly the csv module's records for such text (the default
dialect only differs from a split where quotes are involved). Most such blocks (no blank line,
no empty field before a line's last filled one) are split by ``map``/``zip`` in C and handed out
as one iterator per block, chained in C (``_record_blocks``): no Python frame per record. The
first block that has one of those characters hands that block and the rest of the file to
``csv.reader``, since a quoted field may span lines and blocks. All paths count records the same
way, so row numbers agree.

Bounds (issue 34: a 20 MB single-line csv took 3.4 GB and ran into the host's kill): a physical
line, and a quoted field, may hold at most :data:`MAX_LINE` characters (16 Mi), and a record at most
:data:`MAX_FIELDS` fields (65,536, four times Excel's and WPS's 16,384 columns). Real tables never
come near either (Excel holds 32,767 characters a cell); a file past them is not a table, or lost
its line ends. Past them the read stops with a Chinese error naming the row and the cap, having held
about one capped line: lines are read with a size limit (never a whole unbounded line), and the
fields of a long line are counted before it is split. Before, the split path had no cap at all and
the csv path's field limit was 64 MB; both are now this one cap. The delimiter is sniffed on at
most :data:`SNIFF_CHARS` of the sample.
"""
import codecs
import csv
import io
import itertools

from ... import text as xtext
from ...errors import os_error, what_broke
from ._base import BaseBook, FormatError, SheetInfo, trim

SAMPLE = 4 * 1024 * 1024
SNIFF_CHARS = 256 * 1024  # characters of the sample the delimiter is chosen on
MAX_LINE = 16 * 1024 * 1024   # characters of one physical line, and of one quoted field
MAX_FIELDS = 65536        # fields of one record
BLOCK = 1 << 18          # characters per block of the split path
DELIMITERS = (",", "\t", ";", "|")

# The decoding rules are xlakit.text's (the CLI, the HTML reader and the document readers use the
# same); the name stays here for the writer, which reads an existing csv's encoding the same way.
detect_encoding = xtext.detect_encoding


def sniff_delimiter(text):
    """The delimiter of a csv-like text sample (its first ~50 records are looked at)."""
    best, best_score = ",", None
    sample = _first_lines(text[:SNIFF_CHARS], 50)
    for delim in DELIMITERS:
        if delim not in sample:
            continue
        counts = []
        try:
            for rec in csv.reader(io.StringIO(sample), delimiter=delim):
                if rec:
                    counts.append(len(rec))
        except csv.Error:
            continue
        if not counts:
            continue
        freq = {}
        for n in counts:
            freq[n] = freq.get(n, 0) + 1
        mode, hits = max(freq.items(), key=lambda kv: (kv[1] if kv[0] > 1 else 0, kv[0]))
        if mode <= 1:
            continue
        # most lines agreeing first, then more columns
        score = (hits / float(len(counts)), mode)
        if best_score is None or score > best_score:
            best, best_score = delim, score
    return best


def _first_lines(text, n):
    pos = 0
    for _ in range(n):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return text
        pos = nxt + 1
    return text[:pos]


class _Flag(object):
    """Counts undecodable bytes met while streaming, through a codecs error handler (handlers
    are process-wide, so a reader notes the count before and after its pass)."""

    count = 0


_flag = _Flag()


def _replace_and_count(exc):
    _flag.count += 1
    return ("\ufffd", exc.end)


codecs.register_error("xla_count_replace", _replace_and_count)


class DelimitedBook(BaseBook):
    kind = "csv"

    def __init__(self, path, name="Sheet1"):
        BaseBook.__init__(self, path)
        try:
            with open(path, "rb") as fh:
                raw = fh.read(SAMPLE)
        except OSError as exc:
            raise os_error(exc, path, "读取")
        if not raw.strip():
            raise FormatError("文件是空的，没有任何数据（0 行）。请确认选对了文件")
        self.encoding = xtext.detect_encoding(raw)
        text = xtext.decode_prefix(raw, self.encoding, "replace")
        if text.startswith("\ufeff"):
            text = text[1:]
        # stray NUL bytes in a UTF-8/GBK export are noise: dropped as the text is decoded
        self._nuls = xtext.stray_nuls(text, self.encoding)
        if self._nuls:
            text = text.replace("\x00", "")
        self.delimiter = sniff_delimiter(text)
        self.sheets = [SheetInfo(name, False, 0)]
        self.encoding_label = xtext.label(self.encoding)

    def sheet(self, name=None):
        """A csv/txt file has exactly one sheet: any name (or none) means it."""
        return self.sheets[0]

    def rows(self, name=None, max_rows=None):
        """``(record number, values)`` of the file's records: an iterator of C loops (``_records``)
        for the whole file, a generator for the first ``max_rows``."""
        if max_rows is None:
            return itertools.chain.from_iterable(self._blocks())
        return self._first_rows(max_rows)

    def byte_rows(self, start, stop, end):
        """``(record number, values)`` of the records in bytes ``[start, stop)`` of the file, numbered
        from 1 at ``start``, for a read in two parts (``tables.split_pass``). ``start`` and ``stop``
        fall right after a ``\n`` byte (or at the file's ends), which in UTF-8 and GB18030 is always
        between characters. ``end`` (a :class:`PartEnd`) receives the part's record count and
        undecodable bytes, and when ``end.check`` is set the part must end between records: one
        ending inside a quoted field raises :class:`SplitInsideQuotes` before its broken last record
        is given out. Warnings are left to the caller (``read_warnings``)."""
        return itertools.chain.from_iterable(self._part_blocks(start, stop, end))

    def _part_blocks(self, start, stop, end):
        bad_before = _flag.count
        raw = _Window(self.path, start, stop)
        fh = io.TextIOWrapper(io.BufferedReader(raw, 1 << 16), encoding=self.encoding, errors="xla_count_replace",
                              newline="")
        try:
            yield from _record_blocks(_NulFree(fh) if self._nuls else fh, self.delimiter, end)
        finally:
            fh.close()
            end.bad = _flag.count - bad_before

    def _blocks(self):
        bad_before = _flag.count
        with io.open(self.path, "r", encoding=self.encoding, errors="xla_count_replace", newline="") as fh:
            yield from _record_blocks(_NulFree(fh) if self._nuls else fh, self.delimiter)
        self.read_warnings(_flag.count - bad_before)

    def _first_rows(self, max_rows):
        bad_before = _flag.count
        with io.open(self.path, "r", encoding=self.encoding, errors="xla_count_replace", newline="") as fh:
            done = 0
            for item in _records(_NulFree(fh) if self._nuls else fh, self.delimiter):
                yield item
                done += 1
                if done >= max_rows:
                    break
        self.read_warnings(_flag.count - bad_before)

    def part_state(self):
        """What ``part_book`` needs to read this file again in another process, decided alike."""
        return {"encoding": self.encoding, "delimiter": self.delimiter, "nuls": self._nuls}

    def read_warnings(self, bad):
        """The notes a full read leaves: NULs dropped, ``bad`` undecodable bytes shown as U+FFFD
        (a read in two parts adds its parts' counts and calls this once)."""
        if self._nuls:
            self.warn("文件里夹有空字节（NUL，多是导出程序出错留下的），读取时已忽略；文字按 %s 读取" % self.encoding_label)
        if bad:
            self.warn("文件里有 %d 处字节不是 %s 编码，已显示为 �；如有乱码，请把文件另存为 UTF-8 再试" % (
                bad, self.encoding_label))


def part_book(path, state):
    """A ``DelimitedBook`` for ``path`` with the encoding, delimiter and NUL rule of ``state``
    (``DelimitedBook.part_state`` of the process that sniffed the file), without sniffing again."""
    book = DelimitedBook.__new__(DelimitedBook)
    BaseBook.__init__(book, path)
    book.encoding, book.delimiter, book._nuls = state["encoding"], state["delimiter"], state["nuls"]
    book.sheets = [SheetInfo("Sheet1", False, 0)]
    book.encoding_label = xtext.label(book.encoding)
    return book


class PartEnd(object):
    """What a part of a file read with ``byte_rows`` ended with (see there)."""

    def __init__(self, check=False):
        self.check = check
        self.records = None          # records in the part (blank lines included), once read to its end
        self.bad = 0
        self.fed = False


class SplitInsideQuotes(Exception):
    """A part of a csv (``byte_rows``) ended inside a quoted field: the split point was not a
    record boundary, so the file must be read in one piece."""


SENTINEL = "\ue000xla-part-end\ue000"     # a line no real record ends with (private-use characters)


class _Window(io.RawIOBase):
    """Bytes ``[start, stop)`` of a file as a raw stream (it ends at ``stop``)."""

    def __init__(self, path, start, stop):
        io.RawIOBase.__init__(self)
        self._fh = open(path, "rb")
        self._fh.seek(start)
        self._left = stop - start

    def readable(self):
        return True

    def readinto(self, buf):
        n = min(len(buf), self._left)
        if n <= 0:
            return 0
        got = self._fh.readinto(memoryview(buf)[:n])
        self._left -= got
        return got

    def close(self):
        try:
            self._fh.close()
        finally:
            io.RawIOBase.close(self)


class _NulFree(object):
    """A text file with its NUL characters dropped as it is decoded (``read``, ``readline`` and
    line iteration, what ``_records`` uses): stray NULs in a UTF-8/GBK export are noise, and the
    csv module of Python < 3.11 refuses a line with one."""

    def __init__(self, fh):
        self._fh = fh

    def read(self, size=-1):
        return self._nul_free(self._fh.read, size)

    def readline(self, size=-1):
        return self._nul_free(self._fh.readline, size)

    @staticmethod
    def _nul_free(read, size):
        # a piece that was nothing but NULs must not come back empty: "" means the end of the file
        while True:
            piece = read(size)
            out = piece.replace("\x00", "")
            if out or not piece:
                return out

    def __iter__(self):
        for line in self._fh:
            yield line.replace("\x00", "")


def _records(fh, delimiter, end=None):
    """``(record number, values)`` of the non-empty records of an open text file (``newline=""``):
    quote-free blocks by ``str.split``, the rest by ``csv.reader`` (see the module docstring).
    ``end``: a ``PartEnd`` told the record count (and checked for a clean end, ``byte_rows``).

    An iterator of C loops: the blocks come from :func:`_record_blocks`, each an iterator of its
    records, chained in C, so a Python frame resumes once per block, not per record."""
    return itertools.chain.from_iterable(_record_blocks(fh, delimiter, end))


def _record_blocks(fh, delimiter, end=None):
    """The records of ``_records``, one iterable per block of text. A quote-free block whose lines
    are short enough to be under the caps, none blank and none with an empty field before its last
    filled one, is split lazily by ``map`` in C (stripping a line's trailing delimiters is what
    dropping its trailing empty fields does) and numbered by ``zip``; other blocks go line by line
    (:func:`_split_lines`). Each check is one C pass over the block's text (20-60 ms per million
    ledger rows); splitting a block into a list first, to look for empty fields in the records,
    cost more (0.25 s per million rows: a block's records no longer fit the caches)."""
    number = 0
    tail = ""
    while True:
        block = fh.read(BLOCK)
        text = tail + block
        if block:
            cut = text.rfind("\n") + 1
            if not cut:                     # one line longer than a block: read on, up to the cap
                if len(text) > MAX_LINE:
                    raise FormatError(_too_long(number + 1))
                tail = text
                continue
            body, tail = text[:cut], text[cut:]
        else:
            body, tail = text, ""
            if not body:
                if end is not None:
                    end.records = number
                return
        lines = None
        newline = "\n"
        if "\r" in body:
            lines = body.split("\r\n")
            if not len(lines) - 1 == body.count("\r") == body.count("\n"):
                lines = None                # a lone \r: the csv module decides below
            else:
                newline = "\r\n"            # Windows line ends only (Excel's csv)
        if '"' in body or "\0" in body or ("\r" in body and newline == "\n"):
            # the csv module reads from here on; it is fed whole lines only (a record's end is
            # decided at a line's end), so the cut-off tail is completed with the next line
            rest = itertools.chain(io.StringIO(body, newline=""), [tail + fh.readline(MAX_LINE + 1)],
                                   iter(lambda: fh.readline(MAX_LINE + 1), ""))
            yield _csv_records(_bounded(rest, delimiter, end), delimiter, number, end)
            return
        if lines is None:
            lines = body.split(newline)
        if block:
            lines.pop()                     # the "" after the block's last newline
        double = delimiter + delimiter
        if lines and max(map(len, lines)) <= MAX_FIELDS and "" not in lines and lines[0][:1] != delimiter \
                and double not in body and newline + delimiter not in body:
            # no line past a cap, none blank, no empty field but trailing ones: split in C, and
            # stripping a line's trailing delimiters is what dropping its trailing empty fields does
            yield zip(itertools.count(number + 1), map(str.split, map(str.rstrip, lines, itertools.repeat(delimiter)),
                                                        itertools.repeat(delimiter)))
        else:
            yield _split_lines(lines, delimiter, number)
        number += len(lines)
        if not block:
            if end is not None:
                end.records = number
            return


def _split_lines(lines, delimiter, number):
    """``(record number, values)`` of a block's lines numbered from ``number + 1``, line by line:
    trailing empty fields dropped, other empty fields None, blank records skipped, caps checked."""
    for line in lines:
        number += 1
        if len(line) > MAX_FIELDS:          # only a long line can be past a cap
            if len(line) > MAX_LINE:
                raise FormatError(_too_long(number))
            if line.count(delimiter) >= MAX_FIELDS:
                raise FormatError(_too_wide(number))
        rec = line.split(delimiter)
        if "" in rec:
            while rec and not rec[-1]:      # trailing empty fields go (as trim() does) ...
                rec.pop()
            if not rec:
                continue
            if "" in rec:                   # ... and the others read as None
                rec = [v or None for v in rec]
        yield number, rec


class _OverCap(Exception):
    """A line past a cap, met while feeding the csv module (the record number is known above)."""


def _bounded(lines, delimiter, end=None):
    """The lines for ``csv.reader``, each checked against the caps before the csv module sees it
    (the file's own lines come from ``readline(MAX_LINE + 1)``, so none is read unbounded). For a
    part whose end is checked, a sentinel line follows the last: it reads as a record of its own
    only when the part ended between records (``csv.reader`` reads no line ahead)."""
    for line in lines:
        if len(line) > MAX_FIELDS:
            if len(line) > MAX_LINE:
                raise _OverCap(_too_long)
        elif not line:
            # "" is no line: readline's end of file (after a block that ended at the end), which
            # csv.reader would count as one more blank record; a part read to its end would then
            # number the next part's rows one too high
            continue
            if line.count(delimiter) >= MAX_FIELDS:
                raise _OverCap(_too_wide)
        yield line
    if end is not None and end.check:
        end.fed = True
        yield SENTINEL + "\n"


def _too_long(number):
    return ("第 %d 行超过 %s 个字符（16 MB），已停止读取：真实的表格一行远到不了这么长（Excel 一格最多 32,767 字），"
            "这多半不是表格文件，或者换行符丢了。请用文本编辑器看看文件开头，或用 Excel/WPS 打开后另存为 csv 再试" % (
                number, "{:,}".format(MAX_LINE)))


def _too_wide(number):
    return ("第 %d 行超过 %d 列，已停止读取（Excel/WPS 一张表最多 16,384 列）。多半是分隔符不对或者换行符丢了；"
            "请用 Excel/WPS 打开后另存为 csv 再试" % (number, MAX_FIELDS))


def _csv_records(lines, delimiter, number, end=None):
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        for rec in reader:
            if end is not None and end.fed:
                if rec != [SENTINEL]:          # the part ended inside a quoted field
                    raise SplitInsideQuotes()
                break
            number += 1
            if len(rec) > MAX_FIELDS:
                raise FormatError(_too_wide(number))
            values = [_cell(v) for v in rec]
            trim(values)
            if values:
                yield number, values
    except _OverCap as exc:
        raise FormatError(exc.args[0](number + 1))
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise FormatError("第 %d 行起有一格（引号里的内容）超过 %s 个字符（16 MB），已停止读取：多半是某个引号没有"
                              "配对，后面的内容都被当成了这一格。请用 Excel/WPS 打开后另存为 csv 再试" % (
                                  number + 1, "{:,}".format(MAX_LINE)))
        raise FormatError("第 %d 行附近的文本格式无法解析（%s）。请用 Excel/WPS 打开后另存为 csv 再试" % (
            number + 1, what_broke(exc)))
    if end is not None:
        end.records = number


def _cell(text):
    if not text:
        return None
    # Excel's "keep as text" trick in exports: ="00123"
    if text[:2] == '="' and text[-1:] == '"' and len(text) >= 3:
        return text[2:-1].replace('""', '"') or None
    return text


# csv.reader refuses fields over 128 KB by default; a long note cell must not stop the read, a field
# past the line cap must (the same cap as the split path's, see the module docstring).
csv.field_size_limit(MAX_LINE)
