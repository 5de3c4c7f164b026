"""The target of a write, inspected before anything is written: its format by suffix, sheet names
by Excel's rules, and for an existing workbook what a re-save would lose.

openpyxl re-saves only what it understands, so charts, pictures, pivot tables, slicers, macros,
form controls, external links, sparklines... would vanish. :func:`inspect_xlsx` looks for those
parts in the zip *before* loading (after :func:`xlakit.opc.check_package` refused a zip bomb),
counts the cells (openpyxl's load cost) and the caller refuses the write with the list of what
would be lost unless ``allow_lossy`` is given. What a file really is comes from ``xlakit.sniff``.
"""
import os
import re
import xml.etree.ElementTree as ET
import zipfile

from .. import opc
from .. import sniff as sniffer
from ..errors import FormatError, ToolError, what_broke

FORMATS = {".xlsx": "xlsx", ".xlsm": "xlsm", ".xls": "xls", ".csv": "csv"}
SHEET_NAME_MAX = 31
SHEET_BAD_CHARS = '[]:*?/\\'
DEFAULT_SHEET = "Sheet1"
# Replacing a sheet of an existing xlsx means openpyxl loads and re-saves the whole workbook (an
# append or a new sheet never does: they edit the package directly). Measured on a 2-core machine:
# 900k cells took 8 s to load and 7 s to save (545 MB peak) when quiet; on a loaded machine a
# 760k-cell workbook (95,000 x 8) ran past 60 s. So the estimate is the loaded rate, and a re-save
# that would not finish in the time left (minus the reserve for the checks, backup and answer) is
# refused before it starts.
RESAVE_CELLS_PER_SECOND = 15000
RESAVE_RESERVE = 5.0

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



def detect_format(path):
    ext = os.path.splitext(path)[1].lower()
    fmt = FORMATS.get(ext)
    if fmt is None:
        if not ext:
            raise ToolError("路径 %s 没有后缀，无法判断要写成什么格式。请在文件名后加 .xlsx（推荐）、.xls 或 .csv" % path)
        raise ToolError("不支持写入 %s 格式。请把 path 的后缀改成 .xlsx（推荐）、.xls 或 .csv" % ext)
    return fmt


def check_sheet_name(name):
    """Excel's rules for a worksheet name; the error says which rule is broken and what to change."""
    if not isinstance(name, str) or not name.strip():
        raise ToolError("工作表名不能为空。请给 sheet 一个名字，例如 \"Sheet1\" 或 \"汇总\"")
    if len(name) > SHEET_NAME_MAX:
        raise ToolError("工作表名「%s」有 %d 个字符，Excel 规定最多 %d 个。请缩短，例如「%s」" % (
            name, len(name), SHEET_NAME_MAX, name[:SHEET_NAME_MAX]))
    bad = sorted(set(ch for ch in name if ch in SHEET_BAD_CHARS))
    if bad:
        raise ToolError("工作表名「%s」含有 Excel 不允许的字符 %s（不能用 [ ] : * ? / \\）。请去掉或换成其他字符，例如「%s」" % (
            name, " ".join(bad), "".join("-" if ch in SHEET_BAD_CHARS else ch for ch in name)))
    if name.startswith("'") or name.endswith("'"):
        raise ToolError("工作表名「%s」不能以单引号开头或结尾。请去掉首尾的单引号" % name)
    if name.lower() == "history":
        raise ToolError("「History」是 Excel 保留的工作表名，不能使用。请换一个名字")
    if any(ord(ch) < 32 for ch in name):
        raise ToolError("工作表名含有控制字符（如换行），请去掉后重试")
    return name


def real_kind(path):
    """What an existing file is by its bytes (``xlakit.sniff``), ``None`` when it cannot be read."""
    try:
        return sniffer.sniff(path)
    except OSError:
        return None


