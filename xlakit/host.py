"""The reference host: runs a tool exactly as the assistant does. Importable, so the CLI (xla.py),
the tests and any later adapter share one code path.

The contract it enforces (rules.md section 2):
- ``python3 -X utf8 -u tools/<script>``, working directory ``tools/``, environment only ``PATH``,
  ``HOME`` and ``PYTHONPATH=<root>/tools/pydeps`` (``~/.xla/pydeps`` for an installed package:
  ``manifest.pydeps_dir``; plus what Windows needs to start Python);
- undeclared argument keys dropped, the rest type-checked against the manifest before spawning;
- 60 s, then the whole process tree is killed; at most 2 runs at once across processes;
- 1 MB cap on captured output (past it the child is killed and the result says so);
- images are taken out of the result before stdout is cut at 20,000 characters; errors are cut at
  2,000 characters; stderr is the error when the exit code is non-zero or stdout is empty
  (without its progress lines, which are handed to ``on_progress`` as they arrive);
- Ctrl+C kills the child tree (no orphans);
- one JSON line per run appended to ``~/.xla/logs/``.
"""
import base64
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from . import manifest as xla_manifest
from . import progress
from .fs.lock import FileLock
from .fs.paths import home_dir
from .wire import CAPTURE_LIMIT, ERROR_LIMIT, OUTPUT_LIMIT, clean_surrogates, json_text

TIMEOUT = 60
PROGRESS_MARK = progress.PREFIX.encode("utf-8")
MAX_PARALLEL = 2
LOG_STRING_LIMIT = 200
QUEUE_TIMEOUT = 300


class RunResult:
    """What one run gave. ``text`` is what the model receives; ``data`` the parsed JSON (images removed)."""

    def __init__(self, tool):
        self.tool = tool
        self.ok = False
        self.data = None
        self.text = ""
        self.error = None
        self.images = []
        self.exit_code = None
        self.stdout = ""
        self.stderr = ""
        self.duration = 0.0
        self.timed_out = False
        self.timeout = TIMEOUT          # the limit this run had (the error names it)
        self.cancelled = False
        self.output_capped = False
        self.cut = False

    def answer(self):
        """The JSON object the host hands to the model."""
        if self.ok:
            return self.data if self.data is not None else {"ok": True}
        out = {"ok": False, "error": self.error or "工具失败"}
        if isinstance(self.data, dict):
            for key, value in self.data.items():
                out.setdefault(key, value)
            out["ok"], out["error"] = False, self.error or out.get("error")
        return out


def _home(home=None):
    return home or home_dir()


