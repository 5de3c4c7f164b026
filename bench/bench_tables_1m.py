"""Benchmark of the derived-table tools on a million-row ledger: pivot_table, filter_table,
lookup_table (merge and reconcile), dedupe_table (keep first and report), clean_table and
calc_table, whole process, next to pandas (and DuckDB where it can) doing the same job.

Why: issue 21 asks every table tool to *finish* a 1M-row xlsx and csv within 30 s and 200 MB
(pivot and clean used to stop at the 60 s budget with ``complete: false``), and the read-only
work at 100k rows to take at most 1 s. This measures what the assistant runs — ``python3 -X utf8
-u tools/<tool>.py`` in ``tools/`` with the JSON on stdin and the host's environment (PATH, HOME,
PYTHONPATH=tools/pydeps) — each in a fresh process tree. The wrapper reports wall time, cpu
seconds of the whole tree (user+sys, ``RUSAGE_CHILDREN``: forked reader workers count) and peak
RSS two ways: the largest single process (``ru_maxrss``) and the sum over the tree sampled every
50 ms from /proc (Linux; the sum is what a machine with parallel workers actually holds).

The operations are the ones of the older benchmarks, imported from them (one definition each):
- ``pivot``: 区域 x 日期 by month, sum of 金额, new xlsx (``bench_pivot_table``);
- ``filter``: rows of 华东 with 金额 > 500, new file of the source's kind (defined here);
- ``merge`` / ``reconcile`` / ``dedupe`` / ``report``: ``bench_lookup_dedupe``'s jobs (left join
  on 商品 with a 320-row price list; per-商品 sums of xlsx vs csv; one row per (门店, 商品); every
  row of the duplicate groups);
- ``clean``: strip, numbers from text, unify 日期, new file (``bench_clean_table``);
- ``calc``: group by 区域, 品类, sum 金额, no file (``bench_calc``).
pandas reads with ``read_excel(engine="calamine")`` or ``read_csv`` and writes what the tool
writes (``to_excel`` through openpyxl, ``to_csv``); DuckDB (csv only: its xlsx reader is an
extension it cannot download here) reads with ``read_csv`` and writes csv with ``COPY``.

Ledgers come from ``bench_readers.py`` (``bench/data/``, gitignored). Outputs go to a temp HOME.

Usage: ``python3 bench/bench_tables_1m.py [--sizes 1000000] [--formats xlsx,csv]
[--jobs pivot,filter,...] [--runners ours,pandas,duckdb] [--repeat 1]``. pandas writing a 1M-row
xlsx through openpyxl takes minutes: those runs (merge, report, clean on xlsx) are skipped at 1M
rows unless ``--all``.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_calc  # noqa: E402
import bench_child  # noqa: E402  (the measuring wrapper and the host environment)
import bench_clean_table  # noqa: E402
import bench_lookup_dedupe  # noqa: E402
import bench_pivot_table  # noqa: E402
import bench_readers  # noqa: E402

JOBS = ["pivot", "filter", "merge", "reconcile", "dedupe", "report", "clean", "calc"]
TOOL_OF = {"pivot": "pivot_table", "filter": "filter_table", "merge": "lookup_table", "reconcile": "lookup_table",
           "dedupe": "dedupe_table", "report": "dedupe_table", "clean": "clean_table", "calc": "calc_table"}
# pandas writing a million rows through openpyxl: minutes, skipped at 1M unless --all
SLOW_PANDAS_XLSX = {"merge", "report", "clean"}

FILTER_ARGS = {"where": [{"column": "区域", "op": "eq", "value": "华东"}, {"column": "金额", "op": "gt", "value": 500}]}

PANDAS_FILTER = r'''
import json, sys
import pandas
path, engine, out = sys.argv[1], sys.argv[2], sys.argv[3]
if engine == "csv":
    df = pandas.read_csv(path, encoding="utf-8-sig")
else:
    df = pandas.read_excel(path, engine=engine)
res = df[(df["区域"] == "华东") & (df["金额"] > 500)]
if out.endswith(".csv"):
    res.to_csv(out, index=False, encoding="utf-8-sig")
else:
    res.to_excel(out, index=False, engine="openpyxl")
print(json.dumps({"rows": len(res)}))
'''

# DuckDB on the csv ledger: the same operations in SQL, the result written as csv.
DUCKDB = r'''
import json, sys
import duckdb
job, path, prices, out = sys.argv[1:5]
src = "read_csv('%s', header=true)" % path.replace("'", "''")
con = duckdb.connect()
q = {
    "pivot": "PIVOT (SELECT 区域, strftime(日期::DATE, '%Y-%m') AS 月, 金额 FROM " + src + ") ON 月 USING sum(金额) GROUP BY 区域 ORDER BY 区域",
    "filter": "SELECT * FROM " + src + " WHERE 区域 = '华东' AND 金额 > 500",
    "merge": "SELECT l.*, p.标准价, p.供应商 FROM " + src + " l LEFT JOIN read_csv('" + prices + "', header=true) p USING (商品)",
    "reconcile": "SELECT 商品, sum(金额) AS 左, sum(金额) AS 右, 0 AS 差额 FROM " + src + " GROUP BY 商品",
    "dedupe": "SELECT * EXCLUDE (_r) FROM (SELECT *, row_number() OVER () AS _r FROM " + src + ") QUALIFY "
              "row_number() OVER (PARTITION BY 门店, 商品 ORDER BY _r) = 1 ORDER BY _r",
    "report": "SELECT * FROM (SELECT *, count(*) OVER (PARTITION BY 门店, 商品) AS n FROM " + src + ") WHERE n > 1 ORDER BY 门店, 商品",
    "calc": "SELECT 区域, 品类, sum(金额) AS 金额 FROM " + src + " GROUP BY 区域, 品类",
}[job]
if job == "calc":
    rows = con.sql(q).fetchall()
    print(json.dumps({"rows": len(rows)}))
else:
    con.sql("COPY (" + q + ") TO '" + out.replace("'", "''") + "' (HEADER, DELIMITER ',')")
    print(json.dumps({"rows": con.sql("SELECT count(*) FROM read_csv('" + out + "')").fetchall()[0][0]}))
'''



def tool_args(job, path, other, out):
    """(tool script, its JSON parameters) of one job, from the benchmark that defined it."""
    if job == "pivot":
        return "pivot_table", dict(bench_pivot_table.PIVOT_ARGS, path=path, out_path=out)
    if job == "filter":
        return "filter_table", dict(FILTER_ARGS, path=path, out_path=out)
    if job == "clean":
        return "clean_table", dict(bench_clean_table.CLEAN_ARGS, path=path, out_path=out)
    if job == "calc":
        return "calc_table", dict(bench_calc.CALC_ARGS, path=path)
    return bench_lookup_dedupe.tool_args(job, path, other, out)


def pandas_argv(job, path, engine, other, out):
    py = [bench_child.PEER_PYTHON, "-X", "utf8", "-c"]
    if job == "pivot":
        return py + [bench_pivot_table.PANDAS, path, engine, out]
    if job == "filter":
        return py + [PANDAS_FILTER, path, engine, out]
    if job == "clean":
        return py + [bench_clean_table.PANDAS, path, engine, out]
    if job == "calc":
        return py + [bench_calc.PANDAS, path, engine]
    return py + [bench_lookup_dedupe.PANDAS, job, path, engine, bench_lookup_dedupe.prices_file(), other, out]


def what(job, answer):
    """rows the tool used / wrote, in a few words, and whether it finished."""
    complete = answer.get("complete", True)
    if job == "pivot":
        text = "rows %d, grand total %s" % (answer["rows_used"], answer["grand_total"])
    elif job == "filter":
        text = "%d of %d rows match" % (answer["match_count"], answer["rows_scanned"])
    elif job == "clean":
        text = "%d rows written" % answer["rows_written"]
    elif job == "calc":
        text = "rows %d, %d groups" % (answer["rows_used"], answer["group_count"])
    else:
        text = bench_lookup_dedupe.summary(job, answer)
    return text, complete


def measure(job, runner, path, other, home, timeout):
    ext = ".csv" if path.endswith(".csv") and job != "pivot" else ".xlsx"    # a pivot is always a workbook
    folder = tempfile.mkdtemp(prefix="bench_t1m_", dir=os.path.join(home, ".xla", "workspace"))
    out = os.path.join(folder, "result" + ext)
    if runner == "ours":
        name, params = tool_args(job, path, other, out)
        argv, cwd, stdin = ([sys.executable, "-X", "utf8", "-u", name + ".py"], os.path.join(ROOT, "tools"),
                            json.dumps(params, ensure_ascii=False))
    elif runner == "pandas":
        argv, cwd, stdin = pandas_argv(job, path, "csv" if path.endswith(".csv") else "calamine", other, out), ROOT, ""
    else:                                   # csv out: DuckDB's xlsx writer is in the extension too
        argv, cwd, stdin = [bench_child.PEER_PYTHON, "-X", "utf8", "-c", DUCKDB, job, path,
                            bench_lookup_dedupe.prices_file(), os.path.join(folder, "result.csv")], ROOT, ""
    env = bench_child.host_env(home) if runner == "ours" else bench_child.peer_env(home)
    res = bench_child.run_child(argv, cwd, stdin, env, timeout)
    if "error" in res:
        return res
    shutil.rmtree(folder, ignore_errors=True)
    lines = res["out"].strip().splitlines()
    if not lines or (res["code"] != 0 and runner != "ours"):
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:] or ["exit %d" % res["code"]]}
    answer = json.loads(lines[-1])
    if runner == "ours":
        if not answer.get("ok"):
            return {"error": answer.get("error")}
        res["what"], res["complete"] = what(job, answer)
    else:
        res["what"], res["complete"] = json.dumps(answer, ensure_ascii=False), True
    return res




def _row(n, fmt, job, runner, r):
    if "error" in r:
        return "| %d | %s | %s | %s | ERROR %s | | | | | |" % (n, fmt, job, runner, r["error"])
    return "| %d | %s | %s | %s | %s | %.2f | %.0f | %.0f | %s | %s |" % (
        n, fmt, job, runner, bench_child.spread(r), r["cpu"], r["rss"] / 2.0 ** 20, r["tree_rss"] / 2.0 ** 20,
        "yes" if r["complete"] else "**no**", r["what"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000", help="row counts, comma separated (e.g. 100000,1000000)")
    ap.add_argument("--formats", default="xlsx,csv", help="xlsx (shared strings, as Excel saves) and/or csv")
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--runners", default="ours,pandas,duckdb")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median wall is shown, with the load")
    ap.add_argument("--all", action="store_true", help="also pandas writing 1M-row xlsx files (minutes)")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args(argv)
    home = tempfile.mkdtemp(prefix="bench_t1m_home_")
    os.makedirs(os.path.join(home, ".xla", "workspace"))
    runners = [r for r in args.runners.split(",") if r]
    have = {"ours": True, "pandas": bench_child.peer_has("pandas, openpyxl, python_calamine"),
            "duckdb": bench_child.peer_has("duckdb")}
    print("python %s, %d cpus, load %s" % (sys.version.split()[0], os.cpu_count() or 0,
                                           " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    table = ["| rows | format | job | runner | wall s: median (min-max, runs, load) | cpu s | peak MiB (largest process) | peak MiB (tree) "
             "| complete | result |", "|---:|---|---|---|---:|---:|---:|---:|---|---|"]
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        csv_path = bench_readers.data_file(n, "csv")
        for fmt in [f for f in args.formats.split(",") if f]:
            path = csv_path if fmt == "csv" else bench_readers.data_file(n, "sst")
            for job in [j for j in args.jobs.split(",") if j]:
                for runner in runners:
                    if not have[runner] or (runner == "duckdb" and (fmt != "csv" or job == "clean")):
                        continue
                    if runner == "pandas" and fmt == "xlsx" and n >= 1000000 and job in SLOW_PANDAS_XLSX \
                            and not args.all:
                        continue
                    r = bench_child.repeated(lambda: measure(job, runner, path, csv_path, home, args.timeout),
                                             args.repeat)
                    line = _row(n, fmt, job, runner if runner != "ours" else TOOL_OF[job], r)
                    print(line, flush=True)
                    table.append(line)
    shutil.rmtree(home, ignore_errors=True)
    print()
    print("load after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
