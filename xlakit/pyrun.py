"""Running a model-written Python script behind the write fence of ``xla_guard.py``.

run_python's machinery, apart from its answer: the command line that starts the guard, draining both
pipes without deadlock (head and tail kept, the middle counted), killing the whole tree on timeout,
and reading the guard's report lines (which layers are active, every refused operation) out of
stderr. The tool script only turns parameters into a call of :func:`run` and the result into an
answer that fits the output cap (:func:`clip`, :func:`summarize`).

On Windows this process is also the fence's outer half: it gives the run a temp folder of its own
inside the workspace (``%TEMP%`` is under AppData, which the fence refuses), and starts the guard
through ``xlaguard.winjob.spawn`` with the low-integrity token of ``xlaguard.wintoken`` inside a
Job object whose handle only this process holds.
"""
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time

from . import manifest
from .fs import paths
from .errors import ToolError
from .host import group_kwargs, kill_tree
from xlaguard.seccomp import FILE_SIZE_LIMIT, MEMORY_LIMIT   # the limits the guard sets (stdlib-only module)
from xlaguard.ns import TEMP_LIMIT
from xlaguard.limits import TASK_LIMIT
from xlaguard import limits as guard_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARD = os.path.join(ROOT, "xla_guard.py")
MARK = b"@@XLA_GUARD@@"
SEP = "\x1f"

HEAD_BYTES = 256 * 1024     # per stream, raw bytes kept from the start ...
TAIL_BYTES = 256 * 1024     # ... and from the end; everything in between is counted and dropped
MAX_BLOCKED = 20
LAYER_NAMES = {"audit": "audit_hook", "ns": "mount_namespace", "landlock": "landlock", "seccomp": "seccomp",
               "job": "job_object", "token": "low_integrity_token"}
KERNEL_NAMES = {"ns": "只读挂载命名空间", "landlock": "Landlock", "seccomp": "seccomp", "job": "作业对象",
                "token": "低完整性令牌"}
ADVISORY = ("拦截记录由脚本进程里的围栏写出，仅供参考（脚本能关掉或伪造自己进程里的输出）；"
            "真正把关的是内核层（Linux 上的只读挂载命名空间、Landlock 与 seccomp，Windows 上的低完整性令牌与作业对象）。")
RUN_TEMP = ".xla-tmp"       # Windows: per-run temp folders live in <workspace>/.xla-tmp/<id>


class Drain(threading.Thread):
    """Reads one pipe to the end, keeping the first HEAD_BYTES and the last TAIL_BYTES, so the child
    never blocks on a full pipe and memory stays bounded. With ``markers`` it also takes the guard's
    report lines out of the stream (they may follow unterminated script output on the same line)."""

    def __init__(self, pipe, markers=False, mark=MARK):
        super().__init__(daemon=True)
        self.pipe, self.markers, self.mark = pipe, markers, mark
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
            mark = self.mark
            at = data.find(mark)
            if at < 0:
                # keep a possible partial marker at the end for the next chunk
                cut = max(0, len(data) - len(mark) + 1)
                while cut < len(data) and not mark.startswith(data[cut:]):
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
                self.records.append(data[at + len(mark):end].decode("utf-8", "replace"))
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
    """Guard report lines -> (status dict, blocked list, blocked count, extra). ``extra`` holds
    ``ended`` (the guard's closing line arrived) and ``memory`` (the memory limit was hit).
    ``records`` are what followed ``MARK + nonce`` (the Drain matched the nonce); a record must
    go on with a field separator, so a longer forged nonce does not pass either."""
    status, blocked, count = None, [], 0
    extra = {"ended": False, "memory": False}
    for rec in records:
        fields = rec.split(SEP)
        if len(fields) < 2 or fields[0] != "":
            continue
        kind = fields[1]
        if kind == "status" and status is None:
            status = dict(f.split("=", 1) for f in fields[2:] if "=" in f)
        elif kind == "end":
            extra["ended"] = True
        elif kind == "limit" and len(fields) >= 3 and fields[2] in ("memory", "disk", "fsize", "tasks"):
            extra[fields[2]] = True
        elif kind in ("block", "kernel") and len(fields) >= 5:
            count += 1
            if len(blocked) < MAX_BLOCKED:
                layer = "audit_hook" if kind == "block" else "kernel"
                message = fields[4]
                if kind == "kernel":
                    names = "、".join(KERNEL_NAMES.get(x, x) for x in fields[4].split("+") if x)
                    message = ("内核（%s）拒绝了脚本对 %s 的操作：围栏只允许写入工作空间和临时目录，不允许启动程序、"
                               "连接本机服务或改动其他进程。" % (names or "内核围栏", fields[3]))
                item = {"layer": layer, "kind": fields[2], "target": fields[3], "message": message}
                if item not in blocked:
                    blocked.append(item)
    return status, blocked, count, extra


