"""MCP client faults against ``python3 xla.py mcp`` on a pipe (a throw-away toolbox of tiny tools, so
the faults, not the tools, take the time):

- the client closes stdin mid-call: quick calls still answer within the 1 s grace, a slow one (a real
  run_python sleeping 40 s) is cancelled, its whole tree killed (the tool, the fence's launcher and
  the script in its own session), and the server is gone within 2 s; or the client vanishes
  altogether (stdin and stdout closed: the calls are cancelled at once, their children killed);
- garbage lines (bytes that are not UTF-8, broken JSON, JSON nested 100,000 deep, a 2 MB line,
  odd JSON values, a batch of junk): each gets at most one JSON-RPC error, the server reads on;
- 100 calls at once: every one answered exactly once, with its own arguments;
- every call cancelled: no answer for any, every tool process and grandchild killed;
- 10,000 cheap requests (ping, tools/list, and tool calls): resident memory flat;
- 10,000 mixed tool calls (tables, documents, a chart, files, the calendar: real tools and replays
  of their recorded answers, ``mixed.py``) in bursts of 100: RSS after 10,000 at most 1.3 x RSS
  after the first 100.

Processes are counted through ``/proc`` (the server's descendants, and the pids the tools wrote);
a survivor adds to the suite's leaked-processes count.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT, alive
from xlakit import host as xla_host

from test_mcp import ECHO, Raw, make_toolbox

from . import harness, mixed, tally

XLA = os.path.join(ROOT, "xla.py")
WAIT = 30
# starts a grandchild, writes both pids to <folder>/<n>.pids, then sleeps
SLOW = ("import json, os, subprocess, sys, time\n"
        "n = json.loads(sys.stdin.read() or '{}').get('n', 0)\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "path = os.path.join(%r, '%%s.pids' %% n)\n"
        "open(path + '.tmp', 'w').write('%%d %%d' %% (os.getpid(), p.pid))\n"
        "os.replace(path + '.tmp', path)\n"
        "time.sleep(120)\n")


def _toolbox(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    return make_toolbox(tmp_path, {"echo": ECHO, "slow": SLOW % str(pids)}), pids


class Client(Raw):
    """The server on a pipe (``write``/``send`` as in test_mcp); every stdout line must be one
    JSON-RPC message or a batch, and a line that is not is kept in ``bad_lines``, not fatal."""

    def __init__(self, root, home, reader=True):
        self.err_path = os.path.join(str(home), "mcp-stderr.log")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen([sys.executable, XLA, "mcp", "--root", root, "--timeout", "40"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     env={"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)})
        self.messages = queue.Queue()
        self.bad_lines = []
        if reader:      # without one, stdout can be closed at once (a reader thread holds its lock)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line.decode("utf-8"))
                items = msg if isinstance(msg, list) else [msg]
                if not all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in items):
                    raise ValueError
            except ValueError:
                self.bad_lines.append(line)
                continue
            for m in items:
                self.messages.put(m)
        self.messages.put(None)

    def collect(self, ids, seconds=WAIT):
        """``{id: [messages]}`` until every id in ``ids`` has an answer (others are dropped)."""
        want, got, end = set(ids), {}, time.monotonic() + seconds
        while want - set(got):
            try:
                msg = self.messages.get(timeout=max(0.05, end - time.monotonic()))
            except queue.Empty:
                msg = None
            if msg is None or time.monotonic() > end:
                raise AssertionError("no answer for %d ids (e.g. %s)" % (len(want - set(got)), sorted(want - set(got), key=str)[:5]))
            if "id" in msg:
                got.setdefault(msg["id"], []).append(msg)
        return got

    def request(self, method, params=None, msg_id="r"):
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.collect([msg_id])[msg_id][0]

    def initialize(self):
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "faults", "version": "0"}}, "init")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as fh:
            return int(next(ln for ln in fh if ln.startswith("VmRSS:")).split()[1])

    def finish(self, seconds=WAIT):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            tally.add("hung_tools")
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the MCP server did not exit %d s after end of input" % seconds)
        finally:
            self.err.close()


def _wait_until(cond, seconds=WAIT):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _pids(folder):
    out = []
    for name in os.listdir(str(folder)):
        if name.endswith(".pids"):
            out += [int(x) for x in open(os.path.join(str(folder), name)).read().split()]
    return out


def _leaks(pids):
    """Processes among ``pids`` still alive a moment later; counted into the suite's tally."""
    _wait_until(lambda: not any(alive(p) for p in pids), 10)
    left = [p for p in pids if alive(p)]
    tally.add("leaked_processes", len(left))
    for p in left:
        try:
            os.kill(p, 9)
        except OSError:
            pass
    return left


