"""xla_guard: the launcher run_python starts instead of the model's script, so a write fence is up
before the script's first line runs.

Why a launcher and not a wrapper around the script: the fence has to own the process. It installs
itself, runs the script with ``runpy``, then runs atexit handlers, flushes and leaves with a
captured ``os._exit`` so the script never reaches interpreter finalization (where the audit hooks are
cleared before the last destructors run).

Policy: read anywhere; write, delete, rename, create directories, change metadata only under the
allowed roots (``--root``, normally the workspace and the temp directory); start no programs; load no
native code except what the installed interpreter ships. Two layers:

1. An audit hook (PEP 578) on every platform. It is written against the escapes listed in
   ../shared/notes/guard-design.md: all policy sits in default arguments of one hook function that
   nothing can reach (no globals, no builtins looked up at call time, no ``except``), paths are
   canonicalized here with captured ``lstat``/``readlink``/``getcwd`` (dir fds and int fds through
   ``/proc/self/fd``), re-imports of neutered modules are refused, ``gc``/tracing/``addaudithook`` are
   refused, and modules without audit events (mkfifo, ``_posixsubprocess``, readline, cffi, Tcl,
   subinterpreters) are removed or refused. Audit hooks are not a sandbox; this layer catches
   mistakes and casual misuse.
2. On Linux, Landlock (ABI-aware, after ``PR_SET_NO_NEW_PRIVS``) applied through ``ctypes`` before
   the script runs: the kernel refuses writes outside the roots and every ``execve`` for this process
   and anything it forks, even from native code. It does not cover chmod/chown/utime/xattr, which
   layer 1 keeps covering. Elsewhere (macOS, Windows, old kernels) only layer 1 applies, and the
   status line says so.

Usage (run_python builds this command)::

    python3 -I -B -X utf8 -u xla_guard.py --root DIR [--root DIR ...] [--path DIR ...] -- SCRIPT [ARGS...]

``-I`` keeps ``PYTHON*`` variables and the user site out; ``--path`` entries (pydeps) and the
script's folder are put on ``sys.path`` here. ``XLA_RUNPY_UNRESTRICTED=1`` (read once, here) skips
both layers, for runs that already happen inside an outer sandbox.

Reports go to stderr as single lines starting with ``MARK`` (``@@XLA_GUARD@@``), fields separated by
``\\x1f``: one ``status`` line before the script starts, one ``block`` line per refused operation,
one ``kernel`` line when the script died of an EACCES that only Landlock can have caused.
run_python takes them out of stderr and reports them in Chinese.
"""
import os
import sys

MARK = "@@XLA_GUARD@@"
SEP = "\x1f"
UNRESTRICTED_ENV = "XLA_RUNPY_UNRESTRICTED"
# The script's own traceback, headed in Chinese (the answer is read by a Chinese assistant).
TRACEBACK_HEADER = "脚本出错，调用栈（最近的调用在最后）：\n"

# Imports refused outright: modules that write or start processes without audit events, run code in
# an interpreter without hooks, or exist only to poke at interpreter internals.
DENIED_IMPORTS = frozenset((
    "_testcapi", "_testinternalcapi", "_testmultiphase", "_testsinglephase", "_testimportmultiple",
    "_testbuffer", "_testclinic", "_xxtestfuzz", "_ctypes_test", "xxsubtype", "_xxsubinterpreters",
    "_interpreters", "_xxinterpchannels", "_interpchannels", "_interpqueues", "_tkinter", "readline",
    "_cffi_backend", "_posixshmem", "_gdbm", "_dbm", "_lsprof",
))
# Modules the fence relies on or has neutered: loaded before the hook, so an import event for one of
# them means the script removed it from sys.modules to get a fresh, unneutered copy.
PINNED_IMPORTS = frozenset(("posix", "nt", "_posixsubprocess", "_signal", "_io", "marshal", "_imp", "os",
                            "subprocess", "signal", "_thread", "_winapi", "sys", "builtins"))

