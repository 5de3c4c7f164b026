"""The Windows lane's harness API (Linux side), for any test that must run on Windows CPython.

Use from a test in ``tests/windows/`` (fixtures come from ``tests/windows/conftest.py``)::

    import pytest
    from winlane import win_tool, win_python, win_path, linux_path, hold_open
    pytestmark = pytest.mark.windows

    def test_x(lane, win_home, win_tmp):
        res = win_tool("write_text", {"path": win_path(win_tmp / "a.txt"), "content": "你好"}, home=win_home)
        assert res.ok                      # a RunResult-like object; conftest.ok/fail work on it
        out = win_python("import os; print(os.sep)")
        assert out.stdout.strip() == "\\\\"

- ``win_tool(name, args=None, env=None, timeout=60, home=None, raw_input=None)``: runs the tool
  as a Windows host does — ``python.exe -X utf8 -u tools\\<script>``, cwd ``tools\\``, environment
  ``PATH``, ``HOME``, ``PYTHONPATH`` (the lane's Windows wheels) plus the system variables Windows
  needs to start Python (``xlakit.host.tool_env``), JSON on stdin — and returns what the host got
  (``.ok``, ``.data``, ``.error``, ``.stdout``, ``.stderr``, ``.exit_code``, ``.timed_out``,
  ``.answer()``). ``env`` adds test seams (``XLA_NET_MAP``…). ``home`` is a Linux or Windows
  path; default: a fresh folder under ``C:\\users\\<user>\\xla-homes``.
- ``win_python(code, args=(), env=None, cwd=None, stdin=b"", timeout=60, host_env=None)``: runs
  ``python.exe -X utf8 -c code`` (``utf8=False`` leaves the ANSI code page in charge); ``env``
  is the child's *whole* environment when given (``host_env=HOME`` builds the host's instead);
  returns ``.exit_code``, ``.stdout``/``.stderr`` (text, UTF-8 with replacement), ``.out_bytes``.
- ``win_run(argv, ...)``: the same for any command line (``python.exe`` is ``lane_python()``).
- ``win_path(p)``: a Linux path as Windows sees it (``C:\\…`` inside the prefix, else ``Z:\\…``);
  ``linux_path(w)`` the reverse (``C:``, ``Z:``, ``\\\\?\\`` forms).
- ``hold_open(path, share=FILE_SHARE_READ)``: a context manager holding ``path`` open the way
  Excel/WPS hold a workbook (read/write access, others may only read).
- ``profile()``: the Linux path of ``C:\\users\\<user>`` (Desktop, Documents, AppData are real
  folders there); ``toolbox()``: the lane's copy of the toolbox (Linux path).

The tools run from a copy of this checkout (``C:\\xla-tools\\<pid>``) whose ``tools\\pydeps`` is the
lane's Windows wheels, so nothing of the Linux ``tools/pydeps`` is seen, as on a real Windows
install. The copy is made once per test process; the driver (``winhost.py``) lives as long.
"""
import atexit
import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import lane as lane_mod  # noqa: E402

FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_SHARE_DELETE = 1, 2, 4
# What is copied into the lane's toolbox (the rest of the checkout is tests, benchmarks, git).
TOOLBOX_SKIP_TOP = {".git", ".venv", "tests", "bench", ".pytest_cache", "build", "dist"}
TOOLBOX_SKIP = {"__pycache__", "pydeps"}

_STATE = {"lane": None, "driver": None, "toolbox": None, "lock": threading.Lock(), "count": 0}


class LaneUnavailable(Exception):
    """No lane here (no Wine, setup failed); tests/windows/conftest.py turns it into skip/fail."""


def lane():
    """The prepared lane (built on first use if needed; cached across runs)."""
    if _STATE["lane"] is None:
        try:
            _STATE["lane"] = lane_mod.ensure()
        except lane_mod.LaneError as exc:
            raise LaneUnavailable(str(exc))
    return _STATE["lane"]


def profile():
    return lane().profile


def lane_python():
    """``python.exe`` of the lane, as a Windows path."""
    return win_path(lane().python_exe)


