"""What the write fence costs: whole-process seconds of a script run through xla_guard (both layers,
audit hook only, fence off) next to plain ``python3 -X utf8 -u script.py``, the command a user would
otherwise pick. Each measurement is a fresh process (interpreter start + guard + script + exit).

Scripts: ``trivial`` (print one line), ``files`` (create, write, stat, read and delete 2,000 small
files in the workspace, plus listdir), ``imports`` (json, csv, sqlite3, zipfile, openpyxl from pydeps).

    python3 bench/bench_run_python.py            # 7 runs each, median
    python3 bench/bench_run_python.py --runs 15
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARD = os.path.join(ROOT, "xla_guard.py")
PYDEPS = os.path.join(ROOT, "tools", "pydeps")

SCRIPTS = {
    "trivial": "print('hi')\n",
    "files": (
        "import os\n"
        "d = os.path.join(os.getcwd(), 'many')\nos.makedirs(d, exist_ok=True)\n"
        "for i in range(2000):\n"
        "    p = os.path.join(d, 'f%d.txt' % i)\n"
        "    with open(p, 'w') as f:\n        f.write('x' * 100)\n"
        "    os.stat(p)\n"
        "    with open(p) as f:\n        f.read()\n"
        "len(os.listdir(d))\n"
        "for name in os.listdir(d):\n    os.remove(os.path.join(d, name))\n"
        "os.rmdir(d)\n"),
    "imports": "import json, csv, sqlite3, zipfile, decimal, datetime\nimport openpyxl\n",
}


def commands(script, ws, tmp):
    fenced = [sys.executable, "-I", "-B", "-X", "utf8", "-u", GUARD, "--root", ws, "--root", tmp,
              "--path", PYDEPS, "--", script]
    return [
        ("python3 script.py（无围栏，用户自己跑）", [sys.executable, "-X", "utf8", "-u", script], {}),
        ("xla_guard 围栏关闭（UNRESTRICTED=1）", fenced, {"XLA_RUNPY_UNRESTRICTED": "1"}),
        ("xla_guard 只有审计钩子", fenced, {"XLA_GUARD_LAYERS": "audit"}),
        ("xla_guard 审计钩子 + Landlock", fenced, {}),
    ]


def measure(cmd, extra, cwd, runs):
    env = dict(os.environ, PYTHONPATH=PYDEPS, **extra)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        res = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if res.returncode != 0:
            raise SystemExit("failed: %s\n%s" % (" ".join(cmd), res.stderr.decode()[-2000:]))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as base:
        ws = os.path.join(base, "workspace")
        tmp = os.path.join(base, "tmp")
        os.makedirs(ws)
        os.makedirs(tmp)
        print("Python %s, %d 次取中位数，单位：秒（整个进程）" % (sys.version.split()[0], opts.runs))
        print("| 脚本 | " + " | ".join(label for label, _, _ in commands("x", ws, tmp)) + " |")
        print("|---|" + "---:|" * 4)
        for name, code in SCRIPTS.items():
            path = os.path.join(ws, name + ".py")
            with open(path, "w") as f:
                f.write(code)
            row = [measure(cmd, extra, ws, opts.runs) for _, cmd, extra in commands(path, ws, tmp)]
            print("| %s | %s |" % (name, " | ".join("%.3f" % v for v in row)))


if __name__ == "__main__":
    main()