PROCESS_EVENTS = frozenset((
    "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty", "subprocess.Popen",
    "pty.spawn", "os.startfile", "os.startfile/2", "_winapi.CreateProcess", "webbrowser.open",
    "ensurepip.bootstrap", "_posixsubprocess.fork_exec", "sys.remote_exec",
))
NATIVE_EVENTS = frozenset((
    "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof",
    "ctypes.string_at", "ctypes.wstring_at", "ctypes.call_function", "ctypes.PyObj_FromPtr", "ctypes.set_errno",
    "sqlite3.enable_load_extension", "sqlite3.load_extension", "os.add_dll_directory",
    "cpython.PyInterpreterState_New", "_winapi.CreateJunction",
))
SELF_EVENTS = frozenset((
    "sys.addaudithook", "sys.settrace", "sys.setprofile", "sys.monitoring.register_callback",
    "sys._current_frames", "sys._current_exceptions", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
))
REGISTRY_EVENTS = frozenset((
    "winreg.CreateKey", "winreg.DeleteKey", "winreg.DeleteValue", "winreg.SaveKey", "winreg.SetValue",
    "winreg.LoadKey", "winreg.ConnectRegistry", "winreg.DisableReflectionKey", "winreg.EnableReflectionKey",
))
# event -> ((argument index, dir_fd index or -1, follow final symlink), ...)
PATH_EVENTS = {
    "os.mkdir": ((0, 2, False),),
    "os.remove": ((0, 1, False),),
    "os.rmdir": ((0, 1, False),),
    "os.rename": ((0, 2, False), (1, 3, False)),
    "os.link": ((0, 2, True), (1, 3, False)),
    "os.symlink": ((1, 2, False),),
    "os.chmod": ((0, 2, True),),
    "os.chown": ((0, 3, True),),
    "os.utime": ((0, 3, True),),
    "os.truncate": ((0, -1, True),),
    "os.setxattr": ((0, -1, True),),
    "os.removexattr": ((0, -1, True),),
    "os.chflags": ((0, -1, True),),
    "shutil.copyfile": ((1, -1, True),),
    "shutil.copymode": ((1, -1, True),),
    "shutil.copystat": ((1, -1, True),),
    "shutil.copytree": ((1, -1, False),),
    "shutil.move": ((0, -1, False), (1, -1, False)),
    "shutil.rmtree": ((0, 1, False),),
    "shutil.chown": ((0, -1, True),),
    "shutil.unpack_archive": ((1, -1, False),),
    "shutil.make_archive": ((0, -1, False),),
    "_winapi.CopyFile2": ((1, -1, True),),
}

# Landlock (include/uapi/linux/landlock.h)
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
LL_REMOVE_DIR, LL_REMOVE_FILE, LL_MAKE_CHAR, LL_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
LL_MAKE_REG, LL_MAKE_SOCK, LL_MAKE_FIFO, LL_MAKE_BLOCK, LL_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1 << 0, 1 << 1
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


def allowed_text(roots):
    return "、".join(roots)


def block_message(kind, target, roots):
    """The Chinese sentence a refused operation raises (and run_python reports)."""
    if kind == "process":
        return ("xla_guard 已拦截：脚本试图启动其他程序（%s）。run_python 里的脚本不能启动子进程，"
                "请在脚本里直接用 Python 完成这一步。" % target)
    if kind == "native":
        return ("xla_guard 已拦截：脚本试图加载或调用本机代码（%s）。这在 run_python 里不允许，"
                "请改用纯 Python 或 pydeps 里的库。" % target)
    if kind == "self":
        return "xla_guard 已拦截：脚本试图修改或绕过写入围栏（%s）。" % target
    if kind == "import":
        return "xla_guard 已拦截：run_python 里不能导入模块 %s（它能绕过写入围栏）。" % target
    if kind == "connect":
        return ("xla_guard 已拦截：脚本试图连接本机服务的套接字 %s。run_python 里的脚本只能连网络地址，"
                "不能连本机的 unix 套接字。" % target)
    if kind == "sqlite":
        return ("xla_guard 已拦截：sqlite3 以读写方式打开 %s，但只允许写入：%s。只读请用 "
                "sqlite3.connect(\"file:路径?mode=ro\", uri=True)，要修改请先复制到工作空间。"
                % (target, allowed_text(roots)))
    return ("xla_guard 已拦截：脚本试图写入 %s，但只允许写入这些目录（及其子目录）：%s。"
            "请把结果写到工作空间里。" % (target, allowed_text(roots)))


# --------------------------------------------------------------------------- layer 2: Landlock

def carve_outs(root, roots):
    """Folders inside an allowed root that must stay read-only for the kernel too: this toolbox
    checkout (its tools, xlakit and pydeps) and ``.git`` folders (hooks run on the next git command)
    up to two levels below the root. Landlock grants a right on a whole tree and cannot take a
    subfolder back, so :func:`write_grants` grants around them. (The audit hook refuses every
    path the writers' deny list refuses; this is the part the kernel holds as well.)"""
    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
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