def win_path(path):
    """The Windows form of a Linux path: inside the prefix's drive_c it is ``C:\\…``, else Wine's
    ``Z:`` drive (the whole Unix file system)."""
    path = os.path.abspath(str(path))
    for base in (lane().drive_c, os.path.realpath(lane().drive_c)):
        if path == base or path.startswith(base + os.sep):
            return "C:\\" + path[len(base) + 1:].replace("/", "\\")
    return "Z:" + path.replace("/", "\\")


def linux_path(path):
    """The Linux path behind a Windows path of the lane: ``C:\\…``, ``Z:\\…``, and the long and UNC
    forms ``\\\\?\\C:\\…``, ``\\\\.\\C:\\…``, ``\\\\localhost\\C$\\…``, ``\\\\?\\UNC\\localhost\\C$\\…``
    (the forms the writers' deny list must see through). Windows names are case-insensitive and
    Wine keeps its own spelling on disk (``StartUp``), so existing components are matched
    case-insensitively. ValueError for anything else (a relative path, another server)."""
    text = str(path).replace("/", "\\")
    low = text.lower()
    unc = None
    if low.startswith("\\\\?\\unc\\"):
        unc = text[8:]
    elif low.startswith("\\\\") and not low.startswith(("\\\\?\\", "\\\\.\\")):
        unc = text[2:]
    if unc is not None:
        host, _, rest = unc.partition("\\")
        share, _, rest = rest.partition("\\")
        if host.lower() not in ("localhost", "127.0.0.1", ".") or len(share) != 2 or share[1] != "$":
            raise ValueError("not a lane path: %s" % path)
        text = share[0] + ":\\" + rest
    elif low.startswith(("\\\\?\\", "\\\\.\\")):
        text = text[4:]
    drive, parts = text[:2].upper(), [p for p in text[2:].split("\\") if p]
    if drive == "C:":
        base = lane().drive_c
    elif drive == "Z:":
        base = "/"
    else:
        raise ValueError("not a lane path: %s" % path)
    for part in parts:
        exact = os.path.join(base, part)
        if not os.path.lexists(exact) and os.path.isdir(base):
            match = [n for n in os.listdir(base) if n.lower() == part.lower()]
            exact = os.path.join(base, match[0]) if match else exact
        base = exact
    return base


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _clean_stale():
    """Remove what test processes that are gone left in the shared prefix (toolbox copies, homes,
    temp folders named after their pid): a killed run must not make the next one slower or odd."""
    ln = lane()
    places = [(os.path.join(ln.drive_c, "xla-tools"), ""), (os.path.join(ln.profile, "xla-homes"), "h"),
              (os.path.join(ln.profile, "xla-tests"), "t")]
    for folder, mark in places:
        for name in (os.listdir(folder) if os.path.isdir(folder) else ()):
            digits = name[len(mark):].split("-", 1)[0]
            if name.startswith(mark) and digits.isdigit() and not _pid_alive(int(digits)):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def toolbox():
    """The lane's copy of this checkout (Linux path), made once per test process."""
    if _STATE["toolbox"] is None:
        _clean_stale()
        dest = os.path.join(lane().drive_c, "xla-tools", str(os.getpid()))
        shutil.rmtree(dest, ignore_errors=True)
        def ignore(folder, names):
            top = os.path.abspath(folder) == os.path.abspath(ROOT)
            return [n for n in names if n in TOOLBOX_SKIP or (top and n in TOOLBOX_SKIP_TOP) or n.endswith(".pyc")]
        shutil.copytree(ROOT, dest, ignore=ignore)
        os.symlink(lane().pydeps, os.path.join(dest, "tools", "pydeps"))
        _STATE["toolbox"] = dest
        atexit.register(shutil.rmtree, dest, True)
    return _STATE["toolbox"]


