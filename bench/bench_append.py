"""Benchmark of appending 100 rows to a big xlsx ledger: whole-process seconds and peak memory.

Why: a user's yearly ledger is a million rows, and "add this month's rows to it" must finish
inside the host's 60 s. This measures exactly what the assistant runs (``write_spreadsheet.py``
in ``tools/`` with mode=append and 100 rows on stdin, which edits the package directly) next to
what a user would otherwise write: openpyxl ``load_workbook`` + ``ws.append`` x 100 + ``save``.
Each run copies the ledger first (the original in ``bench/data/`` stays as generated), runs in a
fresh process tree, and a wrapper process reports the child's cpu time and peak RSS. After each
run the result is checked: openpyxl read-only reads the last appended row back (not timed).

Ledgers (10 columns, shared strings as Excel writes them, or inline strings) come from
``bench_readers.py`` (same generator and ``bench/data/`` files, gitignored).

Usage: ``python3 bench/bench_append.py [--sizes 100000,1000000] [--layouts sst,inline] [--all]``.
openpyxl is skipped at 1M rows unless ``--all`` (it takes minutes and several GB); its runs are
capped by ``--timeout`` (default 600 s).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_readers  # noqa: E402  (the ledger generator and data folder are shared)
from bench_calc import WRAPPER  # noqa: E402  (one child, its wall/cpu/peak RSS)

N_APPEND = 100


def new_rows():
    rows = []
    for i in range(N_APPEND):
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

CHECK = r'''
import json, sys
import openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
ws = wb.active
last = None
n = 0
for row in ws.iter_rows(values_only=True):
    n += 1
    last = row
print(json.dumps({"rows": n, "last": [str(v) for v in last]}, ensure_ascii=False))
'''


def measure(tool, path, home, timeout):
    rows = new_rows()
    if tool == "ours":
        argv = [sys.executable, "-X", "utf8", "-u", "write_spreadsheet.py"]
        cwd = os.path.join(ROOT, "tools")
        stdin = json.dumps({"path": path, "mode": "append", "rows": rows}, ensure_ascii=False)
    else:
        argv = [sys.executable, "-X", "utf8", "-c", OPENPYXL, path, json.dumps(rows, ensure_ascii=False)]
        cwd, stdin = ROOT, ""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    try:
        proc = subprocess.run([sys.executable, "-c", WRAPPER, json.dumps([argv, cwd, stdin])], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout > %d s" % timeout}
    res = json.loads(proc.stdout.decode("utf-8"))
    if res["code"] != 0:
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:]}
    answer = json.loads(res["out"].strip().splitlines()[-1])
    if not answer.get("ok"):
        return {"error": answer.get("error")}
    check = subprocess.run([sys.executable, "-c", CHECK, path], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    res["check"] = json.loads(check.stdout.decode("utf-8")) if check.returncode == 0 else {
        "error": check.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]}
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--layouts", default="sst,inline")
    ap.add_argument("--tools", default="ours,openpyxl")
    ap.add_argument("--all", action="store_true", help="openpyxl at 1M rows too")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    work = tempfile.mkdtemp(prefix="bench_append_")
    try:
        for n in sizes:
            for layout in args.layouts.split(","):
                source = bench_readers.data_file(n, layout)
                for tool in args.tools.split(","):
                    if tool == "openpyxl" and n > 100000 and not args.all:
                        results.append((n, layout, tool, {"error": "skipped (minutes, GBs; --all)"}))
                        continue
                    path = os.path.join(work, "ledger.xlsx")
                    shutil.copy(source, path)
                    home = os.path.join(work, "home")
                    shutil.rmtree(home, ignore_errors=True)
                    os.makedirs(home)
                    res = measure(tool, path, home, args.timeout)
                    results.append((n, layout, tool, res))
                    _line(n, layout, tool, res)
                    os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("| rows | layout | tool | wall s | cpu s | peak MB | rows after | last row |")
    print("|---:|---|---|---:|---:|---:|---:|---|")
    for n, layout, tool, res in results:
        if "error" in res:
            print("| %d | %s | %s | %s | | | | |" % (n, layout, tool, res["error"]))
            continue
        chk = res.get("check", {})
        print("| %d | %s | %s | %.1f | %.1f | %d | %s | %s |" % (
            n, layout, tool, res["wall"], res["cpu"], res["rss"] / 1e6, chk.get("rows", "?"),
            " ".join((chk.get("last") or [])[:2]) or chk.get("error", "")))


def _line(n, layout, tool, res):
    if "error" in res:
        print("%8d %-6s %-9s %s" % (n, layout, tool, res["error"]), flush=True)
    else:
        print("%8d %-6s %-9s wall %6.1f s  cpu %6.1f s  peak %6d MB" % (
            n, layout, tool, res["wall"], res["cpu"], res["rss"] / 1e6), flush=True)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print("\n(total %.0f s)" % (time.time() - t0))
