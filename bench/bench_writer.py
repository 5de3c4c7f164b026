"""Benchmark of the xlsx writer: a new 100k x 10 (and 1M x 10) workbook written by our writer, by
openpyxl's write-only mode, by xlsxwriter's constant_memory mode and by pandas ``to_excel``, each
in a fresh Python process (start-up and imports count, as they do for a tool); and the five tools
that write tables, run at 100k rows through the host runner.

Why: every derived table (filter, lookup, dedupe, clean, pivot) ends in the shared writer, and
issue 21 asks for a new 100k x 10 xlsx in at most openpyxl write-only's time / 4, the tools that
write 100k rows in 2.0 s whole process, and a 1M-row output under 200 MB within the 60 s limit.

Writers (``--writers``; each child makes the rows itself from ``bench_readers.ledger_rows``, the
ledger the readers' benchmark uses: dates, ints, floats, Chinese text, some empty cells):
- ``rows``        only makes the rows (the cost every runner pays before writing a cell);
- ``ours``        ``xlakit.tables.write.write_rows`` -- the entry every tool uses (row checks,
                  the files layer's temp file + atomic replace, the streaming SpreadsheetML writer);
- ``openpyxl``    ``Workbook(write_only=True)``, ``ws.append`` per row;
- ``xlsxwriter``  ``Workbook(constant_memory=True)``, ``write_row`` (only if importable: it is not
                  one of our dependencies; ``--extra-path`` adds a folder it was pip-installed to);
- ``pandas-openpyxl`` / ``pandas-xlsxwriter``  ``DataFrame.to_excel`` (the whole table in memory;
                  skipped at 1M rows unless ``--all``).
A wrapper process reports the child's wall, cpu (user+sys, all its threads) and peak RSS; the
child itself reports the seconds of its write (rows made on the way, as a tool's rows are).
Each file is then read back by our reader (not timed) and compared value by value with the rows.

Tools (``--tools``): filter_table keeping ~20k (渠道 = 美团) and all 100k rows (and all rows of the csv ledger),
lookup_table merge (a 320-row price list), dedupe_table (keys that keep ~all rows), clean_table,
pivot_table, on ``ledger_<n>_sst.xlsx`` writing .xlsx, whole process through ``xlakit.host.run_tool``.

Usage: ``python3 bench/bench_writer.py [--sizes 100000,1000000] [--writers ours,openpyxl]
[--repeat 3] [--tools] [--no-check] [--extra-path DIR] [--baseline DIR]``; ``--baseline`` adds
``ours-before``: the same child importing ``xlakit`` from another checkout (before/after a change). The minimum of ``--repeat`` runs is
printed (the machine is shared: note ``uptime``'s load next to the numbers).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import bench_readers  # noqa: E402
import bench_child  # noqa: E402  (the measuring wrapper)

WRITERS = ["rows", "ours", "openpyxl", "xlsxwriter", "pandas-openpyxl", "pandas-xlsxwriter"]
NEEDS = {"openpyxl": "openpyxl", "xlsxwriter": "xlsxwriter", "pandas-openpyxl": "pandas, openpyxl",
         "pandas-xlsxwriter": "pandas, xlsxwriter"}
IN_MEMORY = {"pandas-openpyxl", "pandas-xlsxwriter"}

PRELUDE = r'''
import itertools, json, os, sys, time
sys.path.insert(0, %(root)r)
sys.path.insert(0, %(bench)r)
import bench_readers
n, out = %(n)d, %(out)r
rows = itertools.chain([bench_readers.HEADER], bench_readers.ledger_rows(n))
t0, c0 = time.time(), time.process_time()
'''
EPILOGUE = r'''
print(json.dumps({"write_wall": time.time() - t0, "write_cpu": time.process_time() - c0}))
'''
CHILDREN = {
    "rows": r'''
for row in rows:
    pass
''',
    "ours": r'''
from xlakit.tables import write
write.write_rows(out, rows)
''',
    "openpyxl": r'''
import openpyxl
wb = openpyxl.Workbook(write_only=True)
ws = wb.create_sheet("Sheet1")
for row in rows:
    ws.append(row)
wb.save(out)
''',
    "xlsxwriter": r'''
import xlsxwriter
wb = xlsxwriter.Workbook(out, {"constant_memory": True, "default_date_format": "yyyy-mm-dd"})
ws = wb.add_worksheet("Sheet1")
for r, row in enumerate(rows):
    ws.write_row(r, 0, row)
wb.close()
''',
    "pandas-openpyxl": r'''
import pandas
head = next(rows)
pandas.DataFrame(list(rows), columns=head).to_excel(out, index=False, engine="openpyxl")
''',
    "pandas-xlsxwriter": r'''
import pandas
head = next(rows)
pandas.DataFrame(list(rows), columns=head).to_excel(out, index=False, engine="xlsxwriter")
''',
}

CHECK = r'''
import datetime, itertools, json, math, sys
sys.path.insert(0, %(root)r)
sys.path.insert(0, %(bench)r)
import bench_readers
from xlakit.tables import formats as table_formats

def same(want, got):
    if want is None or want == "":
        return got is None or got == "" or (isinstance(got, float) and math.isnan(got))
    if isinstance(want, datetime.date):
        if isinstance(got, datetime.datetime):
            return got.time() == datetime.time(0) and got.date() == want
        return got == want
    if isinstance(want, (int, float)):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and got == want
    return got == want

bad, examples, count = 0, [], 0
expected = itertools.chain([bench_readers.HEADER], bench_readers.ledger_rows(%(n)d))
with table_formats.open_book(%(path)r) as book:
    for (_num, values), want in itertools.zip_longest(book.rows(), expected, fillvalue=(None, None)):
        count += 1
        if values is None or want is None:
            bad += 1
            examples.append("row %%d missing" %% count)
            break
        values = list(values) + [None] * (len(want) - len(values))
        for c, w in enumerate(want):
            if not same(w, values[c]):
                bad += 1
                if len(examples) < 3:
                    examples.append("row %%d col %%d: %%r != %%r" %% (count, c + 1, w, values[c]))
print(json.dumps({"rows": count, "bad": bad, "examples": examples}))
'''


def child_env(extra_path):
    paths = [os.path.join(ROOT, "tools", "pydeps")] + ([extra_path] if extra_path else [])
    return {"PATH": os.environ.get("PATH", ""), "HOME": os.path.join(HERE, "data", "home"),
            "PYTHONPATH": os.pathsep.join(paths)}


def importable(mods, env):
    return subprocess.call([sys.executable, "-c", "import " + mods], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


def wrapped(argv, cwd, stdin, env, timeout):
    """One child under the shared wrapper (bench_child); a non-zero exit is an error here."""
    res = bench_child.run_child(argv, cwd, stdin, env, timeout)
    if "error" not in res and res["code"] != 0:
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:] or ["exit %d" % res["code"]]}
    return res


def write_once(writer, n, env, timeout, baseline=None):
    out = os.path.join(tempfile.mkdtemp(prefix="bench_writer_"), "out.xlsx")
    root = baseline if writer == "ours-before" else ROOT
    code = PRELUDE % {"root": root, "bench": HERE, "n": n, "out": out} + CHILDREN[
        "ours" if writer == "ours-before" else writer] + EPILOGUE
    res = wrapped([sys.executable, "-X", "utf8", "-c", code], ROOT, "", env, timeout)
    if "error" not in res:
        res.update(json.loads(res["out"].strip().splitlines()[-1]))
        res["path"] = out if os.path.exists(out) else None
    return res


def check(path, n, env):
    code = CHECK % {"root": ROOT, "bench": HERE, "n": n, "path": path}
    proc = subprocess.run([sys.executable, "-X", "utf8", "-c", code], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        return "ERROR " + proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
    got = json.loads(proc.stdout.decode("utf-8"))
    if got["bad"]:
        return "%d BAD of %d rows: %s" % (got["bad"], got["rows"], "; ".join(got["examples"]))
    return "ok, %d rows" % got["rows"]


def bench_writers(sizes, writers, repeat, do_check, env, timeout, run_all, baseline=None):
    table = ["| rows | writer | wall s | cpu s | write wall s | write cpu s | peak MiB | file MB | read back |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for n in sizes:
        for writer in writers:
            if writer in IN_MEMORY and n >= 1000000 and not run_all:
                continue
            runs = []
            for _ in range(repeat):
                res = write_once(writer, n, env, timeout, baseline)
                if "error" in res:
                    runs = [res]
                    break
                runs.append(res)
            if "error" in runs[0]:
                line = "| %d | %s | ERROR %s | | | | | | |" % (n, writer, runs[0]["error"])
            else:
                best = min(runs, key=lambda r: r["cpu"])
                path = runs[-1]["path"]
                size = os.path.getsize(path) / 1e6 if path else 0
                verdict = check(path, n, env) if path and do_check else ""
                line = "| %d | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %s | %s |" % (
                    n, writer, min(r["wall"] for r in runs), best["cpu"], min(r["write_wall"] for r in runs),
                    min(r["write_cpu"] for r in runs), max(r["rss"] for r in runs) / 2.0 ** 20,
                    "%.1f" % size if path else "", verdict)
                for r in runs:
                    if r.get("path"):
                        os.remove(r["path"])
            print(line, flush=True)
            table.append(line)
    return table


def tool_jobs(n):
    src = bench_readers.data_file(n, "sst")
    from bench_lookup_dedupe import prices_file
    return [
        ("filter_table 20%", "filter_table", {"path": src, "where": [{"column": "渠道", "op": "eq", "value": "美团"}],
                                              "limit": 1000000}),
        ("filter_table all", "filter_table", {"path": src, "where": [{"column": "数量", "op": "gt", "value": 0}],
                                              "limit": 1000000}),
        ("filter_table all, csv source", "filter_table", {"path": bench_readers.data_file(n, "csv"),
                                                         "where": [{"column": "数量", "op": "gt", "value": 0}],
                                                         "limit": 1000000}),
        ("lookup_table merge", "lookup_table", {"left_path": src, "right_path": prices_file(), "left_key": "商品"}),
        ("dedupe_table", "dedupe_table", {"path": src, "keys": ["日期", "门店", "商品", "数量", "单价"]}),
        ("clean_table", "clean_table", {"path": src}),
        ("pivot_table", "pivot_table", {"path": src, "row": {"column": "门店"}, "col": {"column": "品类"},
                                        "value": "金额"}),
    ]


def bench_tools(n, repeat, roots):
    """The tools that write a table, whole process through the host runner (as the assistant runs
    them), for each (label, checkout) of ``roots``; cpu is the tool process's (RUSAGE_CHILDREN)."""
    from xlakit import host as xla_host
    home = tempfile.mkdtemp(prefix="bench_writer_home_")
    table = ["| rows | tool | code | wall s | cpu s | rows written | result |", "|---:|---|---|---:|---:|---:|---|"]
    for label, name, args in tool_jobs(n):
        for code, root in roots:
            best = None
            for i in range(repeat):
                args = dict(args, out_path=os.path.join(home, "%s_%s_%d.xlsx" % (name, code, i)))
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.time()
                result = xla_host.run_tool(name, args, root=root, home=home, log=False)
                wall = time.time() - t0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                answer = result.answer()
                best = (wall, cpu, answer) if best is None else (min(best[0], wall), min(best[1], cpu), answer)
                os.remove(args["out_path"]) if os.path.exists(args["out_path"]) else None
            wall, cpu, answer = best
            if not answer.get("ok"):
                line = "| %d | %s | %s | ERROR %s | | | |" % (n, label, code, str(answer.get("error"))[:80])
            else:
                line = "| %d | %s | %s | %.2f | %.2f | %s | %s |" % (
                    n, label, code, wall, cpu, answer.get("rows_written", answer.get("written", answer.get("rows_after"))),
                    "complete" if answer.get("complete", True) else "PARTIAL")
            print(line, flush=True)
            table.append(line)
    return table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000", help="row counts, comma separated")
    ap.add_argument("--writers", default=",".join(WRITERS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", action="store_true", help="also the five writing tools at the first size")
    ap.add_argument("--only-tools", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="do not read the files back")
    ap.add_argument("--all", action="store_true", help="pandas at 1M rows too")
    ap.add_argument("--extra-path", default="", help="a folder holding xlsxwriter (pip install --target DIR)")
    ap.add_argument("--baseline", default="", help="another checkout: adds ours-before (its xlakit)")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args(argv)
    env = child_env(args.extra_path)
    os.makedirs(env["HOME"], exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print("python %s, %d cpus, load %s" % (sys.version.split()[0], os.cpu_count() or 0,
                                           " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    tables = []
    if not args.only_tools:
        writers = [w for w in args.writers.split(",") if w and (w not in NEEDS or importable(NEEDS[w], env))]
        if args.baseline:
            writers.insert(writers.index("ours") if "ours" in writers else 0, "ours-before")
        tables.append(bench_writers(sizes, writers, args.repeat, not args.no_check, env, args.timeout, args.all,
                                    os.path.abspath(args.baseline) if args.baseline else None))
    if args.tools or args.only_tools:
        roots = ([("before", os.path.abspath(args.baseline))] if args.baseline else []) + [("ours", ROOT)]
        tables.append(bench_tools(sizes[0], args.repeat, roots))
    print("load %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    for table in tables:
        print()
        print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
