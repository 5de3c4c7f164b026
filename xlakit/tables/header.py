"""Header detection: which row is the header, under title rows, notes and blank rows, and the
column names (a two-row merged header combined into ``2024年-1月``; blanks named ``列C``;
duplicates ``金额``, ``金额_2``).

``detect_header(sample, merges, header_row)`` scores the first non-empty rows (see its docstring);
``Table`` (book.py) calls it once per sheet.
"""
import re
import unicodedata
from collections import namedtuple

from ..errors import ToolError
from .values import INVALID, col_letter, display_text, is_empty, is_total_label, parse_date, to_decimal

HEADER_SCAN_ROWS = 30       # non-empty rows looked at to find the header
MAX_HEADER_ROWS = 3         # group title / sub-title / unit: deeper headers are rare and ambiguous

# =============================================================================================
# Header detection

Column = namedtuple("Column", "index letter name")
HeaderInfo = namedtuple("HeaderInfo", "rows names reason combined width")


def _norm_name(text):
    """Key for forgiving column lookup: NFKC (full-width -> ASCII), no spaces, case-folded."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).casefold()


def _label_text(value):
    """Header cell -> name text: displayed, line breaks and runs of spaces collapsed."""
    text = display_text(value)
    return re.sub(r"\s+", " ", text).strip()


_KEY_VALUE_RE = re.compile(r"[:：]\s*\S")


def _is_label(value):
    """Text that could be a column title: not a number, not a date, not a sentence, not a
    ``单位：元`` / ``制表日期：2024-05-01`` note (a colon followed by a value)."""
    if value.__class__ is not str:
        return False
    text = value.strip()
    if not text or len(text) > 40 or _KEY_VALUE_RE.search(text):
        return False
    if to_decimal(text) is not INVALID:
        return False
    return parse_date(text) is None


class _MergeIndex(object):
    """Merged ranges by row: which merges start in / cover a given row."""

    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]

    def covering(self, row):
        return [m for m in self.merges if m[0] <= row <= m[2]]


def _row_profile(rownum, values, merges, width):
    """Facts about one candidate header row used by the scorer."""
    raw = [(i, v) for i, v in enumerate(values) if not is_empty(v)]
    covered = set(i for i, _ in raw)
    for m in merges.covering(rownum):
        covered.update(range(m[1] - 1, m[3]))
    labels = [v.strip() for _, v in raw if _is_label(v)]
    distinct = len(set(labels))
    return {"row": rownum, "n": len(raw), "covered": len(covered & set(range(width))), "labels": len(labels),
            "distinct": distinct, "cols": set(i for i, _ in raw), "label_cols": set(i for i, v in raw if _is_label(v)),
            "total": any(is_total_label(v) for _, v in raw[:3])}


def detect_header(sample, merges=(), header_row=None):
    """Find the header among the first rows.

    ``sample``: list of ``(row_number, values)`` (the first non-empty rows, in order). Returns a
    HeaderInfo: ``rows`` (tuple of 1-based header row numbers, empty when there is no header),
    ``names`` (final unique column names), ``reason`` (Chinese), ``combined`` (list of
    "2024年 + 1月 -> 2024年-1月" notes), ``width``.

    Scoring (the row a person would call the header): many non-empty cells that are short, distinct
    text (not numbers or dates), covering most of the table's width (merged cells count for the
    columns they span), followed by rows with data. Title rows (one cell, often merged across) and
    notes are skipped; among rows that score close to the best, the earliest wins, because in an
    all-text table every data row looks like a header too."""
    merge_index = _MergeIndex(merges)
    width = 0
    for rownum, values in sample:
        last = len(values)
        while last and is_empty(values[last - 1]):
            last -= 1
        width = max(width, last)
    if width == 0:
        return HeaderInfo((), [], "表格是空的（没有非空行）", [], 0)

    profiles = [_row_profile(r, v, merge_index, width) for r, v in sample]
    by_row = dict(sample)

    if header_row is not None:
        if header_row not in by_row:
            raise ToolError("第 %d 行是空行或超出了表格范围，不能当表头。可先用 probe_table 查看表头在哪一行，"
                               "或不传 header_row 让工具自动识别" % header_row)
        index = [p["row"] for p in profiles].index(header_row)
        reason = "按参数 header_row=%d 使用第 %d 行作表头" % (header_row, header_row)
    else:
        scores = []
        for i, p in enumerate(profiles):
            scores.append(_score(p, profiles[i + 1:i + 6], width))
        best = max(scores) if scores else 0
        if best <= 0.15:
            names = _unique_names(["" for _ in range(width)], width)
            return HeaderInfo((), names, "前 %d 个非空行里没有像表头的一行（多为数字或日期），按无表头处理：第一行就是数据，"
                                         "列名用列标（列A、列B…）" % len(sample), [], width)
        # the earliest row close to the best: in an all-text table every data row looks like a header
        threshold = max(0.7 * best, min(best, 0.45))
        index = next(i for i, s in enumerate(scores) if s >= threshold)
        p = profiles[index]
        if index == 0 and _looks_like_data(p, profiles[1:4], by_row[p["row"]]):
            names = _unique_names(["" for _ in range(width)], width)
            return HeaderInfo((), names, "第 %d 行和下面的行结构相同（文字和数字在同样的列，数字也不像年份等列名），"
                                         "按无表头处理：第一行就是数据，列名用列标（列A、列B…）；如果它其实是表头，"
                                         "请传 header_row=%d" % (p["row"], p["row"]), [], width)
        skipped = [q["row"] for q in profiles[:index]]
        reason = "第 %d 行：%d 个非空单元格里 %d 个是互不重复的文字标题，覆盖 %d/%d 列，下面紧接着是数据" % (
            p["row"], p["n"], p["distinct"], p["covered"], width)
        if skipped:
            reason += "；上面的第 %s 行像标题/说明，已跳过" % "、".join(str(r) for r in skipped[:6])
            if len(skipped) > 6:
                reason += "等"

    rownum = profiles[index]["row"]
    rows = (rownum,)
    top = _filled_row(by_row[rownum], rownum, merge_index, width)
    names = [_label_text(v) for v in top]
    combined = []
    # a header of two or three rows (group titles merged over sub-titles, a unit row under them):
    # each further row joins while the rows above hand merges down to it and it is labels
    upper_row, upper_index = rownum, index
    while len(rows) < MAX_HEADER_ROWS:
        lower = _second_header_row(upper_row, profiles, upper_index, by_row, merge_index, width,
                                   first=len(rows) == 1)
        if lower is None:
            break
        bottom = _filled_row(by_row[lower], lower, merge_index, width)
        if len(rows) == 1 and not merge_index.covering(rownum):   # merges lost: spread each group title right
            names = _group_fill(names, profiles[upper_index + 1]["label_cols"], width)
        vspans = set()
        for m in merge_index.covering(upper_row):
            if m[0] <= upper_row and m[2] >= lower and m[0] >= rownum:
                vspans.update(range(m[1] - 1, m[3]))
        for c in range(width):
            above, below = names[c], _label_text(bottom[c])
            if c in vspans or not below or below == above or above.endswith("-" + below):
                continue
            names[c] = "%s-%s" % (above, below) if above else below
        rows += (lower,)
        upper_row, upper_index = lower, upper_index + 1
    if len(rows) > 1:
        tops = [_label_text(v) for v in top]
        combined = ["%s → %s" % (" + ".join(x for x in ([tops[c]] + names[c][len(tops[c]) + 1:].split("-")
                                                          if tops[c] and names[c].startswith(tops[c] + "-")
                                                          else [names[c]]) if x), names[c])
                    for c in range(width) if names[c] != tops[c] and "-" in names[c]]
        reason += "；第 %s 行是%s行合并表头，已合成一个列名（如「%s」）" % (
            "、".join(str(r) for r in rows), "两" if len(rows) == 2 else "三",
            combined[0].split("→ ")[-1] if combined else names[0])
    return HeaderInfo(rows, _unique_names(names, width), reason, combined, width)


def _looks_like_data(p, below, values):
    """True when the first row of a sheet is just another data row (a sheet without a header):
    labels are a minority, the rows below have text in exactly the same columns, and its numbers
    are not the kind that title columns (years such as 2023, or a run 1, 2, 3 of periods).
    A title row above the table, or a majority of labels, keeps the usual header reading."""
    if not below or p["labels"] * 2 >= p["n"]:
        return False
    if any(q["label_cols"] != p["label_cols"] for q in below):
        return False
    numbers = [v for v in values if v.__class__ is int]
    if numbers and (all(1900 <= v <= 2100 for v in numbers) or
                    (len(numbers) >= 2 and all(b == a + 1 for a, b in zip(numbers, numbers[1:])))):
        return False
    return True


def _score(p, below, width):
    """0..~1.2: how much row ``p`` looks like the header of a table ``width`` wide."""
    if p["n"] == 0 or p["total"]:
        return 0.0
    if p["n"] == 1 and width > 1:
        return 0.0                            # a title or a note: one cell (possibly merged across)
    coverage = p["covered"] / float(width)
    label_ratio = p["labels"] / float(p["n"])
    distinct_ratio = p["distinct"] / float(max(p["labels"], 1))
    score = coverage * label_ratio * distinct_ratio
    if not below:
        return score * 0.5                    # nothing under it: a header of nothing
    fill = sum(min(q["n"], p["n"]) for q in below[:3]) / float(p["n"] * min(len(below), 3))
    if fill < 0.3:
        score *= 0.5                          # the rows below are sparse: notes, not data
    # rows below that hold numbers/dates in this row's label columns = a typed body under a header
    typed = any((q["cols"] - q["label_cols"]) & p["label_cols"] for q in below[:3])
    if typed:
        score *= 1.2
    return score


def _filled_row(values, rownum, merge_index, width):
    """Header row values with the merges that start in this row filled in (``2024年`` spread over
    the columns it spans). Merges coming down from an earlier row are handled by the caller."""
    row = list(values[:width]) + [None] * max(0, width - len(values))
    for m in merge_index.covering(rownum):
        if m[0] != rownum:
            continue
        value = values[m[1] - 1] if m[1] - 1 < len(values) else None
        for c in range(m[1] - 1, min(m[3], width)):
            row[c] = value
    return row


def _second_header_row(rownum, profiles, index, by_row, merge_index, width, first=True):
    """The row under header row ``rownum`` when the two belong to one merged header: a merge in
    the header spans several columns (``2024年`` over ``1月``/``2月``) or reaches down into the
    next row (``姓名`` merged over two rows), and the next row is labels under it. ``first``
    False: ``rownum`` is itself a lower header row (a third row is asked for); only merges that
    start in it or come down through it count then.

    Guards against taking a table's first data row into the header (templates merge a cell such
    as 序号 down into it): the row must be all labels, two sub-titles under a group title, and it
    must not look like the row after it (text in the same columns again = data)."""
    nxt = rownum + 1
    if nxt not in by_row or index + 1 >= len(profiles) or profiles[index + 1]["row"] != nxt:
        return None
    covering = merge_index.covering(rownum)
    horizontal = [m for m in covering if m[0] == rownum and m[3] > m[1] and m[2] == rownum]
    vertical = [m for m in covering if m[2] >= nxt and (first and m[0] == rownum or not first)]
    if not horizontal and not vertical:
        if not first:
            return None
        return nxt if _unmerged_group_header(profiles[index], profiles[index + 1], width) else None
    q = profiles[index + 1]
    if q["n"] == 0 or q["labels"] < max(1, 0.7 * q["n"]):
        return None
    if horizontal:
        best = max(len(q["label_cols"] & set(range(m[1] - 1, m[3]))) for m in horizontal)
        if best < 2:
            return None                   # a group title has two or more sub-titles under it
    else:
        down = set()
        for m in vertical:
            down.update(range(m[1] - 1, m[3]))
        if q["labels"] < q["n"] or not (q["label_cols"] - down):
            return None
        after = profiles[index + 2] if index + 2 < len(profiles) else None
        if after is not None and after["row"] == nxt + 1 and q["label_cols"] <= after["label_cols"]:
            return None                   # the row after has text in the same columns: q is data
    return nxt


def _unmerged_group_header(p, q, width):
    """A two-row header whose merges were lost (csv exports, xlwt files): ``2024年`` followed by
    blank cells, with ``1月 / 2月 / 3月`` under it in the next row, while single-row titles such as
    ``门店`` have a blank cell under them. Strict on purpose: a plain header over an all-text data
    row must not be taken for this."""
    if q["n"] == 0 or q["labels"] < max(2, 0.7 * q["n"]):
        return False
    groups = 0
    for c in sorted(p["label_cols"]):
        gap = c + 1 < width and (c + 1) not in p["cols"]
        if gap:
            span = c + 1
            while span < width and span not in p["cols"]:
                span += 1
            if not all(col in q["label_cols"] for col in range(c, span)):
                return False          # a group title needs a sub-title under each of its columns
            groups += 1
        elif c in q["cols"]:
            return False              # a stand-alone title has nothing under it
    return groups > 0


def _group_fill(names, second_labels, width):
    """Spread a group title over the blank cells to its right that have sub-titles below."""
    out = list(names)
    for c in range(1, width):
        if not out[c] and c in second_labels and out[c - 1]:
            out[c] = out[c - 1]
    return out


def _unique_names(names, width):
    """Blank -> ``列C``; duplicates -> ``金额``, ``金额_2``, ``金额_3``."""
    out, seen = [], set()
    for i in range(width):
        name = names[i] if i < len(names) else ""
        name = name or "列%s" % col_letter(i)
        base, n = name, 2
        while name in seen:
            name = "%s_%d" % (base, n)
            n += 1
        seen.add(name)
        out.append(name)
    return out


