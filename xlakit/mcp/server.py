"""The toolbox as a Model Context Protocol server over stdio (``python3 xla.py mcp``).

Why: desktop assistants and editors (Claude Desktop, Cursor, Cherry Studio, Cline, ...) load tools
through MCP. One line of client configuration then gives them every tool in tools.json, run
exactly as our own assistant runs them.

Why the standard library only: the server must start on a bare Python 3.9 the way every tool does;
an SDK would be one more thing to install before the first call can work. The wire format is
small: JSON-RPC 2.0, one message per line (UTF-8, no embedded newlines), stdin in, stdout out.

What it does, and why each part is there:

- Lifecycle: ``initialize`` negotiates the protocol revision. The client names the revision it
  wants; if we speak it we answer with the same one, otherwise with our newest
  (:data:`PROTOCOL_VERSIONS`, newest first, back to 2024-11-05 which clients still send). The
  answer carries server info and the ``tools`` capability with ``listChanged``.
  ``notifications/initialized`` and ``ping`` are answered as the spec says. The 2026 stateless
  probe ``server/discover`` gets "method not found", which clients read as "use initialize".
- ``tools/list``: every tool of the manifest with its Chinese description, its ``parameters``
  passed on unchanged as ``inputSchema`` and its ``annotations`` (readOnlyHint, destructiveHint,
  idempotentHint, openWorldHint) passed on unchanged (from revision 2025-03-26, which introduced
  them). No paging: the list is small.
- ``tools/call`` goes through :func:`xlakit.host.run_tool`, the very runner behind ``xla.py run``:
  undeclared keys dropped, types checked, output limits, at most 2 tools at once across processes,
  the 60 s timeout and the audit log (the child runs on this server's interpreter, the one the
  client configuration names, not whatever ``python3`` a desktop app's short PATH finds). The
  tool's JSON answer is the text content; ``isError`` is set when ``ok`` is false (bad arguments
  included, so the model reads the Chinese message and can correct itself); the ``images`` of the
  images convention become MCP image content, so the client shows the chart. An unknown tool name
  is a JSON-RPC error (invalid params). From revision 2025-06-18 every tool also declares an
  ``outputSchema`` (:mod:`xlakit.mcp.schema`) and the answer object comes as ``structuredContent``
  beside the text; older revisions get text only.
- A warm OCR engine (:mod:`xlakit.mcp.warm`): ``read_document`` calls get the address of one
  ``ocr_service`` process the server keeps, so a scan after the first does not load the engine
  again; that process exits after its idle time (memory back) and with the server.
- Progress: when a ``tools/call`` carries ``_meta.progressToken``, each progress line the tool
  writes on stderr (:mod:`xlakit.progress`) becomes a ``notifications/progress`` with that token.
- Robustness: calls run on a pool of up to :data:`WORKERS` threads, so calls overlap while the
  memory a burst of calls costs stays bounded (the allocator's free memory is handed back when
  the last call is answered); ``notifications/cancelled`` sets the call's cancel event (a call
  still queued is dropped) and the runner kills the child's whole process tree (no answer is
  sent for a cancelled request, as the spec asks). A malformed line gets a parse error or an
  invalid-request error and the server reads on; unknown methods get "method not found"; batches
  (revision 2025-03-26) are accepted. Nothing but protocol messages reaches stdout (``sys.stdout``
  is pointed at stderr while serving, so a stray print cannot corrupt the stream); logs go to
  stderr, where clients keep them.
- The manifest is watched (its size and mtime): when a sync or an edit changes the tool list,
  the next ``tools/list`` has it and ``notifications/tools/list_changed`` tells the client to ask.
  A manifest that fails the check is logged and the previous good list is kept, as the assistant
  does.
- End of stdin means the client is gone or shutting down (the MCP stdio transport: the client
  closes our stdin, then waits for us to exit, then sends SIGTERM). Running calls get
  :data:`EOF_GRACE` (1 s) to finish and answer, so a piped script's quick calls are still answered;
  what still runs then is cancelled, each call's whole process tree killed
  (:func:`xlakit.host.kill_tree`, helpers in sessions of their own included), and the server exits
  within about 2 s of end of input. When the client has closed our stdout as well there is no
  grace. SIGTERM or Ctrl+C: running calls are cancelled (children killed) and the server exits.
"""
import base64
import binascii
import collections
import ctypes
import ctypes.util
import json
import os
import select
import signal
import sys
import threading
import time
import traceback

