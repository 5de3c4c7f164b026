"""Layer "ns" (Linux): a private mount namespace in which everything but the allowed roots is read-only,
and the run's own temp folder is a size-capped tmpfs.

Why: Landlock (layer 2) fences writes but not metadata, so chmod/utime of a file outside reach it
through any path the kernel can walk (issue 34: deep folders and links past PATH_MAX, dir fds).
A read-only mount answers every write, chmod, utime, rename or link outside with ``EROFS``,
whatever the path, the descriptor or the native code that asks, and it holds without the audit hook.

How (before Landlock and seccomp, which then forbid mounts for good):

1. ``unshare(CLONE_NEWNS)`` as root; ``CLONE_NEWUSER | CLONE_NEWNS`` otherwise, with the script's own
   uid and gid mapped to themselves (files keep their owners; the capabilities the new user namespace
   grants exist only inside it, and seccomp drops them all again before the script starts);
2. every mount private (nothing propagates back to the machine);
3. the per-run temp folder (``--run-temp``, made by run_python) gets a tmpfs of :data:`TEMP_LIMIT`
   bytes: ``fallocate`` or a runaway writer hits ``ENOSPC`` at the cap, and the contents vanish with the
   namespace when the process ends, however it ends (run_python then removes the empty folder);
4. each root is bind-mounted onto itself, then ``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)`` on
   ``/`` (kernel 5.12+; older kernels: every mount in ``/proc/self/mountinfo`` remounted read-only,
   keeping its locked flags), then the roots alone are made writable again (not mounts nested below
   them: those stay read-only).

Limits: a kernel without user namespaces for ordinary users (``kernel.unprivileged_userns_clone=0``,
AppArmor's ``apparmor_restrict_unprivileged_userns`` on Ubuntu 23.10+) answers EPERM; then this layer
is off, the status line says why, and chmod/utime outside are held by the audit hook alone."""
import os
import sys

TEMP_LIMIT = 512 << 20

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 0x4000, 0x40000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MOUNT_ATTR_RDONLY = 1
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442
KEEP_OPTIONS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
                "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}


def _libc():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc, ctypes


def _fail(ctypes, what):
    err = ctypes.get_errno()
    return "%s失败（%s）" % (what, os.strerror(err) if err else "errno 0")


def _mount(libc, ctypes, source, target, fstype, flags, data=None):
    enc = (lambda s: s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s)
    return libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) == 0


def _setattr(libc, ctypes, path, recursive, set_=0, clear=0):
    """mount_setattr(2); returns 0, or the errno (ENOSYS on kernels before 5.12)."""
    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]
    attr = MountAttr(set_, clear, 0, 0)
    r = libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode("utf-8", "surrogateescape"),
                     ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attr), ctypes.c_size_t(32))
    return 0 if r == 0 else (ctypes.get_errno() or 1)


def _mountinfo():
    """(mount point, per-mount options) of every mount, from /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo", "rb") as fh:
        for line in fh:
            f = line.split()
            if len(f) > 5:
                point = f[4].decode("utf-8", "surrogateescape")
                for esc, ch in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
                    point = point.replace(esc, ch)
                out.append((point, f[5].decode("ascii", "replace").split(",")))
    return out


def _remount(libc, ctypes, point, options, readonly):
    flags = MS_REMOUNT | MS_BIND | (MS_RDONLY if readonly else 0)
    for opt in options:
        flags |= KEEP_OPTIONS.get(opt, 0)
    return _mount(libc, ctypes, None, point, None, flags)


def available():
    return sys.platform.startswith("linux")


def _map_ids(uid, gid):
    for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)), ("gid_map", "%d %d 1" % (gid, gid))):
        fd = os.open("/proc/self/" + name, os.O_WRONLY)
        try:
            os.write(fd, text.encode("ascii"))
        finally:
            os.close(fd)


def enter(roots, run_temp=None, temp_limit=TEMP_LIMIT):
    """Make this process's view of the filesystem read-only outside ``roots`` (see the module text).
    Returns (applied, detail, user_namespace). Must run while the process has one thread, before
    Landlock and seccomp."""
    if not available():
        return False, "不是 Linux，没有挂载命名空间", False
    libc, ctypes = _libc()
    uid, gid = os.getuid(), os.getgid()
    userns = os.geteuid() != 0
    if libc.unshare(CLONE_NEWNS | (CLONE_NEWUSER if userns else 0)) != 0:
        return False, _fail(ctypes, "创建私有挂载命名空间"), False
    if userns:
        # /proc/self/uid_map belongs to root while the process is not dumpable (after a setuid, as in
        # the escape suite's harness): dumpable just for the maps, then as before
        dumpable = libc.prctl(3, 0, 0, 0, 0)        # PR_GET_DUMPABLE
        if dumpable == 0:
            libc.prctl(4, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
        try:
            _map_ids(uid, gid)
        except OSError as exc:
            return False, "用户命名空间的 id 映射失败（%s）" % exc.strerror, True
        finally:
            if dumpable == 0:
                libc.prctl(4, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    if not _mount(libc, ctypes, None, "/", None, MS_REC | MS_PRIVATE):
        return False, _fail(ctypes, "把挂载设为私有"), userns
    notes = []
    writable = [r for r in roots if r and os.path.isdir(r)]
    if run_temp and run_temp not in writable:
        writable.append(run_temp)
    if run_temp:
        if _mount(libc, ctypes, "xla-run", run_temp, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=%d,mode=0700" % temp_limit):
            notes.append("临时文件夹为 %d MiB 的 tmpfs" % (temp_limit >> 20))
        else:
            notes.append(_fail(ctypes, "挂载临时文件夹 tmpfs"))
    binds = []
    for r in writable:
        if r == run_temp and notes and notes[0].startswith("临时文件夹为"):
            binds.append(r)          # already a mount of its own
            continue
        if not _mount(libc, ctypes, r, r, None, MS_BIND | MS_REC):
            return False, _fail(ctypes, "绑定挂载 %s " % r), userns
        binds.append(r)
    err = _setattr(libc, ctypes, "/", True, set_=MOUNT_ATTR_RDONLY)
    if err == 0:
        for r in binds:
            if _setattr(libc, ctypes, r, False, clear=MOUNT_ATTR_RDONLY) != 0:
                return False, _fail(ctypes, "恢复 %s 的写权限" % r), userns
        how = "mount_setattr"
    elif err in (38, 22):       # ENOSYS / EINVAL: an older kernel, one remount per mount
        info = _mountinfo()
        for point, options in info:
            _remount(libc, ctypes, point, options, True)      # best effort: a locked mount may refuse
        for r in binds:
            options = [o for p, o in info if p == r]
            if not _remount(libc, ctypes, r, options[-1] if options else [], False):
                return False, _fail(ctypes, "恢复 %s 的写权限" % r), userns
        how = "逐个 remount"
    else:
        return False, "mount_setattr 失败（%s）" % os.strerror(err), userns
    # the working folder still points into the mount underneath the new binds (now read-only):
    # look it up again, so relative paths land on the writable bind
    os.chdir(os.getcwd())
    return True, "私有挂载命名空间（%s%s），允许目录以外只读%s" % (
        "用户命名空间，" if userns else "", how, "；" + "；".join(notes) if notes else ""), userns