def set_parent_death_signal():
    """Linux: die with the run_python process, so a killed tool leaves no script running."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, ctypes.c_long(9), ctypes.c_long(0),
                                                ctypes.c_long(0), ctypes.c_long(0))
    except (OSError, AttributeError):
        pass


# --------------------------------------------------------------------------- layer 1: audit hook

def _hook_template(event, args,
                   _watch=None, _path_events=None, _proc=None, _native=None, _selfev=None, _reg=None,
                   _denied=None, _pinned=None, _roots=None, _root_ids=None, _tmp_roots=None, _mode=None,
                   _G=None, _W=None, _FunctionType=None, _FrameType=None,
                   _str=None, _bytes=None, _int=None, _type=None, _len=None, _tuple=None, _list=None, _bool=None,
                   _isinstance=None, _sdecode=None, _bjoin=None,
                   _lstat=None, _stat=None, _readlink=None, _getcwd=None, _access=None, _getpid=None,
                   _getpgrp=None, _write=None, _exit=None, _getframe=None, _fcntl=None,
                   _PermissionError=None, _ImportError=None, _RuntimeError=None, _msg=None, _flush=None,
                   _wflags=None, _O_TMPFILE=0, _O_DIR=0, _O_PATH=0, _O_TRUNC=0, _sep="/", _mark="", _fsep="",
                   _frozen_globals=None, _guard_file="", _newer_frames=True, _version=(3, 9), _deny=None,
                   _protected=()):
    """The audit hook. Every name it uses arrives as a default argument (the install step binds real
    values and gives it private globals), so nothing the script can assign changes what it does.
    Fast path: one frozenset lookup. Helpers are created per call in the slow path."""
    if event not in _watch:
        return

    def report(kind, target, message):
        t = _str.replace(_str.replace(target, "\n", "?"), _fsep, "?")
        m = _str.replace(message, "\n", " ")
        line = _mark + _fsep + "block" + _fsep + kind + _fsep + t + _fsep + m + "\n"
        _write(2, _str.encode(line, "utf-8", "surrogateescape"))

    def deny(kind, target, message=None):
        if message is None:
            message = _msg(kind, target, _roots)
        report(kind, target, message)
        raise _PermissionError(message)

    def text(p):
        """Exact str from a str/bytes argument; never calls a method of the argument."""
        t = _type(p)
        if t is _str:
            return p
        if t is _bytes:
            return _bytes.decode(p, "utf-8", "surrogateescape")
        if _isinstance(p, _str):
            return _str.__str__(p)
        if _isinstance(p, _bytes):
            return _bytes.decode(_bjoin(b"", [p]), "utf-8", "surrogateescape")
        return None

    def fd_path(fd):
        """The path an fd refers to, or None when it has none (pipe, socket, deleted...)."""
        if _mode == "linux":
            t = _readlink("/proc/self/fd/%d" % fd)
            if _len(t) > 0 and t[0] == "/" and not t.endswith(" (deleted)"):
                return t
            return None
        if _mode == "darwin":
            raw = _fcntl(fd, 50, b"\0" * 1024)   # F_GETPATH
            t = _bytes.decode(_bytes.split(raw, b"\0", 1)[0], "utf-8", "surrogateescape")
            return t if t.startswith("/") else None
        return None

    def absolute(p, dir_fd):
        """Absolute form of p the way the OS reads it (cwd or dir_fd at event time)."""
        if _mode == "windows":
            if _len(p) >= 2 and (p[1] == ":" or p[:2] in ("\\\\", "//")):
                return p
            if p[:1] in ("\\", "/"):
                return _getcwd()[:2] + p
            return _getcwd() + "\\" + p
        if p.startswith("/"):
            return p
        if dir_fd is not None:
            base = fd_path(dir_fd)
            if base is None:
                return None
        else:
            base = _getcwd()
        return base + "/" + p

    def canonical(p, follow):
        """realpath from lstat/readlink: every symlink resolved (the final one only when follow);
        components that do not exist are appended as written."""
        todo = [c for c in p.split("/") if c]
        todo.reverse()
        parts = []
        hops = 0
        missing = False
        while todo:
            c = todo.pop()
            if c == ".":
                continue
            if c == "..":
                if parts:
                    parts.pop()
                continue
            if missing or (not todo and not follow):
                parts.append(c)
                continue
            cand = "/" + "/".join(parts + [c])
            if not _access(cand, 0, follow_symlinks=False):
                missing = True
                parts.append(c)
                continue
            st = _lstat(cand)
            if (st.st_mode & 0o170000) == 0o120000:
                hops += 1
                if hops > 40:
                    return None
                target = _readlink(cand)
                if (_len(parts) == 3 and parts[0] == "proc" and parts[2] == "fd" and not target.startswith("/")
                        and ":[" in target):
                    return "<anon>"     # /proc/self/fd/N of a pipe or socket: no file behind it
                if target.startswith("/"):
                    parts = []
                more = [x for x in target.split("/") if x]
                more.reverse()
                todo.extend(more)
                continue
            parts.append(c)
        return "/" + "/".join(parts)

    def inside_ids(p):
        """macOS/Windows: is some existing ancestor of p one of the roots (by st_dev/st_ino)?"""
        cur = p
        while True:
            if _access(cur, 0):
                st = _stat(cur)
                if (st.st_dev, st.st_ino) in _root_ids:
                    return True
            cut = cur.rfind("/")
            back = cur.rfind("\\")
            if back > cut:
                cut = back
            if cut <= 0:
                return False
            if _mode == "windows" and cut <= 2:
                return False
            cur = cur[:cut]

    def inside(canon):
        if canon == "<anon>":
            return True
        if _mode == "linux":
            for r in _roots:
                if canon == r or canon.startswith(r + "/"):
                    return True
            return canon == "/dev/null"
        if _mode != "windows" and canon == "/dev/null":
            return True
        return inside_ids(canon)

    def resolve(p, dir_fd, follow):
        """Canonical path for an event argument, or None if it cannot be resolved (then: deny)."""
        if _type(p) is _int or (_isinstance(p, _int) and not _isinstance(p, _bool)):
            if _mode == "windows":
                return None
            return fd_path(p)
        s = text(p)
        if s is None or "\0" in s:
            return None
        if dir_fd is not None and _type(dir_fd) is not _int:
            return None
        a = absolute(s, dir_fd)
        if a is None:
            return None
        if _mode == "windows":
            return a
        return canonical(a, follow)

    def check(p, dir_fd, follow, what=None):
        c = resolve(p, dir_fd, follow)
        shown = c if c is not None else (text(p) if text(p) is not None else "fd")
        if c is None or not inside(c):
            deny(what or "write", shown)
        if _deny is not None and c != "<anon>" and c != "/dev/null":
            why = _deny(c)
            if why is not None:
                deny(what or "write", c, "xla_guard 已拦截：%s 虽在允许写入的目录里，但%s，run_python 里的脚本不能改它。"
                                         "请把结果写到工作空间里别的位置。" % (c, why))
        return c

    def caller_is_importlib():
        f = _getframe(2)
        g = f.f_globals
        for fg in _frozen_globals:
            if g is fg and f.f_code.co_filename.startswith("<frozen"):
                return True
        return False

    def guard_frame_live(frame):
        f = frame
        while f is not None:
            if f.f_globals is _G:
                return True
            f = f.f_back
        return False

    # ---- files
    if event == "open":
        p, mode, flags = args[0], args[1], args[2]
        if _type(p) is _int:
            return                      # an fd already open: its access mode was checked when opened
        writing = False
        if mode is not None:
            m = text(mode)
            if m is None:
                deny("write", "open")
            for ch in "wax+":
                if ch in m:
                    writing = True
        if _type(flags) is _int:
            if flags & _wflags or (_O_TMPFILE and (flags & _O_TMPFILE) == _O_TMPFILE):
                writing = True
        elif flags is not None:
            deny("write", "open")
        if writing:
            c = check(p, None, True)
            if _mode != "windows" and _access(c, 0):
                st = _stat(c)
                if (st.st_mode & 0o170000) == 0o100000 and st.st_nlink > 1:
                    deny("write", c, "xla_guard 已拦截：%s 有多个硬链接，写它可能改到允许目录以外的文件。"
                                    "请先复制一份再写（shutil.copy 到新文件名）。" % c)
            return
        s = text(p)
        if s is None:
            deny("write", "open")
        c = resolve(p, None, True)
        if c is None:
            deny("write", s)
        if _type(flags) is _int and (flags & (_O_DIR | _O_PATH)) and not inside(c):
            deny("write", c, "xla_guard 已拦截：不能以目录句柄方式打开允许目录以外的 %s。" % c)
        if _mode != "windows" and _access(c, 0):
            st = _stat(c)
            if (st.st_mode & 0o170000) == 0o040000 and not inside(c):
                deny("write", c, "xla_guard 已拦截：不能以文件方式打开允许目录以外的目录 %s；"
                                "列目录请用 os.listdir / os.scandir。" % c)
        if c.endswith(".pyc") and inside(c):
            # silent: importlib falls back to the source; a planted .pyc is never run
            raise _PermissionError("xla_guard：不加载可写目录里的字节码文件 %s" % c)
        return

    spec = _path_events.get(event)
    if spec is not None:
        for index, fd_index, follow in spec:
            if index >= _len(args):
                continue
            p = args[index]
            if p is None:
                p = "."                 # unpack_archive(extract_dir=None) means the cwd
            dfd = args[fd_index] if 0 <= fd_index < _len(args) else None
            check(p, dfd, follow)
        if event == "os.symlink":
            target = text(args[0])
            if target is None:
                deny("write", "symlink")
            link = resolve(args[1], args[2] if _len(args) > 2 else None, False)
            if link is None:
                deny("write", target)
            if target.startswith("/") or (_mode == "windows" and _len(target) > 1 and target[1] == ":"):
                dest = target
            else:
                dest = link.rsplit(_sep[0], 1)[0] + _sep[0] + target
            check(dest, None, True)
        return

    if event == "_winapi.CreateFile":
        access, disposition = args[1], args[3]
        if (_type(access) is not _int or access & 0x520D0116) or disposition in (1, 2, 4, 5) \
                or _type(disposition) is not _int:
            check(args[0], None, True)
        return

    if event == "sqlite3.connect":
        db = text(args[0]) if args[0] is not None else None
        if db is None:
            deny("sqlite", "sqlite3.connect")
        if db == "" or db == ":memory:":
            return
        if db.startswith("file:"):
            rest, _, query = db[5:].partition("?")
            params = query.split("&")
            if "mode=memory" in params or "mode=ro" in params:
                if "mode=ro" in params and rest and not rest.startswith("/"):
                    check(db, None, True, "sqlite")
                return
            if rest.startswith("//"):
                rest = "/" + rest[2:].partition("/")[2]
            if rest and rest != ":memory:":
                check(rest, None, True, "sqlite")
        check(db, None, True, "sqlite")
        return

    if event == "socket.bind" or event == "socket.connect" or event == "socket.sendto":
        addr = args[1] if _len(args) > 1 else None
        t = _type(addr)
        if t is _str or t is _bytes:
            s = text(addr)
            if _len(s) == 0 or s[0] == "\0":
                return                  # abstract namespace: no file
            if event == "socket.bind":
                check(s, None, False)
            else:
                c = resolve(s, None, True)
                if c is None or not inside(c):
                    deny("connect", s)
        return

    # ---- processes
    if event in _proc:
        shown = event
        if _len(args) > 0:
            first = text(args[0])
            if first is not None:
                shown = event + "：" + first[:200]
            elif _type(args[0]) in (_tuple, _list) and _len(args[0]) > 0 and text(args[0][0]) is not None:
                shown = event + "：" + text(args[0][0])[:200]
        deny("process", shown)

    if event == "os.kill" or event == "os.killpg":
        pid = args[0]
        if _type(pid) is not _int:
            deny("process", event)
        if event == "os.kill" and pid in (0, _getpid()):
            return
        if event == "os.killpg" and pid in (0, _getpgrp()):
            return
        deny("process", "%s(%d)" % (event, pid),
             "xla_guard 已拦截：脚本试图给其他进程发信号（%s %d）。" % (event, pid))

    # ---- native code
    if event == "ctypes.dlopen":
        if args[0] is None:
            return
        deny("native", "ctypes.dlopen：%s" % (text(args[0]) or "?"))
    if event in _native:
        deny("native", event)
    if event == "import":
        name = text(args[0])
        if name is None:
            deny("import", "?")
        top = name.partition(".")[0]
        if name in _denied or top in _denied:
            report("import", name, _msg("import", name, _roots))
            raise _ImportError(_msg("import", name, _roots), name=name)
        if name in _pinned:
            report("self", "重新导入 " + name, _msg("self", "重新导入 " + name, _roots))
            raise _ImportError(_msg("self", "重新导入 " + name, _roots), name=name)
        if _len(args) > 1 and args[1] is not None:
            where = resolve(args[1], None, True)
            if where is None or inside(where):
                report("native", name, "不加载可写目录里的扩展模块")
                raise _ImportError("xla_guard 已拦截：不加载可写目录里的扩展模块 %s（%s）。" % (name, where),
                                   name=name)
        return
    if event in _reg:
        deny("write", event, "xla_guard 已拦截：脚本试图修改 Windows 注册表（%s）。" % event)

    # ---- the fence itself
    if event in _selfev:
        deny("self", event)
    if event == "sys._getframe":
        frame = args[0]
        if not _newer_frames and frame.f_globals is _G:
            return                      # <= 3.10: the argument is the caller, here the guard itself
        if guard_frame_live(frame):
            deny("self", "sys._getframe")
        return
    if event == "object.__getattr__" or event == "object.__setattr__" or event == "object.__delattr__":
        obj = args[0]
        t = _type(obj)
        if _version >= (3, 9) and t is _FunctionType:
            g = obj.__globals__
            mine = g is _G or g is _W
            for x in _protected:
                if g is x:
                    mine = True
            if mine:
                deny("self", "%s %s" % (event, text(args[1]) or "?"))
        return
    if event == "code.__new__" or event == "marshal.loads" or event == "marshal.load":
        if caller_is_importlib():
            return
        deny("self", event)
    if event == "compile":
        fn = text(args[1]) if _len(args) > 1 and args[1] is not None else None
        if fn is not None and (fn.startswith("<frozen") or fn == _guard_file):
            deny("self", "compile " + fn)
        return
    if event == "fcntl.ioctl":
        req = args[1] if _len(args) > 1 else None
        if _type(req) is not _int or req in (0x5412, 0x80017472, -0x7ffe8b8e):
            deny("self", "ioctl TIOCSTI", "xla_guard 已拦截：脚本试图向终端注入按键（TIOCSTI）。")
        return
    if event == "cpython.PyInterpreterState_Clear" or event == "cpython._PySys_ClearAuditHooks":
        _flush()
        _exit(1)


def _os_open_template(path, flags, mode=0o777, dir_fd=None, _orig=None, _fd_path=None, _type=None, _str=None,
                      _bytes=None, _int=None):
    """os.open with dir_fd: the 'open' audit event carries no dir_fd, so the hook would resolve a
    relative name against the cwd. Translate it into an absolute path (``/proc/self/fd/N/name`` on
    Linux) so the event names the file the kernel will really open."""
    if dir_fd is None:
        return _orig(path, flags, mode)
    t = _type(path)
    if t is _bytes:
        path = _bytes.decode(path, "utf-8", "surrogateescape")
    elif t is not _str:
        raise TypeError("xla_guard：带 dir_fd 的 os.open 只接受 str/bytes 路径")
    if _type(dir_fd) is not _int:
        raise TypeError("dir_fd 必须是整数")
    if path.startswith("/"):
        return _orig(path, flags, mode)
    return _orig(_fd_path(dir_fd) + "/" + path, flags, mode)


def _deny_template(*args, _msg=None, _what="", _write=None, _mark="", _fsep="", _PermissionError=None, **kw):
    """Stands in for functions that write or start processes without an audit event."""
    line = _mark + _fsep + "block" + _fsep + "process" + _fsep + _what + _fsep + _msg + "\n"
    _write(2, line.encode("utf-8", "surrogateescape"))
    raise _PermissionError(_msg)


def _trampoline_template(signum, frame, _handler=None):
    """User signal handlers get no frame: the interrupted frame may be the audit hook's."""
    return _handler(signum, None)


