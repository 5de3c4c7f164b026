"""Benchmark of calc_table: whole-process time and peak memory of a real group-by on big ledgers.

Why: the host kills a tool at 60 s on the user's laptop, and ledgers reach Excel's 1,048,576-row
limit. This measures exactly what the assistant would run — ``python3 -X utf8 -u calc_table.py``
in ``tools/`` with the JSON on stdin (group by 区域 and 品类, sum 金额) — next to pandas doing the
same group-by after reading the same file with the openpyxl and the calamine engines (and
``read_csv`` for csv). Each measurement runs in a fresh process tree; a small wrapper process
reports its child's cpu time and peak RSS (``RUSAGE_CHILDREN`` of a process with one child is that
child's own figure), the parent measures wall time. The grand total of every answer is printed so
the tools can be seen to agree.

The ledgers (10 columns: 日期 区域 门店 品类 商品 数量 单价 金额 渠道 备注) come from
``bench_readers.py`` (same generator, same files in ``bench/data/``, gitignored): xlsx in Excel's
shared-strings layout and UTF-8-BOM csv.

Usage: ``python3 bench/bench_calc.py [--sizes 10000,100000,1000000] [--quick] [--all]
[--layouts sst,csv] [--tools calc_table,pandas-calamine]``. pandas+openpyxl (and calc_table through
its openpyxl fallback) are skipped at 1M rows unless ``--all``: they take minutes.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_readers  # noqa: E402  (the ledger generator and data folder are shared)

CALC_ARGS = {"group_by": ["区域", "品类"], "metrics": [{"column": "金额", "func": "sum", "as": "金额"}]}

import bench_child  # noqa: E402  (the measuring wrapper: wall, tree cpu, peak RSS)

PANDAS = r'''
import json, sys
import pandas
path, engine = sys.argv[1], sys.argv[2]
if engine == "csv":
    df = pandas.read_csv(path, encoding="utf-8-sig")
else:
    df = pandas.read_excel(path, engine=engine)
g = df.groupby(["区域", "品类"])["金额"].sum()
print(json.dumps({"rows": len(df), "groups": len(g), "total": round(float(g.sum()), 2)}))
'''

# DuckDB: read_csv is built in; read_xlsx is the "excel" extension, which DuckDB downloads on first
# use. Without a network, point XLA_BENCH_DUCKDB_PYTHON at a Python whose site-packages hold duckdb
# and the matching PyPI package duckdb-extension-excel (its .duckdb_extension file is loaded directly).
DUCKDB = r'''
import glob, json, os, sys
import duckdb
path = sys.argv[1]
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
if not path.endswith(".csv"):
    try:
        import duckdb_extension_excel
        found = glob.glob(os.path.join(os.path.dirname(duckdb_extension_excel.__file__), "extensions", "*",
                                       "excel.duckdb_extension"))
        con.sql("LOAD '%s'" % found[0].replace("'", "''"))
    except (ImportError, IndexError):
        con.sql("LOAD excel")
    src = "read_xlsx('%s')" % path.replace("'", "''")
else:
    src = "read_csv('%s')" % path.replace("'", "''")
r = con.sql("SELECT 区域, 品类, sum(金额) FROM " + src + " GROUP BY 1, 2").fetchall()
print(json.dumps({"rows": None, "groups": len(r), "total": round(sum(float(x[2]) for x in r), 2)}))
'''
DUCKDB_PYTHON = os.environ.get("XLA_BENCH_DUCKDB_PYTHON") or bench_child.PEER_PYTHON

TOOLS = ["calc_table", "calc_table-1proc", "calc_table-openpyxl", "pandas-openpyxl", "pandas-calamine", "pandas-csv",
         "duckdb"]
SLOW = {"calc_table-openpyxl", "pandas-openpyxl"}


def command(tool, path):
    """(argv, cwd, stdin text, extra env) of one measured run."""
    if tool.startswith("calc_table"):
        args = dict(CALC_ARGS, path=path)
        return ([sys.executable, "-X", "utf8", "-u", "calc_table.py"], os.path.join(ROOT, "tools"),
                json.dumps(args, ensure_ascii=False),
                {"XLA_XLSX_READER": "openpyxl"} if tool.endswith("openpyxl") else
                {"XLA_XLSX_WORKERS": "1", "XLA_CSV_WORKERS": "1"} if tool.endswith("1proc") else {})
    if tool == "duckdb":
        return [DUCKDB_PYTHON, "-X", "utf8", "-c", DUCKDB, path], ROOT, "", {}
    engine = tool.split("-", 1)[1]
    return [bench_child.PEER_PYTHON, "-X", "utf8", "-c", PANDAS, path, engine], ROOT, "", {}


def measure(tool, path, home, timeout, repeat=1):
    """The median-wall run of ``repeat`` (each a fresh process tree)."""
    return bench_child.repeated(lambda: _measure(tool, path, home, timeout), repeat)


def _measure(tool, path, home, timeout):
    argv, cwd, stdin, extra = command(tool, path)
    env = dict(bench_child.host_env(home) if tool.startswith("calc_table") else bench_child.peer_env(home), **extra)
    t0 = time.time()
    res = bench_child.run_child(argv, cwd, stdin, env, timeout)
    if "error" in res:
        return res
    res["outer_wall"] = time.time() - t0
    if res["code"] != 0:
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:] or ["exit %d" % res["code"]]}
    answer = json.loads(res["out"].strip().splitlines()[-1])
    if tool.startswith("calc_table"):
        if not answer.get("ok"):
            return {"error": answer.get("error")}
        res["rows"] = answer["rows_used"]
        res["groups"] = answer["group_count"]
        res["total"] = round(sum(g["金额"] for g in answer["groups"]), 2)
    else:
        res.update(answer)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000", help="row counts, comma separated")
    ap.add_argument("--quick", action="store_true", help="10k and 100k only")
    ap.add_argument("--all", action="store_true", help="also the slow openpyxl runs at 1M rows")
    ap.add_argument("--layouts", default="sst,csv", help="sst (Excel-style xlsx), inline (xlsx), csv")
    ap.add_argument("--tools", default="", help="only these (comma separated): " + ",".join(TOOLS))
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median wall is shown (machine is shared)")
    args = ap.parse_args(argv)
    sizes = [10000, 100000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    wanted = [t for t in args.tools.split(",") if t] or TOOLS
    home = os.path.join(HERE, "data", "home")
    os.makedirs(home, exist_ok=True)
    have_pandas = bench_child.peer_has("pandas")
    have_calamine = bench_child.peer_has("python_calamine")
    have_duckdb = subprocess.call([DUCKDB_PYTHON, "-c", "import duckdb"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) == 0

    def skip(n, layout, tool):
        if tool.startswith("pandas") and (layout == "csv") != (tool == "pandas-csv"):
            return True
        if layout == "csv" and tool == "calc_table-openpyxl":
            return True
        if (tool.startswith("pandas") and not have_pandas) or (tool == "pandas-calamine" and not have_calamine):
            return True
        if tool == "duckdb" and not have_duckdb:
            return True
        return n >= 1000000 and tool in SLOW and not args.all
    return bench_readers.run_matrix(sizes, [x for x in args.layouts.split(",") if x], wanted, skip,
                                    lambda tool, path: measure(tool, path, home, args.timeout, args.repeat), _line,
                                    _table)


def _fmt(layout):
    return "csv" if layout == "csv" else "xlsx" + ("" if layout == "sst" else "-inline")


def _line(row):
    n, layout, tool, r = row
    fmt = _fmt(layout)
    if "error" in r:
        return "%9d %-12s %-20s ERROR %s" % (n, fmt, tool, r["error"])
    return "%9d %-12s %-20s wall %s s %7.2f s cpu %5.0f / %5.0f MiB  (%d groups, total %.2f)" % (
        n, fmt, tool, bench_child.spread(r), r["cpu"], r["rss"] / 2.0 ** 20, r.get("tree_rss", 0) / 2.0 ** 20,
        r["groups"], r["total"])


def _table(results):
    """Markdown, each tool's wall and cpu next to pandas+calamine's (csv: read_csv) from the same run.
    Peak MiB: the largest single process (``ru_maxrss``) and, sampled every 50 ms on Linux, the
    largest sum over the tool and its reader worker."""
    peer = {}
    for n, layout, tool, r in results:
        if tool == ("pandas-csv" if layout == "csv" else "pandas-calamine") and "error" not in r:
            peer[(n, layout)] = r
    lines = ["| rows | format | tool | wall s: median (min-max, runs, load) | cpu s | peak MiB (max / sum) | grand total "
             "| wall ÷ peer | cpu ÷ peer |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for n, layout, tool, r in results:
        fmt = _fmt(layout)
        if "error" in r:
            lines.append("| %d | %s | %s | %s | | | | | |" % (n, fmt, tool, r["error"]))
            continue
        c = peer.get((n, layout))
        ratio = ("%.2f" % (r["wall"] / c["wall"]), "%.2f" % (r["cpu"] / c["cpu"])) if c else ("", "")
        lines.append("| %d | %s | %s | %s | %.2f | %.0f / %.0f | %.2f | %s | %s |" % (
            n, fmt, tool, bench_child.spread(r), r["cpu"], r["rss"] / 2.0 ** 20, r.get("tree_rss", 0) / 2.0 ** 20,
            r["total"], ratio[0], ratio[1]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