def inspect_xlsx(path, replacing=None):
    """Check an existing xlsx/xlsm before loading it. Raises a Chinese ToolError for encrypted or
    broken files; otherwise returns {"lost": labels of parts openpyxl would drop on re-save (empty =
    safe), "cells": cell elements in all sheets (openpyxl's load cost), "rich_text": bool,
    "replaced": labels of parts that hang only off the sheet ``replacing`` (its charts and
    pictures: they go with the sheet being replaced, so they are not "lost")}."""
    name = os.path.basename(path)
    kind = real_kind(path)
    if kind is not None and kind.kind in ("ole", "xls", "et", "doc", "wps", "ppt"):
        if kind.encrypted:
            raise ToolError("「%s」设置了打开密码（已加密），无法写入。请在 Excel/WPS 里去掉密码后另存，再重试；"
                            "或把数据写到一个新文件（换个 path）。原文件没有改动" % name)
        raise ToolError("「%s」其实是老格式 .xls（后缀被改成了 %s），无法按 xlsx 写入。请把后缀改回 .xls，"
                        "或把数据写到新的 .xlsx 文件。原文件没有改动" % (name, os.path.splitext(path)[1]))
    if kind is None or kind.kind not in ("xlsx", "xlsm", "xlsb", "docx", "pptx", "zip", "ods", "odt", "odp"):
        raise ToolError("「%s」不是有效的 Excel 文件（可能已损坏，或是改了后缀的其他文件），无法在它里面写入工作表。"
                        "请把数据写到一个新文件（换个 path）。原文件没有改动" % name)
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                opc.check_package(zf, name)
            except FormatError as exc:
                raise ToolError("%s。原文件没有改动" % str(exc).rstrip("。"))
            names = zf.namelist()
            if "xl/workbook.xml" not in names:
                raise ToolError("「%s」的内容不完整（缺少工作簿数据），可能已损坏。请把数据写到一个新文件（换个 path），"
                                "或先用 Excel 打开修复后另存。原文件没有改动" % name)
            lost, replaced = [], []
            own = _sheet_only_parts(zf, names, replacing, path) if replacing is not None else set()
            for prefix, label in RISKY_PARTS:
                hits = [n for n in names if n.startswith(prefix)]
                if label not in lost and any(n not in own for n in hits):
                    lost.append(label)
                elif hits and label not in replaced and label not in lost:
                    replaced.append(label)
            sheets = [n for n in names if n.startswith("xl/worksheets/") and n.endswith(".xml")]
            found, cells, rich = _scan_parts(zf, sheets, [n for n in names if n == "xl/sharedStrings.xml"])
            lost += [label for label in found if label not in lost]
            return {"lost": lost, "cells": cells, "rich_text": rich, "replaced": replaced,
                    "lone_sheet": _lone_sheet(zf, names)}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, RuntimeError, ValueError) as exc:
        raise ToolError("「%s」已损坏，无法打开（%s）。请把数据写到一个新文件（换个 path），或先用 Excel 打开修复后另存。"
                        "原文件没有改动" % (name, what_broke(exc)))


def _lone_sheet(zf, names):
    """The name of a workbook's only worksheet when the workbook holds nothing besides it that a
    rewrite from scratch would drop (defined names, protection, external links, a VBA project,
    custom properties); else None. Replacing that sheet is then writing a new file (``write.py``),
    not a load and re-save of the whole workbook through openpyxl (4-5 s for a 30k-row sheet)."""
    if any(n.startswith(("xl/externalLinks/", "xl/vbaProject", "customXml/", "docProps/custom"))
           for n in names):
        return None
    try:
        text = opc.read_part(zf, "xl/workbook.xml")
    except (FormatError, KeyError):
        return None
    if re.search(rb"<(?:\w+:)?(?:workbookProtection|fileSharing)[\s>]", text):
        return None
    root = ET.fromstring(text)
    for el in root.iter():
        # the sheet's own built-in names (print titles, filter range) go with it; any other name
        # is the user's and would be lost
        if el.tag.rsplit("}", 1)[-1] == "definedName" and not (
                (el.get("name") or "").startswith("_xlnm.") and el.get("localSheetId") == "0"):
            return None
    sheets = [el for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "sheet"]
    if len(sheets) != 1 or (sheets[0].get("state") or "visible") != "visible":
        return None
    worksheets = [n for n in names if n.startswith("xl/worksheets/") and n.endswith(".xml")]
    return sheets[0].get("name") if len(worksheets) == 1 else None


