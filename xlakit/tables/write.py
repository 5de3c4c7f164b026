"""Writing tables to xlsx / xls / csv: the one implementation behind write_spreadsheet and every
table tool that saves a result (filter_table, pivot_table, lookup_table, dedupe_table, clean_table).

Why one shared module: the user must get the same cells whichever tool wrote them (numbers stay
numbers, ISO date text becomes a real Excel date, an ID-card number never turns into 1.10101E+17),
and the same safety rules must hold everywhere:

- never damage the user's file: every write goes to a temp file beside the target and replaces it
  in one step (``xla_runtime.atomic_write``), a copy of the previous file goes to ``~/.xla/backup``
  first, and any error (a limit, a bad row, a full disk) leaves the original byte-for-byte intact;
- never lose parts of a workbook silently: openpyxl re-saves only what it understands, so charts,
  pictures, pivot tables, slicers, macros, form controls, external links, sparklines... would vanish.
  Those parts are looked for in the zip *before* loading, and the write is refused (with the list of
  what would be lost) unless the caller passes ``allow_lossy=True``;
- Excel's limits (rows, columns, 32,767 characters per cell, sheet-name rules) are checked before
  anything is written, with a message that says what to change.

API:
    write_rows(path, rows, sheet=None, mode="overwrite", allow_lossy=False) -> dict
    default_output_path(source_path, label, ext=None) -> str
    to_cell(value) -> the Python value that will be stored in an xlsx/xls cell

``rows`` may be any iterable of rows (a generator is fine): csv and new xlsx files are written
streaming in constant memory. A new xlsx is produced by a small SpreadsheetML writer in this module
(~5x faster than openpyxl: 100k rows x 10 columns in ~1.5 s, 1M rows in ~15 s); openpyxl is used
only where an existing workbook must be changed, xlwt for .xls.
"""
import csv
import datetime
import decimal
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import sys
import unicodedata
import zipfile

import pydeps_boot  # noqa: E402 - the root is on sys.path in every tool and test
from .. import runtime as rt  # noqa: E402
from ..lock import FileLock  # noqa: E402
from .. import files  # noqa: E402
from . import core as table_io  # noqa: E402

FORMATS = {".xlsx": "xlsx", ".xlsm": "xlsm", ".xls": "xls", ".csv": "csv"}
# (max rows, max columns) per sheet
LIMITS = {"xlsx": (1048576, 16384), "xlsm": (1048576, 16384), "xls": (65536, 256)}
CELL_TEXT_LIMIT = 32767
SHEET_NAME_MAX = 31
SHEET_BAD_CHARS = '[]:*?/\\'
DEFAULT_SHEET = "Sheet1"
# Excel keeps 15 significant digits: a longer integer would be silently rounded, so it is stored as text.
MAX_EXACT_DIGITS = 15
WIDTH_SAMPLE_ROWS = 1000
WIDTH_MIN, WIDTH_MAX = 6, 60
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
TIME_FORMAT = "hh:mm:ss"
TEXT_FORMAT = "@"
LOCK_TIMEOUT = 30
# Changing an existing xlsx means openpyxl loads and re-saves the whole workbook: measured on a
# 2-core machine, 900k cells took 8 s to load and 7 s to save (545 MB peak), and up to twice that
# under load. Beyond this many cells the write would risk the 60 s limit, so it is refused up front.
RESAVE_MAX_CELLS = 800000
MAX_WARN_EXAMPLES = 3

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"

# Parts of an xlsx package that openpyxl does not carry over when it re-saves the workbook.
# (prefix in the zip, what the user would lose). Checked in this order; each label reported once.
RISKY_PARTS = (
    ("xl/charts/", "图表"),
    ("xl/chartsheets/", "图表工作表"),
    ("xl/media/", "图片"),
    ("xl/drawings/drawing", "形状、文本框等绘图对象"),
    ("xl/pivotTables/", "数据透视表"),
    ("xl/pivotCache/", "数据透视表缓存"),
    ("xl/slicers/", "切片器"),
    ("xl/slicerCaches/", "切片器"),
    ("xl/timelines/", "日程表（时间线筛选器）"),
    ("xl/timelineCaches/", "日程表（时间线筛选器）"),
    ("xl/vbaProject.bin", "宏（VBA 代码）"),
    ("xl/ctrlProps/", "表单控件（按钮、复选框、下拉框）"),
    ("xl/activeX/", "ActiveX 控件"),
    ("xl/embeddings/", "嵌入的对象（如嵌入的 Word/PDF）"),
    ("xl/externalLinks/", "外部链接（引用其他工作簿的公式）"),
    ("xl/connections.xml", "数据连接 / Power Query 查询"),
    ("xl/model/", "Power Pivot 数据模型"),
    ("xl/queryTables/", "查询表"),
)
# Features stored inside worksheet XML (Excel 2010 extensions) that openpyxl drops on load.
RISKY_SHEET_MARKERS = (
    (b"sparklineGroup", "迷你图"),
    (b"x14:dataValidation", "引用其他工作表的下拉列表（数据验证）"),
    (b"x14:conditionalFormatting", "Excel 2010 起的扩展条件格式（数据条、图标集等）"),
)



# ---------------------------------------------------------------------------------------------
# Cells

def _parse_date_text(text):
    """A real date/datetime for date text (``2024-03-05``, ``2024/3/5``, ``2024-03-05 14:30``,
    ``2024-03-05T14:30:00``, ``2024年3月5日``), else None.

    The rules are table_io's (what the table tools read as a date is what the writer stores as one);
    only whole-cell, valid calendar dates from 1900 on (Excel's epoch) count: ``2024-02-30`` stays
    text rather than becoming some other day."""
    parsed = table_io.parse_date(text)
    if parsed is None or parsed.year < 1900:
        return None
    return parsed


def _json_cell(value):
    return json.dumps(value, ensure_ascii=False, default=str)


def to_cell(value, stats=None):
    """The value stored in an xlsx/xls cell for one JSON value.

    numbers stay numbers and bools stay bools; null is an empty cell; ISO date text becomes a real
    date; all other text stays text exactly as given (``"007"`` and ID-card numbers are never turned
    into numbers); integers longer than 15 digits are stored as text because Excel would round them;
    nested lists/objects become JSON text. ``stats`` (a dict) collects what was changed, for warnings.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) >= 10 ** MAX_EXACT_DIGITS:
            _note(stats, "long_int", str(value))
            return str(value)
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, str):
        text = value.strip()
        # cheap pre-check before the regex: dates start with a digit and are 8-26 characters long
        if 8 <= len(text) <= 26 and text[:1].isdigit():
            parsed = _parse_date_text(text)
            if parsed is not None:
                return parsed
        return value
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None if value.is_nan() else str(value)
        if value == value.to_integral_value() and abs(value) >= 10 ** MAX_EXACT_DIGITS:
            _note(stats, "long_int", str(value))
            return str(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.date, datetime.datetime)) and value.year < 1900:
        return value.isoformat()        # before Excel's calendar starts: only text can show it
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.replace(tzinfo=None) if getattr(value, "tzinfo", None) else value
    if isinstance(value, (list, tuple, dict)):
        return _json_cell(value)
    return str(value)


def _csv_text(value):
    """csv cells are text exactly as given; numbers in their plain form, bools as Excel spells them."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple, dict)):
        return _json_cell(value)
    return str(value)


