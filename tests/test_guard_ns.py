"""The guard's mount namespace and caps (issue 34), with the audit hook off, as root and as uid 65534.

Layer ``ns`` alone (``XLA_GUARD_LAYERS=ns``, the launcher's own test seam) must make every write,
chmod, utime, rename, link or dir-fd trick outside the allowed places fail in the kernel (EROFS),
whatever path reaches the file: the long-path chain of issue 34 (links nested past PATH_MAX) included.
Inside, work goes on. The run's temp folder is a tmpfs capped at ``ns.TEMP_LIMIT`` and leaves nothing
behind; threads stop at ``limits.TASK_LIMIT``. Then the same caps through the real run_python tool,
for the Chinese answer, and ``signal.SIG_IGN``, which the hook's signal wrapper used to refuse."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import CJK, ROOT, assert_contract, nobody_dir

sys.path.insert(0, ROOT)
from xlaguard import limits, ns  # noqa: E402

LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(not LINUX, reason="mount namespaces and cgroups are Linux")
NOBODY = 65534

PROBE = r"""
import errno, json, os, sys, tempfile, threading
WS, OUT = sys.argv[1], sys.argv[2]
V, M = os.path.join(OUT, "victim.txt"), os.path.join(OUT, "marker.txt")
res = {}
def t(name, f):
    try:
        f()
        res[name] = "ok"
    except OSError as e:
        res[name] = errno.errorcode.get(e.errno, str(e.errno))
# the working folder the launcher started in must be the writable bind, not the read-only mount below it
t("inside_relative_cwd", lambda: open("rel.txt", "w").write("1"))
# the long-path chain: deep folders and links inside, the last link pointing outside
n = "x" * 250
def deep(base, levels):
    p = base
    for i in range(levels):
        p = os.path.join(p, n)
        os.makedirs(p, exist_ok=True)
    return p