def fence_info(status, roots, unrestricted_env):
    if status is None:
        return {"active": None, "layers": [], "allowed_dirs": roots,
                "note": "没有收到围栏的启动报告（Python 可能没能启动）"}
    if status.get("fence") == "off":
        return {"active": False, "layers": [], "allowed_dirs": roots,
                "note": "围栏已关闭（XLA_RUNPY_UNRESTRICTED=1，预留给外层沙箱）"}
    layers = [LAYER_NAMES.get(x, x) for x in status.get("layers", "").split(",") if x]
    info = {"active": True, "layers": layers, "allowed_dirs": roots, "landlock": status.get("landlock", "")}
    for key in ("seccomp", "job", "token"):
        if key in status:
            info[key] = status[key]
    if "token" in status and "low_integrity_token" not in layers:
        info["note"] = ("写入只由第一层（审计钩子）把关：%s。它能防住误操作，但不是严格的沙箱"
                        % status.get("token", ""))   # Windows without the low-integrity token
    elif "landlock" not in layers and "job_object" not in layers:
        info["note"] = "只有第一层（审计钩子）生效：%s。它能防住误操作，但不是严格的沙箱" % status.get("landlock", "")
    return info


def summarize(exit_code, timed_out, timeout, duration, blocked, count, cut, fence, extra=None):
    extra = extra or {}
    if timed_out:
        out = "脚本运行超过 %g 秒，已被终止（整个进程树都已结束）；下面是终止前的输出。" % timeout
    elif extra.get("memory") or exit_code == -9:
        out = ("%s内存超过上限（%d MiB），脚本已停止（退出码 %s）。请分批处理数据：按块读取文件、逐行处理、"
               "及时释放不用的大对象。" % ("" if extra.get("memory") else "脚本被系统强行结束，多半是",
                                       MEMORY_LIMIT >> 20, exit_code))
    elif extra.get("disk"):
        out = ("磁盘空间（临时文件夹上限 %d MiB）已用完，脚本出错退出（退出码 %s）。run_python 的临时文件夹是本次运行"
               "专用的、有大小上限，运行结束就删除；大文件请写到工作空间里。" % (TEMP_LIMIT >> 20, exit_code))
    elif extra.get("tasks"):
        out = ("线程数超过上限（%d 个），脚本出错退出（退出码 %s）。请用线程池（concurrent.futures.ThreadPoolExecutor，"
               "max_workers 取几到几十）代替为每项工作开一个线程。" % (TASK_LIMIT, exit_code))
    elif exit_code == -25 or extra.get("fsize"):
        out = ("脚本写出的单个文件超过上限（%d MiB），已被停止。请把结果分成多个文件；另外磁盘空间（临时文件夹上限 %d MiB）"
               "只够放中间文件，大文件请写到工作空间里。" % (FILE_SIZE_LIMIT >> 20, TEMP_LIMIT >> 20))
    elif exit_code == 0:
        out = "脚本正常结束（退出码 0，用时 %.1f 秒）。" % duration
    else:
        out = "脚本出错退出（退出码 %s，用时 %.1f 秒），原因见 stderr。" % (exit_code, duration)
    if count:
        shown = "；".join("%s（%s）" % (b["target"], "审计钩子" if b["layer"] == "audit_hook" else "内核")
                         for b in blocked[:3])
        out += "写入围栏拦截了 %d 次操作：%s%s。只允许写入：%s；不能启动其他程序。%s" % (
            count, shown, " 等" if count > 3 else "", "、".join(fence["allowed_dirs"]), ADVISORY)
    if fence.get("active") and not extra.get("ended", True) and not timed_out:
        out += "围栏的结束报告没有到达（脚本可能关掉了报告通道或直接结束了进程），拦截记录可能不完整。"
    for name in cut:
        out += "%s 太长，只保留了开头和结尾。" % name
    if fence.get("active") is False:
        out += "注意：本次运行没有写入围栏。"
    return out


