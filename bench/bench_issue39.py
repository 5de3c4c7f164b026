"""Every row of issue 39's table in one run, side by side: ours, the peer, the goal, met or missed
by how much, and the 1-minute load before each measurement.

Why: issue 39 names five jobs where a user would pick another tool (or find ours slow) and one for
small calls; each had its own benchmark script and its own day. This runs them all in one sitting
on the same machine, so the rows compare, and says per row whether the goal holds:

- calc_table on a 1M-row xlsx vs DuckDB ``read_xlsx`` (+ pandas with calamine): goal ≤ DuckDB;
- calc_table on a 1M-row csv vs pandas ``read_csv`` (+ DuckDB): goal ≤ pandas;
- 100k-row xlsx, the read-only tools (pivot, calc, reconcile) vs reading alone: goal ≤ 1.0 s;
- 100k rows, the tools that write them (merge, clean, dedupe report): goal ≤ 2.0 s;
- reading a 100k-row .ods vs python-calamine: goal ≤ 1.5 × calamine;
- small calls (50-row sheet, lunar_date, current_time): own time (minus a bare interpreter) ≤ 0.15 s.

The measuring is the existing scripts' (one definition each): ``bench_calc.measure`` (calc_table,
pandas, DuckDB; the grand total of each answer is printed so they can be seen to agree),
``bench_100k.read_alone`` and ``bench_tables_1m.measure`` (the 100k jobs), ``bench_readers.measure``
(the .ods readers), ``bench_startup.one`` (small calls), all under ``bench_child``'s wrapper in
fresh process trees with the host's environment. Peers run from ``XLA_BENCH_PEER_PYTHON`` (or
``.benchvenv``); a peer that is missing leaves its cell empty. Each measurement runs ``--repeat``
times (default 3; small calls 7), the median wall is shown with min–max and the load range.

Usage: ``python3 bench/bench_issue39.py [--repeat 3] [--quick] [--rows job,...]``; ``--quick`` uses
100k rows for the million-row jobs, 10k for the 100k jobs and 2 runs each (a smoke run: the goals
are about the full sizes). Ledgers are generated into ``bench/data/`` on first use (gitignored).
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_100k  # noqa: E402
import bench_calc  # noqa: E402
import bench_child  # noqa: E402
import bench_new_formats  # noqa: E402
import bench_readers  # noqa: E402
import bench_startup  # noqa: E402
import bench_tables_1m  # noqa: E402

ROWS = ["calc_xlsx", "calc_csv", "readonly", "writers", "ods", "small"]


def _wall(r):
    return "ERROR %s" % r["error"] if "error" in r else bench_child.spread(r)


def _cpu(r):
    return "%.2f" % r["cpu"] if "error" not in r and "cpu" in r else ""


def _verdict(ours, goal, ratio=False):
    """``met`` / ``missed by …`` of a wall time (or a ratio) against its goal."""
    if ours is None or goal is None:
        return "?"
    if ours <= goal:
        return "met (%s)" % ("%.2f×" % ours if ratio else "%.2f s" % ours)
    return "**missed by %s**" % ("%.2f× (%.0f%%)" % (ours - goal, 100.0 * (ours - goal) / goal) if ratio else
                                 "%.2f s (%.0f%%)" % (ours - goal, 100.0 * (ours - goal) / goal))


class Table(object):
    def __init__(self):
        self.lines = ["| job | rows | runner | wall s: median (min–max, runs, load) | cpu s | goal | verdict |",
                      "|---|---:|---|---|---:|---|---|"]

    def add(self, job, rows, runner, r, goal="", verdict=""):
        line = "| %s | %s | %s | %s | %s | %s | %s |" % (job, "{:,}".format(rows) if rows else "", runner, _wall(r),
                                                       _cpu(r), goal, verdict)
        self.lines.append(line)
        print(line, flush=True)


def calc_rows(table, n, layout, repeat, home):
    """calc_table on an n-row ledger (xlsx: shared strings, as Excel saves; or csv) next to its peers."""
    path = bench_readers.data_file(n, layout)
    peer_name = "duckdb" if layout != "csv" else "pandas-csv"
    others = ["pandas-calamine"] if layout != "csv" else ["duckdb"]
    have = {"duckdb": bench_child.peer_has("duckdb"), "pandas-csv": bench_child.peer_has("pandas"),
            "pandas-calamine": bench_child.peer_has("pandas, python_calamine")}
    job = "calc_table, %s" % ("xlsx" if layout != "csv" else "csv")
    ours = bench_calc.measure("calc_table", path, home, 600, repeat)
    peer = bench_calc.measure(peer_name, path, home, 600, repeat) if have[peer_name] else {"error": "no peer"}
    goal_wall = peer.get("wall") if "error" not in peer else None
    label = "≤ %s" % ("DuckDB read_xlsx" if layout != "csv" else "pandas read_csv")
    table.add(job, n, "ours (total %s)" % ours.get("total", "?"), ours, label,
              _verdict(ours.get("wall") if "error" not in ours else None, goal_wall))
    table.add(job, n, "%s (total %s)" % (peer_name, peer.get("total", "?")), peer)
    for name in others:
        if have[name]:
            r = bench_calc.measure(name, path, home, 600, repeat)
            table.add(job, n, "%s (total %s)" % (name, r.get("total", "?")), r)


def hundred_k_rows(table, n, jobs, goal, repeat, home, with_read):
    """The 100k-row tool jobs (bench_tables_1m's arguments) on the xlsx ledger, and reading alone."""
    path = bench_readers.data_file(n, "sst")
    other = bench_readers.data_file(n, "csv")
    if with_read:
        r = bench_child.repeated(lambda: bench_100k.read_alone(path, home), repeat)
        table.add("read alone (xlsx)", n, "ours", r, "", "reference")
    for job in jobs:
        r = bench_child.repeated(lambda: bench_tables_1m.measure(job, "ours", path, other, home, 600), repeat)
        if "error" not in r and not r.get("complete", True):
            r = dict(r, error="incomplete answer")
        table.add("%s (xlsx)" % job, n, bench_tables_1m.TOOL_OF[job], r, "≤ %.1f s" % goal,
                  _verdict(r.get("wall") if "error" not in r else None, goal))


def ods_rows(table, n, repeat):
    path = bench_new_formats.data_file(n, "ods")
    ours = bench_child.repeated(lambda: bench_readers.measure("ours", path, 300), repeat)
    peer = bench_child.repeated(lambda: bench_readers.measure("calamine", path, 300), repeat) \
        if bench_readers.available("calamine") else {"error": "no calamine"}
    ratio = ours["wall"] / peer["wall"] if "error" not in ours and "error" not in peer else None
    table.add("read .ods", n, "ours", ours, "≤ 1.5 × calamine",
              _verdict(ratio, 1.5, ratio=True) if ratio is not None else "?")
    table.add("read .ods", n, "calamine", peer)


def small_rows(table, repeat, home):
    """Small calls: the median of ``repeat`` fresh processes each, minus a bare interpreter's."""
    xlsx = bench_readers.data_file(bench_startup.ROWS, "sst")
    csv = bench_readers.data_file(bench_startup.ROWS, "csv")
    todo = bench_startup.calls(xlsx, csv)
    runs = {label: [] for label, _s, _a in todo}
    loads = []
    errors = {}
    for _ in range(repeat):               # interleaved, as bench_startup does
        for label, script, params in todo:
            loads.append(bench_child.load())
            r = bench_startup.one(script, params, home)
            if "error" in r:
                errors[label] = r["error"]
            else:
                runs[label].append(r)
    bare = statistics.median(r["wall"] for r in runs["bare python"]) if runs["bare python"] else 0.0
    for label, script, _params in todo:
        rs = runs[label]
        if not rs:
            table.add("small call: " + label, bench_startup.ROWS, "ours", {"error": errors.get(label)})
            continue
        walls = sorted(r["wall"] for r in rs)
        r = dict(rs[0], wall=statistics.median(walls), cpu=statistics.median(x["cpu"] for x in rs), walls=walls,
                 loads=loads)
        if script is None:
            table.add("small call: " + label, None, "python -c pass", r, "", "reference")
            continue
        own = r["wall"] - bare
        table.add("small call: " + label, bench_startup.ROWS if "table" in label or "spreadsheet" in label else None,
                  "ours, own %.3f s" % own, r, "own ≤ 0.15 s", _verdict(own, 0.15))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (small calls: at least 7)")
    ap.add_argument("--quick", action="store_true", help="smaller ledgers (100k / 10k rows), 2 runs each")
    ap.add_argument("--rows", default=",".join(ROWS), help="which rows: " + ",".join(ROWS))
    args = ap.parse_args(argv)
    big, mid = (100000, 10000) if args.quick else (1000000, 100000)
    repeat = 2 if args.quick else args.repeat
    wanted = [r for r in args.rows.split(",") if r]
    home = tempfile.mkdtemp(prefix="bench_i39_home_")      # outside the toolbox: its folder is write-protected
    os.makedirs(os.path.join(home, ".xla", "workspace"), exist_ok=True)
    print("python %s (%s), %d cpus, peers from %s, load %s" % (
        sys.version.split()[0], sys.executable, os.cpu_count() or 0, bench_child.PEER_PYTHON,
        " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    table = Table()
    if "calc_xlsx" in wanted:
        calc_rows(table, big, "sst", repeat, home)
    if "calc_csv" in wanted:
        calc_rows(table, big, "csv", repeat, home)
    if "readonly" in wanted:
        hundred_k_rows(table, mid, ["pivot", "calc", "reconcile"], 1.0, repeat, home, True)
    if "writers" in wanted:
        hundred_k_rows(table, mid, ["merge", "clean", "report"], 2.0, repeat, home, "readonly" not in wanted)
    if "ods" in wanted:
        ods_rows(table, mid, repeat)
    if "small" in wanted:
        small_rows(table, max(repeat, 2 if args.quick else 7), home)
    print()
    print("load after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    print("\n".join(table.lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