from .. import host as xla_host
from .. import manifest as xla_manifest
from . import schema as mcpschema
from .warm import WarmOcr
from ..wire import json_text

SERVER_NAME = "xla-tools"
SERVER_TITLE = "xla 工具箱"
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")   # newest first
LATEST_VERSION = PROTOCOL_VERSIONS[0]
ANNOTATIONS_SINCE = "2025-03-26"     # Tool.annotations first appear in this revision
TITLE_SINCE = "2025-06-18"           # Implementation.title first appears in this revision
STRUCTURED_SINCE = "2025-06-18"      # Tool.outputSchema and CallToolResult.structuredContent
MESSAGE_SINCE = "2025-03-26"         # ProgressNotification.message

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_LINE = 16 * 1024 * 1024          # bytes of one message; a longer line is refused, not buffered
# a tools/call's arguments sit 2 levels down (message, params), 3 in a batch: arguments up to the
# host's limit pass here and the host refuses them as a tool error; anything deeper stops here
MESSAGE_DEPTH = xla_manifest.MAX_DEPTH + 3
POLL_SECONDS = 1.0                   # how often the manifest's stat is compared
SHUTDOWN_WAIT = 10                   # seconds to wait for cancelled calls to reap their children
EOF_GRACE = 1.0                      # seconds running calls get to answer after end of input
WORKERS = 8                          # threads running calls (more calls wait in a queue)
IDLE_EXIT = 30.0                     # seconds a worker stays without work

INSTRUCTIONS = ("xla 工具箱：读写 Excel/WPS 表格与 Word/PDF 文档、表格统计、画图表、农历与节日、天气、快递、"
                "IP 归属地和中文网页搜索。路径可写绝对路径、~ 开头或“桌面/下载/文档”；相对路径在 ~/.xla/workspace 下。"
                "每个工具返回一个 JSON 对象，ok 为 false 时 error 字段用中文说明原因和下一步。")


_LIBC = []


def _trim():
    """Hand the C allocator's free memory back to the system (glibc's ``malloc_trim``), so the
    resident size after a burst of big answers returns to what the server really holds. A no-op
    where there is no glibc (macOS, Windows, musl)."""
    if not _LIBC:
        trim = None
        if sys.platform.startswith("linux"):
            try:
                trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
                trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):
                trim = None
        _LIBC.append(trim)
    if _LIBC[0] is not None:
        try:
            _LIBC[0](0)
        except Exception:   # noqa: BLE001 - only an optimisation
            pass


def _version_at_least(version, minimum):
    """Revision order by the known list (not by string), unknown revisions count as newest."""
    if version not in PROTOCOL_VERSIONS:
        return True
    return PROTOCOL_VERSIONS.index(version) <= PROTOCOL_VERSIONS.index(minimum)


def negotiate(requested):
    """The revision to answer ``initialize`` with: the client's if we speak it, else our newest."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST_VERSION


def _valid_id(value):
    """MCP request ids are strings or integers (never null); JSON-RPC also allows other numbers."""
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _id_key(value):
    return json.dumps(value)


class RpcError(Exception):
    """A request that gets a JSON-RPC error answer instead of a result."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_message(msg_id, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def result_message(msg_id, result):
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def server_version(root):
    """The release tag a sync installed (``.xla-tag``), the package version of a pip/uvx install,
    else ``dev`` for a working tree."""
    try:
        with open(os.path.join(root, ".xla-tag"), "r", encoding="utf-8") as fh:
            tag = fh.read().strip()
        return tag or "dev"
    except OSError:
        pass
    if xla_manifest.installed_package(root):
        try:
            from importlib.metadata import version
            return version("xla-tools")
        except Exception:   # noqa: BLE001 - metadata unreadable: still serve
            pass
    return "dev"