def allowed_roots():
    ws = paths.workspace_dir(create=True)
    roots = [os.path.realpath(ws)]
    if os.name == "nt":
        return roots        # the system temp folder is under AppData (denied); the run has its own
    tmp = os.path.realpath(tempfile.gettempdir())
    if tmp not in roots:
        roots.append(tmp)
    return roots


def run_temp_dir(workspace):
    """Windows: a temp folder of this run's own, inside the workspace (so inside the fence and under
    its Low label, never under AppData where %TEMP% is and the deny list refuses writes, issue 33);
    TEMP/TMP/TMPDIR point there and it is removed after the run. Leftovers of runs that were killed
    before their clean-up (older than a day) go at the same time."""
    base = os.path.join(workspace, RUN_TEMP)
    os.makedirs(base, exist_ok=True)
    now = time.time()
    try:
        for name in os.listdir(base):
            old = os.path.join(base, name)
            try:
                if now - os.stat(old).st_mtime > 86400:
                    _remove_tree(old)
            except OSError:
                pass
    except OSError:
        pass
    os.makedirs(base, exist_ok=True)    # removing the last leftover takes the empty base with it
    return tempfile.mkdtemp(prefix="run-", dir=base)


def _remove_tree(path):
    import shutil

    def retry(func, p, _exc):
        try:
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=retry)
    base = os.path.dirname(path)
    try:
        if os.path.basename(base) == RUN_TEMP and not os.listdir(base):
            os.rmdir(base)
    except OSError:
        pass


def _start_windows(cmd, cwd, env, roots, timeout):   # pragma: no cover - Windows only
    """The script's process under the OS fence (xlaguard.wintoken, xlaguard.winjob): the workspace
    labelled Low, a low-integrity restricted token, a Job object this process holds."""
    from xlaguard import winjob, wintoken
    token, detail = None, ""
    try:
        labelled, detail = wintoken.grant_low(roots[0])
        if labelled:
            token, detail = wintoken.low_integrity_token()
    except (OSError, AttributeError, ValueError) as exc:
        detail = "令牌出错：%s" % exc
    try:
        return winjob.spawn(cmd, cwd, env, MEMORY_LIMIT, timeout + 5, token, detail)
    finally:
        if token:
            import _winapi
            _winapi.CloseHandle(token)


def run(script, args, timeout):
    """Run ``script`` with ``args`` under the guard for at most ``timeout`` seconds.

    Returns ``exit_code`` (None on timeout), ``timed_out``, ``duration``, ``fence``, ``blocked``,
    ``blocked_total``, and the two :class:`Drain` objects ``out`` / ``err`` for the answer."""
    roots = allowed_roots()
    env = dict(os.environ)
    run_temp = _posix_run_temp(roots, env)
    nonce = secrets.token_hex(16)
    cmd = [sys.executable, "-I", "-B", "-X", "utf8", "-u", GUARD]
    for r in roots:
        cmd += ["--root", r]
    if run_temp:
        cmd += ["--run-temp", run_temp]
    extra = {}
    rep_r = rep_w = None
    if os.name == "posix":     # the guard's reports on a pipe of their own; stderr stays the script's
        rep_r, rep_w = os.pipe()
        cmd += ["--report-fd", str(rep_w)]
        extra["pass_fds"] = (rep_w,)
        _not_dumpable()
    # the tools' libraries wherever they live (tools/pydeps, or ~/.xla/pydeps for an installed package)
    cmd += ["--nonce-stdin", "--path", manifest.pydeps_dir(ROOT), "--", script] + list(args)
    run_tmp = None
    if os.name == "nt":
        run_tmp = run_temp_dir(roots[0])
        env.update(TEMP=run_tmp, TMP=run_tmp, TMPDIR=run_tmp)
    started = time.monotonic()
    try:
        if os.name == "nt":
            proc = _start_windows(cmd, os.path.dirname(script), env, roots, timeout)
        else:
            proc = subprocess.Popen(cmd, cwd=os.path.dirname(script), env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, **group_kwargs(), **extra)
    except OSError as exc:
        if run_tmp:
            _remove_tree(run_tmp)
        _posix_cleanup(run_temp, None)
        raise ToolError("无法启动 Python 解释器：%s。请确认 Python 安装完整" % exc)
    finally:
        if rep_w is not None:
            os.close(rep_w)
    try:
        return _supervise(proc, nonce, rep_r, roots, timeout, started)
    finally:
        if hasattr(proc, "close"):
            proc.close()            # Windows: the job goes (KILL_ON_JOB_CLOSE), then the temp folder
        if run_tmp:
            _remove_tree(run_tmp)
        _posix_cleanup(run_temp, proc.pid)