def _note(stats, key, example):
    if stats is None:
        return
    entry = stats.setdefault(key, {"count": 0, "examples": []})
    entry["count"] += 1
    if len(entry["examples"]) < MAX_WARN_EXAMPLES:
        entry["examples"].append(example)


def column_letter(index):
    """1 -> A, 27 -> AA."""
    letters = ""
    while index > 0:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _is_digit_text(value):
    return isinstance(value, str) and value.isdigit() and value.isascii()


def _display_width(value):
    """Characters a value takes on screen; CJK and full-width characters count double."""
    if value is None:
        return 0
    if isinstance(value, datetime.datetime):
        return 19
    if isinstance(value, datetime.date):
        return 10
    if isinstance(value, bool):
        return 5
    if isinstance(value, (int, float)):
        return min(len(str(value)), 15)
    text = str(value)
    best = 0
    for line in text.split("\n"):
        width = 0
        for ch in line[:WIDTH_MAX * 2]:     # the width is capped anyway: don't scan huge texts
            width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        best = max(best, width)
    return best


def column_widths(rows):
    """Sensible widths for the columns of ``rows`` (a sample): widest cell + 2, within 6..60."""
    widths = []
    for row in rows:
        for i, value in enumerate(row):
            w = _display_width(value)
            if i >= len(widths):
                widths.append(0)
            if w > widths[i]:
                widths[i] = w
    return [min(WIDTH_MAX, max(WIDTH_MIN, w + 2)) for w in widths]


def _looks_like_header(row):
    """First row is styled as a header only if it is all text (a row of numbers is data)."""
    texts = [v for v in row if v is not None and v != ""]
    return bool(texts) and all(isinstance(v, str) for v in texts)


def _is_repeated_header(new_first, old_first):
    """True when the first row to append repeats the file's header row (merging monthly exports
    usually sends the header again). Only a header-like row counts, all text and no numbers or
    dates, so appending a data row that equals the first data row of a headerless file still works."""
    old = _norm_row(old_first)
    if not old or old != _norm_row(new_first):
        return False
    for cell in old:
        if not cell:
            continue
        try:
            float(cell.replace(",", ""))
            return False
        except ValueError:
            pass
        if _parse_date_text(cell) is not None:
            return False
    return True


def _norm_row(row):
    cells = ["" if v is None else str(v).strip() for v in row]
    while cells and cells[-1] == "":
        cells.pop()
    return cells


# ---------------------------------------------------------------------------------------------
# Checks

def detect_format(path):
    ext = os.path.splitext(path)[1].lower()
    fmt = FORMATS.get(ext)
    if fmt is None:
        if not ext:
            raise rt.ToolError("路径 %s 没有后缀，无法判断要写成什么格式。请在文件名后加 .xlsx（推荐）、.xls 或 .csv" % path)
        raise rt.ToolError("不支持写入 %s 格式。请把 path 的后缀改成 .xlsx（推荐）、.xls 或 .csv" % ext)
    return fmt


def check_sheet_name(name):
    """Excel's rules for a worksheet name; the error says which rule is broken and what to change."""
    if not isinstance(name, str) or not name.strip():
        raise rt.ToolError("工作表名不能为空。请给 sheet 一个名字，例如 \"Sheet1\" 或 \"汇总\"")
    if len(name) > SHEET_NAME_MAX:
        raise rt.ToolError("工作表名「%s」有 %d 个字符，Excel 规定最多 %d 个。请缩短，例如「%s」" % (
            name, len(name), SHEET_NAME_MAX, name[:SHEET_NAME_MAX]))
    bad = sorted(set(ch for ch in name if ch in SHEET_BAD_CHARS))
    if bad:
        raise rt.ToolError("工作表名「%s」含有 Excel 不允许的字符 %s（不能用 [ ] : * ? / \\）。请去掉或换成其他字符，例如「%s」" % (
            name, " ".join(bad), "".join("-" if ch in SHEET_BAD_CHARS else ch for ch in name)))
    if name.startswith("'") or name.endswith("'"):
        raise rt.ToolError("工作表名「%s」不能以单引号开头或结尾。请去掉首尾的单引号" % name)
    if name.lower() == "history":
        raise rt.ToolError("「History」是 Excel 保留的工作表名，不能使用。请换一个名字")
    if any(ord(ch) < 32 for ch in name):
        raise rt.ToolError("工作表名含有控制字符（如换行），请去掉后重试")
    return name


def _row_error(index, row):
    got = rt.json_text(row)
    if len(got) > 60:
        got = got[:60] + "…"
    return rt.ToolError("rows 的第 %d 项（rows[%d]）不是数组，收到的是 %s。rows 必须是二维数组，每一行写成 [...]，"
                        "例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]" % (index + 1, index, got))


def _prepared(rows, fmt, stats):
    """Check and convert rows one at a time (works for generators): a bad row or a limit raises
    ToolError naming the row and column. xlsx/xls rows come out as cell values, csv rows as text."""
    max_rows, max_cols = LIMITS.get(fmt, (None, None))
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise rt.ToolError("rows 必须是二维数组（每一行是一个数组），例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]")
    for i, row in enumerate(rows):
        if not isinstance(row, (list, tuple)):
            raise _row_error(i, row)
        if max_rows is not None and i >= max_rows:
            raise _too_many_rows(fmt, i + 1, 1)
        if max_cols is not None and len(row) > max_cols:
            raise rt.ToolError("第 %d 行有 %d 列，超过 %s 每个工作表最多 %d 列的限制。%s" % (
                i + 1, len(row), fmt, max_cols,
                "请改存为 .xlsx（最多 16384 列）" if fmt == "xls" else "请减少列数或拆成多个工作表"))
        if fmt == "csv":
            yield [_csv_text(v) for v in row]
            continue
        out = []
        for j, value in enumerate(row):
            cell = to_cell(value, stats)
            if isinstance(cell, str) and len(cell) > CELL_TEXT_LIMIT:
                raise rt.ToolError("第 %d 行第 %d 列（%s 列）的文字有 %d 个字符，超过 Excel 单元格最多 %d 个字符的限制。"
                                   "请把长文字拆到多个单元格%s" % (
                                       i + 1, j + 1, column_letter(j + 1), len(cell), CELL_TEXT_LIMIT,
                                       rt.tool_hint("write_text", "，或改用 write_text 存为文本文件")))
            out.append(cell)
        yield out


