"""The MCP server (``xla.py mcp``), spawned over stdio as a client spawns it.

Two kinds of test. The first half drives the server with the official MCP Python SDK client (the
``mcp`` package, a test-only dependency; those tests skip when it is not installed): handshake,
every tool listed with its schema and annotations, a table tool on a committed fixture checked
against totals computed here, a chart coming back as image content, Chinese errors as isError,
cancellation killing the child tree. The second half writes raw lines into the pipe, with no
SDK, for what an SDK never sends: malformed JSON, invalid requests, unknown methods, batches, old
and unknown protocol revisions, the manifest changing under a running server, end of input.

No timing asserts: every wait is a bounded poll for a file, a process or a message."""
import base64
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from decimal import Decimal

import pytest

from conftest import CJK, ROOT, alive
from xlakit import manifest as xla_manifest
from xlakit.mcp import server as xla_mcp
from xlakit.raster import png

XLA = os.path.join(ROOT, "xla.py")
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")
WAIT = 30          # seconds any single bounded wait may take before the test fails

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    HAVE_SDK = True
except ImportError:           # Python < 3.10 or not installed: only the raw-pipe tests run
    HAVE_SDK = False

needs_sdk = pytest.mark.skipif(not HAVE_SDK, reason="MCP Python SDK (pip install mcp) not installed")


def sdk_major():
    try:
        from importlib.metadata import version
        return int(version("mcp").split(".")[0])
    except Exception:          # noqa: BLE001 - unknown: assume the current SDK
        return 2


# ---------------------------------------------------------------------------------------------
# helpers

def wait_until(predicate, what, seconds=WAIT):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("waited %d s for %s" % (seconds, what))


def make_toolbox(tmp_path, scripts, annotations=None):
    """A throw-away toolbox (tools.json + tools/*.py), as tests/test_host.py builds one."""
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True, exist_ok=True)
    tools = []
    for name, body in scripts.items():
        (root / "tools" / (name + ".py")).write_text(textwrap.dedent(body), encoding="utf-8")
        entry = {"name": name, "description": "测试工具 %s" % name, "parameters": {
            "type": "object", "properties": {"n": {"type": "integer", "description": "数字"}}, "required": []}}
        if annotations and name in annotations:
            entry["annotations"] = annotations[name]
        tools.append(entry)
    (root / "tools.json").write_text(json.dumps({"tools": tools}, ensure_ascii=False), encoding="utf-8")
    return str(root)


ECHO = """
    import json, sys
    print(json.dumps({"ok": True, "args": json.loads(sys.stdin.read() or "{}")}))
"""

TINY_PNG = png.encode(2, 2, bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]))

IMAGE = """
    import json
    print(json.dumps({"ok": True, "summary": "两张小图", "images": [
        {"name": "a.png", "mime": "image/png", "data": %r},
        {"name": "b.png", "mime": "image/png", "data": %r}]}))
""" % (base64.b64encode(TINY_PNG).decode(), base64.b64encode(TINY_PNG[::-1]).decode())


def slow_script(marker):
    """A tool that starts a grandchild, writes both pids to ``marker`` and sleeps."""
    return """
        import os, subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(%r + ".tmp", "w") as fh:
            fh.write("%%d %%d" %% (os.getpid(), p.pid))
        os.replace(%r + ".tmp", %r)
        time.sleep(120)
    """ % (str(marker), str(marker), str(marker))


def meet_script(folder):
    """A tool that returns only once two runs of it are going at the same time."""
    return """
        import json, os, sys, time
        n = json.loads(sys.stdin.read())["n"]
        open(os.path.join(%r, "here-%%d" %% n), "w").close()
        deadline = time.time() + 30
        while len([f for f in os.listdir(%r) if f.startswith("here-")]) < 2:
            if time.time() > deadline:
                print(json.dumps({"ok": False, "error": "等不到另一个调用：调用没有并发"})); sys.exit(1)
            time.sleep(0.05)
        print(json.dumps({"ok": True, "n": n}))
    """ % (str(folder), str(folder))


