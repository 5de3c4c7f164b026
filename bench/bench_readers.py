"""Benchmark of the spreadsheet readers: how long and how much memory reading every cell takes.

Why: the host kills a tool at 60 s, and a user's ledger may have a million rows (Excel's limit is
1,048,576). This script makes ledgers of 10k / 100k / 1M rows x 10 columns and times, each in a
fresh Python process (so start-up and imports count, as they do for a tool):

- ``ours``          table_formats.open_book + rows(), every cell (the fast xlsx parser);
- ``ours-openpyxl`` the same through the openpyxl fallback (XLA_XLSX_READER=openpyxl);
- ``openpyxl``      openpyxl read-only, values_only;
- ``calamine``      python-calamine iter_rows (if importable);
- ``pandas-openpyxl`` / ``pandas-calamine`` pandas.read_excel with those engines (if importable);
- for csv: ``ours`` and ``pandas-csv`` (dtype=str, as ours keeps text).
Each child sums the 金额 column so nothing can be skipped, and reports its cpu time and peak RSS
*including its own children* (our xlsx reader forks a worker for big sheets: ``RUSAGE_CHILDREN``
adds the reaped worker's cpu, and peak RSS is the sum of the process's and the worker's peaks,
an upper bound since forked pages are shared); the parent measures wall time.

Files (``bench/data/``, gitignored):
- ``ledger_<n>_sst.xlsx``: Excel's layout — strings in sharedStrings.xml, dates as styled
  numbers; written directly with zipfile (openpyxl would take minutes at 1M rows);
- ``ledger_<n>_inline.xlsx``: the same data with inline strings (what openpyxl's write-only mode
  and many exporters produce);
- ``ledger_<n>.csv``: UTF-8 with BOM.

Usage: ``python3 bench/bench_readers.py [--sizes 10000,100000,1000000] [--quick] [--all]``.
``--quick`` = 10k and 100k only; the slow readers skip 1M rows unless ``--all``.
"""
import argparse
import csv
import datetime
import json
import os
import random
import subprocess
import sys
import time
import zipfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")

HEADER = ["日期", "区域", "门店", "品类", "商品", "数量", "单价", "金额", "渠道", "备注"]
REGIONS = ["华东", "华南", "华北", "西南", "西北", "东北", "华中"]
STORES = ["%s%d号店" % (c, i) for c in ("上海", "杭州", "广州", "深圳", "北京", "成都", "西安", "沈阳", "武汉")
          for i in range(1, 6)]
CATS = ["饮料", "零食", "日用", "生鲜", "粮油", "酒水", "冷冻", "烘焙"]
GOODS = ["%s-%03d" % (c, i) for c in CATS for i in range(1, 41)]
CHANNELS = ["门店", "小程序", "美团", "饿了么", "京东到家"]
NOTES = ["", "", "", "", "", "", "促销", "会员价", "退货重开", "赠品", "临期折扣", "团购"]


def ledger_rows(n, seed=7):
    """n data rows of the benchmark ledger (deterministic)."""
    rnd = random.Random(seed)
    start = datetime.date(2023, 1, 1)
    for i in range(n):
        qty = rnd.randint(1, 50)
        price = round(rnd.uniform(1, 300), 2)
        note = rnd.choice(NOTES)
        if note == "" and rnd.random() < 0.1:
            note = "订单%012d" % rnd.randint(0, 10 ** 12)    # some unique text, like real notes
        yield [start + datetime.timedelta(days=i % 730), rnd.choice(REGIONS), rnd.choice(STORES),
               rnd.choice(CATS), rnd.choice(GOODS), qty, price, round(qty * price, 2),
               rnd.choice(CHANNELS), note or None]


def _col(i):
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


COLS = [_col(i) for i in range(10)]

CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                 '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                 '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                 '<Default Extension="xml" ContentType="application/xml"/>'
                 '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                 '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
                 '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
                 '%s</Types>')
SST_TYPE = ('<Override PartName="/xl/sharedStrings.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')
ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
             '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
             '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
             '</Relationships>')
WORKBOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            '<workbookPr/><sheets><sheet name="流水" sheetId="1" r:id="rId1"/></sheets></workbook>')
WB_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
           '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
           '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
           '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
           '%s</Relationships>')
SST_REL = ('<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
           'sharedStrings" Target="sharedStrings.xml"/>')
