"""Benchmark of the new readers (OpenDocument .ods, SpreadsheetML 2003) on the benchmark ledger.

Why: a LibreOffice/WPS user's ledger or a bank's year of statements can be 100k rows; the host
kills a tool at 60 s. For 10k and 100k rows x 10 columns (bench_readers' generator) this writes
``ledger_<n>.ods`` (content.xml laid out as LibreOffice writes it: typed cells, a style per
column, the trailing 1,048,576-row empty repeat) and ``ledger_<n>_2003.xls`` (SpreadsheetML in
GBK, as a bank exports it), then times, each in a fresh process:

- ``ours``              table_formats.open_book + rows(), every cell;
- ``calamine`` / ``pandas-calamine``  python-calamine and pandas.read_excel(engine="calamine")
  (ods only: neither reads SpreadsheetML; pandas has no SpreadsheetML reader at all);
- ``calc_table``        the real tool through the host (whole process: start-up, read, header
  detection, group-by 区域 sum of 金额), the answer a user waits for;
and the same ``ours`` / ``calc_table`` on the xlsx of the same rows for reference.

Usage: ``python3 bench/bench_new_formats.py [--sizes 10000,100000]``. Files go to bench/data/.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time
import zipfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, ROOT, os.path.join(ROOT, "tools", "pydeps")]

import bench_readers as br  # noqa: E402

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"')


def _ods_cell(v, style=""):
    if v is None:
        return "<table:table-cell/>"
    if isinstance(v, datetime.date):
        return ('<table:table-cell table:style-name="ce2" office:value-type="date" office:date-value="%s" '
                'calcext:value-type="date"><text:p>%s</text:p></table:table-cell>' % (v.isoformat(), v.isoformat()))
    if isinstance(v, (int, float)):
        return ('<table:table-cell office:value-type="float" office:value="%r" calcext:value-type="float">'
                '<text:p>%r</text:p></table:table-cell>' % (v, v))
    t = escape(v)
    return ('<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>%s</text:p>'
            '</table:table-cell>' % t)


def write_ods(path, n):
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("META-INF/manifest.xml", '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:'
                    'xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/'
                    'vnd.oasis.opendocument.spreadsheet"/></manifest:manifest>')
        with zf.open("content.xml", "w", force_zip64=True) as fh:
            fh.write(('<?xml version="1.0" encoding="UTF-8"?><office:document-content %s office:version="1.3">'
                      '<office:body><office:spreadsheet><table:table table:name="流水">'
                      '<table:table-column table:number-columns-repeated="16384"/>' % NS).encode("utf-8"))
            buf = ["<table:table-row>" + "".join(_ods_cell(h) for h in br.HEADER) +
                   '<table:table-cell table:number-columns-repeated="16374"/></table:table-row>']
            for row in br.ledger_rows(n):
                cells = "".join(_ods_cell(v) for v in row)
                buf.append("<table:table-row>%s<table:table-cell table:number-columns-repeated=\"16374\"/>"
                           "</table:table-row>" % cells)
                if len(buf) >= 2000:
                    fh.write("".join(buf).encode("utf-8"))
                    buf = []
            buf.append('<table:table-row table:number-rows-repeated="%d"><table:table-cell '
                       'table:number-columns-repeated="16384"/></table:table-row>' % (1048576 - n - 1))
            buf.append("</table:table></office:spreadsheet></office:body></office:document-content>")
            fh.write("".join(buf).encode("utf-8"))
    os.replace(tmp, path)


def _xml_cell(v):
    if v is None:
        return ""
    if isinstance(v, datetime.date):
        return '<Cell ss:StyleID="d"><Data ss:Type="DateTime">%sT00:00:00.000</Data></Cell>' % v.isoformat()
    if isinstance(v, (int, float)):
        return '<Cell><Data ss:Type="Number">%r</Data></Cell>' % v
    return '<Cell><Data ss:Type="String">%s</Data></Cell>' % escape(v)


def write_2003(path, n):
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(('<?xml version="1.0" encoding="GBK"?>\r\n<?mso-application progid="Excel.Sheet"?>\r\n'
                  '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
                  'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">'
                  '<Styles><Style ss:ID="d"><NumberFormat ss:Format="Short Date"/></Style></Styles>'
                  '<Worksheet ss:Name="流水"><Table>\r\n').encode("gbk"))
        buf = ["<Row>" + "".join(_xml_cell(h) for h in br.HEADER) + "</Row>\r\n"]
        for row in br.ledger_rows(n):
            # an empty 备注 is skipped, so the next cell would need ss:Index; 备注 is last, so none
            buf.append("<Row>" + "".join(_xml_cell(v) for v in row) + "</Row>\r\n")
            if len(buf) >= 2000:
                fh.write("".join(buf).encode("gbk"))
                buf = []
        buf.append("</Table></Worksheet></Workbook>\r\n")
        fh.write("".join(buf).encode("gbk"))
    os.replace(tmp, path)


def data_file(n, kind):
    os.makedirs(br.DATA, exist_ok=True)
    if kind == "xlsx":
        return br.data_file(n, "sst")
    path = os.path.join(br.DATA, "ledger_%d%s" % (n, ".ods" if kind == "ods" else "_2003.xls"))
    if not os.path.exists(path):
        t0 = time.time()
        (write_ods if kind == "ods" else write_2003)(path, n)
        print("  generated %s (%.1f MB) in %.1f s" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6,
                                                      time.time() - t0), flush=True)
    return path


def tool_run(path, timeout=120):
    """calc_table through the real host contract, whole process (wall seconds, peak RSS)."""
    args = {"path": path, "group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum", "as": "s"}]}
    code = (r'''
import json, resource, subprocess, sys, time
t = time.time()
p = subprocess.run([sys.executable, "-X", "utf8", "-u", "calc_table.py"], input=%r.encode("utf-8"),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=%r,
                   env={"PATH": "/usr/bin:/bin", "HOME": "/tmp/xla-bench-home", "PYTHONPATH": "pydeps"})
wall = time.time() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
out = json.loads(p.stdout.decode("utf-8"))
print(json.dumps({"wall": wall, "rss": ru.ru_maxrss * 1024, "ok": out.get("ok"),
                  "total": round(sum(g.get("s") or 0 for g in out.get("groups", [])), 2),
                  "error": out.get("error")}))
''' % (json.dumps(args, ensure_ascii=False), os.path.join(ROOT, "tools")))
    try:
        proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    try:
        return json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": proc.stderr.decode("utf-8", "replace")[-200:]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--kinds", default="xlsx,ods,xml", help="xlsx, ods, xml (SpreadsheetML 2003)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median wall is shown with the load")
    args = ap.parse_args(argv)
    import bench_child
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    have_calamine = br.available("calamine")
    have_pandas = br.available("pandas-calamine")
    print("%-8s %-5s %-16s %-40s %8s %10s %14s" % ("rows", "file", "reader", "wall s: median (min-max, runs, load)",
                                                   "cpu s", "peak MB", "金额合计"))
    for n in sizes:
        for kind in [k for k in args.kinds.split(",") if k]:
            path = data_file(n, kind)
            names = ["ours"]
            if kind in ("ods", "xlsx"):
                names += (["calamine"] if have_calamine else []) + (["pandas-calamine"] if have_pandas else [])
            walls = {}
            for name in names:
                r = bench_child.repeated(lambda: br.measure(name, path, 300), args.repeat)
                if "error" in r:
                    print("%-8d %-5s %-16s %s" % (n, kind, name, r["error"]), flush=True)
                    continue
                walls[name] = r["wall"]
                print("%-8d %-5s %-16s %-40s %8.2f %10.0f %14.2f" % (n, kind, name, bench_child.spread(r), r["cpu"],
                                                                     r["rss"] / 1e6, r["total"]), flush=True)
            if "ours" in walls and "calamine" in walls:
                print("%-8d %-5s ours ÷ calamine: %.2f" % (n, kind, walls["ours"] / walls["calamine"]), flush=True)
            r = tool_run(path)
            if r.get("error") or not r.get("ok"):
                print("%-8d %-5s %-16s %s" % (n, kind, "calc_table", r.get("error")), flush=True)
            else:
                print("%-8d %-5s %-16s %8.2f %8s %10.0f %14.2f" % (n, kind, "calc_table", r["wall"], "-",
                                                                   r["rss"] / 1e6, r["total"]), flush=True)


if __name__ == "__main__":
    main()