def _signal_template(signalnum, handler, _orig=None, _make=None):
    if callable(handler):
        handler = _make(handler)
    return _orig(signalnum, handler)


def _clone(func, globals_, name, defaults=None, kwdefaults=None):
    import types
    f = types.FunctionType(func.__code__, globals_, name, defaults, None)
    if kwdefaults:
        f.__kwdefaults__ = dict(kwdefaults)
    return f


def private_deny_rule():
    """``xlakit.paths.deny_reason`` (the writers' deny list: the toolbox, pydeps, ``.git``, start-up
    files...) as a private copy the script cannot reach or monkeypatch.

    It is imported from this checkout and then dropped from ``sys.modules`` (a script that imports
    ``xlakit`` gets a fresh copy of its own). Its module-level helpers would still look up ``os``,
    ``os.path`` and ``os.environ``, which the script can rebind, so the copy gets snapshots: a private
    ``os`` namespace (attributes copied now, ``environ`` a frozen copy) whose ``path`` is a private
    copy of ``posixpath``/``ntpath`` bound to it, and the temp roots computed now. Returns
    (deny_reason, the globals dicts of the private modules) or (None, ()) when the toolbox cannot be
    imported (the guard copied on its own): then only the roots apply."""
    import importlib
    import importlib.util
    import types
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path, before = list(sys.path), set(sys.modules)
    sys.path.insert(0, here)
    try:
        paths = importlib.import_module("xlakit.paths")
    except Exception:
        return None, ()
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            if name == "xlakit" or name.startswith("xlakit."):
                del sys.modules[name]
    spec = importlib.util.find_spec(os.path.__name__)
    priv_path = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(priv_path)
    priv_os = types.ModuleType("os")
    priv_os.__dict__.update(os.__dict__)
    priv_os.environ = types.MappingProxyType(dict(os.environ))
    priv_os.path = priv_path
    priv_path.os = priv_os
    priv_stat = types.ModuleType("stat")
    priv_stat.__dict__.update(sys.modules["stat"].__dict__)
    priv_path.stat = priv_stat
    paths.os = priv_os
    temp = paths._temp_roots() if hasattr(paths, "_temp_roots") else None
    if temp is not None:
        temp = frozenset(temp)
        paths._temp_roots = lambda _t=temp: _t
    paths.deny_reason(os.path.join(here, "probe"))   # warm up: lazy imports happen now, not in the hook
    return paths.deny_reason, (paths.__dict__, priv_path.__dict__)


