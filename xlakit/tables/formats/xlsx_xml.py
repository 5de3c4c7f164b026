"""The XML side of the xlsx reader: text decoding, the cell and merge expressions, the style
table, the shared-string table, and the checks that keep the fast text parser honest.

The fast parser reads sheet XML as text, which is only right for XML written the way every real
producer writes it. :func:`chunk_problem` and :func:`attrs_ok` name what it does not handle
(comments, CDATA, processing instructions, DOCTYPE, white space before ``>``, single-quoted
attributes, spaces around ``=``); the reader then switches to openpyxl instead of guessing.
The shared-string table goes through a real XML parser (:func:`parse_sst_slow`) whenever the fast
expression could be wrong, because the openpyxl path uses the same table.
"""
import datetime
import re
import xml.etree.ElementTree as ET

from ..values import col_index as _col_index
from ._base import builtin_kind, classify_format, elapsed_style

_REL_NS_TAIL = "relationships"


class _ParseProblem(Exception):
    """The fast parser met XML it does not understand: switch to openpyxl."""


def _local(tag):
    return tag.rsplit("}", 1)[-1] if "}" in tag else tag


def _attr(elem, name):
    """Attribute by local name, whatever its namespace (transitional or strict OOXML)."""
    if name in elem.attrib:
        return elem.attrib[name]
    for key, value in elem.attrib.items():
        if _local(key) == name:
            return value
    return None


def _rel_id(elem):
    for key, value in elem.attrib.items():
        if key.startswith("{") and _local(key) == "id" and _REL_NS_TAIL in key:
            return value
    return None


# ---------------------------------------------------------------------------------------------
# Text decoding: XML entities and the OOXML _xHHHH_ escapes (e.g. _x000D_ for a carriage return)

_XESC_RE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_ENTITY_RE = re.compile(r"&(#[xX][0-9A-Fa-f]+|#[0-9]+|lt|gt|amp|quot|apos);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _unx(match):
    return chr(int(match.group(1), 16))


def _entity(match):
    """XML's five entities and character references (html.unescape would apply HTML's rules)."""
    ref = match.group(1)
    if ref[0] != "#":
        return _NAMED[ref]
    try:
        return chr(int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:]))
    except (ValueError, OverflowError):
        return match.group(0)