def _too_many_rows(fmt, count, start_row):
    max_rows = LIMITS[fmt][0]
    where = "" if start_row <= 1 else "从第 %d 行开始写，" % start_row
    hint = ("请改存为 .xlsx（最多 1,048,576 行）" if fmt == "xls"
            else "请拆成多个工作表或多个文件，或改存为 .csv")
    return rt.ToolError("%s要写 %d 行，超过 %s 每个工作表最多 %s 行的限制。%s" % (
        where, count, fmt, "{:,}".format(max_rows), hint))


# ---------------------------------------------------------------------------------------------
# Inspecting an existing target

def _file_head(path, size=8):
    with open(path, "rb") as fh:
        return fh.read(size)


def _ole_is_encrypted(path):
    """An OLE file holding an encrypted OOXML package has an ``EncryptionInfo`` stream; its name
    sits in the directory as UTF-16. Encrypted workbooks are small enough to scan whole."""
    needle = "EncryptionInfo".encode("utf-16-le")
    with open(path, "rb") as fh:
        return needle in fh.read(50 * 1024 * 1024)


def inspect_xlsx(path):
    """Check an existing xlsx/xlsm before loading it. Raises a Chinese ToolError for encrypted or
    broken files; otherwise returns {"lost": labels of parts openpyxl would drop on re-save (empty =
    safe), "cells": cell elements in all sheets (openpyxl's load cost), "rich_text": bool}."""
    name = os.path.basename(path)
    head = _file_head(path)
    if head.startswith(OLE_MAGIC):
        if _ole_is_encrypted(path):
            raise rt.ToolError("「%s」设置了打开密码（已加密），无法写入。请在 Excel/WPS 里去掉密码后另存，再重试；"
                               "或把数据写到一个新文件（换个 path）。原文件没有改动" % name)
        raise rt.ToolError("「%s」其实是老格式 .xls（后缀被改成了 %s），无法按 xlsx 写入。请把后缀改回 .xls，"
                           "或把数据写到新的 .xlsx 文件。原文件没有改动" % (name, os.path.splitext(path)[1]))
    if not head.startswith(ZIP_MAGIC):
        raise rt.ToolError("「%s」不是有效的 Excel 文件（可能已损坏，或是改了后缀的其他文件），无法在它里面写入工作表。"
                           "请把数据写到一个新文件（换个 path）。原文件没有改动" % name)
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if "xl/workbook.xml" not in names:
                raise rt.ToolError("「%s」的内容不完整（缺少工作簿数据），可能已损坏。请把数据写到一个新文件（换个 path），"
                                   "或先用 Excel 打开修复后另存。原文件没有改动" % name)
            lost = []
            for prefix, label in RISKY_PARTS:
                if label not in lost and any(n.startswith(prefix) for n in names):
                    lost.append(label)
            sheets = [n for n in names if n.startswith("xl/worksheets/") and n.endswith(".xml")]
            found, cells, rich = _scan_parts(zf, sheets, [n for n in names if n == "xl/sharedStrings.xml"])
            lost += [label for label in found if label not in lost]
            return {"lost": lost, "cells": cells, "rich_text": rich}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, RuntimeError, ValueError) as exc:
        raise rt.ToolError("「%s」已损坏，无法打开（%s）。请把数据写到一个新文件（换个 path），或先用 Excel 打开修复后另存。"
                           "原文件没有改动" % (name, exc))


_RICH_RUN_RE = re.compile(rb"<(?:\w+:)?r>")


def _scan_parts(zf, sheets, strings):
    """One streaming pass over the sheet XML (read in 1 MB chunks: sheets can be hundreds of MB):
    labels of RISKY_SHEET_MARKERS found, the number of <c> cell elements, and whether any text has
    rich-text runs (then openpyxl must load with rich_text=True, which is slower)."""
    found, cells, rich = [], 0, False
    overlap = max(len(m) for m, _ in RISKY_SHEET_MARKERS)
    for member in sheets + strings:
        is_sheet = member in sheets
        with zf.open(member) as fh:
            tail = b""
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                data = tail + chunk
                if is_sheet:
                    cells += chunk.count(b"<c ")        # a split "<c " at a chunk edge is rare and harmless
                    for marker, label in RISKY_SHEET_MARKERS:
                        if label not in found and marker in data:
                            found.append(label)
                if not rich and _RICH_RUN_RE.search(data):
                    rich = True
                tail = data[-overlap:]
    return found, cells, rich


def _lossy_error(path, lost):
    return rt.ToolError(
        "「%s」里有 %s。往这个文件写入要重新保存整个工作簿，而保存时这些内容会丢失或损坏，所以没有写入，原文件没有改动。"
        "建议把数据写到一个新文件（换个 path，例如同目录下的「%s」）；如果确认可以接受这些损失，"
        "再传 allow_lossy_resave=true 重试（原文件会先备份到 ~/.xla/backup/）" % (
            os.path.basename(path), "、".join(lost), _sibling_name(path)),
        would_lose=lost)


def _too_big_to_resave(path, cells, mode):
    return rt.ToolError(
        "「%s」约有 %d 万个单元格。往已有工作簿里写要把整个工作簿读进内存再保存，这么大的文件会超过 60 秒的时限、"
        "占用上 GB 内存，所以没有写入，原文件没有改动。请把数据写到一个新文件（新的 .xlsx 或 .csv，写新文件很快），"
        "%s" % (os.path.basename(path), cells // 10000,
                "之后在 Excel 里把两部分合并" if mode == "append" else "或拆成几个较小的工作簿"))


def _sibling_name(path):
    stem, ext = os.path.splitext(os.path.basename(path))
    return "%s_新%s" % (stem, ".xlsx" if ext.lower() in (".xlsm", ".xlsx") else ext)


def _pick_sheet(names, wanted, path):
    """Which existing sheet to write (None = add a new sheet named ``wanted or Sheet1``).

    A given name matches case-insensitively (Excel treats ``sheet1`` and ``Sheet1`` as the same).
    Without a name: ``Sheet1`` if present, else the only sheet; with several sheets and no
    ``Sheet1`` the caller must choose, so a write never lands on a sheet the user didn't mean."""
    if wanted:
        for n in names:
            if n.lower() == wanted.lower():
                return n
        return None
    for n in names:
        if n.lower() == DEFAULT_SHEET.lower():
            return n
    if len(names) == 1:
        return names[0]
    raise rt.ToolError("「%s」有多个工作表（%s），没有指明写哪一个。请用 sheet 参数给出工作表名；"
                       "要新建工作表就给一个新名字" % (os.path.basename(path), "、".join(names)),
                       sheets=list(names))


# ---------------------------------------------------------------------------------------------
# xlsx

