"""Layer 2 (Linux): Landlock, applied through ctypes before the script runs.

The kernel refuses writes outside the allowed roots and every ``execve`` for this process and
anything it forks, even from native code (sqlite ``ATTACH``, a ctypes ``creat``, a named semaphore).
Landlock grants rights on whole trees: a folder inside an allowed root that must stay read-only (the
toolbox checkout, ``.git``) is honoured by granting around it (:func:`write_grants`). It does not
cover chmod/chown/utime/xattr; layer 3 (seccomp) and layer 1 cover those."""
import os
import sys

# Landlock (include/uapi/linux/landlock.h)
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
LL_REMOVE_DIR, LL_REMOVE_FILE, LL_MAKE_CHAR, LL_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
LL_MAKE_REG, LL_MAKE_SOCK, LL_MAKE_FIFO, LL_MAKE_BLOCK, LL_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1 << 0, 1 << 1
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


# --------------------------------------------------------------------------- layer 2: Landlock

def carve_outs(root, roots):
    """Folders inside an allowed root that must stay read-only for the kernel too: this toolbox
    checkout (its tools, xlakit and pydeps) and ``.git`` folders (hooks run on the next git command)
    up to two levels below the root. Landlock grants a right on a whole tree and cannot take a
    subfolder back, so :func:`write_grants` grants around them. (The audit hook refuses every
    path the writers' deny list refuses; this is the part the kernel holds as well.)"""
    here = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = []
    if here == root or here.startswith(root.rstrip("/") + "/"):
        found.append(here)
    level = [root]
    for _ in range(3):
        nxt = []
        for d in level:
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                try:
                    if not e.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if e.name == ".git":
                    found.append(e.path)
                elif not any(e.path == x for x in found):
                    nxt.append(e.path)
        level = nxt[:200]
    return found


def write_grants(root, carved, write, file_write):
    """Landlock rules that let the script write under ``root`` except inside ``carved``: without a
    carve-out, one rule on the root; otherwise rules on the siblings along the way down to each
    carved folder (folders get full write rights, single-link regular files file rights; links and
    special files none). The price: no new entries directly in the folders on that way (the root
    itself, for a checkout right under the temp folder), which the script hears about as EACCES."""
    if not carved:
        return [(root, write)]
    if any(c == root for c in carved):
        return []
    rules = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    for e in entries:
        if any(c == e.path for c in carved):
            continue
        below = [c for c in carved if c.startswith(e.path + "/")]
        try:
            st = os.lstat(e.path)
        except OSError:
            continue
        if (st.st_mode & 0o170000) == 0o040000:
            rules += write_grants(e.path, below, write, file_write) if below else [(e.path, write)]
        elif (st.st_mode & 0o170000) == 0o100000 and st.st_nlink == 1:
            rules.append((e.path, file_write))
    return rules


def apply_landlock(roots, carved=None, read_only_files=()):
    """Restrict this process (and everything it forks) with Landlock. Returns (applied, detail).

    Rights: read everywhere, no execute anywhere, full write rights (minus device nodes) under the
    roots, write on ``/dev/null``. Only the rights the running ABI knows are requested."""
    if not sys.platform.startswith("linux"):
        return False, "不是 Linux，没有 Landlock"
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    L = ctypes.c_long
    abi = syscall(L(SYS_CREATE_RULESET), None, L(0), L(1))
    if abi < 0:
        err = ctypes.get_errno()
        return False, "内核不支持 Landlock（errno %d）" % err
    if libc.prctl(PR_SET_NO_NEW_PRIVS, L(1), L(0), L(0), L(0)) != 0:
        return False, "无法设置 no-new-privileges（errno %d）" % ctypes.get_errno()
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= LL_REFER
    if abi >= 3:
        fs |= LL_TRUNCATE
    if abi >= 5:
        fs |= LL_IOCTL_DEV
    scoped = (LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL) if abi >= 6 else 0

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = RulesetAttr(fs, 0, scoped)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    rfd = syscall(L(SYS_CREATE_RULESET), ctypes.byref(attr), L(size), L(0))
    if rfd < 0:
        return False, "创建 Landlock 规则集失败（errno %d）" % ctypes.get_errno()
    read = LL_READ_FILE | LL_READ_DIR
    write = fs & ~(LL_EXECUTE | LL_MAKE_CHAR | LL_MAKE_BLOCK)
    file_write = fs & (LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)
    o_path = getattr(os, "O_PATH", 0o10000000)
    rules = [("/", read)] + [(p, file_write) for p in ("/dev/null",)]
    for r in roots:
        rules += write_grants(r, carved.get(r, []) if carved is not None else carve_outs(r, roots), write, file_write)
    rules += [(p, read) for p in read_only_files]
    try:
        for path, access in rules:
            try:
                pfd = os.open(path, o_path | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = PathBeneath(access, pfd)
                if syscall(L(SYS_ADD_RULE), L(rfd), L(1), ctypes.byref(rule), L(0)) != 0:
                    return False, "添加 Landlock 规则失败：%s（errno %d）" % (path, ctypes.get_errno())
            finally:
                os.close(pfd)
        if syscall(L(SYS_RESTRICT_SELF), L(rfd), L(0)) != 0:
            return False, "启用 Landlock 失败（errno %d）" % ctypes.get_errno()
    finally:
        os.close(rfd)
    return True, "Landlock ABI %d" % abi


def private_temp_dir(roots, carved):
    """When the temp folder holds a carved-out folder, the kernel lets the script create nothing
    directly in it; give ``tempfile`` (and ``TMPDIR``) a fresh folder of this run's inside it."""
    import tempfile
    temp = os.path.realpath(tempfile.gettempdir())
    if temp in roots and carved.get(temp):
        d = tempfile.mkdtemp(prefix="xla-run-", dir=temp)
        os.environ["TMPDIR"] = d
        tempfile.tempdir = d