@pytest.fixture
def server(tmp_path):
    root, pids = _toolbox(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    clients = []

    def start(reader=True):
        c = Client(root, home, reader)
        clients.append(c)
        if reader:
            c.initialize()
        return c
    start.pids = pids
    yield start
    for c in clients:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def test_stdin_closed_mid_call_quick_calls_answer_then_the_server_exits(server):
    s = server()
    tally.scenario()
    for n in range(3):
        s.send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": n}}})
    s.proc.stdin.close()
    got = s.collect(range(3))
    assert sorted(json.loads(m[0]["result"]["content"][0]["text"])["args"]["n"] for m in got.values()) == [0, 1, 2]
    assert s.finish() == 0
    assert not s.bad_lines


def test_client_vanishing_mid_call_cancels_and_kills_the_children(server):
    """stdin and stdout both closed while two slow calls run (their tools and grandchildren up):
    the server must not sit out the calls' 40 s nor leave the processes behind."""
    s = server(reader=False)
    tally.scenario()
    s.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "0"}}})
    for n in range(2):
        s.send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "slow", "arguments": {"n": n}}})
    assert _wait_until(lambda: len(_pids(server.pids)) == 4), "the slow tools did not start"
    s.proc.stdin.close()
    s.proc.stdout.close()
    try:
        code = s.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        tally.add("hung_tools")
        raise AssertionError("the server kept running after its client vanished")
    finally:
        left = _leaks(_pids(server.pids))
    assert code is not None and not left, left


EOF_LIMIT = 2.0         # seconds from end of input to the server's exit (issue 38 item 3)


def test_stdin_closed_during_a_slow_run_python_cancels_kills_the_tree_and_exits(tmp_path):
    """The real toolbox, a real run_python whose script sleeps 40 s: the client closes stdin
    (the MCP stdio way of saying goodbye). The server must be gone within 2 s of end of input and
    leave no process behind: neither its own descendants (walked in /proc before the close) nor the
    pid the fenced script wrote down."""
    home = tmp_path / "home"
    work = home / ".xla" / "workspace"
    work.mkdir(parents=True)
    (work / "sleep.py").write_text("import os, time\n"
                                   "open('script.pid', 'w').write('%d\\n' % os.getpid())\n"
                                   "time.sleep(40)\n", encoding="utf-8")
    s = Client(ROOT, home)
    tally.scenario()
    try:
        s.initialize()
        s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "run_python", "arguments": {"path": "sleep.py"}}})
        pid_file = work / "script.pid"
        assert _wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n")), \
            ("the fenced script did not start", s.messages.queue)
        script_pid = int(pid_file.read_text())
        below = harness._descendants(s.proc.pid)
        assert script_pid in below and len(below) >= 2, (script_pid, below)
        closed = time.monotonic()
        s.proc.stdin.close()
        try:
            code = s.proc.wait(timeout=EOF_LIMIT + 8)
        except subprocess.TimeoutExpired:
            tally.add("hung_tools")
            raise AssertionError("the server still ran 10 s after end of input")
        took = time.monotonic() - closed
        left = [p for p in below + [script_pid] if alive(p)]
        tally.add("leaked_processes", len(left))
        print("server gone %.2f s after EOF; %d processes below it before, %d left" % (took, len(below), len(left)))
        assert code == 0
        assert took <= EOF_LIMIT, "the server took %.2f s to exit after end of input" % took
        assert not left, left
        assert not _wait_until(lambda: not s.messages.empty() and s.messages.queue[0] is not None, 0.2), \
            "the cancelled call was answered"
    finally:
        s.err.close()
        _leaks(harness._descendants(s.proc.pid) if s.proc.poll() is None else [])
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        try:
            _leaks([int((work / "script.pid").read_text())])
        except (OSError, ValueError):
            pass