def _xlsx_style_cell(cell, value, header, bold, keep_date_format=False):
    """Number formats that make the stored value display as intended; bold for a header cell.

    A date cell that already carries a date format (appending under rows formatted ``yyyy/m/d``)
    keeps it, so the new rows look like the old ones."""
    if isinstance(value, str):
        # text stays text: without this, openpyxl would store "=..." as a formula and "#N/A" as an error
        cell.data_type = "s"
        if _is_digit_text(value) and cell.number_format == "General":
            cell.number_format = TEXT_FORMAT
    elif isinstance(value, (datetime.date, datetime.time)):
        if not keep_date_format:
            if isinstance(value, datetime.datetime):
                cell.number_format = DATETIME_FORMAT
            elif isinstance(value, datetime.date):
                cell.number_format = DATE_FORMAT
            else:
                cell.number_format = TIME_FORMAT
    if header:
        cell.font = bold


# Characters XML 1.0 cannot hold: openpyxl's ILLEGAL_CHARACTERS_RE set, plus lone surrogates (JSON can
# carry "\ud800", UTF-8 cannot encode it) and the non-characters U+FFFE/U+FFFF.
_ILLEGAL_XML_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean_xlsx_text(row, stats):
    """XML cannot hold most control characters; openpyxl would refuse the whole write. Drop them."""
    for j, v in enumerate(row):
        if isinstance(v, str) and _ILLEGAL_XML_RE.search(v):
            row[j] = _ILLEGAL_XML_RE.sub("", v)
            _note(stats, "control_chars", row[j][:20])
    return row


# A new workbook is written as a minimal SpreadsheetML package straight from Python strings: the
# same result as openpyxl's write-only mode (inline strings, a handful of cell styles) but about 5x
# faster, because openpyxl spends most of its time in its generic XML serialiser. 100k rows x 10
# columns take ~2 s instead of ~9 s, so derived tables of a million rows fit in the time limit.
# Cell styles (index into cellXfs below): 0 plain, 1 bold header, 2 date, 3 date+time, 4 time, 5 text.
_XF_BOLD, _XF_DATE, _XF_DATETIME, _XF_TIME, _XF_TEXT = 1, 2, 3, 4, 5
_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml."

_PKG_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="' + _CT + 'sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="' + _CT + 'worksheet+xml"/>'
    '<Override PartName="/xl/styles.xml" ContentType="' + _CT + 'styles+xml"/>'
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
    '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>'
    '</Types>')
_PKG_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="' + _NS_PKG_REL + '">'
    '<Relationship Id="rId1" Type="' + _NS_REL + '/officeDocument" Target="xl/workbook.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>'
    '<Relationship Id="rId3" Type="' + _NS_REL + '/extended-properties" Target="docProps/app.xml"/>'
    '</Relationships>')
_PKG_APP = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    '<Application>Microsoft Excel</Application></Properties>')
_PKG_CORE = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    '<dc:creator>xla</dc:creator>'
    '<dcterms:created xsi:type="dcterms:W3CDTF">%(now)s</dcterms:created>'
    '<dcterms:modified xsi:type="dcterms:W3CDTF">%(now)s</dcterms:modified>'
    '</cp:coreProperties>')
_PKG_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="' + _NS_MAIN + '" xmlns:r="' + _NS_REL + '">'
    '<bookViews><workbookView activeTab="0"/></bookViews>'
    '<sheets><sheet name="%(name)s" sheetId="1" r:id="rId1"/></sheets></workbook>')
_PKG_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="' + _NS_PKG_REL + '">'
    '<Relationship Id="rId1" Type="' + _NS_REL + '/worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="' + _NS_REL + '/styles" Target="styles.xml"/>'
    '</Relationships>')
_PKG_STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<styleSheet xmlns="' + _NS_MAIN + '">'
    '<numFmts count="3"><numFmt numFmtId="164" formatCode="' + DATE_FORMAT + '"/>'
    '<numFmt numFmtId="165" formatCode="' + DATETIME_FORMAT + '"/>'
    '<numFmt numFmtId="166" formatCode="' + TIME_FORMAT + '"/></numFmts>'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="6"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    '</styleSheet>')

_EPOCH = datetime.datetime(1899, 12, 30)


