"""Layer 3 (Linux x86-64): a seccomp-bpf filter, capabilities dropped, resource limits.

Landlock (layer 2) fences paths; it does not see sockets to local services, signals and limits of
other processes, file flags, ownership, setuid bits, namespaces or kernel keyrings. The filter,
installed with ``prctl`` through ctypes after ``PR_SET_NO_NEW_PRIVS`` and before the script runs,
answers ``EPERM`` to:

- ``socket(AF_UNIX)`` and ``socketpair(AF_UNIX)`` other than a stream pair (asyncio's self-pipe):
  without a unix socket there is no ``connect``/``sendto``/``sendmsg`` to a tmux server, an
  ssh-agent, D-Bus, X11 or docker (seccomp cannot read the address a pointer points to, so the
  socket itself is refused; abstract addresses need a socket too); ``socket(AF_NETLINK)`` and
  ``socket(AF_VSOCK)`` (the kernel's and a VM host's channels; glibc's getaddrinfo copes without
  netlink, and Python never asks for AI_ADDRCONFIG by itself);
- writes relative to a directory fd: ``openat`` with write flags, ``mkdirat``, ``unlinkat``,
  ``renameat(2)``, ``linkat``, ``symlinkat``, ``fchmodat(2)``, ``futimesat`` and ``utimensat`` with a
  path, unless the dirfd is ``AT_FDCWD`` (reads with a dirfd, and ``futimens``, stay): the "open"
  audit event carries no dir_fd, so this makes every path the kernel walks for a write the one the
  audit hook checked (issue 34);
- ``fcntl(F_SETLEASE)`` (a lease on the host's lock files stalls other tools like ``flock`` does) and
  ``prctl(PR_SET_PDEATHSIG)`` (the launcher set SIGKILL-on-parent-death; the script must not undo it);
- ``ptrace``, ``process_vm_readv/writev``, ``process_madvise``, ``pidfd_getfd``, ``pidfd_send_signal``,
  ``kcmp``;
- ``kill``/``tgkill``/``tkill``/``rt_(tg)sigqueueinfo``, ``prlimit64``, ``setpriority``,
  ``sched_set*``, ``ioprio_set``, ``migrate_pages``/``move_pages`` on any pid but 0 and the
  script's own (BPF sees only the number: "its own tree" is the pid it had at start; ``kill(pid, 0)``,
  a mere existence probe, is allowed);
- ``ioctl`` ``FS_IOC_SETFLAGS`` / ``FS_IOC_FSSETXATTR`` (append-only, immutable, no-dump), ``TIOCSTI``,
  ``TIOCLINUX``, ``FIOSETOWN``/``SIOCSPGRP`` and ``fcntl`` ``F_SETOWN(_EX)`` (SIGIO to another process);
- the whole chown family; ``chmod``/``fchmod``/``fchmodat(2)`` and ``open``/``openat``/``creat`` with
  ``O_CREAT`` whose mode has setuid/setgid/sticky bits; ``mknod(at)``; every xattr write;
- ``flock`` (a read-only fd on the host's slot lock is enough to stall other tools; ``fcntl`` record
  locks, which sqlite uses, do not conflict with ``flock`` on Linux and stay allowed);
- ``execve``/``execveat``, ``fork``/``vfork`` and ``clone`` without ``CLONE_THREAD`` or with a
  namespace flag (threads keep working), ``clone3`` and ``openat2`` (ENOSYS, so libc falls back to
  the calls above), ``io_uring_*`` (it would run syscalls past this filter);
- ``memfd_create``/``memfd_secret``, ``personality``, ``keyctl``/``add_key``/``request_key``, ``bpf``,
  ``userfaultfd``, ``perf_event_open``, mount/umount/``unshare``/``setns``/``pivot_root``/``chroot`` and
  the new mount API, module loading, kexec, reboot, swap, clocks, host names, quotas;
- every syscall of a foreign ABI (i386 ``int 0x80``, x32).

Capabilities: all are dropped (bounding, effective, permitted, inheritable), so a script started as
root cannot override file permissions, kill, trace or raise its limits again. Limits: ``RLIMIT_AS``
(:data:`MEMORY_LIMIT`), ``RLIMIT_FSIZE`` (:data:`FILE_SIZE_LIMIT`), ``RLIMIT_CORE`` 0, soft = hard.

The syscall numbers are those of x86-64; elsewhere (arm64 and others) the filter is not installed
and the status line says so."""
import os
import sys