def install(roots, mode=None, deny_rule=(None, ())):
    """Neuter what has no audit events, then add the hook. After this, the script cannot remove it.
    ``deny_rule`` is :func:`private_deny_rule`'s answer: writes inside the roots are refused where
    the writers' deny list refuses them."""
    import types
    import stat  # noqa: F401  (imported before the hook: the stdlib needs it)
    import io
    if mode is None:
        mode = "linux" if sys.platform.startswith("linux") else (
            "darwin" if sys.platform == "darwin" else ("windows" if os.name == "nt" else "posix"))
    G = {"__builtins__": {}}
    W = {"__builtins__": {"TypeError": TypeError, "callable": callable}}
    osmod = sys.modules.get("posix") or sys.modules.get("nt")
    fcntl_fn = None
    if mode == "darwin":
        import fcntl
        fcntl_fn = fcntl.fcntl
    wflags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    root_ids = set()
    for r in roots:
        try:
            st = os.stat(r)
            root_ids.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    frozen = []
    for name in ("_frozen_importlib_external", "_frozen_importlib"):
        m = sys.modules.get(name)
        if m is not None:
            frozen.append(m.__dict__)

    def flush():
        for s in (sys.__stdout__, sys.__stderr__):
            try:
                s.flush()
            except Exception:
                pass

    watch = set(PATH_EVENTS) | PROCESS_EVENTS | NATIVE_EVENTS | SELF_EVENTS | REGISTRY_EVENTS | {
        "open", "_winapi.CreateFile", "sqlite3.connect", "socket.bind", "socket.connect", "socket.sendto",
        "os.kill", "os.killpg", "ctypes.dlopen", "import", "sys._getframe", "object.__getattr__",
        "object.__setattr__", "object.__delattr__", "code.__new__", "marshal.loads", "marshal.load", "compile",
        "fcntl.ioctl", "cpython.PyInterpreterState_Clear", "cpython._PySys_ClearAuditHooks"}
    values = dict(
        _watch=frozenset(watch), _path_events=types.MappingProxyType(dict(PATH_EVENTS)), _proc=PROCESS_EVENTS,
        _native=NATIVE_EVENTS, _selfev=SELF_EVENTS, _reg=REGISTRY_EVENTS, _denied=DENIED_IMPORTS,
        _pinned=frozenset(n for n in PINNED_IMPORTS if n in sys.modules), _roots=tuple(roots), _root_ids=frozenset(root_ids), _tmp_roots=(), _mode=mode,
        _G=G, _W=W, _FunctionType=types.FunctionType, _FrameType=types.FrameType,
        _str=str, _bytes=bytes, _int=int, _type=type, _len=len, _tuple=tuple, _list=list, _bool=bool, _isinstance=isinstance,
        _sdecode=None, _bjoin=bytes.join, _lstat=os.lstat, _stat=os.stat, _readlink=os.readlink,
        _getcwd=os.getcwd, _access=os.access, _getpid=os.getpid, _getpgrp=getattr(os, "getpgrp", os.getpid),
        _write=os.write, _exit=os._exit, _getframe=sys._getframe, _fcntl=fcntl_fn,
        _PermissionError=PermissionError, _ImportError=ImportError, _RuntimeError=RuntimeError,
        _msg=block_message, _flush=flush, _wflags=wflags, _O_TMPFILE=getattr(os, "O_TMPFILE", 0),
        _O_DIR=getattr(os, "O_DIRECTORY", 0), _O_PATH=getattr(os, "O_PATH", 0), _O_TRUNC=os.O_TRUNC,
        _sep="\\/" if mode == "windows" else "/", _mark=MARK, _fsep=SEP, _frozen_globals=tuple(frozen),
        _guard_file=os.path.abspath(__file__), _newer_frames=sys.version_info >= (3, 11),
        _version=tuple(sys.version_info[:2]), _deny=deny_rule[0], _protected=tuple(deny_rule[1]))
    code = _hook_template.__code__
    names = code.co_varnames[2:code.co_argcount]
    hook = types.FunctionType(code, G, "xla_guard_hook", tuple(values[n] for n in names), None)
    msg_fn = types.FunctionType(block_message.__code__, {"__builtins__": {}, "allowed_text":
                                types.FunctionType(allowed_text.__code__, W, "allowed_text")}, "block_message")
    hook.__defaults__ = tuple(msg_fn if n == "_msg" else values[n] for n in names)

    # Functions that write or start processes with no audit event: replaced by denials.
    def denier(what, message):
        return _clone(_deny_template, W, "xla_guard_denied", None,
                      dict(_msg=message, _what=what, _write=os.write, _mark=MARK, _fsep=SEP,
                           _PermissionError=PermissionError))
    for modobj in (os, osmod):
        for name in ("mkfifo", "mknod"):
            if modobj is not None and hasattr(modobj, name):
                setattr(modobj, name, denier("os." + name, block_message("write", "os.%s（可在任意位置建文件）" % name,
                                                                       roots)))
    if os.name == "posix":
        import subprocess
        import _posixsubprocess
        proc_msg = block_message("process", "_posixsubprocess.fork_exec", roots)
        fork_exec = denier("_posixsubprocess.fork_exec", proc_msg)
        _posixsubprocess.fork_exec = fork_exec
        if hasattr(subprocess, "_fork_exec"):
            subprocess._fork_exec = fork_exec
        if mode == "linux":
            readlink = os.readlink

            def linux_fd_path(fd, _readlink=readlink):
                return "/proc/self/fd/%d" % fd
            fdp = types.FunctionType(linux_fd_path.__code__, W, "fd_path", (readlink,))
        elif mode == "darwin":
            def darwin_fd_path(fd, _fcntl=fcntl_fn):
                raw = _fcntl(fd, 50, b"\0" * 1024)
                return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            fdp = types.FunctionType(darwin_fd_path.__code__, W, "fd_path", (fcntl_fn,))
        else:
            fdp = None
        if fdp is not None:
            code = _os_open_template.__code__
            wrapped = types.FunctionType(code, W, "open", (0o777, None, osmod.open, fdp, type, str, bytes, int))
            os.open = wrapped
            osmod.open = wrapped
            try:
                os.supports_dir_fd.add(wrapped)
            except AttributeError:
                pass

    # Signal handlers run inside whatever Python code is executing, the hook included: hand them no frame.
    import signal
    import _signal
    tramp_code = _trampoline_template.__code__

    def make_tramp(handler, _code=tramp_code, _W=W, _F=types.FunctionType):
        return _F(_code, _W, "xla_guard_signal_trampoline", (handler,))
    maker = types.FunctionType(make_tramp.__code__, W, "make", (tramp_code, W, types.FunctionType))
    sig = types.FunctionType(_signal_template.__code__, W, "signal", (_signal.signal, maker))
    signal.signal = sig
    _signal.signal = sig

    io.open_code  # noqa: B018  (keep a reference alive before the hook)
    sys.addaudithook(hook)
    return hook


