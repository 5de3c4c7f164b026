"""The guard's kernel layers one syscall at a time, and the Windows job object's structures.

seccomp: a forked child installs the real filter (``xlaguard.seccomp.apply_seccomp``) and calls each
syscall the filter must refuse, and each one ordinary work needs, directly; the parent reads what
happened. Run as root (CI) and as uid 65534 in a forked child (never skipped as root): the filter
must refuse the same calls either way, and root must have lost its capabilities.

Windows: the Job object cannot be created here; its structures are built with ctypes on every
platform, and their sizes and offsets must match the Windows SDK layout on 64-bit."""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, nobody_dir

sys.path.insert(0, ROOT)
from xlaguard import seccomp, winjob  # noqa: E402

X86_64 = sys.platform.startswith("linux") and os.uname().machine in ("x86_64", "amd64")

PROBE = r"""
import ctypes, errno, fcntl, json, os, resource, signal, socket, struct, sys, threading
sys.path.insert(0, sys.argv[1])
from xlaguard import seccomp
uid, tmp, victim = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
if uid:
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
limits = seccomp.set_limits()
applied = seccomp.apply_seccomp()
out = {"applied": applied, "limits": limits}
def t(name, f):
    try:
        f()
        out[name] = "ok"
    except MemoryError:
        out[name] = "MemoryError"
    except ValueError:      # resource.setrlimit: "not allowed to raise maximum limit"
        out[name] = "EPERM"
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sysc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
p = os.path.join(tmp, "f")
open(p, "w").close()
# refused
t("socket_unix", lambda: socket.socket(socket.AF_UNIX))
t("socketpair_dgram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
t("fork", lambda: os.fork())
t("execve", lambda: os.execv("/bin/true", ["true"]))
t("prlimit_other", lambda: resource.prlimit(victim, resource.RLIMIT_CPU, (1, 1)))
t("kill_other", lambda: os.kill(victim, 19))
t("setpriority_other", lambda: os.setpriority(os.PRIO_PROCESS, victim, 10))
t("setpriority_user", lambda: os.setpriority(os.PRIO_USER, 0, 10))
t("affinity_other", lambda: os.sched_setaffinity(victim, {0}))
t("ptrace", lambda: sysc(101, 16, victim, 0, 0))
t("process_vm_writev", lambda: sysc(311, victim, 0, 0, 0, 0, 0))
t("pidfd_send_signal", lambda: signal_pidfd(victim))
t("chmod_setuid", lambda: os.chmod(p, 0o4755))
t("chmod_setgid", lambda: os.chmod(p, 0o2755))
t("open_setuid_mode", lambda: os.close(os.open(p + "s", os.O_CREAT | os.O_WRONLY, 0o4755)))
t("chown", lambda: os.chown(p, 0, 0))
t("setxattr", lambda: os.setxattr(p, "user.x", b"1"))
t("ioctl_setflags", lambda: fcntl.ioctl(open(p), 0x40086602, struct.pack("l", 0x40)))
t("fcntl_setown", lambda: fcntl.fcntl(open(p).fileno(), fcntl.F_SETOWN, victim))
t("flock", lambda: fcntl.flock(open(p).fileno(), fcntl.LOCK_EX))
t("memfd_create", lambda: os.memfd_create("x"))
t("personality", lambda: sysc(135, 0x0008))
t("keyctl", lambda: sysc(250, 0, 0))
t("bpf", lambda: sysc(321, 0, 0, 0))
t("userfaultfd", lambda: sysc(323, 0))
t("unshare_user", lambda: sysc(272, 0x10000000))
t("mount", lambda: sysc(165, 0, 0, 0, 0, 0))
t("io_uring_setup", lambda: sysc(425, 1, 0))
t("clone3", lambda: sysc(435, 0, 0))
t("memory_8g", lambda: bytearray(8 << 30))
# issue 34: leases, the parent-death signal, netlink/vsock, writes relative to a directory fd
t("fcntl_setlease", lambda: fcntl.fcntl(open(p).fileno(), 1024, fcntl.F_RDLCK))
t("pdeathsig", lambda: sysc(157, 1, 0))
t("socket_netlink", lambda: socket.socket(16, socket.SOCK_RAW, 0))
t("socket_vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
dfd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
t("openat_dirfd_write", lambda: os.close(os.open("g2", os.O_CREAT | os.O_WRONLY, dir_fd=dfd)))
t("openat_dirfd_trunc", lambda: os.close(os.open("f", os.O_RDONLY | os.O_TRUNC, dir_fd=dfd)))
t("mkdirat_dirfd", lambda: os.mkdir("d2", dir_fd=dfd))
t("unlinkat_dirfd", lambda: os.unlink("f", dir_fd=dfd))
t("renameat_dirfd", lambda: os.rename("f", "f3", src_dir_fd=dfd, dst_dir_fd=dfd))
t("renameat_one_dirfd", lambda: os.rename(p, "f3", dst_dir_fd=dfd))
t("symlinkat_dirfd", lambda: os.symlink("x", "l", dir_fd=dfd))
t("linkat_dirfd", lambda: os.link("f", "h", src_dir_fd=dfd, dst_dir_fd=dfd))
t("fchmodat_dirfd", lambda: os.chmod("f", 0o644, dir_fd=dfd))
t("utimensat_dirfd", lambda: os.utime("f", (1, 1), dir_fd=dfd))
# still allowed
t("thread", lambda: (lambda th: (th.start(), th.join()))(threading.Thread(target=lambda: None)))
t("socketpair_stream", lambda: [s.close() for s in socket.socketpair()])
t("socket_inet", lambda: socket.socket(socket.AF_INET).close())
t("chmod_plain", lambda: os.chmod(p, 0o644))
t("kill_self_probe", lambda: os.kill(os.getpid(), 0))
t("kill_other_probe", lambda: os.kill(victim, 0))
t("setpriority_self", lambda: os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + 1)))
t("prlimit_self", lambda: resource.prlimit(0, resource.RLIMIT_CPU))
t("lockf", lambda: fcntl.lockf(open(p, "w"), fcntl.LOCK_EX))
t("write_file", lambda: open(os.path.join(tmp, "g"), "w").write("x"))
t("openat_dirfd_read", lambda: os.close(os.open("f", os.O_RDONLY, dir_fd=dfd)))
t("scandir_fd", lambda: list(os.scandir(dfd)))
held = open(p, "a")
t("futimens", lambda: os.utime(held.fileno(), (1, 1)))
t("utime_path", lambda: os.utime(p, (2, 2)))
t("rename_plain", lambda: (os.rename(p, p + "r"), os.rename(p + "r", p)))
t("prctl_set_name", lambda: (lambda r: None if r == 0 else sysc(-1))(libc.prctl(15, b"xla", 0, 0, 0)))
t("socket_inet6", lambda: socket.socket(socket.AF_INET6).close())
t("raise_hard_limit", lambda: resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2))
print(json.dumps(out))
"""

