"""The measuring wrapper every whole-process benchmark runs its child under (one copy).

``run_child(argv, cwd, stdin, env, timeout)`` starts ``python -c WRAPPER`` which starts the child,
feeds it ``stdin`` and prints one JSON line: wall seconds, cpu seconds of the child's whole tree
(RUSAGE_CHILDREN counts waited-for grandchildren, such as the xlsx reader's worker), ``rss`` (the
largest single process's peak) and ``tree_rss`` (the tree's summed RSS, sampled from /proc every
50 ms on Linux), the exit code and the child's output. Measuring from a wrapper keeps the
benchmark script's own memory and imports out of the numbers.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WRAPPER = r'''
import json, os, resource, subprocess, sys, threading, time
cmd, cwd, stdin = json.loads(sys.argv[1])
peak = [0]
def tree_rss(root):
    kids, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as fh:
                parts = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(parts[1]), []).append(int(pid))
        rss[int(pid)] = int(parts[21]) * 4096
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(kids.get(p, ()))
    return total
t0 = time.time()
proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
done = threading.Event()
def sample():
    while not done.wait(0.05):
        if os.path.isdir("/proc"):
            peak[0] = max(peak[0], tree_rss(proc.pid))
threading.Thread(target=sample, daemon=True).start()
out, err = proc.communicate(stdin.encode("utf-8"))
wall = time.time() - t0
done.set()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rss = ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": rss, "tree_rss": peak[0],
                  "code": proc.returncode, "out": out.decode("utf-8", "replace")[-30000:],
                  "err": err.decode("utf-8", "replace")[-2000:]}))
'''


def host_env(home):
    """The host's environment for a tool: only PATH, HOME and PYTHONPATH=tools/pydeps."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": home, "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}


def run_child(argv, cwd, stdin, env, timeout):
    """One child under the wrapper: the wrapper's JSON (wall, cpu, rss, tree_rss, code, out, err),
    or ``{"error": ...}`` on a timeout or a wrapper that failed."""
    try:
        proc = subprocess.run([sys.executable, "-c", WRAPPER, json.dumps([argv, cwd, stdin])], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout > %d s" % timeout}
    if proc.returncode != 0:
        return {"error": proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]}
    return json.loads(proc.stdout.decode("utf-8"))


# Peers (pandas, python-calamine, DuckDB and its excel extension) come from the bench's own venv,
# never from the tools' pydeps: ``python -m venv .benchvenv && .benchvenv/bin/pip install pandas
# python-calamine openpyxl duckdb duckdb-extension-excel`` in the repository root, or point
# XLA_BENCH_PEER_PYTHON at another interpreter that has them.
_VENV = os.path.join(ROOT, ".benchvenv", "Scripts" if os.name == "nt" else "bin",
                     "python.exe" if os.name == "nt" else "python")
PEER_PYTHON = os.environ.get("XLA_BENCH_PEER_PYTHON") or (_VENV if os.path.exists(_VENV) else sys.executable)


def peer_env(home):
    """A peer's environment: PATH and HOME, no PYTHONPATH (the venv's own numpy, not pydeps')."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": home}


def peer_has(modules):
    """Whether the peer Python imports ``modules`` (comma separated)."""
    return subprocess.call([PEER_PYTHON, "-c", "import " + modules], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=peer_env(os.environ.get("HOME", ""))) == 0


def load():
    """The 1-minute load average (the machine is shared: each number is printed beside it)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def repeated(measure_once, repeat):
    """``measure_once()`` ``repeat`` times; the run with the median wall time, with ``walls``
    (all of them, sorted) and ``loads`` (the load average before each run) added."""
    runs = []
    for _ in range(max(1, repeat)):
        before = load()
        r = measure_once()
        r["load_before"] = before
        runs.append(r)
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    ok.sort(key=lambda r: r["wall"])
    mid = dict(ok[len(ok) // 2])
    mid["walls"] = [r["wall"] for r in ok]
    mid["loads"] = [r["load_before"] for r in runs]
    return mid


def spread(r):
    """``1.41 (1.38-1.45, n=3, load 0.2-0.5)`` for a repeated result."""
    walls, loads = r.get("walls") or [r["wall"]], r.get("loads") or [0.0]
    return "%.2f (%.2f-%.2f, n=%d, load %.1f-%.1f)" % (r["wall"], walls[0], walls[-1], len(walls), min(loads),
                                                      max(loads))