# style 0: General; style 1: yyyy-mm-dd (custom 164); style 2: 0.00 (builtin 2)
STYLES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
          '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
          '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/></numFmts>'
          '<fonts count="1"><font><sz val="11"/><name val="等线"/></font></fonts>'
          '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
          '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
          '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
          '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
          '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
          '<xf numFmtId="2" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
          '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
          '</styleSheet>')
SHEET_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
              '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
              'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
              '<dimension ref="A1:J%d"/><sheetViews><sheetView workbookViewId="0"/></sheetViews>'
              '<sheetFormatPr defaultRowHeight="15"/><sheetData>')

EXCEL_EPOCH = datetime.date(1899, 12, 30)


def write_xlsx(path, n, shared=True):
    """The benchmark ledger as an xlsx, written directly (shared or inline strings)."""
    sst, sst_index = [], {}

    def s_cell(ref, text):
        if shared:
            idx = sst_index.get(text)
            if idx is None:
                idx = sst_index[text] = len(sst)
                sst.append(text)
            return '<c r="%s" t="s"><v>%d</v></c>' % (ref, idx)
        return '<c r="%s" t="inlineStr"><is><t>%s</t></is></c>' % (ref, escape(text))

    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as out:
            buf = [SHEET_HEAD % (n + 1), '<row r="1">']
            buf.extend(s_cell("%s1" % COLS[i], h) for i, h in enumerate(HEADER))
            buf.append("</row>")
            for i, row in enumerate(ledger_rows(n)):
                r = i + 2
                cells = ['<row r="%d">' % r,
                         '<c r="A%d" s="1"><v>%d</v></c>' % (r, (row[0] - EXCEL_EPOCH).days)]
                for ci in (1, 2, 3, 4):
                    cells.append(s_cell("%s%d" % (COLS[ci], r), row[ci]))
                cells.append('<c r="F%d"><v>%d</v></c>' % (r, row[5]))
                cells.append('<c r="G%d" s="2"><v>%r</v></c>' % (r, row[6]))
                cells.append('<c r="H%d" s="2"><v>%r</v></c>' % (r, row[7]))
                cells.append(s_cell("I%d" % r, row[8]))
                if row[9]:
                    cells.append(s_cell("J%d" % r, row[9]))
                cells.append("</row>")
                buf.append("".join(cells))
                if len(buf) > 2000:
                    out.write("".join(buf).encode("utf-8"))
                    buf = []
            buf.append("</sheetData><pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" "
                       "header=\"0.3\" footer=\"0.3\"/></worksheet>")
            out.write("".join(buf).encode("utf-8"))
        zf.writestr("[Content_Types].xml", CONTENT_TYPES % (SST_TYPE if shared else ""))
        zf.writestr("_rels/.rels", ROOT_RELS)
        zf.writestr("xl/workbook.xml", WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", WB_RELS % (SST_REL if shared else ""))
        zf.writestr("xl/styles.xml", STYLES)
        if shared:
            with zf.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
                out.write(('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                           '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
                           'count="%d" uniqueCount="%d">' % (len(sst), len(sst))).encode("utf-8"))
                for k in range(0, len(sst), 5000):
                    out.write("".join("<si><t>%s</t></si>" % escape(t) for t in sst[k:k + 5000]).encode("utf-8"))
                out.write(b"</sst>")
    os.replace(tmp, path)


def write_csv(path, n):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        for row in ledger_rows(n):
            w.writerow([row[0].isoformat()] + ["" if v is None else v for v in row[1:]])
    os.replace(tmp, path)


def data_file(n, layout):
    os.makedirs(DATA, exist_ok=True)
    ext = "csv" if layout == "csv" else "xlsx"
    path = os.path.join(DATA, "ledger_%d%s.%s" % (n, "" if layout == "csv" else "_" + layout, ext))
    if not os.path.exists(path):
        t0 = time.time()
        if layout == "csv":
            write_csv(path, n)
        else:
            write_xlsx(path, n, shared=(layout == "sst"))
        print("  generated %s (%.1f MB) in %.1f s" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6,
                                                      time.time() - t0), flush=True)
    return path


# ---------------------------------------------------------------------------------------------
# The measured children: each reads every cell and sums column H (金额).

CHILD_PRELUDE = r'''
import json, os, resource, sys, time
sys.path.insert(0, %(root)r)
path = %(path)r
rows = cells = 0
total = 0.0
'''