def tool_env(root, home, extra_env=None):
    """The child's whole environment: nothing of the caller's leaks in except PATH."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home,
           "PYTHONPATH": xla_manifest.pydeps_dir(root, home)}
    if os.name == "nt":  # pragma: no cover - Python cannot start on Windows without these
        for key in ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "COMSPEC", "PATHEXT", "USERPROFILE"):
            if key in os.environ:
                env[key] = os.environ[key]
    env.update(extra_env or {})
    return env


def python_command():
    """The interpreter the assistant would start: ``python3`` on PATH. On Windows the interpreter
    running this host, since ``python3`` there is often the Microsoft Store stub."""
    if os.name == "nt":  # pragma: no cover
        return sys.executable
    return shutil.which("python3") or sys.executable


def group_kwargs():
    """Popen arguments that put the child in its own process group, so kill_tree reaches every
    process it starts (helpers, grandchildren) and nothing outlives a timeout or Ctrl+C."""
    if os.name == "nt":  # pragma: no cover - Windows only
        return {"creationflags": getattr(subprocess, "CREATE_NO_WINDOW", 0) | subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(proc):
    """Kill ``proc`` and everything in its process group (taskkill /T on Windows)."""
    try:
        if os.name == "nt":  # pragma: no cover
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10,
                           creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        proc.kill()
    except OSError:
        pass


class _Capture(threading.Thread):
    """Reads one pipe into memory; shares a byte budget with its sibling so the sum stays capped.
    With ``on_progress`` (stderr only) each complete progress line is handed over as it arrives."""

    def __init__(self, pipe, budget, on_progress=None):
        super().__init__(daemon=True)
        self.pipe, self.budget, self.chunks = pipe, budget, []
        self.on_progress, self._partial = on_progress, b""

    def _lines(self, chunk):
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()[-4096:]      # a progress line is short; never hoard a huge one
        for raw in lines:
            if raw.startswith(PROGRESS_MARK):
                found = progress.parse(raw.decode("utf-8", "replace").rstrip("\r"))
                if found is not None:
                    try:
                        self.on_progress(*found)
                    except Exception:   # noqa: BLE001 - a display problem never fails the run
                        pass

    def run(self):
        try:
            while True:
                chunk = self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
                if not chunk:
                    break
                if self.on_progress is not None:
                    self._lines(chunk)
                with self.budget["lock"]:
                    room = CAPTURE_LIMIT - self.budget["used"]
                    self.budget["used"] += len(chunk)
                    if len(chunk) > room:
                        self.chunks.append(chunk[:max(room, 0)])
                        self.budget["over"] = True
                        continue
                self.chunks.append(chunk)
        except (OSError, ValueError):
            pass

    def text(self):
        return b"".join(self.chunks).decode("utf-8", "replace")


def _acquire_slot(home, max_parallel, queue_timeout, cancel=None):
    folder = os.path.join(home, ".xla", "run")
    deadline = time.monotonic() + queue_timeout
    while True:
        for i in range(max_parallel):
            lock = FileLock(os.path.join(folder, "slot-%d.lock" % i))
            if lock.try_acquire():
                return lock
        if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
            return None
        time.sleep(0.05)


def _shorten(value):
    if isinstance(value, str) and len(value) > LOG_STRING_LIMIT:
        return value[:LOG_STRING_LIMIT] + "…(%d 字)" % len(value)
    if isinstance(value, list):
        return [_shorten(v) for v in value[:50]]
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    return value


def audit(home, tool, args, result):
    """Append one JSON line about this run to ~/.xla/logs/runs-YYYYMMDD.jsonl; never fails the run."""
    try:
        folder = os.path.join(home, ".xla", "logs")
        os.makedirs(folder, exist_ok=True)
        now = datetime.datetime.now()
        if isinstance(args, dict) and args.get("password"):
            args = dict(args, password="***")       # an open password is never written down
        line = json_text({"time": now.isoformat(timespec="seconds"), "tool": tool, "args": _shorten(args),
                          "duration": round(result.duration, 3), "ok": result.ok, "exit_code": result.exit_code,
                          "error": (result.error or None) and result.error[:300]})
        with open(os.path.join(folder, "runs-%s.jsonl" % now.strftime("%Y%m%d")), "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


def _seconds(value):
    """A timeout as people write it: 60, 5, 2.5."""
    value = TIMEOUT if value is None else value
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def _finish(result, stdout, stderr):
    result.stdout, result.stderr = stdout, stderr
    parsed = None
    body = stdout.strip()
    if body:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        images = parsed.pop("images", None)
        if isinstance(images, list):
            result.images = [im for im in images if isinstance(im, dict)]
            body = json_text(parsed)     # the runtime's own serialisation: sizes agree
        result.data = parsed
    if len(body) > OUTPUT_LIMIT:
        body, result.cut = body[:OUTPUT_LIMIT], True
    result.text = body
    if result.cancelled:
        result.error = "调用已取消，工具进程已终止"
    elif result.timed_out:
        result.error = "工具运行超过 %s 秒被终止。请缩小范围（分段、筛选）后重试" % _seconds(result.timeout)
    elif result.output_capped:
        result.error = "工具输出超过 1MB，已被终止。这是工具的缺陷：它应当分页输出"
    elif result.exit_code != 0 or not body:
        err = progress.strip(stderr).strip()          # progress lines never crowd out the error
        if not err and isinstance(parsed, dict):
            err = str(parsed.get("error") or "")
        result.error = err or "工具异常退出（退出码 %s），没有任何输出" % result.exit_code
    elif not isinstance(parsed, dict) or not isinstance(parsed.get("ok"), bool):
        result.error = "工具的输出不是带 ok 字段的 JSON 对象" + ("（输出超过 %d 字被截断）" % OUTPUT_LIMIT if result.cut else "")
    elif not parsed["ok"]:
        result.error = str(parsed.get("error") or progress.strip(stderr).strip() or "工具失败，但没有给出原因")
    else:
        result.ok = True
    if result.error and len(result.error) > ERROR_LIMIT:
        result.error = result.error[:ERROR_LIMIT]
    return result


def run_tool(name, args=None, root=None, home=None, extra_env=None, timeout=TIMEOUT, python=None,
             max_parallel=MAX_PARALLEL, queue_timeout=QUEUE_TIMEOUT, log=True, raw_input=None, cancel=None,
             on_progress=None):
    """Run tool ``name`` with ``args`` (a dict) like the assistant; returns a RunResult.

    ``raw_input`` (bytes/str) bypasses argument checking and is sent to stdin as is: tests use it to
    show that a script itself survives broken input. ``cancel`` (an optional ``threading.Event``)
    lets another thread stop the run: once set, a queued run gives up and a running child tree is
    killed, and the result has ``cancelled`` set (the MCP server's ``notifications/cancelled``).
    ``on_progress(done, total, note)`` is called from a reader thread for each progress line the
    tool writes (:mod:`xlakit.progress`), with ``done`` only ever increasing."""
    root = os.path.abspath(root or xla_manifest.root_dir())
    home = _home(home)
    result = RunResult(name)
    data, problems = xla_manifest.load_manifest(root)
    tool = xla_manifest.find_tool(data, name)
    if tool is None:
        result.error = "没有名为 %s 的工具。可用：%s" % (name, "、".join(
            t.get("name", "?") for t in (data or {}).get("tools", [])) or "（清单为空）")
        return result
    if raw_input is None:
        try:
            clean = xla_manifest.validate_args(tool, args if args is not None else {})
        except xla_manifest.ArgumentError as exc:
            result.error = str(exc)
            result.exit_code = 2
            if log:
                audit(home, name, args, result)
            return result
        stdin_bytes = json_text(clean).encode("utf-8")      # lone surrogates arrive as U+FFFD
    else:
        clean = args
        stdin_bytes = clean_surrogates(raw_input).encode("utf-8") if isinstance(raw_input, str) else raw_input
    script = xla_manifest.script_path(tool, root)
    slot = _acquire_slot(home, max_parallel, queue_timeout, cancel)
    if slot is None and cancel is not None and cancel.is_set():
        result.cancelled = True
        result.error = "调用已取消（还在排队，工具没有启动）"
        return result
    if slot is None:
        result.error = "同时运行的工具已达上限（%d 个），排队超时，请稍后重试" % max_parallel
        return result
    started = time.monotonic()
    result.timeout = timeout
    try:
        _spawn(result, [python or python_command(), "-X", "utf8", "-u", script], os.path.join(root, "tools"),
               tool_env(root, home, extra_env), stdin_bytes, timeout, cancel, _increasing(on_progress))
    finally:
        slot.release()
        result.duration = time.monotonic() - started
    if log:
        audit(home, name, clean, result)
    return result


def _increasing(on_progress):
    """Pass on only reports that move forward (MCP: progress MUST increase)."""
    if on_progress is None:
        return None
    last = [None]

    def forward(done, total, note):
        if last[0] is not None and done <= last[0]:
            return
        last[0] = done
        on_progress(done, total, note)
    return forward


def _spawn(result, cmd, cwd, env, stdin_bytes, timeout, cancel=None, on_progress=None):
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, **group_kwargs())
    except OSError as exc:
        result.error = "无法启动 Python（%s）：%s" % (cmd[0], exc)
        return result
    budget = {"lock": threading.Lock(), "used": 0, "over": False}
    readers = [_Capture(proc.stdout, budget), _Capture(proc.stderr, budget, on_progress)]
    for reader in readers:
        reader.start()

    def feed():
        try:
            proc.stdin.write(stdin_bytes)
        except (OSError, ValueError):
            pass
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
    threading.Thread(target=feed, daemon=True).start()
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if budget["over"]:
                result.output_capped = True
                break
            if time.monotonic() >= deadline:
                result.timed_out = True
                break
            if cancel is not None and cancel.is_set():
                result.cancelled = True
                break
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    except KeyboardInterrupt:
        kill_tree(proc)
        raise
    finally:
        kill_tree(proc)            # also reaps grandchildren left behind by a finished tool
        proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    result.output_capped = result.output_capped or budget["over"]
    result.exit_code = proc.returncode
    return _finish(result, readers[0].text(), readers[1].text())


def save_images(result, folder):
    """Write a result's images to ``folder``; returns the paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i, image in enumerate(result.images):
        name = os.path.basename(str(image.get("name") or "image-%d.png" % (i + 1))) or "image-%d.png" % (i + 1)
        try:
            raw = base64.b64decode(image.get("data") or "", validate=False)
        except (ValueError, TypeError):
            continue
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(raw)
        paths.append(path)
    return paths