def excel_serial(value):
    """Excel's day number for a date/datetime/time (1900 system, including its fake 1900-02-29)."""
    if isinstance(value, datetime.time):
        return (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86400.0
    if not isinstance(value, datetime.datetime):
        value = datetime.datetime(value.year, value.month, value.day)
    delta = value - _EPOCH
    serial = delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400.0
    if serial < 61:             # before 1900-03-01 Excel counts one day less (no phantom leap day yet)
        serial -= 1
    return int(serial) if serial == int(serial) else serial


def _xml_text(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_attr(text):
    return _xml_text(text).replace('"', "&quot;")


def _cell_xml(ref, value, header):
    """One <c> element. Strings are inline (no shared-string table: streaming needs no second pass)."""
    if isinstance(value, str):
        if not value:
            return ""
        space = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() or "\n" in value else ""
        style = ' s="1"' if header else (' s="5"' if _is_digit_text(value) else "")
        return '<c r="%s"%s t="inlineStr"><is><t%s>%s</t></is></c>' % (ref, style, space, _xml_text(value))
    if isinstance(value, bool):
        return '<c r="%s"%s t="b"><v>%d</v></c>' % (ref, ' s="1"' if header else "", value)
    if isinstance(value, int):
        return '<c r="%s"><v>%d</v></c>' % (ref, value)
    if isinstance(value, float):
        return '<c r="%s"><v>%s</v></c>' % (ref, repr(value))
    if isinstance(value, datetime.datetime):
        style = _XF_DATETIME
    elif isinstance(value, datetime.date):
        style = _XF_DATE
    else:
        style = _XF_TIME
    return '<c r="%s" s="%d"><v>%r</v></c>' % (ref, style, excel_serial(value))


def _write_xlsx_new(tmp, title, head, rest, stats, counter):
    """A new workbook with one sheet, written streaming (constant memory whatever the row count)."""
    header = bool(head) and _looks_like_header(head[0])
    widths = column_widths(head)
    letters = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", _PKG_CONTENT_TYPES)
        zf.writestr("_rels/.rels", _PKG_RELS)
        zf.writestr("docProps/app.xml", _PKG_APP)
        zf.writestr("docProps/core.xml", _PKG_CORE % {"now": now})
        zf.writestr("xl/workbook.xml", _PKG_WORKBOOK % {"name": _xml_attr(title)})
        zf.writestr("xl/_rels/workbook.xml.rels", _PKG_WORKBOOK_RELS)
        zf.writestr("xl/styles.xml", _PKG_STYLES)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as raw:
            parts = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                     '<worksheet xmlns="%s" xmlns:r="%s"><sheetViews><sheetView tabSelected="1" workbookViewId="0">'
                     % (_NS_MAIN, _NS_REL)]
            if header:
                parts.append('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
                             '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/>')
            parts.append('</sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>')
            if widths:
                parts.append("<cols>%s</cols>" % "".join(
                    '<col min="%d" max="%d" width="%s" customWidth="1"/>' % (i + 1, i + 1, w)
                    for i, w in enumerate(widths)))
            parts.append("<sheetData>")
            buffered = 0
            for r, row in enumerate(itertools.chain(head, rest), start=1):
                _clean_xlsx_text(row, stats)
                while len(letters) < len(row):
                    letters.append(column_letter(len(letters) + 1))
                is_header = header and r == 1
                cells = "".join(_cell_xml("%s%d" % (letters[c], r), v, is_header)
                                for c, v in enumerate(row) if v is not None)
                parts.append('<row r="%d">%s</row>' % (r, cells))
                counter[0] += 1
                buffered += 1
                if buffered >= 2000:
                    raw.write("".join(parts).encode("utf-8"))
                    parts, buffered = [], 0
            parts.append("</sheetData></worksheet>")
            raw.write("".join(parts).encode("utf-8"))


def _last_valued_row(ws):
    """The last row holding a value. ``ws.max_row`` also counts rows that only carry formatting
    (borders, fills prepared for future entries), which would leave a gap before appended rows."""
    last = 0
    for r, values in enumerate(ws.iter_rows(values_only=True), start=1):
        for v in values:
            if v is not None and v != "":
                last = r
                break
    return last


def _first_valued_row(ws, last):
    for r, values in enumerate(ws.iter_rows(max_row=last, values_only=True), start=1):
        if any(v is not None and v != "" for v in values):
            return r, list(values)
    return 0, []


def _unmerge_block(ws, start_row, ncols, stats):
    """Empty merged cells in the area being filled would refuse values: unmerge them (they hold
    nothing, only layout) and say so."""
    for rng in list(ws.merged_cells.ranges):
        if rng.max_row >= start_row and rng.min_col <= max(ncols, 1):
            if rng.min_row >= start_row:
                ws.unmerge_cells(str(rng))
                _note(stats, "unmerged", str(rng))


def _extend_tables(ws, old_last, new_last, ncols):
    """An Excel table (套用表格格式) or auto-filter that ended at the old last row grows with the
    appended rows, so filters, banding and structured references keep covering all the data."""
    from openpyxl.utils import range_boundaries
    for table in ws.tables.values():
        try:
            c1, r1, c2, r2 = range_boundaries(table.ref)
        except (TypeError, ValueError):
            continue
        if r2 == old_last and not table.totalsRowCount and ncols <= c2:
            table.ref = "%s%d:%s%d" % (column_letter(c1), r1, column_letter(c2), new_last)
            if table.autoFilter is not None:
                table.autoFilter.ref = table.ref
    ref = ws.auto_filter.ref
    if ref:
        try:
            c1, r1, c2, r2 = range_boundaries(ref)
        except (TypeError, ValueError):
            return
        if r2 == old_last:
            ws.auto_filter.ref = "%s%d:%s%d" % (column_letter(c1), r1, column_letter(c2), new_last)


def _write_cells(ws, rows, start_row, header, stats, counter, copy_from=None):
    """Write converted rows into a normal (loaded) worksheet from ``start_row``.

    ``copy_from``: the last data row above; appended cells without their own formatting take its
    font/border/alignment and a fitting number format, so new rows look like the rows above."""
    from copy import copy
    from openpyxl.styles import Font
    from openpyxl.styles.numbers import is_date_format
    bold = Font(bold=True)
    r = start_row - 1
    for i, row in enumerate(rows):
        r = start_row + i
        _clean_xlsx_text(row, stats)
        for c, v in enumerate(row, start=1):
            if v is None and copy_from is None:
                continue
            cell = ws.cell(row=r, column=c)
            if copy_from is not None and not cell.has_style:
                src = ws.cell(row=copy_from, column=c)
                if src.has_style:
                    cell._style = copy(src._style)     # openpyxl's documented way to copy a cell's style
            if v is None:
                continue
            had_date_format = is_date_format(cell.number_format)   # before openpyxl picks its own
            cell.value = v
            _xlsx_style_cell(cell, v, header and i == 0, bold, keep_date_format=had_date_format)
            if not isinstance(v, (datetime.date, datetime.time, str)) and is_date_format(cell.number_format):
                cell.number_format = "General"      # a copied date format would show a number as a date
        counter[0] += 1
    return r


def _fill_fresh_sheet(ws, head, rows, stats, counter):
    """A sheet written whole: widths from the first rows, bold header frozen in place."""
    header = bool(head) and _looks_like_header(head[0])
    for i, width in enumerate(column_widths(head)):
        ws.column_dimensions[column_letter(i + 1)].width = width
    if header:
        ws.freeze_panes = "A2"
    return _write_cells(ws, rows, 1, header, stats, counter)


def _plan_xlsx_existing(path, fmt, wanted, mode, info):
    """Before anything is written: load the workbook, choose the sheet, find where appended rows
    start and check they fit. Returns (workbook, target sheet name or None, last valued row)."""
    openpyxl = pydeps_boot.ensure("openpyxl")
    from openpyxl.worksheet.worksheet import Worksheet
    try:
        wb = openpyxl.load_workbook(path, keep_vba=(fmt == "xlsm"), keep_links=True,
                                    rich_text=bool(info.get("rich_text", True)))
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many types for broken files
        raise rt.ToolError("无法打开「%s」（%s: %s），文件可能已损坏。请把数据写到一个新文件（换个 path），"
                           "或先用 Excel 打开修复后另存。原文件没有改动" % (
                               os.path.basename(path), type(exc).__name__, str(exc)[:200]))
    target = _pick_sheet(wb.sheetnames, wanted, path)
    if target is not None and not isinstance(wb[target], Worksheet):
        raise rt.ToolError("「%s」是图表工作表，不能写入数据。请换一个工作表名" % target)
    old_last = _last_valued_row(wb[target]) if target is not None and mode == "append" else 0
    count = info.get("row_count")
    if old_last and count is not None and old_last + count - 1 > LIMITS[fmt][0]:
        # count - 1: a repeated header row may still be dropped; the exact check runs while writing
        raise _too_many_rows(fmt, count, old_last + 1)
    return wb, target, old_last


def _write_xlsx_existing(tmp, fmt, plan, wanted, mode, head, rest, stats, counter, info):
    wb, target, old_last = plan
    title = target or wanted or DEFAULT_SHEET
    rows = itertools.chain(head, rest)
    ncols = max([len(r) for r in head] or [0])
    if target is None or mode == "overwrite":
        if target is not None:
            # replace the sheet in place: same name and position, other sheets untouched
            old = wb[target]
            index = wb.sheetnames.index(target)
            active = wb.index(wb.active) if wb.active is not None else 0
            wb.remove(old)
            ws = wb.create_sheet(target, index)
            wb.active = active
            info["action"] = "replaced_sheet"
        else:
            ws = wb.create_sheet(title)
            info["action"] = "new_sheet"
        for sheet in wb.worksheets:       # exactly one selected tab, or Excel opens the sheets grouped
            if hasattr(sheet, "sheet_view"):
                sheet.sheet_view.tabSelected = sheet is wb.active
        last = _fill_fresh_sheet(ws, head, rows, stats, counter)
        info.update(start_row=1, total_rows=last)
    elif old_last == 0:
        # appending to an existing but empty sheet: written whole like a new one (its formatting stays)
        ws = wb[target]
        last = _fill_fresh_sheet(ws, head, rows, stats, counter)
        info.update(start_row=1, total_rows=last, action="appended")
    else:
        ws = wb[target]
        first_row, first_values = _first_valued_row(ws, old_last)
        if head and _is_repeated_header(head[0], first_values):
            # the caller re-sent the header (common when merging monthly files): don't duplicate it
            head = head[1:]
            rows = itertools.chain(head, rest)
            info["header_skipped"] = True
        start = old_last + 1
        last_values = [c.value for c in ws[old_last]][:5]
        if old_last > first_row and any(isinstance(v, str) and _TOTALS_RE.match(v.strip()) for v in last_values):
            _note(stats, "after_totals", str(old_last))
        max_rows = LIMITS[fmt][0]
        _unmerge_block(ws, start, ncols, stats)
        copy_from = old_last if old_last > first_row else None
        last = _write_cells(ws, _capped(rows, max_rows - start + 1, fmt, start), start, False, stats, counter,
                            copy_from=copy_from)
        if counter[0]:
            _extend_tables(ws, old_last, last, ncols)
        info.update(start_row=start, total_rows=max(last, old_last), action="appended")
    info["sheet"] = ws.title
    info["sheets"] = list(wb.sheetnames)
    wb.save(tmp)
    if getattr(wb, "vba_archive", None) is not None:
        # openpyxl leaves the in-memory macro archive open over a closed buffer; closing it here
        # keeps "Exception ignored in ZipFile.__del__" noise off stderr at exit
        try:
            wb.vba_archive.close()
        except (ValueError, OSError):
            pass


# A label that marks a totals row (合计 / 总计 / 小计 / Total ...)
_TOTALS_RE = re.compile(r"^(?:合\s*计|总\s*计|小\s*计)|^(?:total|sum)(?![a-z])", re.I)


def _capped(rows, room, fmt, start):
    """Stop with a clear error when a streamed block would run past the sheet's last row."""
    for i, row in enumerate(rows):
        if i >= room:
            raise _too_many_rows(fmt, i + 1, start)
        yield row


# ---------------------------------------------------------------------------------------------
# xls

def _xls_real(path):
    """'ole' for a real BIFF workbook, else what the file actually is (for the error)."""
    head = _file_head(path, 512)
    if head.startswith(OLE_MAGIC):
        return "ole"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    low = head.lower()
    if b"<html" in low or b"<table" in low or b"<!doctype" in low or b"<?xml" in low:
        return "html"
    return "text"


def _read_xls_sheets(path):
    """All sheets of an existing real .xls as (name, rows of cell values) via xlrd."""
    xlrd = pydeps_boot.ensure("xlrd")
    name = os.path.basename(path)
    try:
        book = xlrd.open_workbook(path, on_demand=True)
    except Exception as exc:  # noqa: BLE001 - xlrd raises XLRDError, CompDocError, struct errors...
        text = str(exc)
        if "encrypt" in text.lower():
            raise rt.ToolError("「%s」设置了密码（已加密），无法写入。请在 Excel/WPS 里去掉密码后另存，或把数据写到一个新文件。"
                               "原文件没有改动" % name)
        raise rt.ToolError("「%s」已损坏或不是有效的 xls 文件（%s）。请把数据写到一个新文件（换个 path）。原文件没有改动" % (
            name, text[:200]))
    try:
        sheets = []
        for idx in range(book.nsheets):
            sh = book.sheet_by_index(idx)
            rows = []
            for r in range(sh.nrows):
                rows.append([_xls_value(xlrd, book, sh.cell(r, c)) for c in range(sh.ncols)])
            sheets.append((sh.name, rows))
            book.unload_sheet(idx)
        return sheets
    finally:
        book.release_resources()


def _xls_value(xlrd, book, cell):
    kind = cell.ctype
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return None
    if kind == xlrd.XL_CELL_DATE:
        try:
            value = xlrd.xldate.xldate_as_datetime(cell.value, book.datemode)
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return cell.value
        if value.time() == datetime.time(0) and cell.value == int(cell.value):
            return value.date()
        return value
    if kind == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERR")
    if kind == xlrd.XL_CELL_NUMBER and float(cell.value).is_integer() and abs(cell.value) < 2 ** 53:
        return int(cell.value)
    return cell.value


def _plan_xls(path, wanted, allow_lossy, info):
    """Before anything is written: what the new .xls will contain. xlwt can only write whole
    files, so the target sheet is written fresh and other sheets of an existing .xls are carried
    over as values (only with allow_lossy: their formulas and formatting cannot be kept).
    Returns the layout [(sheet name, rows of values, or None for the sheet being written)]."""
    existing = []           # [(name, rows)] of the current file, in order
    target = None
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        kind = _xls_real(path)
        if kind != "ole":
            what = {"zip": "xlsx（改了后缀）", "html": "网页（HTML）表格", "text": "文本表格"}[kind]
            if not allow_lossy:
                raise rt.ToolError("「%s」其实是%s，不是真正的 .xls。写入会用新数据整个替换它，原有内容不会保留，所以没有写入，"
                                   "原文件没有改动。请把数据写到一个新文件（换个 path，推荐 .xlsx）；确认要整个替换，"
                                   "再传 allow_lossy_resave=true（原文件会先备份）" % (os.path.basename(path), what))
        else:
            existing = _read_xls_sheets(path)
            target = _pick_sheet([n for n, _ in existing], wanted, path)
            others = [n for n, _ in existing if n != target]
            if others and not allow_lossy:
                raise rt.ToolError(
                    "「%s」还有其他工作表（%s）。xls 只能整个文件重写，其他工作表只能保留数值，公式、格式、合并单元格、"
                    "图表和宏都会丢失，所以没有写入，原文件没有改动。建议写到新的 .xlsx 文件（xlsx 可以只替换一个工作表）；"
                    "确认可以接受，再传 allow_lossy_resave=true（原文件会先备份）" % (
                        os.path.basename(path), "、".join(others)),
                    would_lose=["其他工作表的公式、格式、合并单元格、图表、宏"])
            if others:
                info["others_kept_as_values"] = others
    title = target or wanted or DEFAULT_SHEET
    layout = [(n, None if n == target else rows) for n, rows in existing]
    if target is None:
        layout.append((title, None))
    if target:
        info["action"] = "replaced_sheet"
    elif existing:
        info["action"] = "new_sheet"
    else:   # a new file, or a fake .xls (HTML/text/renamed xlsx) replaced whole with allow_lossy
        info["action"] = "replaced_file" if os.path.isfile(path) and os.path.getsize(path) > 0 else "new_file"
    info["sheet"] = title
    return layout


def _write_xls(tmp, layout, head, rest, counter, info):
    xlwt = pydeps_boot.ensure("xlwt")
    wb = xlwt.Workbook(encoding="utf-8")
    bold = xlwt.easyxf("font: bold on")
    styles = {
        "date": xlwt.easyxf(num_format_str=DATE_FORMAT),
        "datetime": xlwt.easyxf(num_format_str=DATETIME_FORMAT),
        "time": xlwt.easyxf(num_format_str=TIME_FORMAT),
        "text": xlwt.easyxf(num_format_str=TEXT_FORMAT),
    }
    for name, rows in layout:
        ws = wb.add_sheet(name, cell_overwrite_ok=True)
        if rows is not None:            # another sheet of the old file: values only
            for r, row in enumerate(rows):
                for c, v in enumerate(row):
                    if v is not None:
                        _xls_put(ws, r, c, v, styles, None)
            continue
        header = bool(head) and _looks_like_header(head[0])
        for i, width in enumerate(column_widths(head)):
            ws.col(i).width = int(256 * width)
        if header:
            ws.set_panes_frozen(True)
            ws.set_horz_split_pos(1)
            ws.set_remove_splits(True)
        for r, row in enumerate(itertools.chain(head, rest)):
            for c, v in enumerate(row):
                if v is not None:
                    _xls_put(ws, r, c, v, styles, bold if (header and r == 0) else None)
            counter[0] += 1
    info.update(start_row=1, total_rows=counter[0], sheets=[n for n, _ in layout])
    wb.save(tmp)


def _xls_put(ws, r, c, v, styles, header_style):
    if header_style is not None:
        ws.write(r, c, v, header_style)
    elif isinstance(v, datetime.datetime):
        ws.write(r, c, v, styles["datetime"])
    elif isinstance(v, datetime.date):
        ws.write(r, c, v, styles["date"])
    elif isinstance(v, datetime.time):
        ws.write(r, c, v, styles["time"])
    elif _is_digit_text(v):
        ws.write(r, c, v, styles["text"])
    else:
        ws.write(r, c, v)


# ---------------------------------------------------------------------------------------------
# csv

CSV_SAMPLE_BYTES = 256 * 1024


class _CsvTarget:
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
    import codecs
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return None


def _inspect_csv(path, mode):
    """Read the head of an existing csv: encoding (table_formats.delimited.detect_encoding),
    delimiter (sniff_delimiter), line ending, whether it ends with a newline, first record."""
    from .formats import delimited
    target = _CsvTarget()
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        sample = fh.read(CSV_SAMPLE_BYTES)
        fh.seek(max(0, size - 4))
        tail = fh.read()
    if not sample:
        return target
    has_bom = sample.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))
    binary = sample.startswith((ZIP_MAGIC, OLE_MAGIC)) or (not has_bom and b"\x00\x00" in sample[:4096])
    if binary:
        if mode == "overwrite":
            return target               # replaced whole anyway: write a fresh UTF-8 csv
        raise rt.ToolError("「%s」不是文本 csv（看起来是 Excel 或其他二进制文件改了后缀），不能在末尾追加。"
                           "请确认文件，或把数据写到新文件" % os.path.basename(path))
    encoding = delimited.detect_encoding(sample)
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
    import io
    return io.StringIO(text.lstrip("\ufeff"), newline="")


