"""The fast xlsx sheet parser, one decompressed chunk at a time (see ``xlsx.py`` for why text).

A sheet member is inflated in ``CHUNK``-sized reads, each piece cut right after its last
``</row>`` (:func:`member_chunks`). The cut points depend only on the bytes, so every process
that inflates the same member gets the same numbered chunks: that is what lets a second process
parse some of them (``xlsx_parallel``) while this one parses the others.

:class:`SheetParser` turns one chunk into ``(row number, values)`` pairs. What crosses chunk
boundaries is small and explicit: the row number a row without ``r=`` gets (``next_row``), the
merges met in the text after the last ``</row>`` (``merges``), and the formulas without a cached
value, handed to ``note`` as they are met. A parser that does not know the previous chunk's last
row (``next_row=None``, a worker starting in the middle) raises :class:`NeedsOrder` when it meets
a row without ``r=``, and the process that knows parses the chunk instead.
"""
import re
import zipfile
from math import isfinite
from itertools import compress, repeat
import zlib

from ._base import MAX_EXACT, FormatError, number, serial_to_value, trim
from .xlsx_xml import (_A_R, _ParseProblem, _cell_meta, _cell_regex, _col_index, _inner_value, _iso_value,
                       _col_letters, _projected_regex, _put,
                       _rich_text, attrs_ok, chunk_problem, decode_text, formula_text, merge_refs)
from ...errors import what_broke

CHUNK = 1024 * 1024
DATE_CACHE_MAX = 100000     # distinct serials remembered per date kind (a ledger has a few thousand)
TEXT_CACHE_MAX = 20000      # distinct strings remembered per sheet (bounded: notes columns are unique)


class NeedsOrder(Exception):
    """A row without ``r=`` in a chunk parsed without knowing the previous chunk's last row."""


def member_chunks(zf, name, boundary, size=CHUNK):
    """Decompressed pieces of a zip member, each ending right after a ``boundary`` (flat memory)."""
    try:
        stream = zf.open(name)
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
        raise FormatError("xlsx 文件已损坏或不完整（%s 无法解压：%s）。请重新获取文件，"
                          "或用 Excel/WPS 打开修复后另存一份" % (name, what_broke(exc)))
    rest = b""
    with stream:
        while True:
            try:
                block = stream.read(size)
            except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
                raise FormatError("xlsx 文件已损坏或不完整（%s 解压出错：%s）。请重新获取文件，"
                                  "或用 Excel/WPS 打开修复后另存一份" % (name, what_broke(exc)))
            if not block:
                break
            data = rest + block if rest else block
            cut = data.rfind(boundary)
            if cut < 0:
                rest = data
                continue
            cut += len(boundary)
            rest = data[cut:]
            yield data[:cut]
    if rest:
        yield rest


def worksheet_prefix(head):
    """The namespace prefix of the sheet's elements (b"" or b"x:") from its first bytes."""
    m = re.search(rb"<(?:(\w+):)?worksheet\b", head)
    if m is None:
        raise _ParseProblem("no worksheet root")
    return (m.group(1) + b":") if m.group(1) else b""


# An attribute written in single quotes (<row r='1'>, legal XML): SheetJS's streaming writer does
# it. The fast parser reads double quotes only, so such a sheet's chunks are rewritten first.
_SINGLE_QUOTED_RE = re.compile(rb"<[^<>]*\s[\w:.-]+\s*=\s*'")
_TAG_RE = re.compile(rb"<[^<>]*>")
_SQ_ATTR_RE = re.compile(rb"(\s[\w:.-]+)\s*=\s*'([^'\"]*)'")


def single_quoted(head):
    """Does the sheet write attributes in single quotes? (from its first bytes)"""
    return _SINGLE_QUOTED_RE.search(head) is not None


def double_quoted(chunk):
    """``chunk`` with every single-quoted attribute inside a tag written in double quotes (text
    between tags never holds a raw ``<``, so only tags are touched; a value holding a double
    quote is left alone and the parser falls back as before)."""
    return _TAG_RE.sub(lambda m: _SQ_ATTR_RE.sub(rb'\1="\2"', m.group(0)), chunk)