os.chdir(WS)
os.symlink(deep(os.path.join(WS, "d1"), 14), "s1")
os.symlink(os.path.join(WS, deep("s1", 14)), "s2")
os.symlink(OUT, "s2/home")
res["realpath_blind"] = not os.path.realpath("s2/home/victim.txt").startswith(OUT)
ro = os.open(V, os.O_RDONLY)
t("chmod", lambda: os.chmod(V, 0o777))
t("utime", lambda: os.utime(V, (5, 5)))
t("fchmod_readonly_fd", lambda: os.chmod(ro, 0o777))
t("futimens_readonly_fd", lambda: os.utime(ro, (5, 5)))
t("long_chmod", lambda: os.chmod("s2/home/victim.txt", 0o777))
t("long_utime", lambda: os.utime("s2/home/victim.txt", (5, 5)))
t("long_write", lambda: open("s2/home/marker.txt", "w"))
t("write", lambda: open(M, "w"))
t("append", lambda: open(V, "a"))
t("truncate", lambda: os.truncate(V, 0))
t("rename", lambda: os.rename(V, V + ".moved"))
t("unlink", lambda: os.unlink(V))
t("mkdir", lambda: os.mkdir(M))
t("symlink", lambda: os.symlink("/", M))
t("link_out_in", lambda: os.link(V, os.path.join(WS, "hard")))
t("dirfd_write", lambda: os.open("victim.txt", os.O_WRONLY, dir_fd=os.open(OUT, os.O_RDONLY)))
t("dirfd_chmod", lambda: os.chmod("victim.txt", 0o777, dir_fd=os.open(OUT, os.O_RDONLY)))
t("inside_write", lambda: open(os.path.join(WS, "ok.txt"), "w").write("1"))
t("inside_chmod", lambda: os.chmod(os.path.join(WS, "ok.txt"), 0o600))
t("inside_utime", lambda: os.utime(os.path.join(WS, "ok.txt"), (5, 5)))
t("temp_write", lambda: open(os.path.join(tempfile.gettempdir(), "t.txt"), "w").write("1"))
big = os.open(os.path.join(tempfile.gettempdir(), "big"), os.O_CREAT | os.O_WRONLY)
t("temp_fallocate_1g", lambda: os.posix_fallocate(big, 0, 1 << 30))
ev, started = threading.Event(), 0
try:
    while started < 3000:
        threading.Thread(target=ev.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
ev.set()
res["threads"] = started
res["tempdir"] = tempfile.gettempdir()
print(json.dumps(res))
"""

OUTSIDE = ["chmod", "utime", "fchmod_readonly_fd", "futimens_readonly_fd", "long_chmod", "long_utime", "long_write",
           "write", "append", "truncate", "rename", "unlink", "mkdir", "symlink", "link_out_in", "dirfd_write",
           "dirfd_chmod"]
INSIDE = ["inside_relative_cwd", "inside_write", "inside_chmod", "inside_utime", "temp_write"]


def python_for(uid):
    from test_guard import interpreter_for
    return interpreter_for(uid)


def snapshot(out):
    v = os.path.join(out, "victim.txt")
    st = os.stat(v)
    return sorted(os.listdir(out)), open(v).read(), st.st_mode, st.st_mtime


def ns_available():
    """Can this machine give an unprivileged user a mount namespace (the layer's precondition)?"""
    try:
        r = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, timeout=10,
                           preexec_fn=(lambda: (os.setgroups([]), os.setgid(NOBODY), os.setuid(NOBODY)))
                           if os.geteuid() == 0 else None)
        return r.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.parametrize("uid", [0, NOBODY], ids=["root", "uid65534"])
def test_the_mount_namespace_alone_holds_outside(uid):
    if os.geteuid() != 0:
        if uid:
            pytest.skip("only root can switch to uid 65534")
    elif not uid and not os.path.isdir(limits.CGROUP_ROOT):
        pytest.skip("no cgroup file system")
    base = nobody_dir("xla-ns-")
    try:
        ws, out, rt = base / "ws", base / "out", base / "tmp" / "run"
        for d in (ws, out, rt):
            d.mkdir(parents=True)
        (out / "victim.txt").write_text("original")
        os.chmod(str(out / "victim.txt"), 0o644)
        os.utime(str(out / "victim.txt"), (1000000000, 1000000000))
        (ws / "probe.py").write_text(PROBE)
        if uid and os.geteuid() == 0:
            for dirpath, dirnames, filenames in os.walk(str(base)):
                for x in [dirpath] + [os.path.join(dirpath, y) for y in dirnames + filenames]:
                    os.lchown(x, uid, uid)
        before = snapshot(str(out))
        run_uid = uid if os.geteuid() == 0 else os.geteuid()
        drop = (lambda: (os.setgroups([]), os.setgid(run_uid), os.setuid(run_uid))) if run_uid != os.geteuid() else None
        proc = subprocess.Popen([python_for(run_uid), "-I", "-B", "-X", "utf8", "-u", os.path.join(ROOT, "xla_guard.py"),
                                 "--root", str(ws), "--root", str(rt), "--run-temp", str(rt), "--",
                                 str(ws / "probe.py"), str(ws), str(out)],
                                cwd=str(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=drop,
                                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base),
                                     "XLA_GUARD_LAYERS": "ns", "TMPDIR": str(rt)})
        stdout, stderr = proc.communicate(timeout=120)
        limits.cleanup(proc.pid)
        text = stdout.decode("utf-8", "replace")
        assert proc.returncode == 0, (text, stderr.decode("utf-8", "replace")[-3000:])
        status = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if "\x1fstatus\x1f" in ln][0]
        if "ns=私有挂载命名空间" not in status:
            if uid and not ns_available():
                pytest.skip("this kernel gives ordinary users no user namespace: %s" % status)
            raise AssertionError(status)
        res = json.loads(text.strip().splitlines()[-1])
        assert snapshot(str(out)) == before
        assert res["realpath_blind"], "the chain no longer blinds realpath: the test lost its point"
        wrong = {k: res[k] for k in OUTSIDE if res[k] == "ok"}
        assert not wrong, res
        assert all(res[k] in ("EROFS", "EXDEV") for k in OUTSIDE), res
        assert {k: res[k] for k in INSIDE} == dict.fromkeys(INSIDE, "ok"), res
        assert res["tempdir"] == str(rt)
        assert res["temp_fallocate_1g"] == "ENOSPC", res
        assert 16 <= res["threads"] < limits.TASK_LIMIT, res
        assert os.listdir(str(rt)) == [], "the tmpfs left files behind"
        assert not any(os.path.exists(os.path.join(p, limits.PREFIX + str(proc.pid))) for p in limits.cgroup_parents())
    finally:
        shutil.rmtree(str(base), ignore_errors=True)