def describe_tool(tool, version=LATEST_VERSION):
    """One manifest entry as an MCP Tool: name, description, inputSchema and annotations as they are."""
    out = {"name": tool["name"], "description": tool.get("description") or "",
           "inputSchema": tool.get("parameters") or {"type": "object", "properties": {}}}
    notes = tool.get("annotations")
    if isinstance(notes, dict) and notes and _version_at_least(version, ANNOTATIONS_SINCE):
        out["annotations"] = notes
    if _version_at_least(version, STRUCTURED_SINCE):
        out["outputSchema"] = mcpschema.output_schema(tool["name"])
    return out


def call_result(result, structured=False):
    """A host RunResult as an MCP CallToolResult: the JSON answer as text, images as image content,
    and with ``structured`` (revision 2025-06-18 on) the same answer object as structuredContent."""
    text = result.text if result.ok and result.text else json_text(result.answer())
    content = [{"type": "text", "text": text}]
    for image in result.images:
        data = image.get("data")
        if not isinstance(data, str) or not data:
            continue
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            continue                     # a client would fail on it; the text still says what happened
        mime = image.get("mime") or image.get("mimeType") or "image/png"
        content.append({"type": "image", "data": data, "mimeType": str(mime)})
    out = {"content": content, "isError": not result.ok}
    if structured:
        out["structuredContent"] = result.answer()
    return out


