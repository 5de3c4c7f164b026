"""Benchmark of small calls: how long a fresh tool process takes to answer a 50-row sheet.

Why: issue 39 asks a small call to feel instant, at most 0.15 s of the tool's own time. A tool is
started fresh for every call (``python3 -X utf8 -u tools/X.py`` in ``tools/``, the host's
environment), so its imports, the manifest and its per-call disk work are paid every time. This
measures exactly that: probe_table, read_spreadsheet and calc_table on a 50-row ledger (xlsx and
csv), lunar_date and current_time, each run ``--repeat`` times (default 7) in a fresh process tree
under ``bench_child``'s wrapper, and prints the median wall and cpu seconds, the peak RSS and the
load average of the machine beside each row (the dev machine is shared: numbers under load are
larger, the median damps single hiccups, not a busy machine).

"Own time" is the tool's median minus the median of a bare ``python3 -X utf8 -u -c pass`` started
the same way in the same run: what the interpreter and its ``site`` cost on this machine (a
sandbox's ``.pth`` files, a pyenv shim) is not the tool's. ``--instructions`` also counts the
instructions of one run under valgrind's callgrind (load-independent; slow), tool and bare
interpreter, so a change can be judged on a busy machine. current_time asks web sites for the
time: its wall time includes the network; its cpu time is the number to watch.

``--baseline DIR`` (with ``--instructions``) also counts the instructions of the same calls with
another checkout's tools (e.g. before a change), printed as a last column.

Usage: ``python3 bench/bench_startup.py [--repeat 7] [--tools probe_table,...] [--instructions]
[--baseline DIR]``.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_child  # noqa: E402  (the measuring wrapper and the host environment)
import bench_readers  # noqa: E402  (the ledger generator and data folder are shared)

ROWS = 50


SUM = {"group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum"}]}


def calls(xlsx, csv):
    """(label, script, arguments): the small calls measured."""
    return [
        ("bare python", None, None),
        ("probe_table xlsx", "probe_table.py", {"path": xlsx}),
        ("probe_table csv", "probe_table.py", {"path": csv}),
        ("read_spreadsheet xlsx", "read_spreadsheet.py", {"path": xlsx}),
        ("read_spreadsheet csv", "read_spreadsheet.py", {"path": csv}),
        ("calc_table xlsx", "calc_table.py", dict(SUM, path=xlsx)),
        ("calc_table csv", "calc_table.py", dict(SUM, path=csv)),
        ("lunar_date", "lunar_date.py", {}),
        ("lunar_date festival", "lunar_date.py", {"festival": "清明"}),
        ("current_time", "current_time.py", {}),
    ]


def argv_of(script):
    if script is None:
        return [sys.executable, "-X", "utf8", "-u", "-c", "pass"]
    return [sys.executable, "-X", "utf8", "-u", script]


def load():
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return float("nan")


def one(script, args, home):
    stdin = json.dumps(args, ensure_ascii=False) if args is not None else ""
    res = bench_child.run_child(argv_of(script), os.path.join(ROOT, "tools"), stdin, bench_child.host_env(home), 120)
    if "error" in res:
        return res
    if script is not None:
        try:
            answer = json.loads(res["out"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"error": (res["err"] or res["out"]).strip()[-300:]}
        if not answer.get("ok"):
            return {"error": answer.get("error")}
    return res


def instructions(script, args, home, root=ROOT):
    """Instructions of one run under callgrind (None without valgrind)."""
    if not shutil.which("valgrind"):
        return None
    stdin = json.dumps(args, ensure_ascii=False) if args is not None else ""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv_of(script),
                          cwd=os.path.join(root, "tools"), input=stdin.encode("utf-8"), env=bench_child.host_env(home),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per call (median is printed; at least 5 is sensible)")
    ap.add_argument("--tools", default="", help="only calls whose label starts with one of these (comma separated)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions under valgrind callgrind")
    ap.add_argument("--baseline", default="", help="with --instructions: another checkout counted the same way")
    args = ap.parse_args(argv)
    xlsx = bench_readers.data_file(ROWS, "sst")
    csv = bench_readers.data_file(ROWS, "csv")
    home = os.path.join(HERE, "data", "home")
    os.makedirs(home, exist_ok=True)
    wanted = [t for t in args.tools.split(",") if t]
    todo = [c for c in calls(xlsx, csv) if c[1] is None or not wanted or any(c[0].startswith(w) for w in wanted)]
    runs = {label: [] for label, _s, _a in todo}
    loads = {label: [] for label, _s, _a in todo}
    errors = {}
    for _ in range(args.repeat):          # interleaved, so a busy minute hits every call alike
        for label, script, params in todo:
            loads[label].append(load())
            res = one(script, params, home)
            if "error" in res:
                errors[label] = res["error"]
                continue
            runs[label].append(res)
    base = runs["bare python"]
    base_wall = statistics.median(r["wall"] for r in base) if base else 0.0
    base_cpu = statistics.median(r["cpu"] for r in base) if base else 0.0
    lines = ["| call | wall s (median of %d) | cpu s | own wall s (− bare python) | own cpu s | peak MiB | load avg |"
             % args.repeat, "|---|---:|---:|---:|---:|---:|---|"]
    if args.instructions:
        lines[0] += " instructions (M) | own instructions (M) |"
        lines[1] += "---:|---:|"
        if args.baseline:
            lines[0] += " own instructions before (M) |"
            lines[1] += "---:|"
    base_ir = instructions(None, None, home) if args.instructions else None
    for label, script, params in todo:
        rs = runs[label]
        if not rs:
            lines.append("| %s | ERROR %s | | | | | |" % (label, errors.get(label)))
            continue
        wall = statistics.median(r["wall"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        rss = max(r["rss"] for r in rs) / 2.0 ** 20
        ld = loads[label]
        line = "| %s | %.3f | %.3f | %s | %s | %.0f | %.1f–%.1f |" % (
            label, wall, cpu, "" if script is None else "%.3f" % (wall - base_wall),
            "" if script is None else "%.3f" % (cpu - base_cpu), rss, min(ld), max(ld))
        if args.instructions:
            ir = base_ir if script is None else instructions(script, params, home)
            line += " %s | %s |" % ("%.0f" % (ir / 1e6) if ir else "", "" if script is None or not ir or not base_ir
                                    else "%.0f" % ((ir - base_ir) / 1e6))
            if args.baseline:
                before = None if script is None else instructions(script, params, home, os.path.abspath(args.baseline))
                line += " %s |" % ("%.0f" % ((before - base_ir) / 1e6) if before and base_ir else "")
        lines.append(line)
        print(line, flush=True)
    print()
    print("python: %s" % sys.executable)
    print("\n".join(lines))
    if errors:
        print("errors: %s" % json.dumps(errors, ensure_ascii=False))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