def test_mount_setattr_and_remount_fallback_agree_on_flags():
    """The remount fallback (kernels before 5.12) keeps the flags a user namespace locks."""
    assert ns.KEEP_OPTIONS["nosuid"] == ns.MS_NOSUID and ns.KEEP_OPTIONS["noexec"] == ns.MS_NOEXEC
    points = [p for p, _ in ns._mountinfo()]
    assert "/" in points


# --------------------------------------------------------------------------- through the real tool

def run_tool(home, code, timeout=30):
    from xlakit import host
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    script = ws / "s.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    tmp = home.parent / "systmp"
    tmp.mkdir(exist_ok=True)
    result = host.run_tool("run_python", {"path": str(script), "timeout": timeout}, home=str(home),
                           extra_env={"TMPDIR": str(tmp)}, log=False)
    data = assert_contract(result)
    assert data["ok"], data
    leftovers = [n for n in os.listdir(str(tmp)) if n.startswith("xla-run-")]
    assert leftovers == [], "the run's temp folder was not removed: %s" % leftovers
    return data


@pytest.mark.parametrize("size", [2 << 30, 10 << 30], ids=["2GB", "10GB"])
def test_the_temp_folder_cap_answers_in_chinese(home, size):
    data = run_tool(home, "import os, tempfile\n"
                          "fd = os.open(os.path.join(tempfile.gettempdir(), 'big'), os.O_CREAT | os.O_WRONLY)\n"
                          "os.posix_fallocate(fd, 0, %d)\nprint('ESCAPED')\n" % size)
    assert "ESCAPED" not in data["stdout"]
    assert "磁盘空间（临时文件夹上限 %d MiB）" % (ns.TEMP_LIMIT >> 20) in data["summary"], data["summary"]


def test_the_thread_cap_answers_in_chinese(home):
    data = run_tool(home, "import threading\nev = threading.Event()\nn = 0\n"
                          "while n < 5000:\n    threading.Thread(target=ev.wait, daemon=True).start()\n    n += 1\n"
                          "print('ESCAPED', n)\n")
    assert "ESCAPED" not in data["stdout"]
    assert "线程数超过上限（%d 个）" % limits.TASK_LIMIT in data["summary"], data["summary"]
    assert CJK.search(data["summary"])


def test_sig_ign_and_sig_dfl_work(home):
    data = run_tool(home, "import signal\n"
                          "a = signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                          "b = signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
                          "c = signal.signal(signal.SIGINT, lambda s, f: None)\n"
                          "print(a is signal.SIG_DFL, b is signal.SIG_IGN, callable(signal.getsignal(signal.SIGINT)))\n")
    assert data["exit_code"] == 0 and data["stdout"].split() == ["True", "True", "True"], data


def test_the_run_temp_goes_after_a_timeout(home):
    """Killed at the timeout: the temp folder is removed all the same (run_tool checks)."""
    data = run_tool(home, "import tempfile, time, os\n"
                          "open(os.path.join(tempfile.gettempdir(), 'left.txt'), 'w').write('x' * 1000)\n"
                          "print(tempfile.gettempdir(), flush=True)\ntime.sleep(60)\n", timeout=2)
    assert data["timed_out"] is True and "xla-run-" in data["stdout"]


def test_old_run_temp_leftovers_are_swept(home):
    """A run whose run_python was itself killed leaves an (empty) xla-run-* folder: the next run removes
    the ones older than a day, and leaves a fresh one (another run's) alone."""
    tmp = home.parent / "systmp"
    tmp.mkdir(exist_ok=True)
    old, fresh = tmp / "xla-run-old", tmp / "xla-run-fresh"
    old.mkdir()
    fresh.mkdir()
    os.utime(str(old), (0, 0))
    from xlakit import host
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "s.py").write_text("print('hi')\n")
    data = assert_contract(host.run_tool("run_python", {"path": str(ws / "s.py")}, home=str(home),
                                         extra_env={"TMPDIR": str(tmp)}, log=False))
    assert data["ok"] and data["stdout"].strip() == "hi"
    assert not old.exists() and fresh.exists()
