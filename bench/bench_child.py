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