def decode_text(raw):
    """bytes or str of XML text content -> Python str."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if "\r" in text:
        # XML end-of-line handling: a literal CR LF or CR in the file means LF. A real carriage
        # return is written as &#13; or _x000D_, which are decoded after this.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "&" in text:
        text = _ENTITY_RE.sub(_entity, text)
    if "_x" in text:
        text = _XESC_RE.sub(_unx, text)
    return text


# <t> inside <si>/<is>; <rPh> (phonetic guide) runs are dropped first.
_RPH_RE = re.compile(rb"<(?:\w+:)?rPh\b.*?</(?:\w+:)?rPh>", re.S)
_T_RE = re.compile(rb"<(?:\w+:)?t(?:\s[^>]*)?>(.*?)</(?:\w+:)?t>|<(?:\w+:)?t(?:\s[^>]*)?/>", re.S)


def _rich_text(raw):
    if b"<rPh" in raw or b":rPh" in raw:
        raw = _RPH_RE.sub(b"", raw)
    parts = _T_RE.findall(raw)
    if len(parts) == 1:
        return decode_text(parts[0])
    return decode_text(b"".join(parts))


# ---------------------------------------------------------------------------------------------
# Cell attribute text -> (type code, date kind)

_A_R = re.compile(rb'\br="([A-Za-z]*)(\d*)"')
_A_S = re.compile(rb'\bs="(\d+)"')
_A_T = re.compile(rb'\bt="(\w+)"')



# Attribute text the fast parser understands: name="value" pairs with double quotes and no spaces
# around "=", optionally ending in "/" (a self-closing tag).
_ATTRS_OK = re.compile(rb'(?:\s+[\w:.-]+="[^"<]*")*\s*/?\Z')
_WS_GT = (b" >", b"\t>", b"\n>", b"\r>")


def attrs_ok(attrs):
    return _ATTRS_OK.match(attrs) is not None


def chunk_problem(chunk, first):
    """Why a piece of sheet XML is beyond the fast parser, or None: comments and CDATA sections
    (``<!``) and processing instructions (``<?`` past the declaration) are valid XML that text
    slicing would misread. Looked for by their rare characters first (a memchr each), so a
    normal sheet pays almost nothing; white space before ``>`` is caught where the parser
    slices (see ``XlsxBook._fast_rows``)."""
    if b"!" in chunk and b"<!" in chunk:
        return "comment, CDATA or DOCTYPE"
    if b"?" in chunk and chunk.count(b"<?") > (1 if first else 0):
        return "processing instruction"
    return None


def text_chunk_problem(chunk, first):
    """:func:`chunk_problem` plus white space before ``>`` (``</si >``, ``</t >``), for the
    shared-string table, which is sliced at ``</si>`` and has no per-cell checks."""
    problem = chunk_problem(chunk, first)
    if problem:
        return problem
    for pattern in _WS_GT:
        if pattern in chunk:
            return "white space before >"
    return None


# Built-in number formats (not dates) by id; 5-8 are the currency formats as a Chinese Excel
# shows them.
_BUILTIN_NUMBER = {1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 5: '"¥"#,##0;"¥"\\-#,##0',
                   6: '"¥"#,##0;[Red]"¥"\\-#,##0', 7: '"¥"#,##0.00;"¥"\\-#,##0.00',
                   8: '"¥"#,##0.00;[Red]"¥"\\-#,##0.00', 9: "0%", 10: "0.00%", 11: "0.00E+00",
                   37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)",
                   40: "#,##0.00;[Red](#,##0.00)"}


class _Styles(object):
    """Which cell style indexes (``s=``) carry a date/time number format, and of which kind;
    ``codes``: the money/number format code of the others (General and text left out) and of the
    elapsed durations (``[h]:mm:ss``)."""

    def __init__(self, xml_bytes):
        self.kinds = {}
        self.codes = {}
        if not xml_bytes:
            return
        try:
            root = ET.fromstring(xml_bytes)
        except ET.ParseError:
            return
        custom = {}
        xfs = None
        for child in root:
            name = _local(child.tag)
            if name == "numFmts":
                for fmt in child:
                    try:
                        custom[int(_attr(fmt, "numFmtId"))] = _attr(fmt, "formatCode") or ""
                    except (TypeError, ValueError):
                        pass
            elif name == "cellXfs":
                xfs = child
        if xfs is None:
            return
        for index, xf in enumerate(x for x in xfs if _local(x.tag) == "xf"):
            try:
                fmt_id = int(_attr(xf, "numFmtId") or 0)
            except ValueError:
                continue
            kind = classify_format(custom[fmt_id]) if fmt_id in custom else builtin_kind(fmt_id)
            if kind:
                self.kinds[index] = kind
                if elapsed_style(kind):
                    # a derived table keeps [h]:mm:ss, so its sums still read as durations
                    self.codes[index] = custom.get(fmt_id) or "[h]:mm:ss"
            else:
                code = custom.get(fmt_id) or _BUILTIN_NUMBER.get(fmt_id)
                if code and code.strip().lower() not in ("general", "@"):
                    self.codes[index] = code


_STYLED_CELL = {}


def column_style_counts(head, p, first_row, last_row):
    """{0-based column: {style index: cells}} over the ``<c r=.. s=..>`` cells of rows
    ``first_row``..``last_row`` in the beginning ``head`` of a sheet's XML (text scan: only the
    cell start tags are looked at, each attribute by name, in any order)."""
    regex = _STYLED_CELL.get(p)
    if regex is None:
        regex = _STYLED_CELL[p] = re.compile(rb"<" + re.escape(p) + rb"c\b([^>]*)>")
    out = {}
    for m in regex.finditer(head):
        attrs = m.group(1)
        r = re.search(rb'\br\s*=\s*["\']([A-Z]+)(\d+)', attrs)
        st = re.search(rb'\bs\s*=\s*["\'](\d+)', attrs)
        if r is None or st is None:
            continue
        row = int(r.group(2))
        if row < first_row or row > last_row:
            continue
        counts = out.setdefault(_col_index(r.group(1).decode("ascii")), {})
        key = int(st.group(1))
        counts[key] = counts.get(key, 0) + 1
    return out


# ---------------------------------------------------------------------------------------------


_compiled = {}


def _cell_regex(p):
    """The cell expression for a namespace prefix (b"" or b"x:"). Groups:
    1 column letters when r= is the first attribute; 2 the other attributes (ends with "/" for
    an empty self-closing cell); 3 the text of a cell that is exactly <v>text</v>; 4 the text of
    a plain inline string <is><t>text</t></is>; 5 any other inner XML (formulas, rich or
    space-preserving inline strings), for the slower general code."""
    if p not in _compiled:
        e = re.escape(p)
        _compiled[p] = re.compile(
            rb"<" + e + rb'c\b(?: r="([A-Z]+)\d*")?([^>]*)>'
            rb"(?:(?<!/>)(?:<" + e + rb"v>([^<]*)</" + e + rb"v></" + e + rb"c>"
            rb"|<" + e + rb"is><" + e + rb"t>([^<]*)</" + e + rb"t></" + e + rb"is></" + e + rb"c>"
            rb"|(.*?)</" + e + rb"c>))?", re.S)
    return _compiled[p]


def _projected_regex(p, columns):
    """:func:`_cell_regex` matching only the cells of ``columns`` (0-based) that carry ``r=`` as
    their first attribute (same groups; group 1 always set). ``<c r="`` is only ever a cell's
    start (cell text never holds a raw ``<``), so the other cells are skipped over in C."""
    key = (p, columns)
    rx = _compiled.get(key)
    if rx is None:
        e = re.escape(p)
        letters = b"|".join(sorted((_col_letters(c) for c in columns), key=lambda b: (-len(b), b)))
        rx = _compiled[key] = re.compile(
            rb"<" + e + rb'c r="(' + letters + rb')\d*"([^>]*)>'
            rb"(?:(?<!/>)(?:<" + e + rb"v>([^<]*)</" + e + rb"v></" + e + rb"c>"
            rb"|<" + e + rb"is><" + e + rb"t>([^<]*)</" + e + rb"t></" + e + rb"is></" + e + rb"c>"
            rb"|(.*?)</" + e + rb"c>))?", re.S)
    return rx


def _col_letters(index):
    """0-based column -> b"A", b"AA"…"""
    out = b""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        out = bytes([65 + rem]) + out
    return out


_V_RE_CACHE = {}


def _inner_value(inner, p):
    """The text of <v> in a cell's inner XML (formula cells: <f>..</f><v>..</v>); None if absent."""
    rx = _V_RE_CACHE.get(p)
    if rx is None:
        e = re.escape(p)
        rx = _V_RE_CACHE[p] = re.compile(rb"<" + e + rb"v(?:\s[^>]*)?>(.*?)</" + e + rb"v>", re.S)
    m = rx.search(inner)
    return m.group(1) if m else None


