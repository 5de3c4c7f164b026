"""Benchmark of clean_table: whole-process time and peak memory of cleaning a big ledger into a new
file, next to pandas doing the same cleaning.

Why: the host kills a tool at 60 s and ledgers reach a million rows; issue 10 asks for about the
time calc_table takes on 100k rows (~1 s on a quiet machine) and never more than 5 s. This runs
exactly what the assistant runs — ``python3 -X utf8 -u clean_table.py`` in ``tools/`` with the
JSON on stdin — and a pandas script that does the same work (strip spaces and invisible
characters, turn plain amount text into numbers but not codes with leading zeros, unify the date
column, drop empty rows, write a new xlsx or csv), each in a fresh process tree measured by the
wrapper of ``bench_calc.py`` (wall, cpu, peak RSS of the child).

Files (``bench/data/``, gitignored):
- ``ledger_<n>_sst.xlsx`` / ``ledger_<n>.csv``: the clean ledger of ``bench_readers.py`` (the
  cleaning has little to change: the cost of reading, checking and writing);
- ``dirty_<n>.csv`` / ``dirty_<n>.xlsx``: the same generator's rows made dirty the way exports
  are (trailing and full-width spaces, NBSP, zero-width characters, quantities and money as text
  ``￥1,234.50``, accounting negatives ``(12.00)``, dates written four ways, an empty row every
  1,000), so every rule does real work.

Usage: ``python3 bench/bench_clean_table.py [--sizes 10000,100000] [--layouts sst,csv,dirty_csv,dirty_xlsx]
[--tools calc_table,clean_table,pandas-calamine,pandas-csv]``. calc_table (a group-by sum, read only) is
the yardstick the issue names. pandas writing xlsx goes through openpyxl (the
engine it installs with) and is slow; it is skipped above 100k rows unless ``--all``.
"""
import argparse
import csv
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

import bench_calc  # noqa: E402  (the measuring wrapper)
import bench_child  # noqa: E402  (the measuring wrapper and the host environment)
import bench_readers  # noqa: E402  (the ledger generator and data folder)

CLEAN_ARGS = {"date_columns": ["日期"]}

PANDAS = r'''
import json, sys
import pandas as pd
path, engine, out = sys.argv[1], sys.argv[2], sys.argv[3]
if engine == "csv":
    df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
else:
    df = pd.read_excel(path, engine=engine, dtype=object)
INVISIBLE = "[\u200b-\u200f\u2060\ufeff\u00ad\u202a-\u202e]"
AMOUNT = r"[+-]?[¥￥$]?\s*(?:\d{1,3}(?:,\d{3})+|[1-9]\d{0,10}|0)(?:\.\d+)?"
changed = 0
for col in df.columns:
    s = df[col].astype(object)
    is_str = s.map(lambda v: isinstance(v, str))
    if not is_str.any():
        continue
    raw = s[is_str]
    t = raw.str.replace(INVISIBLE, "", regex=True).str.replace("\xa0", " ", regex=False).str.strip()
    changed += int((t != raw).sum())
    t = t.where(t != "", None)
    if col == "日期":
        iso = t.str.replace(r"(\d{4})年(\d{1,2})月(\d{1,2})日", r"\1-\2-\3", regex=True)
        d = pd.to_datetime(iso, format="mixed", errors="coerce")
        s[is_str] = d.where(d.notna(), t).map(lambda v: v.date() if hasattr(v, "date") else v)
        changed += int(d.notna().sum())
        df[col] = s
        continue
    m = t.str.fullmatch(AMOUNT).fillna(False).astype(bool)
    if col in ("账号", "订单号"):
        m[:] = False
    num = pd.to_numeric(t[m].str.replace(r"[,¥￥$\s]", "", regex=True), errors="coerce")
    t = t.astype(object)
    t[m] = num
    changed += int(m.sum())
    s[is_str] = t
    df[col] = s
before = len(df)
df = df.dropna(how="all")
if out.endswith(".csv"):
    df.to_csv(out, index=False, encoding="utf-8-sig")
else:
    df.to_excel(out, index=False, engine="openpyxl")
print(json.dumps({"rows": len(df), "changed": changed, "dropped": before - len(df)}))
'''

TOOLS = ["calc_table", "clean_table", "pandas-calamine", "pandas-csv"]
LAYOUTS = ["sst", "csv", "dirty_csv", "dirty_xlsx"]


def dirty_rows(n):
    """The benchmark ledger's rows made dirty (see the module docstring); header first."""
    yield list(bench_readers.HEADER)
    for i, row in enumerate(bench_readers.ledger_rows(n)):
        if i and i % 1000 == 0:
            yield [None] * 10
        day, region, store, cat, goods, qty, price, amount, channel, note = row
        style = i % 4
        date = (day.isoformat() if style == 0 else "%d/%d/%d" % (day.year, day.month, day.day) if style == 1
                else "%d年%d月%d日" % (day.year, day.month, day.day) if style == 2 else day.strftime("%Y%m%d"))
        if i % 7 == 0:
            region += " "
        if i % 11 == 0:
            region = "\u3000" + region
        if i % 13 == 0:
            store += "\xa0"
        if i % 17 == 0:
            store = store[:2] + "\u200b" + store[2:]
        if i % 3 == 0:
            qty = str(qty)
        if i % 19 == 0:
            amount = "(%.2f)" % amount
        elif i % 5 == 0:
            amount = "￥{:,.2f}".format(amount)
        yield [date, region, store, cat, goods, qty, price, amount, channel, note]