def money(value):
    """The fixture's amount cells as exact decimals: numbers, and text like ￥1,764.97 or 956.16元."""
    if isinstance(value, (int, float)):
        return Decimal(repr(value))
    return Decimal(str(value).replace("￥", "").replace("元", "").replace(",", "").strip())


def sample_totals():
    import openpyxl
    sheet = openpyxl.load_workbook(SAMPLE, data_only=True).active
    sums, counts, grand = {}, {}, None
    for row in sheet.iter_rows(min_row=5, values_only=True):
        if row[0] == "合计":
            grand = money(row[4])
        elif row[1]:
            sums[row[1]] = sums.get(row[1], Decimal(0)) + money(row[4])
            counts[row[1]] = counts.get(row[1], 0) + 1
    assert grand is not None and sum(sums.values()) == grand      # the fixture agrees with itself
    return sums, counts


# ---------------------------------------------------------------------------------------------
# with the official SDK client

def dump(model):
    """An SDK model as the wire JSON (camelCase keys, on SDK 1.x and 2.x alike)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def run_async(fn, *args):
    return anyio.run(fn, *args)


@contextlib.asynccontextmanager
async def connect(home, root=None, log_path=None, message_handler=None):
    args = [XLA, "mcp"] + (["--root", root] if root else [])
    params = StdioServerParameters(command=sys.executable, args=args,
                                   env={"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)})
    with open(log_path or os.devnull, "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            kwargs = {"message_handler": message_handler} if message_handler else {}
            async with ClientSession(read, write, **kwargs) as session:
                init = await session.initialize()
                yield session, dump(init)


def texts(result):
    return [c["text"] for c in result["content"] if c["type"] == "text"]


@needs_sdk
def test_sdk_initialize_and_list_every_tool_with_schema_and_annotations(home, tmp_path):
    data, problems = xla_manifest.load_manifest(ROOT)
    assert not problems

    async def main():
        async with connect(home, log_path=str(tmp_path / "server.log")) as (session, init):
            assert init["protocolVersion"] in xla_mcp.PROTOCOL_VERSIONS
            assert init["serverInfo"]["name"] == "xla-tools"
            assert init["capabilities"]["tools"]["listChanged"] is True
            assert CJK.search(init["instructions"])
            await session.send_ping()
            return dump(await session.list_tools())
    listed = run_async(main)["tools"]
    assert [t["name"] for t in listed] == [t["name"] for t in data["tools"]]
    for tool, entry in zip(listed, data["tools"]):
        assert tool["description"] == entry["description"] and CJK.search(tool["description"])
        assert tool["inputSchema"] == entry["parameters"], tool["name"]      # straight from tools.json
        if entry.get("annotations"):
            assert tool["annotations"] == entry["annotations"], tool["name"]
        else:
            assert "annotations" not in tool
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "[xla-mcp] 已启动" in log                                      # logs went to stderr


@needs_sdk
def test_sdk_high_level_client_probes_discover_then_falls_back_to_initialize(home, tmp_path):
    """SDK 2.x's ``Client`` in its default mode first sends the 2026 ``server/discover``; our
    "method not found" must make it use the initialize handshake, not fail."""
    try:
        from mcp import Client
    except ImportError:
        pytest.skip("SDK 1.x has no high-level Client")
    params = StdioServerParameters(command=sys.executable, args=[XLA, "mcp"],
                                   env={"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)})

    async def main():
        async with Client(params) as client:
            tools = dump(await client.list_tools())["tools"]
            result = dump(await client.call_tool("lunar_date", {"date": "2024-02-10"}))
            return client.protocol_version, tools, result
    version, tools, result = run_async(main)
    assert version in xla_mcp.PROTOCOL_VERSIONS
    assert "lunar_date" in [t["name"] for t in tools]
    assert json.loads(texts(result)[0])["text"] == "甲辰年正月初一"


@needs_sdk
def test_sdk_calc_table_on_the_sample_ledger_gives_the_right_totals(home):
    sums, counts = sample_totals()

    async def main():
        async with connect(home) as (session, _init):
            calc = dump(await session.call_tool("calc_table", {
                "path": SAMPLE, "group_by": ["部门"],
                "metrics": [{"column": "金额", "func": "sum", "as": "金额合计"}, {"func": "count", "as": "笔数"}]}))
            return calc
    calc = run_async(main)
    assert calc.get("isError") is not True
    answer = json.loads(texts(calc)[0])
    assert answer["ok"] is True and answer["rows_used"] == sum(counts.values())
    groups = {g["部门"]: g for g in answer["groups"]}
    assert set(groups) == set(sums)
    for dept, group in groups.items():
        assert money(group["金额合计"]) == sums[dept], dept
        assert group["笔数"] == counts[dept]


@needs_sdk
def test_sdk_failures_are_iserror_with_the_chinese_message(home):
    async def main():
        async with connect(home) as (session, _init):
            missing = dump(await session.call_tool("calc_table", {"path": str(home / "没有这个文件.xlsx")}))
            bad = dump(await session.call_tool("lunar_date", {"year": "明年"}))
            no_args = dump(await session.call_tool("calc_table", {}))
            unknown_error = None
            try:
                await session.call_tool("no_such_tool", {})
            except Exception as exc:      # noqa: BLE001 - McpError on SDK 1.x, MCPError on 2.x
                unknown_error = str(exc)
            still = dump(await session.call_tool("lunar_date", {"date": "2024-02-10"}))
            return missing, bad, no_args, unknown_error, still
    missing, bad, no_args, unknown_error, still = run_async(main)
    for result in (missing, bad, no_args):
        assert result["isError"] is True
        answer = json.loads(texts(result)[0])
        assert answer["ok"] is False and CJK.search(answer["error"])
        assert "Traceback" not in answer["error"]
    assert "没有这个文件.xlsx" in json.loads(texts(missing)[0])["error"]
    assert "参数 year 应为整数" in json.loads(texts(bad)[0])["error"]
    assert "缺少必填参数：path" in json.loads(texts(no_args)[0])["error"]
    assert unknown_error and "没有名为 no_such_tool 的工具" in unknown_error
    assert json.loads(texts(still)[0])["festivals"] == ["春节"]           # the session goes on


@needs_sdk
def test_sdk_draw_chart_comes_back_as_image_content(home):
    async def main():
        async with connect(home) as (session, _init):
            return dump(await session.call_tool("draw_chart", {
                "type": "bar", "title": "各部门费用", "labels": ["销售部", "财务部"],
                "series": [{"name": "9月", "data": [15440.46, 15552.07]}]}))
    result = run_async(main)
    assert result.get("isError") is not True
    images = [c for c in result["content"] if c["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png"
    raw = base64.b64decode(images[0]["data"])
    width, height, _rgb = png.decode(raw)
    answer = json.loads(texts(result)[0])
    assert answer["ok"] is True and "images" not in answer              # the model gets the text only
    assert (width, height) == (answer["width"], answer["height"])
    with open(answer["path"], "rb") as fh:
        assert fh.read() == raw


@needs_sdk
def test_sdk_images_convention_becomes_image_content(tmp_path, home):
    root = make_toolbox(tmp_path, {"img": IMAGE})

    async def main():
        async with connect(home, root=root) as (session, _init):
            return dump(await session.call_tool("img", {}))
    result = run_async(main)
    assert [c["type"] for c in result["content"]] == ["text", "image", "image"]
    assert json.loads(result["content"][0]["text"]) == {"ok": True, "summary": "两张小图"}
    assert base64.b64decode(result["content"][1]["data"]) == TINY_PNG
    assert base64.b64decode(result["content"][2]["data"]) == TINY_PNG[::-1]
    assert result["content"][1]["mimeType"] == "image/png"


@needs_sdk
def test_sdk_cancelling_a_call_kills_the_child_tree(tmp_path, home):
    marker = tmp_path / "pids.txt"
    root = make_toolbox(tmp_path, {"slow": slow_script(marker), "echo": ECHO})
    log = tmp_path / "server.log"
    seen = {}

    async def main():
        async with connect(home, root=root, log_path=str(log)) as (session, _init):
            async with anyio.create_task_group() as group:
                async def call():
                    seen["result"] = await session.call_tool("slow", {})
                group.start_soon(call)
                with anyio.fail_after(WAIT):
                    while not marker.exists():
                        await anyio.sleep(0.05)
                group.cancel_scope.cancel()     # the SDK sends notifications/cancelled
            pids = [int(p) for p in marker.read_text().split()]
            with anyio.fail_after(WAIT):
                while any(alive(p) for p in pids):
                    await anyio.sleep(0.05)
            after = dump(await session.call_tool("echo", {"n": 5}))
            return pids, after
    if sdk_major() < 2:
        pytest.skip("SDK 1.x sends no notifications/cancelled when a call is abandoned (the raw-pipe test covers it)")
    pids, after = run_async(main)
    assert "result" not in seen
    assert not any(alive(p) for p in pids)                  # the tool and its grandchild are gone
    assert json.loads(texts(after)[0])["args"] == {"n": 5}   # the server serves on
    wait_until(lambda: "slow 已取消" in log.read_text(encoding="utf-8"), "the cancel in the log")


# ---------------------------------------------------------------------------------------------
# raw pipe, no SDK

class Raw:
    """The server on a pipe; every stdout line is checked to be a JSON-RPC message."""

    def __init__(self, home, root=None, poll=None, env=None):
        cmd = [sys.executable, XLA, "mcp"] + (["--root", root] if root else []) + \
            (["--poll", str(poll)] if poll else [])
        self.err_path = os.path.join(str(home), "server-stderr.log")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     env=dict({"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)},
                                              **(env or {})))
        self.messages = queue.Queue()
        self.other = []
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.next_id = 1000

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            self.messages.put(json.loads(line.decode("utf-8")))
        self.messages.put(None)

    def write(self, data):
        self.proc.stdin.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        self.proc.stdin.flush()

    def send(self, obj):
        self.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def receive(self, match=lambda m: True, seconds=WAIT):
        """The next message that ``match``es (others are kept in ``self.other``)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching message within %d s" % seconds)
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if msg is None:
                raise AssertionError("the server closed stdout")
            if match(msg):
                return msg
            self.other.append(msg)

    def request(self, method, params=None, msg_id=None):
        if msg_id is None:
            self.next_id += 1
            msg_id = self.next_id
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.receive(lambda m: isinstance(m, dict) and m.get("id") == msg_id)

    def initialize(self, version=xla_mcp.LATEST_VERSION):
        answer = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                             "clientInfo": {"name": "raw-test", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.err_path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.err.close()
        self.reader.join(timeout=5)
        for line in self.lines:                       # stdout carried protocol messages only
            msg = json.loads(line.decode("utf-8"))
            items = msg if isinstance(msg, list) else [msg]
            assert all(m.get("jsonrpc") == "2.0" for m in items), line
        return code


@pytest.fixture
def raw(home):
    servers = []

    def start(**kwargs):
        server = Raw(home, **kwargs)
        servers.append(server)
        return server
    yield start
    for server in servers:
        if server.proc.poll() is None:
            server.close()


def test_raw_malformed_lines_and_invalid_requests_get_json_rpc_errors(raw):
    s = raw()
    s.initialize()
    s.write("this is not json{\n")
    err = s.receive()
    assert err["id"] is None and err["error"]["code"] == xla_mcp.PARSE_ERROR
    s.write(b"\xff\xfe\x00garbage\n")
    assert s.receive()["error"]["code"] == xla_mcp.PARSE_ERROR
    s.write("\n   \n")                                              # blank lines: nothing at all
    for bad in ('"just a string"', "[]", '{"jsonrpc": "2.0", "id": 1}', '{"jsonrpc": "1.0", "id": 2, "method": "ping"}',
                '{"jsonrpc": "2.0", "id": null, "method": "ping"}', '{"jsonrpc": "2.0", "id": 3, "method": 42}'):
        s.write(bad + "\n")
        answer = s.receive()
        assert answer["error"]["code"] == xla_mcp.INVALID_REQUEST, bad
    unknown = s.request("resources/list")
    assert unknown["error"]["code"] == xla_mcp.METHOD_NOT_FOUND and "resources/list" in unknown["error"]["message"]
    assert s.request("server/discover")["error"]["code"] == xla_mcp.METHOD_NOT_FOUND   # 2026 probe: use initialize
    assert s.request("tools/list", params=[1, 2])["error"]["code"] == xla_mcp.INVALID_PARAMS
    assert s.request("tools/call", {"arguments": {}})["error"]["code"] == xla_mcp.INVALID_PARAMS
    no_tool = s.request("tools/call", {"name": "no_such_tool"})
    assert no_tool["error"]["code"] == xla_mcp.INVALID_PARAMS and "没有名为 no_such_tool 的工具" in no_tool["error"]["message"]
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})       # no answer to notifications
    s.send({"jsonrpc": "2.0", "id": 77, "result": {}})                                # a stray response: ignored
    assert s.request("ping", msg_id="字符串-id") == {"jsonrpc": "2.0", "id": "字符串-id", "result": {}}
    batch_ids = ["b1", "b2"]
    s.send([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in batch_ids] +
           [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    batch = s.receive(lambda m: isinstance(m, list))
    assert sorted(m["id"] for m in batch) == batch_ids
    assert s.other == []                                # nothing answered that should not be
    assert s.close() == 0
    assert "无法解析的一行" in s.stderr()


@pytest.mark.parametrize("version", list(xla_mcp.PROTOCOL_VERSIONS) + ["2023-01-01", "2099-12-31", 7])
def test_raw_protocol_version_negotiation(raw, version):
    s = raw()
    answer = s.initialize(version)["result"]
    expected = version if version in xla_mcp.PROTOCOL_VERSIONS else xla_mcp.LATEST_VERSION
    assert answer["protocolVersion"] == expected
    assert answer["capabilities"] == {"tools": {"listChanged": True}}
    assert ("title" in answer["serverInfo"]) == (expected in ("2025-11-25", "2025-06-18"))
    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    # annotations exist from 2025-03-26 on; a 2024-11-05 client gets tools without them
    assert ("annotations" in tools["lunar_date"]) == (expected != "2024-11-05")
    assert s.request("ping")["result"] == {}
    assert s.close() == 0


def test_raw_cancelled_notification_kills_the_child_and_sends_no_answer(raw, tmp_path):
    marker = tmp_path / "pids.txt"
    s = raw(root=make_toolbox(tmp_path, {"slow": slow_script(marker), "echo": ECHO}))
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
    wait_until(marker.exists, "the slow tool to start")
    pids = [int(p) for p in marker.read_text().split()]
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "用户取消"}})
    wait_until(lambda: not any(alive(p) for p in pids), "the tool tree to be killed")
    wait_until(lambda: "slow 已取消" in s.stderr(), "the cancel in the log")
    echo = s.request("tools/call", {"name": "echo", "arguments": {"n": 1}})
    assert json.loads(echo["result"]["content"][0]["text"])["args"] == {"n": 1}
    code = s.close()
    assert code == 0, s.stderr()
    assert not [m for m in s.other if isinstance(m, dict) and m.get("id") == 7]    # never answered


