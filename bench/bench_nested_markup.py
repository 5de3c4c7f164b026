"""Benchmark of fetch_url on deeply nested markup: wall time and peak memory of the whole process.

Why: issue 34 found 8,000 nested inline tags (212 KB) taking 60 s: the readable-text pass walked
each node's subtree again (own text, anchors) and up all its ancestors, and the HTML tree had no
depth bound. After the fix every pass is linear (``xlakit/web/readable.py``, ``dom.py``); this
prints what a page of 8k / 50k / 200k nested tags costs, per shape:

- ``inline``        ``<span>文字N，`` never closed (the issue's case);
- ``inline_closed`` ``<b><i>`` n levels deep, closed at the end, the text at the bottom;
- ``block``         ``<div>第N段`` never closed;
- ``mixed``         ``<div><font><p>`` never closed, then a run of ``</p>``;
- ``cells``         a row of empty ``<td></td>`` then one with text (the old trailing-cell regex
                    backtracked exponentially on it: 2,000 cells did not finish in 5 minutes);
- ``links``         ``<a href>`` nested n deep, with ``links: true``;
- ``stray_lt``      ``< x `` n times (a "<" opening nothing is a run of text each);
- ``attrs``         one start tag of n attributes, never closed.

Each page is served by ``tests/netserver.py`` through ``XLA_NET_MAP`` and fetched by the real
script in a new process, as the host runs it; wall time is the whole process (start-up included),
memory its peak RSS (``wait4``).

Usage: ``python3 bench/bench_nested_markup.py [--sizes 8000,50000,200000] [--shapes inline,links]``.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from netserver import NetServer  # noqa: E402
from xlakit import host as xla_host  # noqa: E402

SHAPES = ("inline", "inline_closed", "block", "mixed", "cells", "links", "stray_lt", "attrs")


def page(shape, n):
    if shape == "inline":
        return "<html><body>" + "".join("<span>文字%d，" % i for i in range(n)) + "</body></html>"
    if shape == "inline_closed":
        return "<html><body><p>" + "<b><i>" * (n // 2) + "正文。" * 50 + "</i></b>" * (n // 2) + "</p></body></html>"
    if shape == "block":
        return "<html><body>" + "".join("<div>第%d段，内容。" % i for i in range(n)) + "</body></html>"
    if shape == "mixed":
        return "<html><body>" + "".join("<div><font><p>文字%d，" % i for i in range(n // 3)) + "</p>" * n + "</body></html>"
    if shape == "cells":
        return "<html><body><table><tr>" + "<td></td>" * n + "<td>末尾的格子，有字。</td></tr></table></body></html>"
    if shape == "links":
        return "<html><body>" + "".join("<a href='/x%d'>" % i for i in range(n)) + "链接的文字</body></html>"
    if shape == "stray_lt":     # "<" that open nothing: a run of text each, as costly as tags
        return "<html><body><p>开头的正文，内容。</p>" + "< x " * n + "</body></html>"
    if shape == "attrs":        # one start tag of n attributes, never closed
        return "<html><body><p>开头的正文，内容。</p><div " + "a=1 " * n
    raise ValueError(shape)


def run(server, shape, n, home):
    html = page(shape, n)
    server.page("/deep.html", html, host="news.example.cn")
    env = xla_host.tool_env(ROOT, home, {"XLA_NET_MAP": json.dumps({"https://news.example.cn": server.base,
                                                                    "*": "offline"})})
    args = {"url": "https://news.example.cn/deep.html", "max_chars": 2000, "links": shape == "links"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-X", "utf8", "-u", "fetch_url.py"], cwd=os.path.join(ROOT, "tools"),
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(json.dumps(args).encode("utf-8"))
    proc.stdin.close()
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    secs = time.monotonic() - start
    data = json.loads(out)
    note = "ok, %d chars" % data.get("total_chars", 0) if data.get("ok") else "error: " + data.get("error", "")[:60]
    if any("结构过于复杂" in w for w in data.get("warnings") or []):
        note += " (start only)"
    return len(html.encode("utf-8")), secs, usage.ru_maxrss / 1024.0, note


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8000,50000,200000")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    opts = ap.parse_args()
    home = os.path.join(HERE, "data", "home-nested")
    os.makedirs(home, exist_ok=True)
    server = NetServer()
    try:
        print("%-14s %8s %9s %8s %9s  %s" % ("shape", "tags", "page KB", "wall s", "peak MB", "answer"))
        for n in (int(x) for x in opts.sizes.split(",")):
            for shape in opts.shapes.split(","):
                size, secs, mb, note = run(server, shape, n, home)
                print("%-14s %8d %9d %8.2f %9.1f  %s" % (shape, n, size // 1024, secs, mb, note), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