def status_line(fields):
    return MARK + SEP + "status" + SEP + SEP.join("%s=%s" % kv for kv in fields) + "\n"


def _emit(line):
    os.write(2, line.encode("utf-8", "surrogateescape"))


def parse_args(argv):
    roots, paths = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--root" and i + 1 < len(argv):
            roots.append(argv[i + 1])
            i += 2
        elif a == "--path" and i + 1 < len(argv):
            paths.append(argv[i + 1])
            i += 2
        elif a == "--":
            i += 1
            break
        else:
            break
    rest = argv[i:]
    if not rest:
        raise SystemExit("用法：xla_guard.py --root 目录 [--root 目录] [--path 目录] -- 脚本 [参数...]")
    return roots, paths, rest[0], rest[1:]


def main(argv=None):
    roots, paths, script, script_args = parse_args(sys.argv[1:] if argv is None else argv)
    unrestricted = os.environ.get(UNRESTRICTED_ENV) == "1"
    # Test seam: XLA_GUARD_LAYERS=audit runs the audit hook alone, so the red-team suite can count
    # which attacks the first layer stops by itself. It can only weaken a run it was set for.
    audit_only = os.environ.get("XLA_GUARD_LAYERS") == "audit"
    exit_ = os._exit
    script = os.path.abspath(script)
    roots = [os.path.realpath(r) for r in roots if r]
    # Everything the runner needs later is imported now, while imports are unrestricted.
    import atexit
    import runpy
    import threading
    import traceback
    set_parent_death_signal()
    fields = []
    landlock_on = False
    if unrestricted:
        fields += [("fence", "off"), ("layers", "")]
    else:
        if os.name == "posix":
            import subprocess  # noqa: F401
        try:
            if audit_only:
                landlock_on, detail = False, "已按 XLA_GUARD_LAYERS=audit 关闭（测试用）"
            else:
                carved = {r: carve_outs(r, roots) for r in roots}
                private_temp_dir(roots, carved)
                landlock_on, detail = apply_landlock(roots, carved)
        except Exception as exc:   # a broken ctypes/libc must not stop the first layer
            landlock_on, detail = False, "Landlock 初始化出错：%s" % exc
        install(roots, deny_rule=private_deny_rule())
        fields += [("fence", "on"), ("layers", "audit" + (",landlock" if landlock_on else "")),
                   ("landlock", detail)]
    fields.append(("python", "%d.%d.%d" % tuple(sys.version_info[:3])))
    _emit(status_line(fields))

    sys.dont_write_bytecode = True
    sys.argv = [script] + list(script_args)
    sys.path[:0] = [os.path.dirname(script)] + [p for p in paths if p]
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        c = exc.code
        if c is None:
            code = 0
        elif isinstance(c, int):
            code = c
        else:
            try:
                sys.stderr.write("%s\n" % (c,))
            except Exception:
                pass
            code = 1
    except BaseException as exc:
        code = 1
        try:
            me = os.path.abspath(__file__)
            frames = [f for f in traceback.extract_tb(exc.__traceback__)
                      if f.filename != me and not f.filename.startswith("<frozen runpy")]
            sys.stderr.write(TRACEBACK_HEADER + "".join(traceback.format_list(frames))
                             + "".join(traceback.format_exception_only(type(exc), exc)))
        except Exception:
            try:
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            except Exception:
                pass
        if landlock_on and type(exc).__name__ == "OperationalError" and "unable to open" in str(exc):
            _emit(MARK + SEP + "kernel" + SEP + "write" + SEP + "sqlite 数据库文件" + SEP + "Landlock\n")
        if landlock_on and isinstance(exc, PermissionError) and exc.errno == 13:
            name = exc.filename if exc.filename is not None else "（未知路径）"
            if isinstance(name, bytes):
                name = name.decode("utf-8", "replace")
            _emit(MARK + SEP + "kernel" + SEP + "write" + SEP + str(name).replace("\n", "?").replace(SEP, "?")
                  + SEP + "Landlock 拒绝了这次操作\n")
    def unraisable(info, _write=sys.stderr.write):
        try:
            frames = traceback.extract_tb(info.exc_traceback) if info.exc_traceback else []
            sys.stderr.write("脚本的收尾代码出错（%s）：\n" % (info.err_msg or "atexit / __del__")
                             + "".join(traceback.format_list(frames))
                             + "".join(traceback.format_exception_only(info.exc_type, info.exc_value)))
        except Exception:
            pass
    sys.unraisablehook = unraisable
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    exit_(code & 0xFF if isinstance(code, int) else 1)


if __name__ == "__main__":
    main()
