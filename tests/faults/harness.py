"""Shared pieces of the fault suite: spawning a tool exactly as the host does (same command, cwd and
environment as ``xlakit.host.run_tool``) but under a fault injector, and the checks every writer
fault ends with.

Kill injection: ``strace -f --seccomp-bpf -e inject=SYSCALL:signal=KILL:when=N`` kills the tool at
its N-th call of SYSCALL (strace counts per syscall and per process). Which N are interesting is
learnt from one traced run of the same call: the calls from the first one touching the user's
folder or ``~/.xla`` onwards (the Python start-up before that cannot harm a file). Without strace
the sweep kills after N milliseconds instead.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile

from conftest import ROOT

sys.path.insert(0, ROOT)
from xlakit import host as xla_host  # noqa: E402
from xlakit import manifest as xla_manifest  # noqa: E402

from . import tally  # noqa: E402

STRACE = shutil.which("strace")
TEMP_NAME = re.compile(r"^\.xla-.*\.tmp$")
# the syscalls a writer changes files with; every one of them is a kill point
WRITE_SYSCALLS = ("openat", "write", "fsync", "rename", "unlink", "sendfile", "fchmod", "chmod",
                  "fchown", "ftruncate", "utimensat", "mkdir", "flock", "pwrite64", "copy_file_range",
                  "renameat2", "link", "renameat", "linkat", "unlinkat", "mkdirat", "fchmodat")


def tool_command(name):
    data, _problems = xla_manifest.load_manifest(ROOT)
    tool = xla_manifest.find_tool(data, name)
    return [xla_host.python_command(), "-X", "utf8", "-u", xla_manifest.script_path(tool, ROOT)]


def spawn(name, args, home, prefix=(), extra_env=None, timeout=60):
    """Run tool ``name`` with ``args`` like the host, under ``prefix`` (an injector command).
    Returns ``(returncode, stdout, stderr, seconds)``; a run past ``timeout`` counts as hung."""
    env = xla_host.tool_env(ROOT, str(home), extra_env)
    cmd = list(prefix) + tool_command(name)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=os.path.join(ROOT, "tools"), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(json.dumps(args, ensure_ascii=False).encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        tally.add("hung_tools")
        raise AssertionError("%s hung under %s" % (name, " ".join(prefix)))
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.monotonic() - start


def trace_calls(name, args, home, watch, extra_env=None):
    """One traced run: for each write syscall, the call numbers (1-based, in the main process)
    at or after the first call that names a path under one of ``watch``."""
    log = os.path.join(str(home), "..", "trace-%d.txt" % os.getpid())
    prefix = [STRACE, "-f", "--seccomp-bpf", "-qq", "-o", log, "-e", "trace=" + ",".join(WRITE_SYSCALLS)]
    code, out, err, _ = spawn(name, args, home, prefix, extra_env)
    assert code == 0, (out, err)
    counts, points, started, main_pid = {}, {}, False, None
    with open(log, encoding="utf-8", errors="replace") as fh:
        for ln in fh:
            m = re.match(r"(\d+) +(?:<\.\.\. )?(\w+)\(", ln)
            if not m or "resumed>" in ln[:60]:
                continue
            pid, call = int(m.group(1)), m.group(2)
            main_pid = main_pid or pid
            if pid != main_pid:
                continue
            counts[call] = counts.get(call, 0) + 1
            if not started and any(w in ln for w in watch):
                started = True
            if started:
                points.setdefault(call, []).append(counts[call])
    os.remove(log)
    return points


def sample(seq, k):
    """At most ``k`` items of ``seq`` spread evenly, always the first and the last."""
    seq = list(seq)
    if len(seq) <= k:
        return seq
    if k <= 1:
        return seq[len(seq) // 2:][:1]
    step = (len(seq) - 1) / float(k - 1)
    return sorted({seq[int(round(i * step))] for i in range(k)})


COMMIT_CALLS = ("rename", "renameat2", "fsync", "unlink", "ftruncate", "link", "sendfile", "copy_file_range",
                "fchmod", "chmod", "fchown", "renameat", "linkat", "unlinkat")   # the *at forms: writes through a folder's descriptor


def kill_points(points, per_call=4, every=COMMIT_CALLS):
    """The sweep: every call of the syscalls that commit or copy, a spread sample of the rest."""
    out = []
    for call, ns in sorted(points.items()):
        for n in (ns if call in every else sample(ns, per_call)):
            out.append((call, n))
    return out


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as fh:
                kids = [int(x) for x in fh.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def run_killed(name, args, home, call, n, extra_env=None, hold=0.25):
    """The tool killed (SIGKILL) on entering its ``n``-th ``call``, before the call runs; True
    when that point was reached.

    strace holds the tracee at that entry (``inject=…:delay_enter``) and this side sends the
    SIGKILL when it sees it held there (``t`` state for ``hold`` seconds). Why not strace's own
    ``signal=KILL``: with ``--seccomp-bpf`` (which spares the tracee a stop at each of the ~10,000
    system calls of a Python start-up, two thirds of the run time on a busy machine) strace 6.1
    does not deliver injected signals, but it does honour delays."""
    env = xla_host.tool_env(ROOT, str(home), extra_env)
    cmd = [STRACE, "-f", "--seccomp-bpf", "-qq", "-o", "/dev/null", "-e", "trace=" + call,
           "-e", "inject=%s:delay_enter=60s:when=%d" % (call, n)] + tool_command(name)
    proc = subprocess.Popen(cmd, cwd=os.path.join(ROOT, "tools"), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    proc.stdin.write(json.dumps(args, ensure_ascii=False).encode("utf-8"))
    proc.stdin.close()
    held, hit, start = {}, False, time.monotonic()
    while proc.poll() is None:
        now = time.monotonic()
        if now - start > 60:
            tally.add("hung_tools")
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("%s hung under strace (%s #%d)" % (name, call, n))
        for pid in _descendants(proc.pid):
            if _state(pid) == "t":
                since = held.setdefault(pid, now)
                if now - since >= hold:
                    os.kill(pid, signal.SIGKILL)
                    hit = True
            else:
                held.pop(pid, None)
        if hit:
            # strace sleeps out its delay before it looks again; the tool is dead, so end strace too
            victims = _descendants(proc.pid)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for pid in victims:
                while _state(pid) not in (None, "Z", "X"):
                    time.sleep(0.01)
            break
        time.sleep(0.02)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    return hit


def run_timer_killed(name, args, home, ms, extra_env=None):
    """Without strace: the tool killed ``ms`` milliseconds after it started."""
    env = xla_host.tool_env(ROOT, str(home), extra_env)
    proc = subprocess.Popen(tool_command(name), cwd=os.path.join(ROOT, "tools"), env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    proc.stdin.write(json.dumps(args, ensure_ascii=False).encode("utf-8"))
    proc.stdin.close()
    time.sleep(ms / 1000.0)
    killed = proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return killed


# ---------------------------------------------------------------------------------------------
# What a file is, for comparing versions

def canon(path):
    """A version's identity: the bytes, or for a zip package (xlsx, docx) every member except the
    document properties (their timestamps differ between two runs of the same call). A zip that
    fails its CRC check or cannot be opened is ``("broken", bytes)`` and never equals a version."""
    with open(path, "rb") as fh:
        return canon_bytes(fh.read())


def canon_bytes(data):
    import io
    if data[:2] != b"PK":
        return ("bytes", data)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if zf.testzip() is not None:
                return ("broken", data)
            return ("zip", tuple(sorted((i.filename, zf.read(i)) for i in zf.infolist()
                                        if not i.filename.startswith("docProps/"))))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return ("broken", data)


def stray_temps(*folders):
    out = []
    for folder in folders:
        for dirpath, _dirs, names in os.walk(str(folder)):
            out += [os.path.join(dirpath, n) for n in names if TEMP_NAME.match(n)]
    return out


def age(paths_, seconds=3600):
    """Make leftover temp files look ``seconds`` old: the stand-in for the time that passes before
    the user's next write (the files layer removes its own temp files once they are stale)."""
    then = time.time() - seconds
    for p in paths_:
        try:
            os.utime(p, (then, then))
        except OSError:
            pass