def _sheet_only_parts(zf, names, wanted, path):
    """The parts reachable (through relationships) from worksheet ``wanted`` and from no other
    sheet: what replacing that sheet replaces. Empty when anything is unclear."""
    try:
        wb = ET.fromstring(opc.read_part(zf, "xl/workbook.xml"))
        rels = opc.parse_rels(opc.read_part(zf, opc.rels_part("xl/workbook.xml")), "xl/workbook.xml")
        sheets = {}
        for el in wb.iter():
            if el.tag.rsplit("}", 1)[-1] == "sheet":
                rel = rels.get(el.get("{%s}id" % opc.NS_OFFICE_RELS))
                if rel:
                    sheets[el.get("name") or ""] = rel[1]
        target = pick_sheet(list(sheets), wanted or None, path)
    except (ET.ParseError, KeyError, FormatError, ToolError, UnicodeDecodeError):
        return set()
    if target is None:
        return set()

    def reach(starts):
        seen, todo = set(), list(starts)
        while todo:
            part = todo.pop()
            rp = opc.rels_part(part)
            if rp not in names:
                continue
            try:
                found = opc.parse_rels(opc.read_part(zf, rp), part)
            except (ET.ParseError, FormatError):
                return None
            for _kind, t in found.values():
                if t in names and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen
    mine = reach([sheets[target]])
    others = reach([p for n, p in sheets.items() if n != target])
    if mine is None or others is None:
        return set()
    return mine - others - {sheets[target]}


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
                    # a split "<c " at a chunk edge is rare and harmless; ":c " counts prefixed
                    # sheets (<x:c r=...>, .NET exporters), which would otherwise count as empty
                    cells += chunk.count(b"<c ") + chunk.count(b":c ")
                    for marker, label in RISKY_SHEET_MARKERS:
                        if label not in found and marker in data:
                            found.append(label)
                # plain substring tests first: the regex over every MB of a big sheet costs seconds
                if not rich and (b"<r>" in data or b":r>" in data) and _RICH_RUN_RE.search(data):
                    rich = True
                tail = data[-overlap:]
    return found, cells, rich


def lossy_error(path, lost):
    return ToolError(
        "「%s」里有 %s。往这个文件写入要重新保存整个工作簿，而保存时这些内容会丢失或损坏，所以没有写入，原文件没有改动。"
        "建议把数据写到一个新文件（换个 path，例如同目录下的「%s」）；如果确认可以接受这些损失，"
        "再传 allow_lossy_resave=true 重试（原文件会先备份到 ~/.xla/backup/）" % (
            os.path.basename(path), "、".join(lost), _sibling_name(path)),
        would_lose=lost)


def resave_seconds(cells):
    """Seconds an openpyxl load + save of a workbook with ``cells`` cells may take on a busy machine."""
    return cells / float(RESAVE_CELLS_PER_SECOND)


def too_big_to_resave(path, cells, mode, seconds, left, sheet=None):
    """The refusal, before anything starts, of a re-save that would not fit in the time left:
    why it is slow and what to do instead (a new sheet of this workbook is written directly)."""
    name = os.path.basename(path)
    if mode == "append":
        what = "这个工作簿的结构特殊（例如工作表是空的），不能直接在文件里追加，只能把整个工作簿读进内存再重新保存"
    else:
        what = "覆盖已有的工作表%s要把整个工作簿读进内存再重新保存" % ("「%s」" % sheet if sheet else "")
    return ToolError(
        "「%s」约有 %s 个单元格，%s，估计需要 %d 秒左右，超过本次剩下的约 %d 秒时限，所以没有开始写，原文件没有改动。"
        "可以改为：① 写到这个工作簿的一个新工作表（sheet 换一个还没有的名字，直接写进文件，几秒完成）；"
        "② 写到一个新文件（换个 path，新的 .xlsx 或 .csv 写得很快），例如「%s」" % (
            name, _count_text(cells), what, max(1, int(seconds + 0.5)), max(0, int(left)), _sibling_name(path)))


def _count_text(n):
    return "%d 万" % (n // 10000) if n >= 10000 else str(n)


def _sibling_name(path):
    stem, ext = os.path.splitext(os.path.basename(path))
    return "%s_新%s" % (stem, ".xlsx" if ext.lower() in (".xlsm", ".xlsx") else ext)


def pick_sheet(names, wanted, path):
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
    raise ToolError("「%s」有多个工作表（%s），没有指明写哪一个。请用 sheet 参数给出工作表名；"
                       "要新建工作表就给一个新名字" % (os.path.basename(path), "、".join(names)),
                       sheets=list(names))