class _Driver:
    """One ``winhost.py`` under Wine, spoken to in JSON lines."""

    def __init__(self):
        ln = lane()
        env = ln.env()
        self.proc = subprocess.Popen(["wine", ln.python_exe, "-X", "utf8", "-u", win_path(os.path.join(HERE, "winhost.py")),
                                      win_path(toolbox())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=toolbox())
        self.err = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.buf = b""

    def _drain(self):
        for line in self.proc.stderr:
            self.err.append(line)
            del self.err[:-200]

    def call(self, req, timeout):
        self.proc.stdin.write(json.dumps(req, ensure_ascii=True).encode("ascii") + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not select.select([fd], [], [], 0)[0]:
                raise RuntimeError("the Windows driver did not answer (%s): %s" % (
                    "exited %s" % self.proc.returncode if self.proc.poll() is not None else "timeout",
                    b"".join(self.err).decode("utf-8", "replace")[-2000:]))
            if select.select([fd], [], [], min(left, 1.0))[0]:
                chunk = os.read(fd, 1 << 20)
                if not chunk and self.proc.poll() is not None:
                    continue
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        answer = json.loads(line.decode("ascii"))
        if "driver_error" in answer:
            raise RuntimeError("Windows driver: " + answer["driver_error"])
        return answer["reply"]

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        except (OSError, subprocess.SubprocessError):
            self.proc.kill()


def _call(req, timeout):
    with _STATE["lock"]:
        driver = _STATE["driver"]
        if driver is None or driver.proc.poll() is not None:
            driver = _STATE["driver"] = _Driver()
            atexit.register(driver.close)
        try:
            return driver.call(req, timeout)
        except RuntimeError as exc:
            if "did not answer" in str(exc):
                # a late answer would pair with the next request: start a fresh driver instead
                driver.proc.kill()
                _STATE["driver"] = None
            raise


def _win(path):
    text = str(path)
    return text if len(text) > 1 and text[1] == ":" or text.startswith("\\\\") else win_path(text)


def new_home():
    """A fresh HOME under ``C:\\users\\<user>\\xla-homes`` (Linux path)."""
    parent = os.path.join(profile(), "xla-homes")
    os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix="h%d-" % os.getpid(), dir=parent)


class WinResult:
    """What the Windows host got from one tool run (the fields of ``xlakit.host.RunResult``)."""

    def __init__(self, name, reply):
        self.tool = name
        for key in ("ok", "data", "text", "error", "images", "exit_code", "stdout", "stderr", "duration",
                    "timed_out", "output_capped", "cut"):
            setattr(self, key, reply.get(key))
        self._answer = reply.get("answer")
        self.cancelled = False

    def answer(self):
        return self._answer

    def __repr__(self):
        return "<WinResult %s ok=%s exit=%s %s>" % (self.tool, self.ok, self.exit_code, (self.error or "")[:200])


def win_tool(name, args=None, env=None, timeout=60, home=None, raw_input=None, log=True):
    """Run tool ``name`` as a Windows host does (see the module docstring); a WinResult."""
    home = _win(home) if home is not None else win_path(new_home())
    req = {"op": "tool", "name": name, "args": args if args is not None else {}, "home": home,
           "env": dict({"PYTHONPATH": win_path(os.path.join(toolbox(), "tools", "pydeps"))}, **(env or {})),
           "timeout": timeout, "log": log}
    if raw_input is not None:
        req["raw_input"] = base64.b64encode(raw_input.encode("utf-8") if isinstance(raw_input, str) else raw_input).decode()
    return WinResult(name, _call(req, timeout + 60))


class Completed:
    """A finished Windows process: ``exit_code``, ``out_bytes``/``err_bytes``, ``stdout``/``stderr``
    (decoded UTF-8 with replacement), ``timed_out``."""

    def __init__(self, reply):
        self.exit_code = reply.get("exit_code")
        self.out_bytes = base64.b64decode(reply.get("stdout") or "")
        self.err_bytes = base64.b64decode(reply.get("stderr") or "")
        self.stdout = self.out_bytes.decode("utf-8", "replace")
        self.stderr = self.err_bytes.decode("utf-8", "replace")
        self.timed_out = reply.get("timed_out")
        self.start_error = reply.get("start_error")

    def __repr__(self):
        return "<Completed exit=%s out=%r err=%r>" % (self.exit_code, self.stdout[-300:], self.stderr[-600:])


def win_run(argv, env=None, cwd=None, stdin=b"", timeout=60, host_env=None, extra_env=None):
    """Run a Windows command line from inside the lane. ``env`` is the whole environment (None:
    the driver's, i.e. a normal Windows session's; ``extra_env`` adds to that); ``host_env=<HOME>``
    gives the tool environment the host builds (``env`` then adds to it). ``cwd`` defaults to the
    toolbox's ``tools\\``."""
    req = {"op": "spawn", "argv": [str(a) for a in argv], "env": env, "extra_env": extra_env,
           "cwd": _win(cwd) if cwd else win_path(os.path.join(toolbox(), "tools")),
           "stdin": base64.b64encode(stdin.encode("utf-8") if isinstance(stdin, str) else stdin).decode(),
           "timeout": timeout}
    if host_env is not None:
        req["host_env"] = _win(host_env)
    return Completed(_call(req, timeout + 60))


def win_python(code, args=(), env=None, cwd=None, stdin=b"", timeout=60, host_env=None, utf8=True, extra_env=None):
    """``python.exe [-X utf8] -c code args…`` in the lane (see win_run)."""
    argv = [lane_python()] + (["-X", "utf8"] if utf8 else []) + ["-c", code] + list(args)
    return win_run(argv, env=env, cwd=cwd, stdin=stdin, timeout=timeout, host_env=host_env, extra_env=extra_env)


def win_xla(args, home, stdin=b"", timeout=90, extra_env=None):
    """``python.exe xla.py ARGS`` as a person types it in ``cmd`` on a Chinese Windows: no ``-X utf8``,
    so stdin/stdout pipes use the ANSI code page (936); a normal session's environment with HOME."""
    env = dict({"HOME": _win(home)}, **(extra_env or {}))
    return win_run([lane_python(), win_path(os.path.join(toolbox(), "xla.py"))] + list(args), cwd=toolbox(),
                   stdin=stdin, timeout=timeout, extra_env=env)


@contextlib.contextmanager
def hold_open(path, share=FILE_SHARE_READ):
    """Hold ``path`` (Linux or Windows path) open as Excel/WPS do while a workbook is open:
    read+write access, sharing only ``share`` (default FILE_SHARE_READ). Wine enforces sharing
    modes between Windows processes, so a tool's replace/rename/delete of it fails as on Windows."""
    target = _win(path)
    reply = _call({"op": "hold", "path": target, "share": share}, 60)
    if not reply.get("held"):
        raise OSError("could not hold %s open (WinError %s)" % (target, reply.get("winerror")))
    try:
        yield target
    finally:
        _call({"op": "release", "path": target}, 60)


@contextlib.contextmanager
def exclusive(name="machine"):
    """Hold a lock across test processes while a test changes what every Windows process of the lane
    sees (the registry, a drive letter, C:\\ itself); tests that depend on that state take it too."""
    sys.path.insert(0, ROOT)
    from xlakit.fs.lock import FileLock
    with FileLock(os.path.join(lane().root, "exclusive-%s.lock" % name), timeout=600):
        yield


def try_write(target, home=None, tool="write_text", text="x", **args):
    """Ask ``tool`` to write ``target`` (a Windows path in any form, or a relative one) and report
    ``(result, created)``: ``created`` says whether a file appeared there, seen from Linux, so a
    deny-list test can prove nothing was written even when the tool claimed otherwise. A file the
    call created is removed again, so a failing test does not leave e.g. a Startup entry in the
    shared prefix. ``home`` defaults to the real profile (C:\\users\\<user>, as a desktop host
    passes it)."""
    home = home if home is not None else profile()
    try:
        real = linux_path(target)
    except ValueError:
        real = None
    existed = bool(real) and os.path.lexists(real)
    params = dict({"path": target}, **args)
    if tool in ("write_text", "write_document"):
        params.setdefault("text", text)
    result = win_tool(tool, params, home=home)
    created = bool(real) and not existed and os.path.lexists(real)
    if created:
        os.unlink(real)
    return result, created


def ping():
    """The driver's Python version, ANSI code page and environment names."""
    return _call({"op": "ping"}, 120)
