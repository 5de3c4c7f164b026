"""Running a model-written Python script behind the write fence of ``xla_guard.py``.

run_python's machinery, apart from its answer: the command line that starts the guard, draining both
pipes without deadlock (head and tail kept, the middle counted), killing the whole tree on timeout,
and reading the guard's report lines (which layers are active, every refused operation) out of
stderr. The tool script only turns parameters into a call of :func:`run` and the result into an
answer that fits the output cap (:func:`clip`, :func:`summarize`).
"""
import os
import subprocess
import sys
import tempfile
import threading
import time

from . import paths
from .errors import ToolError
from .host import group_kwargs, kill_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARD = os.path.join(ROOT, "xla_guard.py")
PYDEPS = os.path.join(ROOT, "tools", "pydeps")
MARK = b"@@XLA_GUARD@@"
SEP = "\x1f"

HEAD_BYTES = 256 * 1024     # per stream, raw bytes kept from the start ...
TAIL_BYTES = 256 * 1024     # ... and from the end; everything in between is counted and dropped
MAX_BLOCKED = 20
LAYER_NAMES = {"audit": "audit_hook", "landlock": "landlock"}


class Drain(threading.Thread):
    """Reads one pipe to the end, keeping the first HEAD_BYTES and the last TAIL_BYTES, so the child
    never blocks on a full pipe and memory stays bounded. With ``markers`` it also takes the guard's
    report lines out of the stream (they may follow unterminated script output on the same line)."""

    def __init__(self, pipe, markers=False):
        super().__init__(daemon=True)
        self.pipe, self.markers = pipe, markers
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.records = []
        self._pending = b""

    def _keep(self, data):
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * TAIL_BYTES:
                del self.tail[:len(self.tail) - TAIL_BYTES]

    def _feed(self, chunk):
        if not self.markers:
            self._keep(chunk)
            return
        data = self._pending + chunk
        self._pending = b""
        while data:
            at = data.find(MARK)
            if at < 0:
                # keep a possible partial marker at the end for the next chunk
                cut = max(0, len(data) - len(MARK) + 1)
                while cut < len(data) and not MARK.startswith(data[cut:]):
                    cut += 1
                self._keep(data[:cut])
                self._pending = data[cut:]
                return
            self._keep(data[:at])
            end = data.find(b"\n", at)
            if end < 0:
                if len(data) - at > 65536:      # not a real marker line: pass it through
                    self._keep(data[at:])
                    return
                self._pending = data[at:]
                return
            if len(self.records) < 500:
                self.records.append(data[at + len(MARK):end].decode("utf-8", "replace"))
            data = data[end + 1:]

    def run(self):
        try:
            while True:
                chunk = self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
                if not chunk:
                    break
                self._feed(chunk)
        except (OSError, ValueError):
            pass
        if self._pending:
            self._keep(self._pending)
            self._pending = b""

    def text(self):
        """(head text, tail text or None, omitted byte count)."""
        if not self.tail:
            return _relabel(bytes(self.head).decode("utf-8", "replace")), None, 0
        tail = bytes(self.tail[-TAIL_BYTES:])
        omitted = self.total - len(self.head) - len(tail)
        return (_relabel(bytes(self.head).decode("utf-8", "replace")),
                _relabel(tail.decode("utf-8", "replace").lstrip("\ufffd")), omitted)


def _relabel(text):
    """Python's own traceback header in the script's output, in Chinese. The guard already prints
    the script's uncaught errors this way; this catches the rest (a traceback printed by the
    script itself, or by the interpreter when an error strikes inside the guard's handler, as a
    signal handler can make happen): the answer says what went wrong in the user's language and
    never carries a bare Python traceback."""
    if "Traceback (most recent call last):" in text:
        text = text.replace("Traceback (most recent call last):", "调用栈（最近的调用在最后）：")
    return text


def clip(parts, chars):
    """Fit (head, tail, omitted_bytes) into about ``chars`` characters: keep the start and the end
    and say how much of the middle is gone. Returns (text, truncated)."""
    head, tail, omitted = parts
    chars = max(0, chars)
    if tail is None:
        if len(head) <= chars:
            return head, False
        keep_h = int(chars * 0.4)
        keep_t = chars - keep_h
        note = "\n…（中间省略 %d 字）…\n" % (len(head) - keep_h - keep_t)
        return head[:keep_h] + note + (head[len(head) - keep_t:] if keep_t else ""), True
    keep_h = min(len(head), int(chars * 0.4))
    keep_t = min(len(tail), chars - keep_h)
    dropped = (omitted + len(head[keep_h:].encode("utf-8", "replace"))
               + len(tail[:len(tail) - keep_t].encode("utf-8", "replace")))
    note = "\n…（中间省略约 %d 字节）…\n" % dropped
    return head[:keep_h] + note + (tail[len(tail) - keep_t:] if keep_t else ""), True