MEMORY_LIMIT = 4 << 30
FILE_SIZE_LIMIT = 4 << 30

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
EPERM, ENOSYS = 1, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAPBSET_DROP = 38, 22, 24
SECCOMP_MODE_FILTER = 2
AF_UNIX, SOCK_STREAM = 1, 1
O_CREAT, O_TMPFILE_BIT = 0o100, 0o20000000
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
SPECIAL_MODE_BITS = 0o7000

# x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl)
NR = dict(
    ioctl=16, socket=41, socketpair=53, clone=56, fork=57, vfork=58, execve=59, kill=62, fcntl=72, flock=73,
    open=2, creat=85, chmod=90, fchmod=91, chown=92, fchown=93, lchown=94, ptrace=101, syslog=103,
    rt_sigqueueinfo=129, uselib=134, mknod=133, personality=135, setpriority=141, sched_setparam=142,
    sched_setscheduler=144, vhangup=153, modify_ldt=154, pivot_root=155, adjtimex=159, chroot=161,
    acct=163, settimeofday=164, mount=165, umount2=166, swapon=167, swapoff=168, reboot=169, sethostname=170,
    setdomainname=171, iopl=172, ioperm=173, init_module=175, delete_module=176, quotactl=179,
    setxattr=188, lsetxattr=189, fsetxattr=190, removexattr=197, lremovexattr=198, fremovexattr=199,
    tkill=200, sched_setaffinity=203, lookup_dcookie=212, clock_settime=227, tgkill=234, kexec_load=246,
    add_key=248, request_key=249, keyctl=250, ioprio_set=251, migrate_pages=256, openat=257, mknodat=259,
    fchownat=260, fchmodat=268, unshare=272, move_pages=279, rt_tgsigqueueinfo=297, perf_event_open=298,
    prlimit64=302, open_by_handle_at=304, clock_adjtime=305, setns=308, process_vm_readv=310,
    process_vm_writev=311, kcmp=312, finit_module=313, sched_setattr=314, memfd_create=319,
    kexec_file_load=320, bpf=321, execveat=322, userfaultfd=323, pidfd_send_signal=424, io_uring_setup=425,
    io_uring_enter=426, io_uring_register=427, open_tree=428, move_mount=429, fsopen=430, fsconfig=431,
    fsmount=432, fspick=433, clone3=435, openat2=437, pidfd_getfd=438, process_madvise=440,
    mount_setattr=442, quotactl_fd=443, memfd_secret=447, process_mrelease=448, fchmodat2=452,
    setxattrat=463, removexattrat=466, prctl=157, mkdirat=258, futimesat=261, unlinkat=263, renameat=264,
    linkat=265, symlinkat=266, utimensat=280, renameat2=316,
)
DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "process_mrelease", "pidfd_getfd",
    "pidfd_send_signal", "kcmp", "chown", "fchown", "lchown", "fchownat", "mknod", "mknodat", "setxattr",
    "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
    "flock", "execve", "execveat", "fork", "vfork", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "memfd_create", "memfd_secret", "personality", "keyctl", "add_key", "request_key", "bpf", "userfaultfd",
    "perf_event_open", "mount", "umount2", "unshare", "setns", "pivot_root", "chroot", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "iopl", "ioperm",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "quotactl",
    "quotactl_fd", "syslog", "vhangup", "lookup_dcookie", "uselib", "open_by_handle_at", "modify_ldt",
)
NOT_THERE = ("clone3", "openat2")     # ENOSYS: libc falls back to clone/openat, which are checked
# (syscall, argument index of the pid) allowed only for pid 0 and the script's own pid
OWN_PID_ONLY = (("prlimit64", 0), ("sched_setaffinity", 0), ("sched_setparam", 0), ("sched_setscheduler", 0),
                ("sched_setattr", 0), ("migrate_pages", 0), ("move_pages", 0), ("tgkill", 0), ("tkill", 0),
                ("rt_sigqueueinfo", 0), ("rt_tgsigqueueinfo", 0))