class Server:
    """One MCP session over a pair of binary streams (stdin/stdout by default)."""

    def __init__(self, root=None, home=None, infile=None, outfile=None, errfile=None,
                 poll=POLL_SECONDS, timeout=xla_host.TIMEOUT, python=None):
        self.root = os.path.abspath(root or xla_manifest.root_dir())
        self.home = home
        self.infile = infile if infile is not None else sys.stdin.buffer
        self.outfile = outfile if outfile is not None else sys.stdout.buffer
        self.errfile = errfile if errfile is not None else sys.stderr
        self.poll = poll
        self.timeout = timeout
        # Tools run on the interpreter the client started us with: a desktop app's PATH is short
        # (macOS: /usr/bin only), and its ``python3`` may be a stub or older than the one the
        # user wrote into the client's configuration.
        self.python = python or sys.executable
        self.version = None              # negotiated revision (None until initialize)
        self.initialized = False
        self.client = ""
        self._write_lock = threading.Lock()
        self._closed = False             # set at shutdown: no thread may be mid-write at exit
        self._output_broken = False      # a write to the client failed: nobody reads us any more
        self._state_lock = threading.Lock()
        self._manifest_lock = threading.Lock()
        self._inflight = {}              # id key -> threading.Event
        self._jobs = collections.deque() # calls waiting for a worker
        self._workers = set()            # worker threads (at most WORKERS)
        self._idle = 0                   # workers waiting for a job
        self._pending = 0                # calls accepted and not yet answered (queued or running)
        self._work = threading.Condition(self._state_lock)
        self._stamp = ()                 # never equal to a real stat: the first look loads
        self._tools = None               # manifest entries served (last good list)
        self._listed = None              # what the client was last told, for list_changed
        self.stopping = threading.Event()
        self._watcher = None
        self.warm = WarmOcr(self.root, self.home, self.python, self.errfile)

    # -- output ---------------------------------------------------------------------------------

    def log(self, text):
        """One line on stderr (UTF-8 whatever the console's code page: clients write it to a log)."""
        line = "[xla-mcp] %s\n" % text
        with self._write_lock:
            if self._closed:
                return
            try:
                buf = getattr(self.errfile, "buffer", None)
                if buf is not None:
                    self.errfile.flush()
                    buf.write(line.encode("utf-8", "replace"))
                    buf.flush()
                else:
                    self.errfile.write(line)
                    self.errfile.flush()
            except (OSError, ValueError):
                pass

    def send(self, message):
        """Write one protocol message as one line; a closed stdout ends the session."""
        data = json_text(message).encode("utf-8") + b"\n"
        with self._write_lock:
            if self._closed:
                return
            try:
                self.outfile.write(data)
                self.outfile.flush()
            except (OSError, ValueError):
                self._output_broken = True
                self.stopping.set()

    def output_gone(self):
        """True when nobody reads our answers any more: a write failed, or (POSIX) the reading end
        of our stdout pipe or socket is closed (``poll`` reports an error or hang-up on it)."""
        if self._output_broken:
            return True
        if not hasattr(select, "poll"):  # pragma: no cover - Windows
            return False
        try:
            poller = select.poll()
            poller.register(self.outfile.fileno(), select.POLLOUT)
            events = poller.poll(0)
        except (OSError, ValueError, AttributeError):   # not a real file (a test's BytesIO)
            return False
        return any(ev & (select.POLLERR | select.POLLHUP) for _fd, ev in events)

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- manifest -------------------------------------------------------------------------------

    def _manifest_stamp(self):
        try:
            st = os.stat(os.path.join(self.root, "tools.json"))
            return (st.st_mtime_ns, st.st_size, getattr(st, "st_ino", 0))
        except OSError:
            return None

    def tools(self):
        """The tool entries to serve, re-read when tools.json changed on disk since the last look."""
        with self._manifest_lock:
            stamp = self._manifest_stamp()
            if stamp != self._stamp:
                self._stamp = stamp
                data, problems = xla_manifest.load_manifest(self.root)
                listed = data.get("tools") if isinstance(data, dict) else None
                entries = [t for t in (listed if isinstance(listed, list) else []) if isinstance(t, dict)
                           and isinstance(t.get("name"), str) and isinstance(t.get("parameters", {}), dict)]
                if problems:
                    self.log("tools.json 有问题：%s" % "；".join(problems[:5]))
                if not problems or self._tools is None:
                    if problems:
                        self.log("先按能读出的 %d 个工具提供服务；修好后会自动重新加载" % len(entries))
                    elif self._tools is not None:
                        self.log("tools.json 已更新：%d 个工具" % len(entries))
                    self._tools = entries
                else:
                    self.log("沿用上一版工具清单（%d 个工具）" % len(self._tools))
            return list(self._tools or [])

    def listing(self):
        return [describe_tool(t, self.version or LATEST_VERSION) for t in self.tools()]

    def _watch(self):
        """Tell an initialized client when the tool list changed (a sync, an edit)."""
        while not self.stopping.wait(self.poll):
            try:
                current = self.listing()
            except Exception:   # noqa: BLE001 - the watcher must never die
                self.log("检查 tools.json 出错：%s" % traceback.format_exc(limit=3))
                continue
            with self._state_lock:
                changed = self.initialized and self._listed is not None and current != self._listed
                if changed:
                    self._listed = current
            if changed:
                self.notify("notifications/tools/list_changed")

    # -- input ----------------------------------------------------------------------------------

    def read_line(self):
        """Next line as bytes; None at end of input. An overlong line is skipped and reported."""
        line = self.infile.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while True:
                rest = self.infile.readline(MAX_LINE)
                if not rest or rest.endswith(b"\n"):
                    break
            self.log("丢弃一条超过 %d 字节的消息" % MAX_LINE)
            self.send(error_message(None, INVALID_REQUEST, "消息超过 %d MB，已丢弃" % (MAX_LINE // (1024 * 1024))))
            return b""
        return line

    def handle_line(self, raw):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            self.send(error_message(None, PARSE_ERROR, "Parse error：消息不是 UTF-8 编码"))
            return
        if text.startswith("\ufeff"):
            text = text[1:]
        if not text:
            return
        try:
            message = json.loads(text)
        except RecursionError:
            self.log("嵌套太深、无法解析的一行（%d 字节）" % len(raw))
            self.send(error_message(None, PARSE_ERROR, "Parse error：" + xla_manifest.too_deep()))
            return
        except ValueError as exc:
            self.log("无法解析的一行：%s" % text[:200])
            self.send(error_message(None, PARSE_ERROR, "Parse error：不是合法的 JSON（%s）" % exc))
            return
        if xla_manifest.nesting_problem(message, limit=MESSAGE_DEPTH):
            self.refuse_deep(message)
            return
        if isinstance(message, list):
            self.handle_batch(message)
        else:
            self.handle_message(message, self._reply)

    def refuse_deep(self, message):
        """A message nested past :data:`MESSAGE_DEPTH`: refused before anything recursive (routing,
        logging, the host's validation) sees it. A tool call gets its answer as a tool error
        (isError, the Chinese reason the model can act on); another request a JSON-RPC error."""
        reason = xla_manifest.too_deep()
        msg_id = message.get("id") if isinstance(message, dict) else None
        self.log("拒绝一条嵌套超过 %d 层的消息" % MESSAGE_DEPTH)
        if not isinstance(message, dict) or not _valid_id(msg_id):
            if not isinstance(message, dict) or "id" in message:
                self.send(error_message(None, INVALID_REQUEST, "Invalid Request：" + reason))
            return
        if message.get("method") == "tools/call":
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            result = xla_host.RunResult(str(params.get("name") or "")[:100])
            result.error = reason
            self.send(result_message(msg_id, call_result(result, _version_at_least(
                self.version or LATEST_VERSION, STRUCTURED_SINCE))))
        else:
            self.send(error_message(msg_id, INVALID_PARAMS, "Invalid params：" + reason))

    def _reply(self, response):
        if response is not None:
            self.send(response)

    def handle_batch(self, items):
        """A JSON-RPC batch: one array answer once every request in it is answered."""
        if not items:
            self.send(error_message(None, INVALID_REQUEST, "Invalid Request：空的批量请求"))
            return
        lock = threading.Lock()
        state = {"left": len(items), "out": []}

        def reply(response):
            with lock:
                if response is not None:
                    state["out"].append(response)
                state["left"] -= 1
                done = state["left"] == 0
            if done and state["out"]:
                self.send(state["out"])
        for item in items:
            self.handle_message(item, reply)

    def handle_message(self, msg, reply):
        """Route one message; ``reply`` is called exactly once (with None when nothing is answered)."""
        if not isinstance(msg, dict):
            reply(error_message(None, INVALID_REQUEST, "Invalid Request：消息必须是 JSON 对象"))
            return
        has_id = "id" in msg
        msg_id = msg.get("id")
        method = msg.get("method")
        if method is None and has_id and ("result" in msg or "error" in msg):
            reply(None)                  # an answer to a request of ours: we send none, so ignore it
            return
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str) or (has_id and not _valid_id(msg_id)):
            if has_id or not isinstance(method, str):
                reply(error_message(msg_id if _valid_id(msg_id) else None, INVALID_REQUEST,
                                    "Invalid Request：需要 jsonrpc \"2.0\"、字符串 method，id 为字符串或整数"))
            else:
                self.log("忽略不合规的通知：%s" % json_text(msg)[:200])
                reply(None)
            return
        params = msg.get("params")
        if not has_id:
            try:
                self.handle_notification(method, params if isinstance(params, dict) else {})
            except Exception:   # noqa: BLE001
                self.log("处理通知 %s 出错：%s" % (method, traceback.format_exc(limit=5)))
            reply(None)
            return
        if params is not None and not isinstance(params, dict):
            reply(error_message(msg_id, INVALID_PARAMS, "Invalid params：params 必须是对象"))
            return
        params = params or {}
        if method == "tools/call":
            self.start_call(msg_id, params, reply)
            return
        handler = {"initialize": self.on_initialize, "ping": self.on_ping, "tools/list": self.on_tools_list}.get(method)
        if handler is None:
            reply(error_message(msg_id, METHOD_NOT_FOUND, "Method not found：不支持的方法 %s（本服务器只提供工具："
                                "initialize、ping、tools/list、tools/call）" % method[:100]))
            return
        try:
            reply(result_message(msg_id, handler(params)))
        except RpcError as exc:
            reply(error_message(msg_id, exc.code, exc.message, exc.data))
        except Exception:   # noqa: BLE001 - one bad request must not end the session
            self.log("处理 %s 出错：%s" % (method, traceback.format_exc()))
            reply(error_message(msg_id, INTERNAL_ERROR, "Internal error：服务器处理 %s 时出错，详情见服务器日志" % method))

    # -- methods --------------------------------------------------------------------------------

    def on_initialize(self, params):
        requested = params.get("protocolVersion")
        self.version = negotiate(requested)
        info = params.get("clientInfo") if isinstance(params.get("clientInfo"), dict) else {}
        self.client = "%s %s" % (info.get("name", "?"), info.get("version", ""))
        self.log("客户端 %s 请求协议 %s，使用 %s" % (self.client.strip(), requested, self.version))
        server_info = {"name": SERVER_NAME, "version": server_version(self.root)}
        if _version_at_least(self.version, TITLE_SINCE):
            server_info["title"] = SERVER_TITLE
        return {"protocolVersion": self.version, "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": server_info, "instructions": INSTRUCTIONS}

    def on_ping(self, _params):
        return {}

    def on_tools_list(self, _params):
        tools = self.listing()
        with self._state_lock:
            self._listed = tools
        return {"tools": tools}

    def handle_notification(self, method, params):
        if method == "notifications/initialized":
            with self._state_lock:
                self.initialized = True
                if self._listed is None:
                    self._listed = self.listing()
        elif method == "notifications/cancelled":
            key = _id_key(params.get("requestId"))
            with self._state_lock:
                event = self._inflight.get(key)
            if event is not None:
                self.log("客户端取消请求 %s（%s）" % (params.get("requestId"), params.get("reason") or "未说明原因"))
                event.set()
        # every other notification (progress, roots/list_changed, ...) needs nothing from us

    def start_call(self, msg_id, params, reply):
        name = params.get("name")
        if not isinstance(name, str) or not name:
            reply(error_message(msg_id, INVALID_PARAMS, "Invalid params：tools/call 需要 name（工具名）"))
            return
        names = [t["name"] for t in self.tools()]
        if name not in names:
            reply(error_message(msg_id, INVALID_PARAMS, "没有名为 %s 的工具。可用：%s" % (
                name[:100], "、".join(names) or "（清单为空）")))
            return
        args = params.get("arguments")
        args = {} if args is None else args
        event = threading.Event()
        key = _id_key(msg_id)
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        token = token if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)) else None
        with self._work:
            self._inflight[key] = event
            self._pending += 1
            self._jobs.append((msg_id, key, name, args, event, reply, token))
            if not self._idle and len(self._workers) < WORKERS:
                worker = threading.Thread(target=self._worker, name="xla-mcp-call", daemon=True)
                self._workers.add(worker)
                worker.start()
            self._work.notify()

    def _worker(self):
        """Runs queued calls one after another; leaves after IDLE_EXIT seconds without work.

        Why a small pool and not a thread per call (issue 38: RSS 18 -> 47 MB over 2,000 calls):
        a client that sends a hundred calls at once got a hundred threads, each with its stack and,
        in glibc, possibly its own malloc arena, and the memory stayed with the process after the
        burst. Only MAX_PARALLEL tools run at once anyway (across processes), so a few workers keep
        calls overlapping (a queued one can still be cancelled: it is answered by nobody) and the
        rest wait as small tuples. When the last call is answered the allocator is asked to give
        its free memory back (:func:`_trim`)."""
        me = threading.current_thread()
        while True:
            with self._work:
                self._idle += 1
                waited = time.monotonic()
                while not self._jobs:
                    if self.stopping.is_set() or time.monotonic() - waited > IDLE_EXIT:
                        self._idle -= 1
                        self._workers.discard(me)
                        return
                    self._work.wait(0.5)
                self._idle -= 1
                job = self._jobs.popleft()
            try:
                self._call(*job)
            finally:
                with self._work:
                    self._pending -= 1
                    done = self._pending == 0
                    self._work.notify_all()
                if done:
                    _trim()

    def _call(self, msg_id, key, name, args, event, reply, token=None):
        if event.is_set():               # cancelled while queued: no tool, no answer
            with self._state_lock:
                if self._inflight.get(key) is event:
                    del self._inflight[key]
            self.log("%s 已取消（还在排队，没有启动工具）" % name)
            reply(None)
            return
        self._run_and_reply(msg_id, key, name, args, event, reply, token)

    def progress_sender(self, token, event):
        """The host's on_progress for a call whose request carried ``_meta.progressToken``:
        each progress line of the tool becomes one ``notifications/progress`` (none once the
        call is cancelled)."""
        if token is None:
            return None
        with_message = _version_at_least(self.version or LATEST_VERSION, MESSAGE_SINCE)

        def send(done, total, note):
            if event.is_set():
                return
            params = {"progressToken": token, "progress": done}
            if total is not None:
                params["total"] = total
            if note and with_message:
                params["message"] = note
            self.notify("notifications/progress", params)
        return send

    def _run_and_reply(self, msg_id, key, name, args, event, reply, token=None):
        started = time.monotonic()
        try:
            result = xla_host.run_tool(name, args, root=self.root, home=self.home, timeout=self.timeout,
                                       python=self.python, cancel=event, extra_env=self.warm.env(name),
                                       on_progress=self.progress_sender(token, event))
        except Exception:   # noqa: BLE001
            self.log("运行 %s 出错：%s" % (name, traceback.format_exc()))
            result = None
        finally:
            with self._state_lock:
                if self._inflight.get(key) is event:
                    del self._inflight[key]
        took = time.monotonic() - started
        if event.is_set() or (result is not None and result.cancelled):
            self.log("%s 已取消（%.1f 秒），工具进程已终止" % (name, took))
            reply(None)                  # the spec: no answer for a cancelled request
            return
        if result is None:
            reply(error_message(msg_id, INTERNAL_ERROR, "Internal error：运行 %s 时服务器出错，详情见服务器日志" % name))
            return
        self.log("%s %s（%.1f 秒）%s" % (name, "成功" if result.ok else "失败", took,
                                        "" if result.ok else "：" + (result.error or "")[:200]))
        reply(result_message(msg_id, call_result(result, _version_at_least(self.version or LATEST_VERSION,
                                                                           STRUCTURED_SINCE))))

    # -- main loop ------------------------------------------------------------------------------

    def serve(self):
        """Read messages until end of input; returns the process exit code."""
        count = len(self.tools())
        self.log("已启动：%s，%d 个工具，协议 %s" % (self.root, count, "/".join(PROTOCOL_VERSIONS)))
        watcher = self._watcher = threading.Thread(target=self._watch, name="xla-mcp-watch", daemon=True)
        watcher.start()
        try:
            while not self.stopping.is_set():
                line = self.read_line()
                if line is None:
                    break
                if line:
                    try:
                        self.handle_line(line)
                    except Exception:   # noqa: BLE001 - never let one message end the session
                        self.log("处理消息出错：%s" % traceback.format_exc())
        except BaseException:
            self.shutdown(cancel=True)   # SIGTERM / Ctrl+C: no child may outlive the server
            raise
        self.shutdown(cancel=False, grace=EOF_GRACE)
        return 0

    def shutdown(self, cancel=True, grace=0.0):
        """End the session: wait up to ``grace`` seconds for the running calls to finish and answer
        (end of input: a piped script's quick calls still get their answers), then cancel the rest
        (each call's whole process tree killed, no answer) and wait for their threads to reap them.
        A client that is gone altogether (its end of our stdout closed, :meth:`output_gone`) gets
        no grace: nobody would read the answers."""
        end_grace = time.monotonic() + (0.0 if cancel else grace)
        with self._work:
            while self._pending and time.monotonic() < end_grace and not self.output_gone():
                self._work.wait(min(0.05, max(0.0, end_grace - time.monotonic())))
            events = list(self._inflight.values())
        for event in events:
            event.set()
        if events and not cancel:
            self.log("输入已结束（客户端关闭了连接）：取消 %d 个仍在运行的调用" % len(events))
        deadline = time.monotonic() + SHUTDOWN_WAIT
        with self._work:                 # answered or cancelled (children reaped) before we exit
            while self._pending and time.monotonic() < deadline:
                self._work.wait(min(0.05, max(0.0, deadline - time.monotonic())))
        self.stopping.set()
        self.warm.close()
        if self._watcher is not None:
            self._watcher.join(5)
        if cancel and events:
            self.log("退出：取消了 %d 个运行中的调用" % len(events))
        # Python aborts at exit if a daemon thread is frozen mid-write on a stream: from here on a
        # thread still running past the wait writes nothing (neither protocol nor log).
        with self._write_lock:
            self._closed = True
            try:
                self.outfile.flush()
            except (OSError, ValueError):
                pass


