"""Benchmark of appending rows to an xlsx ledger: whole-process seconds and peak memory.

Why: "add these rows to my ledger" is the commonest write, a yearly ledger is a million rows, and
it must finish inside the host's 60 s (issue 19: a 95,000 x 8 append used to take the openpyxl
path and be killed). This measures exactly what the assistant runs (``write_spreadsheet.py`` in
``tools/``, mode=append, the rows on stdin, the host's environment), which edits the package
directly, next to what a user would otherwise write: openpyxl ``load_workbook`` + ``ws.append`` +
``save``. Each run copies the ledger first (the original in ``bench/data/`` stays as generated),
runs in a fresh process tree, and a wrapper process reports the child's wall and cpu time and peak
RSS. After each run the result is checked (not timed): the sheet's last row number and the last
appended row are read back from the package with the standard library.

Ledgers (10 columns) come from ``bench_readers.py`` (same generator and ``bench/data/`` files,
gitignored): shared strings as Excel writes them (``sst``), inline strings (``inline``), and
``totals``: the sst ledger with a 合计 row and a 制表人 footer line under it, so the append goes
above the totals (rows moved down, totals recomputed).

Usage: ``python3 bench/bench_append.py [--quick] [--sizes 20000,95000,100000,1000000]
[--counts 1,100] [--layouts sst,inline,totals] [--tools ours,openpyxl] [--all]``.
``--quick``: 20k and 95k rows, openpyxl only for the 1-row append (its time is load + save, the
row count hardly matters). openpyxl is skipped at 1M rows unless ``--all`` (minutes, several GB);
its runs are capped by ``--timeout`` (default 600 s).
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_readers  # noqa: E402  (the ledger generator and data folder are shared)
import bench_child  # noqa: E402  (the measuring wrapper and the host environment)


def new_rows(count):
    rows = []
    for i in range(count):
        rows.append(["2024-12-%02d" % (i % 28 + 1), "华东", "上海1号店", "饮料", "饮料-%03d" % (i % 40 + 1),
                     i + 1, 2.5, round((i + 1) * 2.5, 2), "门店", "补录%d" % i])
    return rows


OPENPYXL = r'''
import datetime, json, sys
import openpyxl
path, rows = sys.argv[1], json.loads(sys.argv[2])
wb = openpyxl.load_workbook(path)
ws = wb.active
for row in rows:
    row[0] = datetime.datetime.strptime(row[0], "%Y-%m-%d")
    ws.append(row)
wb.save(path)
print(json.dumps({"ok": True}))
'''


def totals_file(n):
    """The sst ledger with a totals row (plain sums of 数量 and 金额) and a footer line."""
    path = os.path.join(bench_readers.DATA, "ledger_%d_totals.xlsx" % n)
    if os.path.exists(path):
        return path
    source = bench_readers.data_file(n, "sst")
    qty = amount = 0
    for row in bench_readers.ledger_rows(n):
        qty += row[5]
        amount += row[7]
    sys.path.insert(0, ROOT)
    from xlakit.tables import write as table_write
    home = tempfile.mkdtemp(prefix="bench_append_home_")
    tmp = os.path.join(home, "ledger.xlsx")      # the writer refuses to write inside the toolbox
    shutil.copy(source, tmp)
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = home
    try:
        table_write.write_rows(tmp, [["合计", None, None, None, None, qty, None, round(amount, 2)],
                                     ["制表人：张三"]], mode="append", position="end")
        shutil.move(tmp, path)
    finally:
        if old_home is not None:
            os.environ["HOME"] = old_home
        shutil.rmtree(home, ignore_errors=True)
    return path


def ledger(n, layout):
    return totals_file(n) if layout == "totals" else bench_readers.data_file(n, layout)


def check(path):
    """(last row number, texts of the last rows) read from the package: a million-row sheet is
    too slow to read back through openpyxl for every run."""
    with zipfile.ZipFile(path) as zf:
        data = zf.read("xl/worksheets/sheet1.xml")
    rows = re.findall(rb'<(?:\w+:)?row r="(\d+)"', data[-200000:])
    tail = data[-20000:].decode("utf-8", "replace")
    return {"rows": int(rows[-1]) if rows else 0, "new_row_found": "补录" in tail or "补录" in _sst_tail(path)}


def _sst_tail(path):
    with zipfile.ZipFile(path) as zf:
        if "xl/sharedStrings.xml" not in zf.namelist():
            return ""
        data = zf.read("xl/sharedStrings.xml")
    return data[-20000:].decode("utf-8", "replace")


def measure(tool, path, home, timeout, count):
    rows = new_rows(count)
    if tool == "ours":
        argv = [sys.executable, "-X", "utf8", "-u", "write_spreadsheet.py"]
        cwd = os.path.join(ROOT, "tools")
        stdin = json.dumps({"path": path, "mode": "append", "rows": rows}, ensure_ascii=False)
    else:
        argv = [sys.executable, "-X", "utf8", "-c", OPENPYXL, path, json.dumps(rows, ensure_ascii=False)]
        cwd, stdin = ROOT, ""
    res = bench_child.run_child(argv, cwd, stdin, bench_child.host_env(home), timeout)
    if "error" in res:
        return res
    if res["code"] != 0:
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:]}
    answer = json.loads(res["out"].strip().splitlines()[-1])
    if not answer.get("ok"):
        return {"error": answer.get("error")}
    res["action"] = answer.get("action", "")
    res["check"] = check(path)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20k and 95k rows; openpyxl only for 1 row")
    ap.add_argument("--sizes", default="20000,95000,100000,1000000")
    ap.add_argument("--counts", default="1,100")
    ap.add_argument("--layouts", default="sst,inline,totals")
    ap.add_argument("--tools", default="ours,openpyxl")
    ap.add_argument("--all", action="store_true", help="openpyxl at 1M rows too")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in ("20000,95000" if args.quick else args.sizes).split(",") if s]
    counts = [int(c) for c in args.counts.split(",") if c]
    results = []
    work = tempfile.mkdtemp(prefix="bench_append_")
    try:
        for n in sizes:
            for layout in args.layouts.split(","):
                source = ledger(n, layout)
                for count in counts:
                    for tool in args.tools.split(","):
                        if tool == "openpyxl" and n > 100000 and not args.all:
                            results.append((n, layout, count, tool, {"error": "skipped (minutes, GBs; --all)"}))
                            continue
                        if tool == "openpyxl" and args.quick and count != counts[0]:
                            continue
                        path = os.path.join(work, "ledger.xlsx")
                        shutil.copy(source, path)
                        home = os.path.join(work, "home")
                        shutil.rmtree(home, ignore_errors=True)
                        os.makedirs(home)
                        res = measure(tool, path, home, args.timeout, count)
                        results.append((n, layout, count, tool, res))
                        _line(n, layout, count, tool, res)
                        os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("| rows | layout | appended | tool | wall s | cpu s | peak MB | last row after | new row read back |")
    print("|---:|---|---:|---|---:|---:|---:|---:|---|")
    for n, layout, count, tool, res in results:
        if "error" in res:
            print("| %d | %s | %d | %s | %s | | | | |" % (n, layout, count, tool, res["error"]))
            continue
        chk = res.get("check", {})
        print("| %d | %s | %d | %s | %.1f | %.1f | %d | %s | %s |" % (
            n, layout, count, tool + (" (%s)" % res["action"] if res.get("action") else ""), res["wall"],
            res["cpu"], res["rss"] / 1e6, chk.get("rows", "?"), "yes" if chk.get("new_row_found") else "NO"))


def _line(n, layout, count, tool, res):
    if "error" in res:
        print("%8d %-7s +%-4d %-9s %s" % (n, layout, count, tool, res["error"]), flush=True)
    else:
        print("%8d %-7s +%-4d %-9s wall %6.1f s  cpu %6.1f s  peak %6d MB  %s" % (
            n, layout, count, tool, res["wall"], res["cpu"], res["rss"] / 1e6, res.get("action", "")), flush=True)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print("\n(total %.0f s)" % (time.time() - t0))