def hold_every_slot(home):
    """Take both run slots, as two other assistants' running tools would."""
    from xlakit.fs.lock import FileLock
    locks = [FileLock(os.path.join(str(home), ".xla", "run", "slot-%d.lock" % i)) for i in range(2)]
    assert all(lock.try_acquire() for lock in locks)
    return locks


def test_raw_cancelling_a_queued_call_starts_no_tool(raw, tmp_path, home):
    s = raw(root=make_toolbox(tmp_path, {"echo": ECHO}))
    s.initialize()
    locks = hold_every_slot(home)
    s.send({"jsonrpc": "2.0", "id": "queued", "method": "tools/call", "params": {"name": "echo", "arguments": {"n": 1}}})
    assert s.request("ping")["result"] == {}                  # the reader is not blocked by the queue
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "queued"}})
    wait_until(lambda: "echo 已取消" in s.stderr(), "the queued call to give up")
    for lock in locks:
        lock.release()
    echo = s.request("tools/call", {"name": "echo", "arguments": {"n": 2}})
    assert json.loads(echo["result"]["content"][0]["text"])["args"] == {"n": 2}
    assert s.close() == 0
    assert not [m for m in s.other if isinstance(m, dict) and m.get("id") == "queued"]


def test_host_cancel_hook_kills_a_running_tool_and_skips_a_queued_one(tmp_path, home):
    """The small hook xlakit.host.run_tool got for this server: ``cancel`` (a threading.Event)."""
    from xlakit import host as xla_host
    marker = tmp_path / "pids.txt"
    root = make_toolbox(tmp_path, {"slow": slow_script(marker)})
    cancel = threading.Event()

    def cancel_once_started():
        wait_until(marker.exists, "the slow tool to start")
        cancel.set()
    watcher = threading.Thread(target=cancel_once_started, daemon=True)
    watcher.start()
    res = xla_host.run_tool("slow", {}, root=root, home=str(home), cancel=cancel)
    watcher.join()
    assert res.cancelled and not res.ok and not res.timed_out and "已取消" in res.error
    pids = [int(p) for p in marker.read_text().split()]
    wait_until(lambda: not any(alive(p) for p in pids), "the tool tree to be killed")
    marker.unlink()
    locks = hold_every_slot(home)
    try:
        queued = xla_host.run_tool("slow", {}, root=root, home=str(home), cancel=cancel)   # already set
    finally:
        for lock in locks:
            lock.release()
    assert queued.cancelled and "排队" in queued.error and queued.exit_code is None and not marker.exists()
    plain = xla_host.run_tool("slow", {}, root=root, home=str(home), timeout=0.5)           # no cancel: as before
    assert plain.timed_out and not plain.cancelled