USAGE = """用法：python3 xla.py mcp [--root 目录] [--timeout 秒] [--poll 秒] [--config 客户端]

以 MCP（Model Context Protocol）服务器方式通过标准输入输出提供全部工具，供 Claude Desktop、
Cherry Studio、Cursor、Cline 等客户端使用。标准输出只有协议消息，日志写到标准错误。

    --config 客户端 打印该客户端要粘贴的 JSON 配置（claude、cursor、cherry、vscode、cline），
                    命令是本解释器的绝对路径加 -X utf8 和本 xla.py 的绝对路径
    --root 目录     提供另一份工具箱（含 tools.json 的目录；默认是本程序所在的目录）
    --timeout 秒    单次调用的时限（默认 %d）
    --poll 秒       多久检查一次 tools.json 是否变化（默认 %s）""" % (xla_host.TIMEOUT, POLL_SECONDS)


def _usage():
    """USAGE naming this interpreter (``python3`` is the Store alias on Windows: xlakit.pycmd)."""
    from .. import pycmd
    return USAGE.replace("python3 xla.py", pycmd.xla_cmd())


def print_config(client, root=None, extra_args=()):
    """``--config CLIENT``: the JSON block on stdout, where to paste it on stderr."""
    from . import config as mcpconfig
    block = mcpconfig.config_block(client, root=root, extra_args=extra_args)
    sys.stdout.write(json.dumps(block, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
    print("把上面这段加到 %s" % mcpconfig.where(client), file=sys.stderr)
    note = ocr_note(root)
    if note:
        print(note, file=sys.stderr)
    return 0


def ocr_note(root=None):
    """After a package install the OCR engine is not there yet, and installing it inside the
    first call to read a scan took 43.7 s of its 60: the setup step says how to install it now.
    None when it is ready (or the check itself fails)."""
    try:
        import pydeps_boot
        from .. import pycmd
        if pydeps_boot.group_ready("ocr"):
            return None
        _mods, _reqs, what, size = pydeps_boot.GROUPS["ocr"]
        return "要读扫描件和图片里的文字，建议现在%s执行一次：%s（%s，%s），免得第一次读扫描件时边装边等" % (
            pycmd.run_where(root), pydeps_boot.group_command("ocr"), what, size)
    except Exception:  # noqa: BLE001 - a hint only
        return None


class _Stop(Exception):
    pass


def main(argv=None):
    """Entry point of ``xla.py mcp``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    options = {"root": None, "timeout": float(xla_host.TIMEOUT), "poll": POLL_SECONDS, "config": None}
    given = []                           # the serving options, repeated in a --config block
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            print(_usage(), file=sys.stderr)
            return 0
        key = arg[2:] if arg.startswith("--") else None
        value = next(it, None)
        if key not in options or value is None:
            print("无法识别的参数：%s\n\n%s" % (arg, _usage()), file=sys.stderr)
            return 2
        if key == "config":
            from . import config as mcpconfig
            if value not in mcpconfig.CLIENTS:
                print("--config 只认识：%s（收到的是 %s）" % ("、".join(mcpconfig.CLIENTS), value), file=sys.stderr)
                return 2
            options["config"] = value
            continue
        given += [arg, os.path.abspath(value) if key == "root" else value]
        if key == "root":
            if not os.path.isfile(os.path.join(value, "tools.json")):
                print("--root %s 下没有 tools.json" % value, file=sys.stderr)
                return 2
            options["root"] = value
        else:
            try:
                options[key] = float(value)
                if options[key] <= 0:
                    raise ValueError(value)
            except ValueError:
                print("--%s 需要一个正数，收到的是 %s" % (key, value), file=sys.stderr)
                return 2
    if options["config"]:
        return print_config(options["config"], options["root"], given)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr              # a stray print must never reach the protocol stream
    server = Server(root=options["root"], outfile=out, poll=options["poll"], timeout=options["timeout"])

    def on_signal(_signum, _frame):
        raise _Stop()
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                try:
                    signal.signal(getattr(signal, name), on_signal)
                except (OSError, ValueError):
                    pass
    try:
        return server.serve()
    except (_Stop, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