def dirty_file(n, kind):
    os.makedirs(bench_readers.DATA, exist_ok=True)
    path = os.path.join(bench_readers.DATA, "dirty_%d.%s" % (n, kind))
    if os.path.exists(path):
        return path
    t0 = time.time()
    tmp = path + ".tmp"
    if kind == "csv":
        with open(tmp, "w", encoding="utf-8-sig", newline="") as fh:
            w = csv.writer(fh)
            for row in dirty_rows(n):
                w.writerow(["" if v is None else v for v in row])
    else:
        sys.path.insert(0, ROOT)
        from xlakit.tables import cells, xlsx_new          # the streaming writer, without the path rules
        stats, counter = {}, [0]
        rows = cells.prepare_rows(dirty_rows(n), "xlsx", stats)
        head = [next(rows) for _ in range(100)]
        xlsx_new.write_new(tmp, "台账", head, rows, stats, counter)
    os.replace(tmp, path)
    print("  generated %s (%.1f MB) in %.1f s" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6,
                                                 time.time() - t0), flush=True)
    return path


def data_file(n, layout):
    if layout.startswith("dirty_"):
        return dirty_file(n, layout.split("_", 1)[1])
    return bench_readers.data_file(n, layout)


def command(tool, path, out):
    if tool == "calc_table":            # the yardstick of issue 10: "about the time calc_table takes"
        return bench_calc.command(tool, path)[:3]
    if tool == "clean_table":
        args = dict(CLEAN_ARGS, path=path, out_path=out)
        return ([sys.executable, "-X", "utf8", "-u", "clean_table.py"], os.path.join(ROOT, "tools"),
                json.dumps(args, ensure_ascii=False))
    engine = tool.split("-", 1)[1]
    return [sys.executable, "-X", "utf8", "-c", PANDAS, path, engine, out], ROOT, ""


def measure(tool, path, home, timeout):
    ext = ".csv" if path.endswith(".csv") else ".xlsx"
    folder = os.path.join(home, ".xla", "workspace")
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, "bench_clean_%s%s" % (tool, ext))
    if os.path.exists(out):
        os.remove(out)
    argv, cwd, stdin = command(tool, path, out)
    res = bench_child.run_child(argv, cwd, stdin, bench_child.host_env(home), timeout)
    if "error" in res:
        return res
    if os.path.exists(out):
        res["size"] = os.path.getsize(out)
        os.remove(out)
    if res["code"] != 0:
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:] or ["exit %d" % res["code"]]}
    answer = json.loads(res["out"].strip().splitlines()[-1])
    if tool == "calc_table":
        if not answer.get("ok"):
            return {"error": answer.get("error")}
        res.update(rows=answer["rows_used"], changed=0, dropped=0, complete=True)
    elif tool == "clean_table":
        if not answer.get("ok"):
            return {"error": answer.get("error")}
        res["rows"] = answer["rows_written"]
        res["changed"] = sum(v for k, v in answer["changed"].items() if k not in ("kept_text", "not_date"))
        res["dropped"] = answer["dropped"]["empty_rows"]
        res["complete"] = answer["complete"]
    else:
        res.update(answer)
        res["complete"] = True
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="row counts, comma separated")
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help=",".join(LAYOUTS))
    ap.add_argument("--tools", default="", help="only these (comma separated): " + ",".join(TOOLS))
    ap.add_argument("--all", action="store_true", help="also pandas writing xlsx above 100k rows")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    wanted = [t for t in args.tools.split(",") if t] or TOOLS
    # the tool refuses to write inside the toolbox (bench/data is in it): outputs go to a temp HOME
    home = tempfile.mkdtemp(prefix="bench_clean_")
    have_pandas = subprocess.call([sys.executable, "-c", "import pandas"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) == 0
    have_calamine = subprocess.call([sys.executable, "-c", "import python_calamine"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) == 0

    def skip(n, layout, tool):
        is_csv = layout.endswith("csv")
        if tool.startswith("pandas") and (is_csv != (tool == "pandas-csv") or not have_pandas):
            return True
        if tool == "pandas-calamine" and (not have_calamine or (n > 100000 and not args.all)):
            return True
        return False

    print("python %s, %d cpus" % (sys.version.split()[0], os.cpu_count() or 0), flush=True)
    results = []
    for n in sizes:
        for layout in [x for x in args.layouts.split(",") if x]:
            path = data_file(n, layout)
            for tool in wanted:
                if skip(n, layout, tool):
                    continue
                row = (n, layout, tool, measure(tool, path, home, args.timeout))
                results.append(row)
                print(_line(row), flush=True)
    shutil.rmtree(home, ignore_errors=True)
    print()
    print(_table(results))
    return 0


def _line(row):
    n, layout, tool, r = row
    if "error" in r:
        return "%9d %-11s %-16s ERROR %s" % (n, layout, tool, r["error"])
    return "%9d %-11s %-16s %7.2f s wall %7.2f s cpu %7.0f MiB  (%d rows written, %d cells changed, %d empty rows dropped%s)" % (
        n, layout, tool, r["wall"], r["cpu"], r["rss"] / 2.0 ** 20, r["rows"], r["changed"], r["dropped"],
        "" if r.get("complete", True) else ", INCOMPLETE")


def _table(results):
    lines = ["| rows | file | tool | wall s | cpu s | peak MiB | cells changed |", "|---:|---|---|---:|---:|---:|---:|"]
    for n, layout, tool, r in results:
        if "error" in r:
            lines.append("| %d | %s | %s | %s | | | |" % (n, layout, tool, r["error"]))
        else:
            lines.append("| %d | %s | %s | %.2f | %.2f | %.0f | %d |" % (
                n, layout, tool, r["wall"], r["cpu"], r["rss"] / 2.0 ** 20, r["changed"]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