# (syscall, argument index of the mode)
MODE_ARGS = (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2))
CREATE_MODE_ARGS = (("open", 1, 2), ("openat", 2, 3))    # (syscall, flags index, mode index)
IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x5412, 0x541C, 0x8901, 0x8902)
FCNTLS = (8, 15, 1024)     # F_SETOWN, F_SETOWN_EX, F_SETLEASE
DENIED_FAMILIES = (AF_UNIX, 16, 40)    # AF_UNIX, AF_NETLINK, AF_VSOCK
PR_SET_PDEATHSIG = 1
AT_FDCWD = 0xFFFFFF9C       # -100 as the low 32 bits of the dirfd argument
O_WRITE_BITS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000 | 0o20000000   # WRONLY RDWR CREAT TRUNC APPEND TMPFILE
# (syscall, argument indexes of dirfds): writes relative to a directory fd are refused, so every path the
# kernel walks for a write starts at the cwd or at "/" - the one the audit hook checked (issue 34)
DIRFD_WRITES = (("mkdirat", (0,)), ("unlinkat", (0,)), ("renameat", (0, 2)), ("renameat2", (0, 2)),
                ("linkat", (0, 2)), ("symlinkat", (1,)), ("futimesat", (0,)))

# classic BPF
LD_ABS, JEQ, JSET, JGE, RET, AND = 0x20, 0x15, 0x45, 0x35, 0x06, 0x54


def errno_ret(err):
    return 0x00050000 | err


def arg_low(i):
    """Offset of the low 32 bits of argument i in struct seccomp_data (little-endian)."""
    return 16 + 8 * i


def program(own_pid):
    """The filter as a list of (code, jt, jf, k). Each rule is a block that starts by loading the
    syscall number and skips itself (jf) when the number is not its own."""
    prog = [(LD_ABS, 0, 0, 4), (JEQ, 1, 0, AUDIT_ARCH_X86_64), (RET, 0, 0, errno_ret(EPERM)),
            (LD_ABS, 0, 0, 0), (JGE, 0, 1, X32_BIT), (RET, 0, 0, errno_ret(EPERM))]
    deny, allow = (RET, 0, 0, errno_ret(EPERM)), (RET, 0, 0, RET_ALLOW)

    def block(name, body):
        prog.append((LD_ABS, 0, 0, 0))
        prog.append((JEQ, 0, len(body), NR[name]))
        prog.extend(body)

    def pid_body(index):
        return [(LD_ABS, 0, 0, arg_low(index)), (JEQ, 2, 0, 0), (JEQ, 1, 0, own_pid & 0xFFFFFFFF), deny, allow]

    for name in DENIED:
        block(name, [deny])
    for name in NOT_THERE:
        block(name, [(RET, 0, 0, errno_ret(ENOSYS))])
    for name, index in OWN_PID_ONLY:
        block(name, pid_body(index))
    # kill(pid, sig): sig 0 only probes; otherwise pid 0 or our own
    block("kill", [(LD_ABS, 0, 0, arg_low(1)), (JEQ, 5, 0, 0)] + pid_body(0)[:3] + [deny, allow, allow])
    # setpriority(which, who): PRIO_PROCESS and who 0 / our own
    block("setpriority", [(LD_ABS, 0, 0, arg_low(0)), (JEQ, 1, 0, 0), deny] + pid_body(1))
    block("ioprio_set", [(LD_ABS, 0, 0, arg_low(0)), (JEQ, 1, 0, 1), deny] + pid_body(1))
    # clone: threads only, and no new namespaces
    block("clone", [(LD_ABS, 0, 0, arg_low(0)), (JSET, 1, 0, CLONE_NAMESPACES), (JSET, 1, 0, CLONE_THREAD),
                    deny, allow])
    fams = [(LD_ABS, 0, 0, arg_low(0))]
    for i, fam in enumerate(DENIED_FAMILIES):
        fams.append((JEQ, len(DENIED_FAMILIES) - 1 - i, 0 if i < len(DENIED_FAMILIES) - 1 else 1, fam))
    block("socket", fams + [deny, allow])
    block("prctl", [(LD_ABS, 0, 0, arg_low(0)), (JEQ, 0, 1, PR_SET_PDEATHSIG), deny, allow])

    def dirfd_prefix(indexes):
        out = []
        for i in indexes:
            out += [(LD_ABS, 0, 0, arg_low(i)), (JEQ, 1, 0, AT_FDCWD), deny]
        return out
    for name, indexes in DIRFD_WRITES:
        block(name, dirfd_prefix(indexes) + [allow])
    # utimensat(fd, NULL, ...) is futimens: only a path (non-NULL, both halves) must start at the cwd
    block("utimensat", [(LD_ABS, 0, 0, arg_low(1)), (JEQ, 0, 2, 0), (LD_ABS, 0, 0, arg_low(1) + 4), (JEQ, 3, 0, 0),
                        (LD_ABS, 0, 0, arg_low(0)), (JEQ, 1, 0, AT_FDCWD), deny, allow])
    block("socketpair", [(LD_ABS, 0, 0, arg_low(0)), (JEQ, 0, 4, AF_UNIX), (LD_ABS, 0, 0, arg_low(1)),
                         (AND, 0, 0, 0xF), (JEQ, 1, 0, SOCK_STREAM), deny, allow])
    for name, index in MODE_ARGS:
        pre = dirfd_prefix((0,)) if name.startswith("fchmodat") else []
        block(name, pre + [(LD_ABS, 0, 0, arg_low(index)), (JSET, 0, 1, SPECIAL_MODE_BITS), deny, allow])
    for name, fi, mi in CREATE_MODE_ARGS:
        # openat: a write relative to a directory fd is refused (reads stay: os.fwalk, scandir(fd))
        pre = [(LD_ABS, 0, 0, arg_low(0)), (JEQ, 3, 0, AT_FDCWD), (LD_ABS, 0, 0, arg_low(fi)),
               (JSET, 0, 1, O_WRITE_BITS), deny] if name == "openat" else []
        block(name, pre + [(LD_ABS, 0, 0, arg_low(fi)), (JSET, 0, 3, O_CREAT | O_TMPFILE_BIT),
                           (LD_ABS, 0, 0, arg_low(mi)), (JSET, 0, 1, SPECIAL_MODE_BITS), deny, allow])
    block("creat", [(LD_ABS, 0, 0, arg_low(1)), (JSET, 0, 1, SPECIAL_MODE_BITS), deny, allow])
    ioctl = [(LD_ABS, 0, 0, arg_low(1))]
    for i, req in enumerate(IOCTLS):
        ioctl.append((JEQ, len(IOCTLS) - i, 0, req))
    block("ioctl", ioctl + [allow, deny])
    fcntl = [(LD_ABS, 0, 0, arg_low(1))]
    for i, cmd in enumerate(FCNTLS):
        fcntl.append((JEQ, len(FCNTLS) - i, 0, cmd))
    block("fcntl", fcntl + [allow, deny])
    prog.append(allow)
    return prog