CHILD_EPILOGUE = r'''
ru = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)     # the xlsx reader's forked worker, reaped
unit = 1 if sys.platform == "darwin" else 1024
print(json.dumps({"rows": rows, "cells": cells, "total": round(total, 2),
                  "cpu": ru.ru_utime + ru.ru_stime + kids.ru_utime + kids.ru_stime,
                  "cpu_main": ru.ru_utime + ru.ru_stime, "cpu_kids": kids.ru_utime + kids.ru_stime,
                  "rss": (ru.ru_maxrss + kids.ru_maxrss) * unit, "rss_main": ru.ru_maxrss * unit,
                  "rss_kids": kids.ru_maxrss * unit}))
'''

READERS = {
    "ours": r'''
from xlakit.tables import formats as table_formats
with table_formats.open_book(path) as book:
    for _n, values in book.rows():
        rows += 1
        cells += len(values)
        v = values[7] if len(values) > 7 else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            total += v
        elif isinstance(v, str):
            try:
                total += float(v)
            except ValueError:
                pass
''',
    "openpyxl": r'''
import openpyxl
wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
for values in wb.worksheets[0].iter_rows(values_only=True):
    rows += 1
    cells += sum(1 for v in values if v is not None)
    v = values[7] if len(values) > 7 else None
    if isinstance(v, (int, float)):
        total += v
''',
    "calamine": r'''
from python_calamine import CalamineWorkbook
wb = CalamineWorkbook.from_path(path)
for values in wb.get_sheet_by_index(0).iter_rows():
    rows += 1
    cells += sum(1 for v in values if v != "")
    v = values[7] if len(values) > 7 else None
    if isinstance(v, (int, float)):
        total += v
''',
    "pandas-openpyxl": r'''
import pandas
df = pandas.read_excel(path, engine="openpyxl", header=None)
rows = len(df); cells = int(df.count().sum())
total = float(pandas.to_numeric(df[7], errors="coerce").sum())
''',
    "pandas-calamine": r'''
import pandas
df = pandas.read_excel(path, engine="calamine", header=None)
rows = len(df); cells = int(df.count().sum())
total = float(pandas.to_numeric(df[7], errors="coerce").sum())
''',
    "pandas-csv": r'''
import pandas
df = pandas.read_csv(path, dtype=str, header=None, encoding="utf-8-sig")
rows = len(df); cells = int(df.count().sum())
total = float(pandas.to_numeric(df[7], errors="coerce").sum())
''',
}
READERS["ours-openpyxl"] = READERS["ours"]
READERS["ours-1proc"] = READERS["ours"]     # the fast parser kept on one process (XLA_XLSX_WORKERS=1)

SLOW = {"openpyxl", "ours-openpyxl", "pandas-openpyxl"}


def available(name):
    mod = {"calamine": "python_calamine", "pandas-calamine": "python_calamine", "pandas-openpyxl": "pandas",
           "pandas-csv": "pandas", "openpyxl": "openpyxl", "ours-openpyxl": "openpyxl"}.get(name)
    if not mod:
        return True
    code = "import %s" % mod
    if name.startswith("pandas"):
        code += "; import pandas"
    return subprocess.call([_python(name), "-c", code], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=_env(name)) == 0


PEERS = {"calamine", "pandas-calamine", "pandas-openpyxl", "pandas-csv", "openpyxl"}


def _python(name):
    """Peers run on the bench's own venv (``bench_child.PEER_PYTHON``), our readers on this Python."""
    if name in PEERS:
        import bench_child
        return bench_child.PEER_PYTHON
    return sys.executable