def test_raw_calls_run_concurrently(raw, tmp_path):
    folder = tmp_path / "meet"
    folder.mkdir()
    s = raw(root=make_toolbox(tmp_path, {"meet": meet_script(folder)}))
    s.initialize()
    for n in (1, 2):
        s.send({"jsonrpc": "2.0", "id": "call-%d" % n, "method": "tools/call",
                "params": {"name": "meet", "arguments": {"n": n}}})
    answers = [s.receive(lambda m: str(m.get("id", "")).startswith("call-")) for _ in range(2)]
    for answer in answers:
        assert answer["result"]["isError"] is False, answer
    assert s.close() == 0


def test_raw_manifest_change_is_picked_up_and_announced(raw, tmp_path):
    root = make_toolbox(tmp_path, {"echo": ECHO})
    s = raw(root=root, poll=0.1)
    s.initialize()
    assert [t["name"] for t in s.request("tools/list")["result"]["tools"]] == ["echo"]
    # a sync lands a new version: a second tool, with annotations
    make_toolbox(tmp_path, {"echo": ECHO, "img": IMAGE},
                 annotations={"img": {"readOnlyHint": True, "destructiveHint": False}})
    s.receive(lambda m: m.get("method") == "notifications/tools/list_changed")
    tools = s.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo", "img"]
    assert tools[1]["annotations"] == {"readOnlyHint": True, "destructiveHint": False}
    img = s.request("tools/call", {"name": "img"})["result"]
    assert [c["type"] for c in img["content"]] == ["text", "image", "image"]
    # a broken manifest is refused: the last good list stays
    manifest = os.path.join(root, "tools.json")
    with open(manifest, "w", encoding="utf-8") as fh:
        fh.write('{"tools": [{"name": "echo"}]}')
    wait_until(lambda: "tools.json 有问题" in s.stderr(), "the broken manifest to be noticed")
    assert [t["name"] for t in s.request("tools/list")["result"]["tools"]] == ["echo", "img"]
    assert s.close() == 0


