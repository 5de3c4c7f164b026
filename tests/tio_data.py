"""Test data for the table tools: a 1,000-row "messy export" like the ones Chinese offices get from
ERP and bank systems, written by real producers (openpyxl, xlwt, the csv module, an HTML table),
plus the *expected* meaning of every row, kept separately so tests can compute totals
independently of table_io (with Decimal, from the values the generator intended).

Layout of the workbook versions (xlsx / xls / html):
    1  title, merged across A1:J1
    2  export note, merged across A2:J2
    3  "注：金额单位为元" (one cell)
    4  blank
    5-6  two-row header: 序号 日期 部门 经办人 身份证号 (each merged down 5:6),
         ``2024年`` merged over F5:G5 with ``1月`` / ``2月`` below, 金额 订单号 备注 (merged down)
    7..1006  data; 部门 merged down over rows 100-102 (value only in C100)
    1007  合  计 row (sums of F, G, H)
    1008  "制表人：张三"
csv versions have the same title rows but a one-row header with ``2024年-1月`` / ``2024年-2月``
(csv cannot merge) and every 部门 cell written out.
"""
import csv
import datetime
import random
from decimal import Decimal

N_ROWS = 1000
FIRST_DATA_ROW = 7
DEPTS = ["销售部", "财务部", "人事部", "研发部", "行政部"]
PEOPLE = ["张三", "李四", "王五", "赵六", "钱七", "孙八"]
HEADER_TOP = ["序号", "日期", "部门", "经办人", "身份证号", "2024年", None, "金额", "订单号", "备注"]
HEADER_BOTTOM = [None, None, None, None, None, "1月", "2月", None, None, None]
FLAT_HEADER = ["序号", "日期", "部门", "经办人", "身份证号", "2024年-1月", "2024年-2月", "金额", "订单号", "备注"]
MERGED_DEPT_ROWS = (100, 102)      # C100:C102