def parse_records(records):
    """Guard report lines -> (status dict, blocked list, blocked count)."""
    status, blocked, count = None, [], 0
    for rec in records:
        fields = rec.split(SEP)
        if len(fields) < 2:
            continue
        kind = fields[1]
        if kind == "status" and status is None:
            status = dict(f.split("=", 1) for f in fields[2:] if "=" in f)
        elif kind in ("block", "kernel") and len(fields) >= 5:
            count += 1
            if len(blocked) < MAX_BLOCKED:
                layer = "audit_hook" if kind == "block" else "landlock"
                message = fields[4]
                if kind == "kernel":
                    message = ("内核拒绝了脚本对 %s 的操作（权限不足；Landlock 围栏只允许写入工作空间和临时目录，"
                               "也不允许启动程序）。" % fields[3])
                item = {"layer": layer, "kind": fields[2], "target": fields[3], "message": message}
                if item not in blocked:
                    blocked.append(item)
    return status, blocked, count


def fence_info(status, roots, unrestricted_env):
    if status is None:
        return {"active": None, "layers": [], "allowed_dirs": roots,
                "note": "没有收到围栏的启动报告（Python 可能没能启动）"}
    if status.get("fence") == "off":
        return {"active": False, "layers": [], "allowed_dirs": roots,
                "note": "围栏已关闭（XLA_RUNPY_UNRESTRICTED=1，预留给外层沙箱）"}
    layers = [LAYER_NAMES.get(x, x) for x in status.get("layers", "").split(",") if x]
    info = {"active": True, "layers": layers, "allowed_dirs": roots, "landlock": status.get("landlock", "")}
    if "landlock" not in layers:
        info["note"] = "只有第一层（审计钩子）生效：%s。它能防住误操作，但不是严格的沙箱" % status.get("landlock", "")
    return info


def summarize(exit_code, timed_out, timeout, duration, blocked, count, cut, fence):
    if timed_out:
        out = "脚本运行超过 %g 秒，已被终止（整个进程树都已结束）；下面是终止前的输出。" % timeout
    elif exit_code == 0:
        out = "脚本正常结束（退出码 0，用时 %.1f 秒）。" % duration
    else:
        out = "脚本出错退出（退出码 %s，用时 %.1f 秒），原因见 stderr。" % (exit_code, duration)
    if count:
        shown = "；".join("%s（%s）" % (b["target"], "审计钩子" if b["layer"] == "audit_hook" else "内核 Landlock")
                         for b in blocked[:3])
        out += "写入围栏拦截了 %d 次操作：%s%s。只允许写入：%s；不能启动其他程序。" % (
            count, shown, " 等" if count > 3 else "", "、".join(fence["allowed_dirs"]))
    for name in cut:
        out += "%s 太长，只保留了开头和结尾。" % name
    if fence.get("active") is False:
        out += "注意：本次运行没有写入围栏。"
    return out


def allowed_roots():
    ws = paths.workspace_dir(create=True)
    roots = [os.path.realpath(ws)]
    tmp = os.path.realpath(tempfile.gettempdir())
    if tmp not in roots:
        roots.append(tmp)
    return roots


def run(script, args, timeout):
    """Run ``script`` with ``args`` under the guard for at most ``timeout`` seconds.

    Returns ``exit_code`` (None on timeout), ``timed_out``, ``duration``, ``fence``, ``blocked``,
    ``blocked_total``, and the two :class:`Drain` objects ``out`` / ``err`` for the answer."""
    roots = allowed_roots()
    cmd = [sys.executable, "-I", "-B", "-X", "utf8", "-u", GUARD]
    for r in roots:
        cmd += ["--root", r]
    cmd += ["--path", PYDEPS, "--", script] + list(args)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=os.path.dirname(script), env=dict(os.environ), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, **group_kwargs())
    except OSError as exc:
        raise ToolError("无法启动 Python 解释器：%s。请确认 Python 安装完整" % exc)
    out, err = Drain(proc.stdout), Drain(proc.stderr, markers=True)
    out.start()
    err.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_tree(proc)
        proc.wait()
    except BaseException:
        kill_tree(proc)
        raise
    duration = time.monotonic() - started
    for d in (out, err):
        d.join(timeout=3)
    if out.is_alive() or err.is_alive():   # a leftover grandchild holds the pipe: kill the group again
        kill_tree(proc)
        for d in (out, err):
            d.join(timeout=2)
    status, blocked, count = parse_records(err.records)
    fence = fence_info(status, roots, os.environ.get("XLA_RUNPY_UNRESTRICTED") == "1")
    return {"exit_code": None if timed_out else proc.returncode, "timed_out": timed_out,
            "duration": duration, "fence": fence, "blocked": blocked, "blocked_total": count,
            "out": out, "err": err}