def test_raw_end_of_input_lets_running_calls_answer_then_exits(raw, tmp_path):
    s = raw(root=make_toolbox(tmp_path, {"echo": ECHO}))
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": 3}}})
    s.proc.stdin.close()
    answer = s.receive(lambda m: m.get("id") == 1)
    assert json.loads(answer["result"]["content"][0]["text"])["args"] == {"n": 3}
    assert s.close() == 0


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_raw_sigterm_cancels_running_calls(raw, tmp_path):
    marker = tmp_path / "pids.txt"
    s = raw(root=make_toolbox(tmp_path, {"slow": slow_script(marker)}))
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}})
    wait_until(marker.exists, "the slow tool to start")
    pids = [int(p) for p in marker.read_text().split()]
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=WAIT) == 0
    wait_until(lambda: not any(alive(p) for p in pids), "the tool tree to be killed")
    assert "取消了 1 个运行中的调用" in s.stderr()


def test_call_result_shapes_without_a_server():
    """The mapping from a host RunResult to MCP content, including a broken image that is dropped."""
    from xlakit.host import RunResult
    res = RunResult("x")
    res.ok, res.text, res.data = True, '{"ok":true,"n":1}', {"ok": True, "n": 1}
    res.images = [{"mime": "image/jpeg", "data": base64.b64encode(b"jpg").decode()}, {"data": "%%%不是base64"}, {}]
    out = xla_mcp.call_result(res)
    assert out == {"content": [{"type": "text", "text": '{"ok":true,"n":1}'},
                               {"type": "image", "data": base64.b64encode(b"jpg").decode(), "mimeType": "image/jpeg"}],
                   "isError": False}
    bad = RunResult("x")
    bad.error, bad.data = "出错了：请检查路径", {"ok": False, "error": "出错了：请检查路径", "hint": 1}
    out = xla_mcp.call_result(bad)
    assert out["isError"] is True
    assert json.loads(out["content"][0]["text"]) == {"ok": False, "error": "出错了：请检查路径", "hint": 1}
    assert xla_mcp.negotiate("2024-11-05") == "2024-11-05" and xla_mcp.negotiate(None) == xla_mcp.LATEST_VERSION


def test_cli_rejects_bad_options():
    res = subprocess.run([sys.executable, XLA, "mcp", "--root", "/nonexistent"], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=WAIT)
    assert res.returncode == 2 and "tools.json" in res.stderr and res.stdout == ""
    res = subprocess.run([sys.executable, XLA, "mcp", "--bogus", "1"], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=WAIT)
    assert res.returncode == 2 and "无法识别的参数" in res.stderr and res.stdout == ""


def test_overlong_line_is_refused_and_the_next_one_served(monkeypatch, tmp_path, home):
    """In process, on byte streams: a line past the cap is skipped whole, not buffered or parsed."""
    import io
    monkeypatch.setattr(xla_mcp, "MAX_LINE", 1000)
    data = (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * 5000 + b'"}}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    out, err = io.BytesIO(), io.StringIO()
    server = xla_mcp.Server(root=make_toolbox(tmp_path, {"echo": ECHO}), home=str(home), infile=io.BytesIO(data),
                            outfile=out, errfile=err, poll=0.05)
    assert server.serve() == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["id"] is None and lines[0]["error"]["code"] == xla_mcp.INVALID_REQUEST
    assert lines[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert len(lines) == 2 and "丢弃一条超过 1000 字节的消息" in err.getvalue()