def _count_csv_records(path, target):
    """Non-empty records of the existing file (streamed; a 1M-row csv takes about a second)."""
    count = 0
    with open(path, "r", encoding=target.read_encoding or "utf-8", errors="replace", newline="") as fh:
        for record in csv.reader(fh, delimiter=target.delimiter):
            if any(cell.strip() for cell in record):
                count += 1
    return count


def _write_csv(path, tmp, mode, exists, target, head, rest, counter, info):
    rows = itertools.chain(head, rest)
    appending = mode == "append" and exists and target.read_encoding is not None
    old_count = 0
    if appending:
        old_count = _count_csv_records(path, target)
        if head and target.first_record and _is_repeated_header(head[0], target.first_record):
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
        raise rt.ToolError("有字符「%s」无法用原文件的编码 %s 保存。原文件没有改动。请把数据写到 .xlsx 或新的 csv 文件"
                           "（新 csv 用 UTF-8 保存，任何字符都可以）" % (bad, encoding))
    info.update(action="appended" if appending else ("replaced_file" if exists else "new_file"),
                start_row=old_count + 1 if appending else 1,
                total_rows=old_count + counter[0],
                encoding=_codec_name(target.encoding) or target.encoding,
                delimiter=target.delimiter, bom_added=target.add_bom and appending)