PROBE = PROBE.replace("t(\"pidfd_send_signal\", lambda: signal_pidfd(victim))",
                      "t(\"pidfd_send_signal\", lambda: signal.pidfd_send_signal(os.pidfd_open(victim), 19))")

REFUSED = ["socket_unix", "socketpair_dgram", "fork", "execve", "prlimit_other", "kill_other", "setpriority_other",
           "setpriority_user", "affinity_other", "ptrace", "process_vm_writev", "pidfd_send_signal", "chmod_setuid",
           "chmod_setgid", "open_setuid_mode", "chown", "setxattr", "ioctl_setflags", "fcntl_setown", "flock",
           "memfd_create", "personality", "keyctl", "bpf", "userfaultfd", "unshare_user", "mount", "io_uring_setup",
           "fcntl_setlease", "pdeathsig", "socket_netlink", "socket_vsock", "openat_dirfd_write", "openat_dirfd_trunc",
           "mkdirat_dirfd", "unlinkat_dirfd", "renameat_dirfd", "renameat_one_dirfd", "symlinkat_dirfd",
           "linkat_dirfd", "fchmodat_dirfd", "utimensat_dirfd"]
ALLOWED = ["thread", "socketpair_stream", "socket_inet", "chmod_plain", "kill_self_probe", "kill_other_probe",
           "setpriority_self", "prlimit_self", "lockf", "write_file", "openat_dirfd_read", "scandir_fd", "futimens",
           "utime_path", "rename_plain", "prctl_set_name", "socket_inet6"]