def _env(name):
    env = dict(os.environ)
    if name in PEERS:
        env.pop("PYTHONPATH", None)            # the venv's own numpy and pandas, not the tools' pydeps
        return env
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "tools", "pydeps")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def measure(name, path, timeout):
    code = (CHILD_PRELUDE % {"root": ROOT, "path": path}) + READERS[name] + CHILD_EPILOGUE
    env = _env(name)
    if name == "ours-openpyxl":
        env["XLA_XLSX_READER"] = "openpyxl"
    else:
        env.pop("XLA_XLSX_READER", None)
    if name == "ours-1proc":
        env["XLA_XLSX_WORKERS"] = "1"
    else:
        env.pop("XLA_XLSX_WORKERS", None)
    t0 = time.time()
    try:
        proc = subprocess.run([_python(name), "-X", "utf8", "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timeout > %ds" % timeout}
    wall = time.time() - t0
    if proc.returncode != 0:
        return {"error": proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]}
    out = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
    out["wall"] = wall
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000", help="row counts, comma separated")
    ap.add_argument("--quick", action="store_true", help="10k and 100k only")
    ap.add_argument("--all", action="store_true", help="also run the slow readers at 1M rows")
    ap.add_argument("--readers", default="", help="only these readers (comma separated)")
    ap.add_argument("--layouts", default="sst,inline,csv", help="sst,inline,csv")
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args(argv)
    sizes = [10000, 100000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    wanted = [r for r in args.readers.split(",") if r] or None
    layouts = [x for x in args.layouts.split(",") if x]
    names = {}
    for name in READERS:
        if wanted and name not in wanted:
            continue
        names[name] = available(name)

    def skip(n, layout, name):
        if not names[name]:
            return True
        if layout == "csv" and name not in ("ours", "ours-1proc", "pandas-csv"):
            return True
        if layout != "csv" and name == "pandas-csv":
            return True
        return n >= 1000000 and name in SLOW and not args.all

    return run_matrix(sizes, layouts, list(names), skip, lambda name, path: measure(name, path, args.timeout),
                      _line, _table)


def run_matrix(sizes, layouts, names, skip, measure, line, table):
    """Measure every (rows, layout, name) that ``skip`` lets through, each in a fresh process; print
    a line per result as it arrives, then a markdown table. bench_calc.py uses it too."""
    print("python %s, %d cpus" % (sys.version.split()[0], os.cpu_count() or 0), flush=True)
    results = []
    for n in sizes:
        for layout in layouts:
            path = data_file(n, layout)
            for name in names:
                if skip(n, layout, name):
                    continue
                row = (n, layout, name, measure(name, path))
                results.append(row)
                print(line(row), flush=True)
    print()
    print(table(results))
    return 0


def _line(row):
    n, layout, name, r = row
    if "error" in r:
        return "%9d %-7s %-16s ERROR %s" % (n, layout, name, r["error"])
    return "%9d %-7s %-16s %7.2f s wall %7.2f s cpu %8.0f MiB %10.0f rows/s  (sum 金额 %.2f, %d cells)" % (
        n, layout, name, r["wall"], r["cpu"], r["rss"] / 2.0 ** 20, r["rows"] / r["wall"], r["total"], r["cells"])


def _table(results):
    """Markdown, with each reader's wall and cpu time next to calamine's from the same run."""
    peer = {(n, layout): r for n, layout, name, r in results if name == "calamine" and "error" not in r}
    lines = ["| rows | file | reader | wall s | cpu s | cpu s main / worker | peak MiB (main + worker) | rows/s "
             "| wall ÷ calamine | cpu ÷ calamine | busiest process's cpu ÷ calamine's cpu |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, layout, name, r in results:
        if "error" in r:
            lines.append("| %d | %s | %s | %s | | | | | | | |" % (n, layout, name, r["error"]))
            continue
        c = peer.get((n, layout))
        main_cpu, kids_cpu = r.get("cpu_main", r["cpu"]), r.get("cpu_kids", 0.0)
        # on a loaded machine wall time says little; the busiest process's cpu is what the wall
        # time would be on two idle cores (the two processes run side by side)
        ratio = ("%.2f" % (r["wall"] / c["wall"]), "%.2f" % (r["cpu"] / c["cpu"]),
                 "%.2f" % (max(main_cpu, kids_cpu) / c["cpu"])) if c else ("", "", "")
        mib = r["rss"] / 2.0 ** 20
        if r.get("rss_kids"):
            mib = "%.0f (%.0f + %.0f)" % (mib, r["rss_main"] / 2.0 ** 20, r["rss_kids"] / 2.0 ** 20)
        else:
            mib = "%.0f" % mib
        lines.append("| %d | %s | %s | %.2f | %.2f | %.2f / %.2f | %s | %.0f | %s | %s | %s |" % (
            n, layout, name, r["wall"], r["cpu"], main_cpu, kids_cpu, mib, r["rows"] / r["wall"],
            ratio[0], ratio[1], ratio[2]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
