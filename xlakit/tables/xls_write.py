"""Writing .xls (Excel 97-2003) through xlwt, which can only write whole files.

The target sheet is written fresh; the other sheets of an existing .xls are read back through the
xls reader (``formats.xls``: the same cell values every table tool sees) and carried over as
values, which loses their formulas and formatting, so that needs ``allow_lossy``. A "fake .xls"
(HTML or text export, a renamed xlsx) is only replaced whole, also only with ``allow_lossy``.
"""
import datetime
import itertools
import os

from ..errors import FormatError, ToolError, what_broke
from .cells import DATE_FORMAT, DATETIME_FORMAT, TEXT_FORMAT, TIME_FORMAT, column_widths, is_digit_text, looks_like_header
from .target import DEFAULT_SHEET, pick_sheet, real_kind


def _real(path):
    """'ole' for a real BIFF workbook, else what the file actually is (for the error)."""
    kind = real_kind(path)
    k = kind.kind if kind is not None else "text"
    if k in ("xls", "et") or (k == "ole" and kind.encrypted):
        return "ole"
    if k in ("xlsx", "xlsm", "zip", "docx", "pptx", "ods", "odt", "xlsb"):
        return "zip"
    if k in ("html", "xml", "mhtml"):
        return "html"
    return "text"


def _read_sheets(path):
    """All sheets of an existing real .xls as (name, rows of cell values), through the xls reader."""
    from .formats.xls import XlsBook
    name = os.path.basename(path)
    try:
        book = XlsBook(path)
    except FormatError as exc:
        if "加密" in str(exc):
            raise ToolError("「%s」设置了密码（已加密），无法写入。请在 Excel/WPS 里去掉密码后另存，或把数据写到一个新文件。"
                            "原文件没有改动" % name)
        raise ToolError("「%s」已损坏或不是有效的 xls 文件（%s）。请把数据写到一个新文件（换个 path）。原文件没有改动" % (
            name, what_broke(exc)))
    try:
        sheets = []
        for info in book.sheets:
            rows = []
            for rownum, values in book.rows(info.name):
                while len(rows) < rownum - 1:
                    rows.append([])
                rows.append(values)
            sheets.append((info.name, rows))
        return sheets
    except FormatError as exc:
        raise ToolError("「%s」已损坏，无法读取（%s）。请把数据写到一个新文件（换个 path）。原文件没有改动" % (
            name, what_broke(exc)))
    finally:
        book.close()


def plan(path, wanted, allow_lossy, info):
    """Before anything is written: what the new .xls will contain. xlwt can only write whole
    files, so the target sheet is written fresh and other sheets of an existing .xls are carried
    over as values (only with allow_lossy: their formulas and formatting cannot be kept).
    Returns the layout [(sheet name, rows of values, or None for the sheet being written)]."""
    existing = []           # [(name, rows)] of the current file, in order
    target = None
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        kind = _real(path)
        if kind != "ole":
            what = {"zip": "xlsx（改了后缀）", "html": "网页（HTML）表格", "text": "文本表格"}[kind]
            if not allow_lossy:
                raise ToolError("「%s」其实是%s，不是真正的 .xls。写入会用新数据整个替换它，原有内容不会保留，所以没有写入，"
                                   "原文件没有改动。请把数据写到一个新文件（换个 path，推荐 .xlsx）；确认要整个替换，"
                                   "再传 allow_lossy_resave=true（原文件会先备份）" % (os.path.basename(path), what))
        else:
            existing = _read_sheets(path)
            target = pick_sheet([n for n, _ in existing], wanted, path)
            others = [n for n, _ in existing if n != target]
            if others and not allow_lossy:
                raise ToolError(
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


def write(tmp, layout, head, rest, counter, info):
    import pydeps_boot      # only an .xls is written with xlwt (the installer: subprocess, locks)
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
        header = bool(head) and looks_like_header(head[0])
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
    elif is_digit_text(v):
        ws.write(r, c, v, styles["text"])
    else:
        ws.write(r, c, v)