def lock_is_free(home, target):
    """The per-file lock of ``target`` can be taken at once (a killed writer's lock died with it)."""
    import fcntl
    import hashlib
    real = os.path.realpath(os.path.abspath(str(target)))
    lock = os.path.join(str(home), ".xla", "locks", "write-%s.lock" % hashlib.sha1(
        real.encode("utf-8", "surrogatepass")).hexdigest()[:12])
    if not os.path.exists(lock):
        return True
    give_up = time.monotonic() + 2          # the kernel drops the lock as the dead process exits
    with open(lock, "a+b") as fh:
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > give_up:
                    return False
                time.sleep(0.05)
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return True


def backups_of(home):
    folder = os.path.join(str(home), ".xla", "backup")
    if not os.path.isdir(folder):
        return []
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if not TEMP_NAME.match(n)]


def snapshot(folder):
    """``{relative path: bytes}`` of every file under ``folder``."""
    out = {}
    for dirpath, _dirs, names in os.walk(str(folder)):
        for n in names:
            full = os.path.join(dirpath, n)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, str(folder))] = fh.read()
    return out


def lost_bytes(before, after_path):
    """Bytes of ``before`` (a bytes value) not found intact at ``after_path``: 0 or len(before)."""
    try:
        with open(after_path, "rb") as fh:
            return 0 if fh.read() == before else len(before)
    except OSError:
        return len(before)