GARBAGE = [b"\xff\xfe\x00garbage\n", b"{not json\n", b"[]\n", b"[1, 2, 3]\n", b'{"jsonrpc": "2.0"}\n',
           b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}\n', b"[" * 100000 + b"\n",
           b"a" * (2 << 20) + b"\n", b"   \n", b"null\n", b'"text"\n', b"1e99999\n", b"\x00\x00\x00\n",
           json.dumps([{"junk": i} for i in range(1000)]).encode() + b"\n",
           b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": "not an object"}\n',
           b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "arguments": [1]}}\n',
           b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": null}}\n',
           "{\"jsonrpc\": \"2.0\", \"id\": \"\u4e2d\", \"method\": \"\ud800\"}\n".encode("utf-8", "surrogatepass")]


def test_garbage_lines_get_errors_and_the_server_reads_on(server):
    s = server()
    for line in GARBAGE:
        tally.scenario()
        s.write(line)
        assert s.request("ping", msg_id="after")["result"] == {}, line[:60]
    s.send({"jsonrpc": "2.0", "id": "echo", "method": "tools/call", "params": {"name": "echo", "arguments": {"n": 9}}})
    assert json.loads(s.collect(["echo"])["echo"][0]["result"]["content"][0]["text"])["args"] == {"n": 9}
    assert s.finish() == 0
    assert not s.bad_lines, s.bad_lines[:3]


def test_a_hundred_calls_at_once_each_answered_once(server):
    s = server()
    tally.scenario()
    s.write("".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                "params": {"name": "echo", "arguments": {"n": n}}}) + "\n" for n in range(100)))
    got = s.collect(range(100), seconds=120)
    assert sorted(got) == list(range(100)) and all(len(v) == 1 for v in got.values())
    for n, msgs in got.items():
        assert json.loads(msgs[0]["result"]["content"][0]["text"])["args"] == {"n": n}
    # a straggler answer (a second reply to an id) would show up now
    assert s.request("ping", msg_id="last")["result"] == {}
    assert s.messages.empty()
    assert s.finish() == 0 and not s.bad_lines


def test_every_call_cancelled_no_answer_no_process_left(server):
    s = server()
    n_calls = 12
    tally.scenario()
    for n in range(n_calls):
        s.send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "slow", "arguments": {"n": n}}})
    assert _wait_until(lambda: len(_pids(server.pids)) >= 4), "the first slow tools did not start"
    for n in range(n_calls):
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": n, "reason": "测试取消"}})
    assert _wait_until(lambda: not harness._descendants(s.proc.pid), 20), "tool processes left under the server"
    time.sleep(0.5)               # give a queued call the chance to (wrongly) start
    kids = harness._descendants(s.proc.pid)
    tally.add("leaked_processes", len(kids))
    assert not kids
    assert not _leaks(_pids(server.pids))
    assert s.request("ping", msg_id="after")["result"] == {}
    answered = []
    while not s.messages.empty():
        m = s.messages.get()
        if m and m.get("id") in range(n_calls):
            answered.append(m["id"])
    assert not answered, "cancelled calls were answered: %s" % answered
    assert s.finish() == 0


