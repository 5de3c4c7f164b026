"""Benchmark of the MCP server: what it adds on top of running a tool directly.

Why: an MCP client keeps the server running and sends every call through it, so the server must
start fast, answer protocol messages in well under a millisecond and add nothing noticeable to a
tool call next to ``python3 xla.py run`` (which a user would otherwise script). Printed side by
side: server start to the initialize answer, ping round trip, one lunar_date call through the
server, the same call with ``xla.py run``, and two calls sent at once (they overlap).

With ``--progress N``: one calc_table over the N-row bench ledger (bench_readers' generator, sst
xlsx) sent with a ``progressToken``, counting the ``notifications/progress`` that arrive before
the result (issue 24 asks for at least 5 on a million rows) and the seconds to the answer.

Usage: ``python3 bench/bench_mcp.py [--calls 10] [--pings 1000] [--progress 1000000]``
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
XLA = os.path.join(ROOT, "xla.py")


class Pipe:
    def __init__(self, env):
        self.proc = subprocess.Popen([sys.executable, XLA, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0

    def send(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.proc.stdin.write((json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8"))
        self.proc.stdin.flush()
        return self.next_id

    def answer(self):
        return json.loads(self.proc.stdout.readline())

    def request(self, method, params=None):
        self.send(method, params)
        return self.answer()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--pings", type=int, default=1000)
    ap.add_argument("--progress", type=int, default=0, help="rows of the ledger for the progress run")
    opts = ap.parse_args(argv)
    if opts.progress:
        return progress_run(opts.progress)
    home = tempfile.mkdtemp(prefix="bench-mcp-")
    env = {"HOME": home, "PATH": os.environ.get("PATH", os.defpath)}
    call = {"name": "lunar_date", "arguments": {"date": "2024-02-10"}}

    t0 = time.perf_counter()
    pipe = Pipe(env)
    pipe.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})
    start_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    for _ in range(opts.pings):
        pipe.request("ping")
    ping_us = (time.perf_counter() - t0) / opts.pings * 1e6
    t0 = time.perf_counter()
    pipe.request("tools/list")
    list_ms = (time.perf_counter() - t0) * 1000

    via_mcp = []
    for _ in range(opts.calls):
        t0 = time.perf_counter()
        res = pipe.request("tools/call", call)
        via_mcp.append((time.perf_counter() - t0) * 1000)
        assert not res["result"]["isError"], res
    t0 = time.perf_counter()
    for _ in range(2):
        pipe.send("tools/call", call)
    pipe.answer(), pipe.answer()
    pair_ms = (time.perf_counter() - t0) * 1000
    pipe.close()

    via_run = []
    for _ in range(opts.calls):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, XLA, "run", "lunar_date", json.dumps(call["arguments"])], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        via_run.append((time.perf_counter() - t0) * 1000)

    rows = [("server start → initialize answer", "%.0f ms" % start_ms),
            ("ping round trip (mean of %d)" % opts.pings, "%.0f µs" % ping_us),
            ("tools/list (all tools)", "%.1f ms" % list_ms),
            ("lunar_date via MCP (median of %d)" % opts.calls, "%.0f ms" % statistics.median(via_mcp)),
            ("lunar_date via xla.py run (median of %d)" % opts.calls, "%.0f ms" % statistics.median(via_run)),
            ("two lunar_date calls sent at once via MCP", "%.0f ms" % pair_ms)]
    shutil.rmtree(home, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print("%-*s  %s" % (width, name, value))
    return 0


def progress_run(rows):
    sys.path.insert(0, HERE)
    import bench_readers    # the ledger generator and bench/data
    path = bench_readers.data_file(rows, "sst")
    home = tempfile.mkdtemp(prefix="bench-mcp-")
    env = {"HOME": home, "PATH": os.environ.get("PATH", os.defpath)}
    pipe = Pipe(env)
    pipe.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})
    args = {"path": path, "group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum"}]}
    t0 = time.perf_counter()
    wanted = pipe.send("tools/call", {"name": "calc_table", "arguments": args, "_meta": {"progressToken": "p1"}})
    notes, first = 0, None
    while True:
        msg = pipe.answer()
        if msg.get("method") == "notifications/progress":
            notes += 1
            first = first or (time.perf_counter() - t0)
            continue
        if msg.get("id") == wanted:
            break
    seconds = time.perf_counter() - t0
    data = msg["result"].get("structuredContent") or {}
    pipe.close()
    shutil.rmtree(home, ignore_errors=True)
    print("calc_table over MCP, %d rows: %.1f s to the answer, %d progress notifications (first after %.1f s), "
          "rows_used %s, complete %s, isError %s" % (rows, seconds, notes, first or 0, data.get("rows_used"),
                                                     data.get("complete"), msg["result"].get("isError")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