class SheetParser(object):
    """Parses chunks of one sheet's XML. ``load_sst()`` gives the shared-string table (asked for
    at the first ``t="s"`` cell); ``note(row, col, formula)`` records a formula without a value."""

    def __init__(self, p, kinds, date1904, load_sst, note):
        self.p = p
        self.kinds = kinds
        self.date1904 = date1904
        self.load_sst = load_sst
        self.note = note
        self.sst = None
        self.next_row = 1          # the number a row without r= gets; None: unknown (see NeedsOrder)
        self.merges = []
        self.findall = _cell_regex(p).findall
        self.cell_open = re.compile(rb"<" + re.escape(p) + rb"c[\s/>]")
        self.attr_cache = {}       # attribute text (without r=) -> (type, date kind, closed, date cache)
        self.col_cache = {}        # column letters -> 0-based index
        self.date_caches = {}      # date kind -> {raw serial text: date/datetime/time}
        self.texts = {}            # inline string XML text -> str (the first TEXT_CACHE_MAX seen)
        self.by_index = {}         # shared string index text -> str (idem)
        self.wanted = None         # the 0-based columns a consumer needs (see ``project``), or None
        self.find_wanted = None    # findall of the cell expression limited to them
        self._template = None      # the row expression of _by_columns (False: none for these columns)

    def project(self, columns):
        """From the next chunk on, build only the cells of ``columns`` (0-based; must hold 0, 1
        and 2, which ``Table.data_rows`` looks at) where that is sure to give the consumer the
        same answer: see ``rows``. Every other row is still built whole."""
        columns = frozenset(columns)
        if not {0, 1, 2} <= columns:
            return
        self.wanted = columns
        self._template = None
        self.find_wanted = _projected_regex(self.p, columns).findall

    _EMPTY_CELL = {}

    @classmethod
    def _empty_cell_re(cls, p):
        rx = cls._EMPTY_CELL.get(p)
        if rx is None:
            e = re.escape(p)
            rx = cls._EMPTY_CELL[p] = re.compile(rb"(<" + e + rb'c\b[^<>]*")>(?:<' + e + rb"v></" + e + rb"v>|<"
                                                 + e + rb"v/>)?</" + e + rb"c>")
        return rx

    def _meta(self, attrs):
        typ, dkind, closed = _cell_meta(attrs, self.kinds)
        cache = self.date_caches.setdefault(dkind, {}) if dkind is not None else None
        meta = self.attr_cache[attrs] = (typ, dkind, closed, cache)
        return meta

    def detached(self, chunk, n):
        """Chunk ``n`` parsed without the state of the chunks before it (by a worker, or ahead of
        its turn): ``(rows, notes, merges, next_row)`` to replay in order with :func:`replay`, or
        None when it must be parsed in its turn (a row without ``r=``, a problem to raise there)."""
        saved = self.note, self.merges, self.next_row
        notes = []
        self.note = lambda row, col, formula: notes.append((row, col, formula))
        self.merges, self.next_row = [], None
        try:
            rows = None
            if self.find_wanted is not None and not chunk_problem(chunk, n == 0):
                rows = self._by_columns(chunk)
            if rows is None:
                rows = list(self.rows(chunk, n))
            return rows, notes, self.merges, self.next_row
        except Exception:  # noqa: BLE001 - whatever it is, the in-order parse meets it again
            return None
        finally:
            self.note, self.merges, self.next_row = saved

    def replay(self, notes, merges, next_row):
        """Take over the state a :meth:`detached` parse of the next chunk left."""
        for row, col, formula in notes:
            self.note(row, col, formula)
        self.merges.extend(merges)
        if next_row is not None:
            self.next_row = next_row

    def _by_columns(self, chunk):
        """The rows of a projected chunk built a column at a time, or None (then row by row).

        Where a chunk is regular -- every row ``<row r="N" ...>`` followed by its cells in column
        order up to the last wanted one, the wanted cells each a plain ``<c r="X.." ...><v>text
        </v></c>``, the others plain values, inline strings or empty, only later columns after
        that, then ``</row>`` -- one expression (:func:`_row_template`) takes all rows' wanted
        cells out of the chunk in one C scan, and each column's values are converted by ``map``
        over the caches the row-by-row code uses: no Python statement per cell. The number of
        rows it matched must be the number of ``</row>`` in the chunk; anything else (a missing,
        empty or differently written cell, an empty shared string, a bad number, mixed types in
        a column) leaves the chunk to the row-by-row code, which gives or raises what it always
        did. (A matched row holds no formula and only cells with r= first, by the expression.)"""
        p = self.p
        row_close = b"</" + p + b"row>"
        body = chunk.rfind(row_close)
        if body < 0:
            return None
        body += len(row_close)
        tail = chunk[body:]
        if tail and self.cell_open.search(tail):
            return None
        if self._template is None:
            self._template = _row_template(p, self.wanted) or False
        if self._template is False:
            return None
        found = self._template.findall(chunk, 0, body)
        count = len(found)
        if not count:
            return None
        parts = list(zip(*found))
        # a row start the expression cannot place (no r= first, self-closing) is flagged by its
        # last group; a row end written another way (</row >) ends up inside an "other" row's
        # XML, where the row-by-row code raises as it always did
        if b"<" + p + b"row" in parts[-1]:
            return None
        del parts[-1]
        mask = None
        if b"" in parts[2]:
            # rows the expression did not take cell by cell (a 小计 row, a formula, an odd cell):
            # their XML came in the last group; built row by row below, in their places
            mask = list(map(bool, parts[2]))
            others = [(i, rn, xml) for i, (rn, xml, ok) in enumerate(zip(parts[0], parts[-1], mask)) if not ok]
            if len(others) * 4 > count:
                return None
            parts = [tuple(compress(part, mask)) for part in parts]
            if not parts[0]:
                return None
        wanted = sorted(self.wanted)
        columns = [_NONE] * (wanted[-1] + 1)
        for i, c in enumerate(wanted):
            raws = parts[2 + 2 * i]
            try:
                values = self._convert(set(parts[1 + 2 * i]), raws)
            except Exception:  # noqa: BLE001 - whatever it is, the row-by-row code meets it in order
                return None
            if values is None:
                return None
            columns[c] = values
        rows = ColumnRows(list(map(int, parts[0])), [None if v is _NONE else v for v in columns])
        if mask is not None:
            rows = list(rows)
            row_open = b"<" + p + b"row"
            shift = 0
            # formulas noted only once the chunk is done this way (else the row-by-row parse
            # notes them again), and the row number state left as it was if it is not
            saved_note, saved_next = self.note, self.next_row
            notes = []
            self.note = lambda row, col, formula: notes.append((row, col, formula))
            try:
                for i, rn, xml in others:
                    got = list(self.rows(row_open + b' r="' + rn + b'">' + xml + row_close, 1, whole=True))
                    if got:
                        rows.insert(i + shift, got[0])
                    else:
                        shift -= 1
            except Exception:  # noqa: BLE001 - idem: the chunk goes row by row, raising in order
                return None
            finally:
                self.note, self.next_row = saved_note, saved_next
            for row, col, formula in notes:
                self.note(row, col, formula)
        self.next_row = int(found[-1][0]) + 1
        if tail and b"mergeCell" in tail:
            self.merges.extend(merge_refs(tail))
        return rows

    def _convert(self, attr_texts, raws):
        """The values of one column's raw ``<v>`` texts (see ``_by_columns``), or None."""
        attr_cache = self.attr_cache
        metas = set()
        for attrs in attr_texts:
            meta = attr_cache.get(attrs)
            if meta is None:
                meta = self._meta(attrs)
            metas.add((meta[0], meta[1]))
        if len(metas) != 1:
            return None
        typ, dkind = metas.pop()
        if typ == "s":
            sst = self.sst
            if sst is None:
                sst = self.sst = self.load_sst()
            values = list(map(sst.__getitem__, map(int, raws)))
            return None if "" in values else values
        if typ != "n":
            return None
        if dkind is None:
            if max(map(len, raws)) > 15:
                return list(map(_plain_number, raws))
            # up to 15 characters float() is exact for every integer the row-by-row code reads
            # with int(); inf / nan (which it refuses) show in the sum
            values = list(map(float, raws))
            if not isfinite(sum(values)):
                return None
            return [int(v) if v.is_integer() and -MAX_EXACT < v < MAX_EXACT else v for v in values]
        dates = self.date_caches.setdefault(dkind, {})
        values = list(map(dates.get, raws))
        if None in values:
            date1904 = self.date1904
            for i, value in enumerate(values):
                if value is None:
                    raw = raws[i]
                    value = values[i] = serial_to_value(_number(raw), dkind, date1904)
                    if len(dates) < DATE_CACHE_MAX:
                        dates[raw] = value
            if None in values:
                return None
        return values

    def rows(self, chunk, n, whole=False):
        """The ``(row number, values)`` of chunk number ``n`` (0 is the sheet's start); ``whole``:
        row by row even when projected (a row ``_by_columns`` hands back)."""
        p = self.p
        problem = chunk_problem(chunk, n == 0)
        if problem:
            raise _ParseProblem(problem)
        row_open, row_close = b"<" + p + b"row", b"</" + p + b"row>"
        lro = len(row_open)
        is_tag, f_tag, t_tag = b"<" + p + b"is>", b"<" + p + b"f", b"<" + p + b"t"
        row_end = b"</" + p + b"row"
        # an empty inline string (exports write every blank cell as <is><t></t></is>) is an empty
        # cell: made self-closing here, so the cell expression takes it on the fast path instead
        # of the whole sheet falling back to openpyxl (issue 35: 3.0 s instead of 0.3 s for 50k rows)
        if b"<" + p + b"t></" in chunk or b"<" + p + b"t/>" in chunk:
            for empty in (b"><" + p + b"is><" + p + b"t></" + p + b"t></" + p + b"is></" + p + b"c>",
                          b"><" + p + b"is><" + p + b"t/></" + p + b"is></" + p + b"c>"):
                if empty in chunk:
                    chunk = chunk.replace(empty, b"/>")
        # <c ...></c>, <c ...><v></v></c>: an empty cell written open-and-closed (stream writers
        # do, date cells too);
        # made self-closing so it is not mistaken for an end tag written another way (</c >), which
        # sent the sheet to openpyxl, where an empty t="d" cell fails (issue 35)
        if b'"></' + p + b'c>' in chunk or b"<" + p + b"v></" in chunk or b"<" + p + b"v/>" in chunk:
            chunk = self._empty_cell_re(p).sub(rb"\1/>", chunk)
        full = findall = self.findall
        # Column projection (the consumer needs a few columns of many): only the wanted cells are
        # matched and built, which is sure to give the same cells only when every cell start in
        # the chunk carries r= first (else a wanted cell would be missed) and there is no formula
        # (a formula without a cached value in any column is noted for the warnings). A row
        # whose first three cells are not all filled is built again whole: the totals, summary
        # and footnote rules of ``Table.data_rows`` look past the first three cells only then.
        if self.find_wanted is not None and not whole:
            done = self._by_columns(chunk)
            if done is not None:
                yield from done
                return
            if f_tag not in chunk and chunk.count(b"<" + p + b"c") == chunk.count(b"<" + p + b'c r="'):
                findall = self.find_wanted
        projected = findall is not full
        attr_cache, col_cache = self.attr_cache, self.col_cache
        date1904 = self.date1904
        sst = self.sst
        texts, by_index = self.texts, self.by_index
        # Each chunk ends right after a </row>; splitting there gives one piece per row
        # (a piece may start with empty self-closing <row .../> tags: the row is its last
        # "<row"). The piece after the last </row> is the end of the sheet, with merges.
        pieces = chunk.split(row_close)
        tail = pieces.pop()
        if chunk.count(row_end) - (tail.count(row_end) if tail else 0) != len(pieces):
            raise _ParseProblem("a row end tag written another way (</row >?)")
        if tail:
            if self.cell_open.search(tail):
                raise _ParseProblem("cells after the last </row>")
        next_row = self.next_row
        for piece in pieces:
            start = piece.rfind(row_open)
            end = piece.find(b">", start)
            if start < 0 or end < 0:
                raise _ParseProblem("</row> without <row>")
            # row number: r= is nearly always the first attribute; rows may also lack it
            if piece[start + lro:start + lro + 4] == b' r="':
                rnum = int(piece[start + lro + 4:piece.index(b'"', start + lro + 4)])
            else:
                row_attrs = piece[start + lro:end]
                if not attrs_ok(row_attrs):
                    raise _ParseProblem("row attributes %r" % row_attrs[:60])
                rm = _A_R.search(row_attrs)
                if rm and rm.group(2):
                    rnum = int(rm.group(2))
                elif next_row is None:
                    raise NeedsOrder()
                else:
                    rnum = next_row
            next_row = rnum + 1
            cells = findall
            while True:       # once; twice when a projected row must be built whole
                values = []
                pos = 0
                for col, attrs, raw, itext, inner in cells(piece, end + 1):
                    # -- where: column letters (the regex takes them when r= comes first)
                    if col:
                        ci = col_cache.get(col)
                        if ci is None:
                            ci = col_cache[col] = _col_index(col.decode("ascii"))
                    else:
                        rm = _A_R.search(attrs) if b"r=" in attrs else None
                        if rm and rm.group(1):
                            ci = _col_index(rm.group(1).decode("ascii"))
                            attrs = attrs[:rm.start()] + attrs[rm.end():]
                        else:
                            ci = pos          # no r=: cells simply follow each other
                    pos = ci + 1
                    # -- type and date kind, computed once per distinct attribute text (which also
                    # checks that text is plain double-quoted pairs the fast path reads right)
                    meta = attr_cache.get(attrs)
                    if meta is None:
                        meta = self._meta(attrs)
                    # -- the raw value text: nearly always a plain <v>...</v>, taken by the regex
                    if not raw:
                        if itext:                                   # <is><t>text</t></is>
                            value = texts.get(itext)                # (a column of names repeats them)
                            if value is None:
                                if b"&" in itext or b"_x" in itext or b"\r" in itext:
                                    value = decode_text(itext)
                                else:
                                    value = itext.decode("utf-8")
                                if len(texts) < TEXT_CACHE_MAX:
                                    texts[itext] = value
                            if ci == len(values):
                                values.append(value)
                            else:
                                _put(values, ci, value)
                            continue
                        if not inner:
                            if meta[2]:
                                continue      # an empty (styled) cell <c .../>
                            # <c ...></c> (rare) looks the same to findall as a <c ...> whose end
                            # tag is written another way (</c >): let the XML parser decide
                            raise _ParseProblem("empty cell or unmatched end tag (</c >?)")
                        # formula cells: <f>..</f><v>..</v>; an inline string is its <is> text even
                        # when the writer also put a (stale) <v> beside it, as Excel reads it
                        raw = None if meta[0] == "inlineStr" and is_tag in inner else _inner_value(inner, p)
                        if raw is None:
                            if is_tag in inner:
                                value = _rich_text(inner)
                                if value:
                                    _put(values, ci, value)
                                elif t_tag in inner:
                                    raise _ParseProblem("inline string not read (</t >?)")
                            elif f_tag in inner:
                                self.note(rnum, ci, formula_text(inner, p))
                            else:
                                raise _ParseProblem("cell content not understood %r" % inner[:60])
                            continue
                        if not raw:
                            # <f>..</f><v></v>: a number cell's formula never computed (a formula
                            # giving "" is written t="str")
                            if meta[0] == "n" and f_tag in inner:
                                self.note(rnum, ci, formula_text(inner, p))
                            continue
                    typ, dkind, _closed, dates = meta
                    if typ == "n":
                        if dkind is not None:
                            # a date column repeats the same few thousand serials: convert each once
                            value = dates.get(raw)
                            if value is None:
                                value = serial_to_value(_number(raw), dkind, date1904)
                                if len(dates) < DATE_CACHE_MAX:
                                    dates[raw] = value
                        elif raw.isdigit():
                            value = int(raw)
                        elif b"." in raw:
                            # number(float(raw)), inline: most cells of a ledger are amounts
                            try:
                                value = float(raw)
                            except ValueError:
                                raise _ParseProblem("bad number %r" % raw[:40])
                            if value.is_integer() and -MAX_EXACT < value < MAX_EXACT:
                                value = int(value)
                        else:
                            value = _number(raw)
                    elif typ == "s":
                        value = by_index.get(raw)                   # (cheaper than int(raw) each time)
                        if value is None:
                            if sst is None:
                                sst = self.sst = self.load_sst()
                            try:
                                value = sst[int(raw)]
                            except (IndexError, ValueError):
                                raise _ParseProblem("bad shared string index %r" % raw[:40])
                            if len(by_index) < TEXT_CACHE_MAX:
                                by_index[raw] = value
                        if not value:
                            continue
                    elif typ == "str" or typ == "inlineStr" or typ == "e":
                        value = decode_text(raw)
                        if not value:
                            continue
                    elif typ == "b":
                        value = raw.strip() in (b"1", b"true")
                    elif typ == "d":
                        value = _iso_value(decode_text(raw))
                    else:
                        raise _ParseProblem("unknown cell type %r" % typ)
                    # -- store at its column (nearly always the next one)
                    if ci == len(values):
                        values.append(value)
                    else:
                        _put(values, ci, value)
                if projected and cells is findall and (len(values) < 3 or values[0] is None or values[1] is None
                                                       or values[2] is None):
                    cells = full
                    continue
                break
            if values:
                trim(values)
                if values:
                    yield rnum, values
        self.next_row = next_row
        if tail and b"mergeCell" in tail:
            self.merges.extend(merge_refs(tail))