# ---------------------------------------------------------------------------------------------
# The entry point

def _lock_for(path):
    key = hashlib.sha1(os.path.normcase(os.path.abspath(path)).encode("utf-8")).hexdigest()[:20]
    return FileLock(rt.xla_dir("locks", "write-%s.lock" % key), timeout=LOCK_TIMEOUT)


def _warnings(stats, info, path, fmt):
    out = []
    if "long_int" in stats:
        s = stats["long_int"]
        out.append("有 %d 个超过 15 位的整数（如 %s）按文本写入：Excel 只保留 15 位有效数字，存成数字会把末几位变成 0" % (
            s["count"], "、".join(s["examples"])))
    if "control_chars" in stats:
        out.append("有 %d 个单元格含不可见的控制字符，xlsx 无法保存，已去掉" % stats["control_chars"]["count"])
    if "unmerged" in stats:
        out.append("追加区域里的空合并单元格已取消合并：%s" % "、".join(stats["unmerged"]["examples"]))
    if "after_totals" in stats:
        out.append("原表最后一行（第 %s 行）是合计行，新行追加在它下面；合计公式不会自动包含新行，"
                   "需要时请在 Excel 里调整合计行的位置或公式" % stats["after_totals"]["examples"][0])
    if info.get("others_kept_as_values"):
        out.append("其他工作表（%s）按 allow_lossy_resave 只保留了数值，公式和格式已丢失（原文件在备份里）" %
                   "、".join(info["others_kept_as_values"]))
    if info.get("lost"):
        out.append("按 allow_lossy_resave 重存了工作簿，这些内容可能已丢失或损坏：%s（原文件在备份里）" % "、".join(info["lost"]))
    if info.get("bom_added"):
        out.append("原 csv 是纯英文、没有编码标记，已在文件开头加上 UTF-8 BOM，Excel 才能正确显示中文")
    if fmt == "csv" and (info.get("total_rows") or 0) > LIMITS["xlsx"][0]:
        out.append("csv 共 %d 行，Excel 打开时只能显示前 1,048,576 行" % info["total_rows"])
    return out