def _amount(rnd, i):
    """(cell as written, Decimal meaning or None for empty or "bad" for unparsable text)."""
    cents = rnd.randint(-5000, 500000)
    value = Decimal(cents) / 100
    kind = i % 17
    if kind == 0:
        text = "{:,.2f}".format(value)
        return ("￥" + text if value >= 0 else "-￥" + text.lstrip("-")), value
    if kind == 1:
        return "(%s)" % "{:,.2f}".format(abs(value)), -abs(value)
    if kind == 2:
        return "（%s）" % "{:,.2f}".format(abs(value)).replace(",", "，"), -abs(value)
    if kind == 3:
        tenths = Decimal(rnd.randint(1, 99)) / 10
        return "%s万" % tenths, tenths * 10000
    if kind == 4:
        return "-", None
    if kind == 5:
        return None, None
    if kind == 6:
        return "待定", "bad"
    if kind == 7:
        return str(abs(value)).translate(str.maketrans("0123456789.", "０１２３４５６７８９．")), abs(value)
    if kind == 8:
        return "$ %s" % "{:,.2f}".format(abs(value)), abs(value)
    if kind == 9:
        thousands = rnd.randint(1, 9)
        return "%d千" % thousands, Decimal(thousands * 1000)
    if kind == 10:
        return "%s-" % abs(value), -abs(value)
    if kind == 11:
        return int(cents // 100), Decimal(int(cents // 100))
    return float(value), value


def messy_rows(seed=42):
    """The data rows as dicts: what is written and what it means."""
    rnd = random.Random(seed)
    rows = []
    start = datetime.date(2024, 1, 1)
    for i in range(N_ROWS):
        rownum = FIRST_DATA_ROW + i
        day = start + datetime.timedelta(days=rnd.randint(0, 181))
        style = i % 4
        if style == 0:
            date_cell = day
        elif style == 1:
            date_cell = "%d/%d/%d" % (day.year, day.month, day.day)
        elif style == 2:
            date_cell = "%d年%d月%d日" % (day.year, day.month, day.day)
        else:
            date_cell = day.isoformat()
        dept = rnd.choice(DEPTS)
        dept_cell = dept + (" " if i % 13 == 0 else "")          # trailing space: same group
        amount_cell, amount = _amount(rnd, i)
        m1 = round(rnd.uniform(0, 3000), 2)
        m2 = rnd.choice([round(rnd.uniform(0, 3000), 2), 0.1, 0.2, 0.3])
        order = "%020d" % rnd.randint(10 ** 18, 10 ** 19) if i % 5 else "007%03d" % i
        rows.append({
            "row": rownum, "seq": i + 1, "date": day, "date_cell": date_cell, "dept": dept, "dept_cell": dept_cell,
            "person": rnd.choice(PEOPLE), "id": "110101%08d%04d" % (19900101 + i % 28, i % 10000),
            "m1": m1, "m2": m2, "amount_cell": amount_cell, "amount": amount, "order": order,
            "note": "加急" if i % 50 == 0 else None,
        })
    # 部门 merged down over three rows: the cells below the first are empty in the file
    a, b = MERGED_DEPT_ROWS
    for r in rows:
        if a <= r["row"] <= b:
            r["dept"] = rows[a - FIRST_DATA_ROW]["dept"]
            r["dept_cell"] = rows[a - FIRST_DATA_ROW]["dept_cell"]
    return rows


def totals(rows):
    """Independent totals of the month and amount columns (Decimal, from the generator's intent)."""
    t1 = sum((Decimal(repr(r["m1"])) for r in rows), Decimal(0))
    t2 = sum((Decimal(repr(r["m2"])) for r in rows), Decimal(0))
    th = sum((r["amount"] for r in rows if isinstance(r["amount"], Decimal)), Decimal(0))
    return t1, t2, th


def grid(rows, flat=False, merged=True):
    """The whole sheet as a list of row lists (row 1 first) plus its merged ranges."""
    t1, t2, th = totals(rows)
    out = [["某某科技有限公司 2024 年上半年费用明细"], ["导出时间：2024-07-01 09:30  导出人：财务系统"],
           ["注：金额单位为元"], []]
    if flat:
        out.append(list(FLAT_HEADER))
    else:
        out.append(list(HEADER_TOP))
        out.append(list(HEADER_BOTTOM))
    a, b = MERGED_DEPT_ROWS
    for r in rows:
        dept = r["dept_cell"]
        if merged and not flat and a < r["row"] <= b:
            dept = None
        out.append([r["seq"], r["date_cell"], dept, r["person"], r["id"], r["m1"], r["m2"], r["amount_cell"],
                    r["order"], r["note"]])
    out.append([None, "合  计", None, None, None, float(t1), float(t2), float(th), None, None])
    out.append(["制表人：张三"])
    merges = []
    if not flat:
        merges = [(1, 1, 1, 10), (2, 1, 2, 10), (5, 6, 5, 7)]
        merges += [(5, c, 6, c) for c in (1, 2, 3, 4, 5, 8, 9, 10)]
        if merged and len(rows) > b - FIRST_DATA_ROW:
            merges.append((a, 3, b, 3))
    else:
        merges = [(1, 1, 1, 10), (2, 1, 2, 10)]
    return out, merges


def write_xlsx(path, rows):
    import openpyxl
    from openpyxl.utils import get_column_letter
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "费用明细"
    data, merges = grid(rows)
    for line in data:
        ws.append(line)
    for r in range(FIRST_DATA_ROW, FIRST_DATA_ROW + len(rows)):
        cell = ws.cell(r, 2)
        if isinstance(cell.value, datetime.date):
            cell.number_format = "yyyy-mm-dd"
    for (r1, c1, r2, c2) in merges:
        ws.merge_cells("%s%d:%s%d" % (get_column_letter(c1), r1, get_column_letter(c2), r2))
    wb.save(path)


def write_xls(path, rows):
    import xlwt
    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("费用明细")
    date_style = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    data, merges = grid(rows)
    covered = set()
    for (r1, c1, r2, c2) in merges:
        value = data[r1 - 1][c1 - 1] if c1 - 1 < len(data[r1 - 1]) else None
        ws.write_merge(r1 - 1, r2 - 1, c1 - 1, c2 - 1, value if value is not None else "")
        covered.update((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
    for ri, line in enumerate(data):
        for ci, value in enumerate(line):
            if value is None or (ri + 1, ci + 1) in covered:
                continue
            if isinstance(value, datetime.date):
                ws.write(ri, ci, value, date_style)
            else:
                ws.write(ri, ci, value)
    wb.save(path)


def _csv_text(value):
    if value is None:
        return ""
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_csv(path, rows, encoding):
    data, _merges = grid(rows, flat=True)
    with open(path, "w", encoding=encoding, newline="") as fh:
        w = csv.writer(fh)
        for line in data:
            w.writerow([_csv_text(v) for v in line])


def write_html_xls(path, rows):
    """The "fake .xls" many systems export: an HTML table in GBK with colspan/rowspan."""
    data, merges = grid(rows)
    spans = {(r1, c1): (r2 - r1 + 1, c2 - c1 + 1) for (r1, c1, r2, c2) in merges}
    covered = set()
    for (r1, c1, r2, c2) in merges:
        covered.update((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1) if (r, c) != (r1, c1))
    parts = ['<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk"></head><body><table border="1">']
    for ri, line in enumerate(data):
        parts.append("<tr>")
        for ci in range(10):
            if (ri + 1, ci + 1) in covered:
                continue
            value = line[ci] if ci < len(line) else None
            attrs = ""
            if (ri + 1, ci + 1) in spans:
                rs, cs = spans[(ri + 1, ci + 1)]
                attrs = (' rowspan="%d"' % rs if rs > 1 else "") + (' colspan="%d"' % cs if cs > 1 else "")
            parts.append("<td%s>%s</td>" % (attrs, _csv_text(value)))
        parts.append("</tr>")
    parts.append("</table></body></html>")
    with open(path, "w", encoding="gbk", errors="strict") as fh:
        fh.write("\n".join(parts))


MESSY_FILES = {"xlsx": ("费用明细.xlsx", write_xlsx), "xls": ("费用明细.xls", write_xls),
               "html": ("费用明细_网页.xls", write_html_xls),
               "gbk": ("费用明细_gbk.csv", lambda path, rows: write_csv(path, rows, "gbk")),
               "bom": ("费用明细_bom.csv", lambda path, rows: write_csv(path, rows, "utf-8-sig"))}


def write_messy(folder, rows, kinds=("xlsx", "xls", "html", "gbk")):
    """The messy ledger ``rows`` saved by the real producers in each of ``kinds`` (openpyxl xlsx,
    xlwt xls, a system's HTML "xls", GBK / BOM csv); returns {kind: path}. The table tool tests
    all start from these files."""
    import os
    out = {}
    for kind in kinds:
        name, write = MESSY_FILES[kind]
        out[kind] = os.path.join(str(folder), name)
        write(out[kind], rows)
    return out