_NONE = object()


class ColumnRows(object):
    """The rows of a chunk ``_by_columns`` took whole, kept as columns until iterated: a worker
    sends these (row numbers and one list per wanted column) instead of a tuple per row, which
    is less to pickle and unpickle, and the rows are zipped in C where they are read."""
    __slots__ = ("rnums", "columns")

    def __init__(self, rnums, columns):
        self.rnums = rnums
        self.columns = columns       # one list per column up to the last wanted one; None: not built

    def __iter__(self):
        # tuples: every row goes through merge_repeated_rows, which makes it a list of its own
        return zip(self.rnums, zip(*[repeat(None) if v is None else v for v in self.columns]))

    def __getstate__(self):
        return self.rnums, self.columns

    def __setstate__(self, state):
        self.rnums, self.columns = state


def _row_template(p, wanted):
    """One row as ``_by_columns`` takes it: groups row number, then attributes and ``<v>`` text
    of each wanted column, the XML of a row not taken cell by cell, and a flag for a row start
    it cannot place; None when the last wanted column is past Z (kept simple)."""
    last = max(wanted)
    if last >= 26:
        return None
    e = re.escape(p)
    cell_end = rb"(?:/>|>(?:<" + e + rb"v>[^<]*</" + e + rb"v>|<" + e + rb"is><" + e + rb"t>[^<]*</" + e \
        + rb"t></" + e + rb"is>)?</" + e + rb"c>)"
    out = [rb"<" + e + rb'row r="(\d+)"[^>]*(?<!/)>(?:']
    for c in range(last + 1):
        letter = _col_letters(c)
        if c in wanted:
            out.append(rb"<" + e + rb'c r="' + letter + rb'\d+"([^>]*)><' + e + rb"v>([^<]+)</" + e + rb"v></" + e + rb"c>")
        else:
            out.append(rb"(?:<" + e + rb'c r="' + letter + rb'\d+"[^>]*?' + cell_end + rb")?")
    later = (rb"[" + _col_letters(last + 1) + rb"-Z]|" if last < 25 else b"") + rb"[A-Z]{2,3}"
    out.append(rb"(?:<" + e + rb'c r="(?:' + later + rb')\d+"[^>]*?' + cell_end + rb")*</" + e + rb"row>")
    # any other row: its XML, for the row-by-row code (the wanted <v> groups are then empty)
    out.append(rb"|(.*?)</" + e + rb"row>)|(<" + e + rb"row\b)")
    return re.compile(b"".join(out), re.S)


def _plain_number(raw):
    """A number cell's ``<v>`` as the row-by-row code reads it (int, float, integral float as int)."""
    if raw.isdigit():
        return int(raw)
    if b"." in raw:
        value = float(raw)
        if value.is_integer() and -MAX_EXACT < value < MAX_EXACT:
            return int(value)
        return value
    return _number(raw)


def _number(raw):
    """A ``<v>`` of a number cell -> int or float (integral floats as int, see ``number``)."""
    try:
        if b"." in raw or b"e" in raw or b"E" in raw:
            return number(float(raw))
        return int(raw)
    except ValueError:
        raise _ParseProblem("bad number %r" % raw[:40])