_F_RE_CACHE = {}


def formula_text(inner, p):
    """The text of a cell's ``<f>`` (for the note about formulas without a cached value); None
    for a shared formula's follower ``<f t="shared" si="0"/>``, which has none of its own."""
    rx = _F_RE_CACHE.get(p)
    if rx is None:
        e = re.escape(p)
        rx = _F_RE_CACHE[p] = re.compile(rb"<" + e + rb"f(?:\s[^>]*)?>(.*?)</" + e + rb"f>", re.S)
    m = rx.search(inner)
    if not m or not m.group(1).strip():
        return None
    text = decode_text(m.group(1))
    return text if len(text) <= 120 else text[:119] + "…"


def _cell_meta(attrs, kinds):
    """(type, date kind) of a cell's attribute text (without ``r=``); anything but plain
    double-quoted pairs is beyond the fast parser (``t='s'`` read as a number would add the
    string's index into a sum)."""
    if not attrs_ok(attrs):
        raise _ParseProblem("cell attributes %r" % attrs[:60])
    t = _A_T.search(attrs)
    typ = t.group(1).decode("ascii") if t else "n"
    s = _A_S.search(attrs)
    dkind = kinds.get(int(s.group(1))) if (s and typ == "n") else None
    return typ, dkind, attrs.endswith(b"/")


def _put(values, ci, value):
    n = len(values)
    if ci < n:
        values[ci] = value
    else:
        if ci > n:
            values.extend([None] * (ci - n))
        values.append(value)