def supported():
    if not sys.platform.startswith("linux"):
        return False, "不是 Linux，没有 seccomp"
    if os.uname().machine not in ("x86_64", "amd64"):
        return False, "seccomp 过滤表只为 x86-64 编写（本机 %s）" % os.uname().machine
    return True, ""


def drop_capabilities(libc, ctypes):
    """Empty every capability set (root included): nothing can override file modes, trace or
    signal other users' processes, or raise the limits again."""
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) != 0 and ctypes.get_errno() == 22:
            break
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(ctypes.c_long(126), header, data) == 0    # capset


def set_limits(memory=MEMORY_LIMIT, file_size=FILE_SIZE_LIMIT):
    """Soft = hard limits (a process without CAP_SYS_RESOURCE cannot raise a hard limit)."""
    import resource
    done = []
    for name, value in (("RLIMIT_AS", memory), ("RLIMIT_FSIZE", file_size), ("RLIMIT_CORE", 0)):
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY and hard < value:
                value = hard
            resource.setrlimit(which, (value, value))
            done.append(name)
        except (OSError, ValueError):
            pass
    return done


def apply_seccomp():
    """Install the filter for this thread and everything it starts. Returns (applied, detail)."""
    ok, why = supported()
    if not ok:
        return False, why
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        return False, "无法设置 no-new-privileges（errno %d）" % ctypes.get_errno()
    caps = drop_capabilities(libc, ctypes)

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    prog = program(os.getpid())
    arr = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), arr)
    if libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        return False, "安装 seccomp 过滤器失败（errno %d）" % ctypes.get_errno()
    return True, "seccomp %d 条指令%s" % (len(prog), "，权能已全部放弃" if caps else "")