def test_memory_stays_flat_over_ten_thousand_requests(server):
    s = server()

    def burst(kind, count, start):
        ids = list(range(start, start + count))
        for i in range(0, count, 500):
            chunk = ids[i:i + 500]
            if kind == "call":
                lines = [{"jsonrpc": "2.0", "id": k, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"n": k}}} for k in chunk]
            else:
                lines = [{"jsonrpc": "2.0", "id": k, "method": kind} for k in chunk]
            s.write("".join(json.dumps(m) + "\n" for m in lines))
            got = s.collect(chunk, seconds=120)
            assert all(len(v) == 1 and "result" in v[0] for v in got.values())
        return start + count

    k = burst("ping", 1000, 0)                  # warm up: caches, thread stacks, the allocator's arenas
    k = burst("tools/list", 100, k)
    k = burst("call", 20, k)
    before = s.rss_kb()
    for _ in range(4):
        k = burst("ping", 2100, k)
        k = burst("tools/list", 200, k)
        k = burst("call", 10, k)
    after = s.rss_kb()
    tally.scenario()
    assert k >= 10000
    print("RSS %d -> %d kB over %d requests" % (before, after, k))
    assert after - before < 4096, "RSS grew from %d kB to %d kB over %d requests" % (before, after, k)
    assert s.finish() == 0 and not s.bad_lines


# 4,000 in selftest (twice the 2,000 calls over which RSS had grown 18 -> 47 MB; each call is a tool
# process, ~15 ms): 10,000 cost 2.5-3 minutes of one core. XLA_MCP_MEMORY_CALLS=10000 runs the long one.
MIXED_CALLS = int(os.environ.get("XLA_MCP_MEMORY_CALLS", "4000"))
BURST = 100
REAL_EVERY = 50         # one call in 50 of the long run goes to a real tool


@pytest.mark.slow
def test_memory_bounded_over_ten_thousand_mixed_calls(tmp_path):
    """Issue 38 item 4: RSS grew 18 -> 47 MB over 2,000 mixed calls. Measured after 100 real mixed
    calls (sent 100 at once, as a busy client does) and again after MIXED_CALLS (4,000; 10,000 by
    XLA_MCP_MEMORY_CALLS: 20372 -> 20980 kB measured)."""
    home = tmp_path / "home"
    home.mkdir()
    root = mixed.build(tmp_path, home)
    recorded = []
    for tool, args in mixed.REAL_CALLS:
        res = xla_host.run_tool(tool, args, root=root, home=str(home), log=False)
        assert res.ok, (tool, res.error)
        recorded.append((tool, args, res.stdout.encode("utf-8"), res.stderr.encode("utf-8")))
    replays = mixed.add_replays(root, recorded)
    s = Client(root, home)
    tally.scenario()
    try:
        s.initialize()

        def burst(start, pick):
            ids = list(range(start, start + BURST))
            s.write("".join(json.dumps({"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": dict(
                zip(("name", "arguments"), pick(k)), _meta={"progressToken": k})}, ensure_ascii=False) + "\n"
                for k in ids))
            got = s.collect(ids, seconds=600)
            bad = [m for v in got.values() for m in v if "result" not in m or m["result"]["isError"]]
            assert not bad, bad[:2]
            return start + BURST

        k = burst(0, lambda n: mixed.REAL_CALLS[n % len(mixed.REAL_CALLS)])
        first = s.rss_kb()
        started = time.monotonic()
        while k < MIXED_CALLS:
            k = burst(k, lambda n: mixed.REAL_CALLS[n % len(mixed.REAL_CALLS)] if n % REAL_EVERY == 0
                      else replays[n % len(replays)])
        last = s.rss_kb()
        print("MCP RSS after 100 mixed calls %d kB, after %d: %d kB (x%.2f; %.0f s)" % (
            first, k, last, last / float(first), time.monotonic() - started))
        assert last <= 1.3 * first, "RSS grew from %d kB to %d kB over %d calls" % (first, last, k)
        assert s.finish() == 0 and not s.bad_lines
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