_MERGE_RE = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref\s*=\s*(["\'])([^"\']+)\1')
_REF_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_DIM_RE = re.compile(rb'<(?:\w+:)?dimension\s+ref\s*=\s*["\']([^"\']*)["\']')
_COMMENT_RE = re.compile(rb"<!--.*?-->", re.S)


def dimension_ref(head):
    m = _DIM_RE.search(head)
    return _dim_from_ref(m.group(1).decode("ascii", "replace")) if m else None


def merge_refs(chunk):
    out = []
    for _quote, ref in _MERGE_RE.findall(chunk):
        box = _range(ref.decode("ascii", "replace"))
        if box:
            out.append(box)
    return out


def strip_comments(carry, chunk):
    """(chunk without XML comments, the start of a comment that continues in the next chunk)."""
    data = carry + chunk
    if b"<!--" not in data:
        return data, b""
    data = _COMMENT_RE.sub(b"", data)
    open_at = data.find(b"<!--")
    if open_at >= 0:
        return data[:open_at], data[open_at:]
    return data, b""


def _range(ref):
    parts = ref.split(":")
    a = _REF_RE.match(parts[0])
    b = _REF_RE.match(parts[-1])
    if not a or not b:
        return None
    r1, c1 = int(a.group(2)), _col_index(a.group(1)) + 1
    r2, c2 = int(b.group(2)), _col_index(b.group(1)) + 1
    return (min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2))


def _dedupe(boxes):
    seen, out = set(), []
    for box in boxes:
        if box not in seen:
            seen.add(box)
            out.append(box)
    return out


def _dim_from_ref(ref):
    """'A1:J1000001' -> (1000001, 10); 'B2' -> (2, 2); a lone 'A1' -> None: some writers put
    that whatever the size, so it says nothing."""
    if ref.strip().upper() in ("", "A1", "$A$1"):
        return None
    box = _range(ref)
    if not box:
        return None
    return (box[2], box[3])


def _iso_value(text):
    """t="d" cells (strict OOXML) hold ISO 8601 text."""
    text = text.strip()
    try:
        if "T" in text or " " in text:
            moment = datetime.datetime.fromisoformat(text.replace("Z", "").replace("T", " "))
            return moment
        if ":" in text:
            return datetime.time.fromisoformat(text)
        return datetime.date.fromisoformat(text)
    except ValueError:
        return text


# ---------------------------------------------------------------------------------------------
# Shared strings

def sst_prefix(head):
    m = re.search(rb"<(?:(\w+):)?sst\b", head)
    return (m.group(1) + b":") if m and m.group(1) else b""


def sst_expression(p):
    e = re.escape(p)
    return re.compile(rb"<" + e + rb"si>\s*<" + e + rb"t(?:\s[^>]*)?>([^<]*)</" + e + rb"t>\s*</" + e + rb"si>"
                      rb"|<" + e + rb"si\s*/>|<" + e + rb"si\b[^>]*>(.*?)</" + e + rb"si>", re.S)


def parse_sst_fast(chunks, p):
    """The table by text slicing, or None when some chunk holds XML it cannot be sure of (then
    :func:`parse_sst_slow` reads it). Every ``<si`` must be matched exactly once."""
    simple = sst_expression(p)
    opener = b"<" + p + b"si"
    sst = []
    append = sst.append
    for n, chunk in enumerate(chunks):
        if text_chunk_problem(chunk, n == 0):
            return None
        found = simple.findall(chunk)
        if len(found) != _count_tags(chunk, opener):
            return None
        for plain, rich in found:
            if rich:
                append(_rich_text(rich))
            elif b"&" in plain or b"_x" in plain or b"\r" in plain:
                append(decode_text(plain))
            else:
                append(plain.decode("utf-8"))
    return sst


def _count_tags(chunk, opener):
    """Occurrences of ``<si`` as a whole tag name (not ``<sid``...)."""
    n, at, size = 0, chunk.find(opener), len(opener)
    while at >= 0:
        nxt = chunk[at + size:at + size + 1]
        if nxt in (b">", b"/", b" ", b"\t", b"\n", b"\r"):
            n += 1
        at = chunk.find(opener, at + size)
    return n


def parse_sst_slow(stream):
    """The table through a real XML parser (CDATA, comments, any quoting): the text of every
    ``<t>`` of an ``<si>`` outside phonetic runs, with the OOXML ``_xHHHH_`` escapes decoded."""
    sst = []
    depth_rph = 0
    parts = None
    for event, elem in ET.iterparse(stream, events=("start", "end")):
        name = _local(elem.tag)
        if event == "start":
            if name == "si":
                parts = []
            elif name == "rPh":
                depth_rph += 1
            continue
        if name == "t" and parts is not None and not depth_rph:
            parts.append(elem.text or "")
        elif name == "rPh":
            depth_rph -= 1
        elif name == "si":
            text = "".join(parts or ())
            sst.append(_XESC_RE.sub(_unx, text) if "_x" in text else text)
            parts = None
            elem.clear()
    return sst