def _kill(proc):
    if hasattr(proc, "job"):
        proc.kill()                 # Windows: the whole job
    else:
        kill_tree(proc)


def _supervise(proc, nonce, rep_r, roots, timeout, started):
    """Feed the nonce, drain the pipes, wait (killing the tree on timeout) and read the reports."""
    try:
        proc.stdin.write(nonce.encode("ascii") + b"\n")
        proc.stdin.close()
    except OSError:
        pass
    mark = MARK + nonce.encode("ascii")
    out = Drain(proc.stdout)
    if rep_r is not None:
        err = Drain(proc.stderr)
        reports = Drain(os.fdopen(rep_r, "rb", buffering=0), markers=True, mark=mark)
    else:
        err = reports = Drain(proc.stderr, markers=True, mark=mark)
    for d in {out, err, reports}:
        d.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        proc.wait()
    except BaseException:
        _kill(proc)
        raise
    duration = time.monotonic() - started
    drains = {out, err, reports}
    for d in drains:
        d.join(timeout=3)
    if any(d.is_alive() for d in drains):   # a leftover grandchild holds a pipe: kill the group again
        _kill(proc)
        for d in drains:
            d.join(timeout=2)
    status, blocked, count, extra = parse_records(reports.records)
    fence = fence_info(status, roots, os.environ.get("XLA_RUNPY_UNRESTRICTED") == "1")
    launcher = getattr(proc, "token_detail", "")
    if launcher and "token" in fence and "low_integrity_token" not in fence.get("layers", ()):
        fence["token"] += "（启动方：%s）" % launcher     # Windows: why the token is not a low one
    return {"exit_code": None if timed_out else proc.returncode, "timed_out": timed_out,
            "duration": duration, "fence": fence, "blocked": blocked, "blocked_total": count,
            "extra": extra, "out": out, "err": err}


def _posix_run_temp(roots, env):
    """POSIX: a temp folder of this run's own (issue 34), made here so it can be removed here after the
    run, however the run ended. It replaces the system temp folder among the allowed places and is the
    script's TMPDIR; on Linux the guard mounts a tmpfs of ``TEMP_LIMIT`` bytes on it in its private
    mount namespace (the contents go with the namespace). Returns its path, or None elsewhere."""
    if os.name != "posix":
        return None
    tmp = os.path.realpath(tempfile.gettempdir())
    _posix_sweep(tmp)
    try:
        run_temp = os.path.realpath(tempfile.mkdtemp(prefix="xla-run-", dir=tmp))
    except OSError as exc:
        raise ToolError("无法在临时目录 %s 里建本次运行的临时文件夹：%s" % (tmp, exc.strerror))
    roots[:] = [r for r in roots if r != tmp] + [run_temp]
    env["TMPDIR"] = run_temp
    return run_temp


def _posix_sweep(tmp, age=86400):
    """Leftovers of runs whose run_python was itself killed before its clean-up (the host's own
    timeout): our ``xla-run-*`` folders older than a day go (empty ones, on Linux: the tmpfs went with
    the guard's namespace)."""
    import shutil
    now = time.time()
    try:
        names = [n for n in os.listdir(tmp) if n.startswith("xla-run-")]
    except OSError:
        return
    for name in names:
        path = os.path.join(tmp, name)
        try:
            st = os.lstat(path)
            if (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.getuid() and now - st.st_mtime > age:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def _posix_cleanup(run_temp, pid):
    """After the run: the per-run temp folder and the guard's pids cgroup (``xlaguard.limits``) go."""
    if run_temp:
        import shutil
        shutil.rmtree(run_temp, ignore_errors=True)
    if pid is not None and sys.platform.startswith("linux"):
        guard_limits.cleanup(pid)


def _not_dumpable():
    """Linux: make this process (run_python itself) non-dumpable, so its /proc/<pid>/fd (its stdout,
    the answer to the host) cannot be reopened by the script, even past the audit hook; the guard
    drops every capability, so not as root either (issue 25, D7). Harmless elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0),
                                                ctypes.c_ulong(0))   # PR_SET_DUMPABLE 0
    except (OSError, AttributeError):
        pass
