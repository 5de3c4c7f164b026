"""Paging a big sheet with read_spreadsheet: page 1, later pages and the last page, whole process.

Why: the model reads a big sheet page by page (``next_offset``), one tool process per call. Before
the page cache every call read the workbook from its first row; now the first call writes the
rows to ``~/.xla/cache/pages`` and later calls decode only their page (xlakit/tables/page_cache.py).
Goal of issue 27: the last page of a 50k-row xlsx costs at most 2x the first page.

Each call is the real tool spawned through the host (``xlakit.host.run_tool``), with a private
HOME; "no cache" is the same call with a HOME whose cache is emptied first (what every call cost
before). Files come from bench_readers.data_file (the 10-column ledger, ``bench/data/``).

Usage: ``python3 bench/bench_paging.py [--rows 50000] [--layouts sst,csv] [--repeat 3]``
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, HERE]

from xlakit import host  # noqa: E402
import bench_readers  # noqa: E402


def call(path, home, offset, limit=200, header_row=None):
    args = {"path": path, "offset": offset, "limit": limit}
    if header_row:
        args["header_row"] = header_row
    t0 = time.time()
    res = host.run_tool("read_spreadsheet", args, home=home, log=False)
    took = time.time() - t0
    if res.error or not res.data or not res.data.get("ok"):
        raise SystemExit("read_spreadsheet failed: %s" % (res.error or res.stdout[:300]))
    return took, res.data["sheets"][0]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--layouts", default="sst,csv")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print("read_spreadsheet paging, %d data rows, whole process (median of %d), seconds" % (args.rows, args.repeat))
    print("%-8s %10s %10s %10s %10s %14s %8s" % ("file", "page1", "page1-warm", "page2", "last", "last-no-cache",
                                                 "last/p1"))
    for layout in args.layouts.split(","):
        path = bench_readers.data_file(args.rows, layout)
        times = {"p1": [], "p1w": [], "p2": [], "last": [], "cold_last": []}
        for _ in range(args.repeat):
            home = tempfile.mkdtemp(prefix="bench-paging-")
            try:
                t, page = call(path, home, 0)
                times["p1"].append(t)
                total = page["total_rows"]
                times["p1w"].append(call(path, home, 0)[0])
                times["p2"].append(call(path, home, 200)[0])
                t, last = call(path, home, max(0, total - 100))
                assert last["next_offset"] is None, last["next_offset"]
                times["last"].append(t)
                shutil.rmtree(os.path.join(home, ".xla", "cache"), ignore_errors=True)
                times["cold_last"].append(call(path, home, max(0, total - 100))[0])
            finally:
                shutil.rmtree(home, ignore_errors=True)
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        print("%-8s %10.2f %10.2f %10.2f %10.2f %14.2f %8.2f" % (
            layout, med["p1"], med["p1w"], med["p2"], med["last"], med["cold_last"], med["last"] / med["p1"]))


if __name__ == "__main__":
    main()