def write_rows(path, rows, sheet=None, mode="overwrite", allow_lossy=False):
    """Write ``rows`` (an iterable of lists) to ``path``; the suffix decides the format.

    mode "overwrite": xlsx replaces the one sheet (others kept, same order), xls and csv replace the
    file; "append": after the last row holding a value (xlsx) or at the end of the file (csv).
    Returns path, format, sheet, mode, action, rows_written, start_row, total_rows, columns, backup,
    sheets, header_skipped, warnings (+ encoding/delimiter for csv). Raises xla_runtime.ToolError.
    """
    if mode not in ("overwrite", "append"):
        raise rt.ToolError("mode 只能是 overwrite（覆盖，默认）或 append（追加到末尾），收到的是 %r" % (mode,))
    path = rt.resolve_write(path)
    files.check_not_open(path)          # before reading: an office program would save over us
    fmt = detect_format(path)
    if fmt == "csv":
        sheet = None
    elif sheet is not None:
        check_sheet_name(sheet)
    exists = os.path.isfile(path) and os.path.getsize(path) > 0
    if fmt == "xls" and mode == "append":
        raise rt.ToolError("老格式 .xls 不支持追加（mode=append）。请改用 .xlsx：可以把新数据追加到一个 .xlsx 文件；"
                           "或先用 read_spreadsheet 读出原表，把新旧数据合在一起，用 mode=overwrite 写成新的 .xlsx")
    if fmt == "xlsm" and not exists:
        raise rt.ToolError("不能新建 .xlsm（启用宏的工作簿需要由 Excel 生成）。请把 path 的后缀改成 .xlsx")

    stats = {}
    shape = {"cols": 0}

    def tracked(prepared_rows):
        for row in prepared_rows:
            if len(row) > shape["cols"]:
                shape["cols"] = len(row)
            yield row

    prepared = _prepared(rows, fmt, stats)
    row_count = None
    if isinstance(rows, (list, tuple)):
        prepared = list(prepared)       # lists are checked completely before any file is touched
        row_count = len(prepared)
        prepared = iter(prepared)
    prepared = tracked(prepared)
    head = list(itertools.islice(prepared, WIDTH_SAMPLE_ROWS))
    if not head:
        raise rt.ToolError("rows 是空数组，没有可写的内容。请传二维数组，例如 [[\"姓名\", \"金额\"], [\"张三\", 100]]")

    info = {"row_count": row_count}
    counter = [0]
    try:
        lock = _lock_for(path).acquire()
    except TimeoutError:
        raise rt.ToolError("另一个工具正在写入「%s」，等待超时。请稍后重试" % os.path.basename(path))
    try:
        if fmt in ("xlsx", "xlsm") and exists:
            found = inspect_xlsx(path)
            lost = found["lost"]
            if fmt == "xlsm" and "宏（VBA 代码）" in lost:
                # keep_vba carries the macro code over, but openpyxl still rewrites the rest
                lost = [x for x in lost if x != "宏（VBA 代码）"] + ["宏相关的按钮、控件与部分设置"]
            if lost and not allow_lossy:
                raise _lossy_error(path, lost)
            if found["cells"] > RESAVE_MAX_CELLS:
                raise _too_big_to_resave(path, found["cells"], mode)
            info["lost"] = lost
            info["rich_text"] = found["rich_text"]
        # Everything that can refuse the write runs here, before the backup copy and the temp file.
        if fmt == "csv":
            plan = _inspect_csv(path, mode) if exists else _CsvTarget()
        elif fmt == "xls":
            plan = _plan_xls(path, sheet, allow_lossy, info)
        elif exists:
            plan = _plan_xlsx_existing(path, fmt, sheet, mode, info)

        def write(tmp):
            if fmt == "csv":
                _write_csv(path, tmp, mode, exists, plan, head, prepared, counter, info)
            elif fmt == "xls":
                _write_xls(tmp, plan, head, prepared, counter, info)
            elif exists:
                _write_xlsx_existing(tmp, fmt, plan, sheet, mode, head, prepared, stats, counter, info)
            else:
                title = sheet or DEFAULT_SHEET
                _write_xlsx_new(tmp, title, head, prepared, stats, counter)
                info.update(action="new_file", sheet=title, sheets=[title], start_row=1, total_rows=counter[0])

        try:
            backup = rt.atomic_write(path, write, backup=exists)
        except PermissionError as exc:
            raise rt.ToolError("无法写入「%s」：文件可能正在 Excel/WPS 中打开，或没有写权限（%s）。请关闭该文件后重试，"
                               "或换一个文件名。原文件没有改动" % (os.path.basename(path), exc.strerror or exc))
    finally:
        lock.release()

    result = {
        "path": path,
        "format": fmt,
        "sheet": info.get("sheet"),
        "mode": mode,
        "action": info.get("action"),
        "rows_written": counter[0],
        "start_row": info.get("start_row", 1),
        "total_rows": info.get("total_rows", counter[0]),
        "columns": shape["cols"],
        "backup": backup,
        "sheets": info.get("sheets"),
        "header_skipped": bool(info.get("header_skipped")),
        "warnings": _warnings(stats, info, path, fmt),
    }
    if fmt == "csv":
        result["encoding"] = info.get("encoding")
        result["delimiter"] = info.get("delimiter")
    return result


def default_output_path(source_path, label, ext=None):
    """Where a derived table goes by default: the workspace, ``<source name>_<label><ext>``, with
    ``_2``, ``_3``... so an existing file is never overwritten.

    ``ext`` defaults to .csv for text sources (fast, same kind of file) and .xlsx otherwise (an .xls
    source gets .xlsx: no 65,536-row limit, and .xlsm would need macros)."""
    stem, src_ext = os.path.splitext(os.path.basename(str(source_path)))
    if ext:
        ext = "." + ext.lstrip(".").lower()
    else:
        ext = ".csv" if src_ext.lower() in (".csv", ".tsv", ".txt") else ".xlsx"
    label = re.sub(r'[\\/:*?"<>|\s]+', "_", str(label or "")).strip("_")
    name = "%s_%s%s" % (stem or "结果", label, ext) if label else "%s%s" % (stem or "结果", ext)
    return rt.unique_path(os.path.join(rt.workspace_dir(create=True), name))
