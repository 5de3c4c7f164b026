"""Benchmark of issue 39's 100k-row rows side by side: reading alone, the read-only tools (pivot,
calc, reconcile) and the tools that write 100k rows (merge, clean, report), median of N runs.

Why: the goals are relative to reading (read-only tools ≤ 1.0 s whole process where reading alone
takes ~0.9 s; writers ≤ 2.0 s). On the shared 2-core dev machine a single run says little, so
every job runs ``--repeat`` times (default 5), interleaved (a busy minute hits all jobs alike), and
the median wall and cpu seconds are printed with the largest single process's peak RSS, the load
average at the start of each job's runs, and the wall time beyond reading alone.

"read" is our reader alone in a fresh process under the same wrapper and host environment: open
the workbook, walk every row and sum 金额 (bench_readers' "ours" child). The tools' jobs and
arguments are bench_tables_1m's (one definition each). Ledgers come from ``bench_readers.py``
(``bench/data/``, gitignored).

``--baseline DIR`` also runs every tool job from another checkout (e.g. the main branch before a
change), interleaved with ours, so a change can be judged on a busy machine by the cpu seconds of
the same job side by side.

Usage: ``python3 bench/bench_100k.py [--repeat 5] [--formats xlsx,csv] [--jobs read,pivot,...]
[--rows 100000] [--baseline DIR]``.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_child  # noqa: E402
import bench_readers  # noqa: E402
import bench_tables_1m  # noqa: E402

JOBS = ["read", "pivot", "calc", "reconcile", "merge", "clean", "report"]
GOAL = {"read": None, "pivot": 1.0, "calc": 1.0, "reconcile": 1.0, "merge": 2.0, "clean": 2.0, "report": 2.0}


def read_alone(path, home):
    code = (bench_readers.CHILD_PRELUDE % {"root": ROOT, "path": path}) + bench_readers.READERS["ours"] \
        + bench_readers.CHILD_EPILOGUE
    res = bench_child.run_child([sys.executable, "-X", "utf8", "-c", code], ROOT, "", bench_child.host_env(home), 600)
    if "error" not in res and res["code"] != 0:
        return {"error": res["err"].strip().splitlines()[-1:]}
    return res


def load():
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--formats", default="xlsx", help="xlsx and/or csv")
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline", default="", help="another checkout whose tools run beside ours (label: before)")
    args = ap.parse_args(argv)
    n = args.rows
    home = tempfile.mkdtemp(prefix="bench_100k_home_")     # outside the toolbox: its folder is write-protected
    os.makedirs(os.path.join(home, ".xla", "workspace"), exist_ok=True)
    jobs = [j for j in args.jobs.split(",") if j]
    other = bench_readers.data_file(n, "csv")
    todo = []
    for fmt in [f for f in args.formats.split(",") if f]:
        path = bench_readers.data_file(n, "sst" if fmt == "xlsx" else "csv")
        todo += [(fmt, job, path) for job in jobs]
        if args.baseline:
            todo += [(fmt, job + " (before)", path) for job in jobs if job != "read"]
    runs = {(fmt, job): [] for fmt, job, _p in todo}
    loads = {(fmt, job): [] for fmt, job, _p in todo}
    errors = {}
    for _ in range(args.repeat):
        for fmt, job, path in todo:
            loads[(fmt, job)].append(load())
            if job == "read":
                res = read_alone(path, home)
            elif job.endswith(" (before)"):
                bench_tables_1m.ROOT = os.path.abspath(args.baseline)     # its tools/, same wrapper and data
                try:
                    res = bench_tables_1m.measure(job.split()[0], "ours", path, other, home, 600)
                finally:
                    bench_tables_1m.ROOT = ROOT
            else:
                res = bench_tables_1m.measure(job, "ours", path, other, home, 600)
            if "error" in res:
                errors[(fmt, job)] = res["error"]
            else:
                runs[(fmt, job)].append(res)
    print("python %s, %d cpus, median of %d runs each, interleaved" % (sys.version.split()[0], os.cpu_count(),
                                                                      args.repeat))
    lines = ["| rows | format | job | wall s | cpu s | wall / cpu − reading alone | goal | peak MiB (largest / tree) | load avg |",
             "|---:|---|---|---:|---:|---:|---|---:|---|"]
    base = {}
    for fmt, job, _p in todo:
        rs = runs[(fmt, job)]
        if rs and job == "read":
            base[fmt] = (statistics.median(r["wall"] for r in rs), statistics.median(r["cpu"] for r in rs))
    for fmt, job, _p in todo:
        rs = runs[(fmt, job)]
        if not rs:
            lines.append("| %d | %s | %s | ERROR %s | | | | | |" % (n, fmt, job, errors.get((fmt, job))))
            continue
        wall = statistics.median(r["wall"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        goal = GOAL.get(job.split()[0])
        ld = loads[(fmt, job)]
        lines.append("| %d | %s | %s | %.2f | %.2f | %s | %s | %.0f / %.0f | %.1f–%.1f |" % (
            n, fmt, job, wall, cpu, "" if job == "read" or fmt not in base else "%+.2f / %+.2f" % (wall - base[fmt][0], cpu - base[fmt][1]),
            "" if goal is None else ("≤ %.1f s: %s" % (goal, "met" if wall <= goal else "missed by %.2f s" % (wall - goal))),
            max(r["rss"] for r in rs) / 2.0 ** 20, max(r.get("tree_rss", 0) for r in rs) / 2.0 ** 20, min(ld), max(ld)))
    print("\n".join(lines))
    shutil.rmtree(home, ignore_errors=True)
    if errors:
        print("errors: %s" % errors)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