def probe(tmp_path, uid):
    if uid:
        tmp = nobody_dir("xla-seccomp-")     # pytest's tmp_path sits under a 0700 folder of root's
    else:
        tmp = tmp_path / "u0"
        tmp.mkdir()
    # /bin/sleep, not this Python: the interpreter may live under a home only root can enter
    victim = subprocess.Popen(["sleep", "60"],
                              preexec_fn=(lambda: (os.setgid(uid), os.setuid(uid))) if uid else None)
    try:
        res = subprocess.run([sys.executable, "-I", "-c", PROBE, ROOT, str(uid), str(tmp), str(victim.pid)],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr[-3000:]
        out = json.loads(res.stdout.strip().splitlines()[-1])
        assert victim.poll() is None, "the victim died"
        with open("/proc/%d/status" % victim.pid) as fh:
            assert [ln for ln in fh if ln.startswith("State:")][0].split()[1] in ("S", "R")
    finally:
        victim.kill()
        victim.wait()
        if uid:
            shutil.rmtree(str(tmp), ignore_errors=True)
    return out


@pytest.mark.skipif(not X86_64, reason="the seccomp table is x86-64 only")
@pytest.mark.parametrize("uid", [0, 65534], ids=["root", "uid65534"])
def test_seccomp_refuses_and_allows(tmp_path, uid):
    if uid and os.geteuid() != 0:
        pytest.skip("only root can switch to uid 65534")
    if not uid and os.geteuid() != 0:
        uid = 0
    out = probe(tmp_path, uid)
    assert out["applied"][0] is True, out
    refused = {k: out[k] for k in REFUSED if out[k] != "EPERM"}
    assert not refused, refused
    assert out["clone3"] == "ENOSYS"
    assert out["memory_8g"] == "MemoryError"
    wrong = {k: out[k] for k in ALLOWED if out[k] != "ok"}
    assert not wrong, wrong
    assert out["raise_hard_limit"] in ("EPERM", "EINVAL")   # no CAP_SYS_RESOURCE left, even for root
    assert set(out["limits"]) >= {"RLIMIT_AS", "RLIMIT_FSIZE"}


def test_seccomp_program_shape():
    """Every jump lands inside the program, and every block ends in a return (BPF jumps are
    unsigned 8-bit offsets)."""
    prog = seccomp.program(12345)
    assert len(prog) < 4096
    for i, (code, jt, jf, k) in enumerate(prog):
        assert 0 <= jt < 256 and 0 <= jf < 256
        if code in (seccomp.JEQ, seccomp.JSET, seccomp.JGE):
            assert i + 1 + max(jt, jf) < len(prog)
    assert prog[-1] == (seccomp.RET, 0, 0, seccomp.RET_ALLOW)
    assert set(seccomp.DENIED) <= set(seccomp.NR) and all(n in seccomp.NR for n, _ in seccomp.OWN_PID_ONLY)


def test_windows_job_structures():
    """Sizes and offsets of the Windows SDK structures on 64-bit, and the limits the job gets."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("layout checked for 64-bit")
    basic = winjob.JOBOBJECT_BASIC_LIMIT_INFORMATION
    ext = winjob.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
    assert ctypes.sizeof(basic) == 64 and ctypes.sizeof(winjob.IO_COUNTERS) == 48 and ctypes.sizeof(ext) == 144
    assert basic.LimitFlags.offset == 16 and basic.ActiveProcessLimit.offset == 40
    assert basic.PriorityClass.offset == 56
    assert ext.IoInfo.offset == 64 and ext.ProcessMemoryLimit.offset == 112 and ext.PeakJobMemoryUsed.offset == 136
    info = winjob.limits(seccomp.MEMORY_LIMIT)
    flags = info.BasicLimitInformation.LimitFlags
    assert flags & winjob.JOB_OBJECT_LIMIT_ACTIVE_PROCESS and flags & winjob.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    assert flags & winjob.JOB_OBJECT_LIMIT_PROCESS_MEMORY
    assert info.BasicLimitInformation.ActiveProcessLimit == 1 and info.ProcessMemoryLimit == seccomp.MEMORY_LIMIT
    assert winjob.UI_LIMITS == 0xFF
