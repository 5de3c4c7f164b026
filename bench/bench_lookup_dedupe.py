"""Benchmark of lookup_table and dedupe_table: whole-process seconds and peak memory on the big
ledgers, next to pandas doing the same job (read, join / dedupe, write the result file).

Why: the host kills a tool at 60 s and the issue asks for about calc_table's time (~1 s) at 100k
rows, never more than 5 s. Each run is what the assistant would start — ``python3 -X utf8 -u
<tool>.py`` in ``tools/`` with the JSON on stdin — in a fresh process tree; a wrapper reports its
one child's cpu time and peak RSS. pandas reads the same file (openpyxl engine for xlsx, calamine
too when importable; ``read_csv`` for csv), does the same operation and writes the same kind of
file (``to_excel`` / ``to_csv``), because a user who asks for a table wants the file.

Jobs (the ledger's 10 columns: 日期 区域 门店 品类 商品 数量 单价 金额 渠道 备注):
- ``merge``:     ledger LEFT JOIN a 320-row price list on 商品 (brings 标准价, 供应商);
- ``reconcile``: ledger xlsx vs the same ledger as csv, per 商品 sum of 金额 compared;
- ``dedupe``:    one row per (门店, 商品), keep first;
- ``report``:    every row of every duplicate (门店, 商品) group, grouped, with its row number.

Ledgers come from ``bench_readers.py`` (same generator, ``bench/data/``, gitignored). The tools must
be declared in tools.json (their entries wait in docs/drafts/ until the lead merges them).

Usage: ``python3 bench/bench_lookup_dedupe.py [--sizes 100000,1000000] [--layouts sst,csv]
[--jobs merge,dedupe] [--runners ours,pandas-csv] [--no-pandas]``; pandas+openpyxl is skipped at 1M rows (minutes).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_readers  # noqa: E402
import bench_child  # noqa: E402  (the measuring wrapper and the host environment)

JOBS = ["merge", "reconcile", "dedupe", "report"]

PANDAS = r'''
import json, sys
import pandas
job, path, engine, prices, other, out = sys.argv[1:7]
def read(p, eng):
    if eng == "csv":
        return pandas.read_csv(p, encoding="utf-8-sig")
    return pandas.read_excel(p, engine=eng)
def write(df, p):
    if p.endswith(".csv"):
        df.to_csv(p, index=False, encoding="utf-8-sig")
    else:
        df.to_excel(p, index=False)
df = read(path, engine)
if job == "merge":
    right = pandas.read_csv(prices, encoding="utf-8-sig").drop_duplicates("商品")
    res = df.merge(right, on="商品", how="left")
    info = {"rows": len(res), "matched": int(res["标准价"].notna().sum())}
elif job == "reconcile":
    r = pandas.read_csv(other, encoding="utf-8-sig")
    a = df.groupby("商品")["金额"].sum().rename("左")
    b = r.groupby("商品")["金额"].sum().rename("右")
    res = pandas.concat([a, b], axis=1).reset_index()
    res["差额"] = res["左"] - res["右"]
    res["状态"] = "一致"
    res.loc[res["差额"].abs() > 0.005, "状态"] = "不一致"
    res.loc[res["右"].isna(), "状态"] = "仅左表"
    res.loc[res["左"].isna(), "状态"] = "仅右表"
    info = {"rows": len(res), "same": int((res["状态"] == "一致").sum())}
elif job == "dedupe":
    res = df.drop_duplicates(["门店", "商品"], keep="first")
    info = {"rows": len(res), "removed": len(df) - len(res)}
else:
    mask = df.duplicated(["门店", "商品"], keep=False)
    res = df[mask].copy()
    res.insert(0, "原行号", res.index + 2)
    res["_g"] = res.groupby(["门店", "商品"], sort=False).ngroup()
    res = res.sort_values(["_g", "原行号"], kind="stable")
    info = {"rows": len(res), "groups": int(res["_g"].nunique())}
write(res, out)
print(json.dumps(info))
'''


def prices_file():
    path = os.path.join(bench_readers.DATA, "goods_prices.csv")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8-sig", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["商品", "标准价", "供应商"])
            for i, g in enumerate(bench_readers.GOODS):
                w.writerow([g, "%.2f" % (1 + i * 0.37), "供应商%02d" % (i % 17)])
    return path


def tool_args(job, path, other, out):
    if job == "merge":
        return "lookup_table", {"left_path": path, "right_path": prices_file(), "left_key": "商品", "out_path": out}
    if job == "reconcile":
        return "lookup_table", {"left_path": path, "right_path": other, "left_key": "商品", "mode": "reconcile",
                                "left_value": "金额", "right_value": "金额", "out_path": out}
    if job == "dedupe":
        return "dedupe_table", {"path": path, "keys": ["门店", "商品"], "out_path": out}
    return "dedupe_table", {"path": path, "keys": ["门店", "商品"], "mode": "report", "out_path": out}


def summary(job, answer):
    if job == "merge":
        return "matched %d / %d rows" % (answer["matched"], answer["rows_written"])
    if job == "reconcile":
        return "%s, diff %s" % (answer["status_counts"], answer["total_difference"])
    if job == "dedupe":
        return "removed %d, %d left" % (answer["removed"], answer["rows_after"])
    return "%d groups, %d rows" % (answer["duplicate_groups"], answer["rows_written"])


def measure(job, runner, path, other, home, timeout):
    ext = ".csv" if path.endswith(".csv") else ".xlsx"
    out = os.path.join(tempfile.mkdtemp(prefix="bench_ld_"), "result" + ext)
    if runner == "ours":
        name, args = tool_args(job, path, other, out)
        argv, cwd, stdin = [sys.executable, "-X", "utf8", "-u", name + ".py"], os.path.join(ROOT, "tools"), \
            json.dumps(args, ensure_ascii=False)
    else:
        engine = "csv" if ext == ".csv" else runner.split("-", 1)[1]
        argv, cwd, stdin = [sys.executable, "-X", "utf8", "-c", PANDAS, job, path, engine, prices_file(), other,
                            out], ROOT, ""
    res = bench_child.run_child(argv, cwd, stdin, bench_child.host_env(home), timeout)
    if "error" in res:
        return res
    if res["code"] != 0 and runner != "ours":
        return {"error": (res["err"] or res["out"]).strip().splitlines()[-1:]}
    answer = json.loads(res["out"].strip().splitlines()[-1])
    if runner == "ours":
        if not answer.get("ok"):
            return {"error": answer.get("error")}
        res["what"] = summary(job, answer) + ("" if answer.get("complete", True) else " (PARTIAL)")
    else:
        res["what"] = json.dumps(answer, ensure_ascii=False)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000", help="row counts, comma separated")
    ap.add_argument("--layouts", default="sst,csv", help="sst (Excel-style xlsx), csv")
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--no-pandas", action="store_true")
    ap.add_argument("--runners", default="", help="only these: ours,pandas-openpyxl,pandas-calamine,pandas-csv")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args(argv)
    home = os.path.join(HERE, "data", "home")
    os.makedirs(home, exist_ok=True)
    child_env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools", "pydeps"))   # openpyxl lives there

    def importable(mods):
        return subprocess.call([sys.executable, "-c", "import " + mods], env=child_env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) == 0
    have_pandas = not args.no_pandas and importable("pandas, openpyxl")
    have_calamine = have_pandas and importable("python_calamine")
    print("python %s, %d cpus" % (sys.version.split()[0], os.cpu_count() or 0), flush=True)
    table = ["| rows | format | job | runner | wall s | cpu s | peak MiB | result |", "|---:|---|---|---|---:|---:|---:|---|"]
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        csv_path = bench_readers.data_file(n, "csv")
        for layout in [x for x in args.layouts.split(",") if x]:
            path = bench_readers.data_file(n, layout)
            fmt = "csv" if layout == "csv" else "xlsx"
            runners = ["ours"]
            if have_pandas:
                if fmt == "csv":
                    runners.append("pandas-csv")
                else:
                    if n < 1000000:
                        runners.append("pandas-openpyxl")
                    if have_calamine:
                        runners.append("pandas-calamine")
            if args.runners:
                runners = [r for r in runners if r in args.runners.split(",")]
            for job in [j for j in args.jobs.split(",") if j]:
                for runner in runners:
                    r = measure(job, runner, path, csv_path, home, args.timeout)
                    if "error" in r:
                        line = "| %d | %s | %s | %s | ERROR %s | | | |" % (n, fmt, job, runner, r["error"])
                    else:
                        line = "| %d | %s | %s | %s | %.2f | %.2f | %.0f | %s |" % (
                            n, fmt, job, runner, r["wall"], r["cpu"], r["rss"] / 2.0 ** 20, r["what"])
                    print(line, flush=True)
                    table.append(line)
    print()
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
