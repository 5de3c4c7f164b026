"""Layer 1 (every platform): the audit hook (PEP 578) and the functions it neuters.

Written against the escapes listed in ../shared/notes/guard-design.md: all policy sits in default
arguments of one hook function, as immutable values (tuples, frozensets, C functions); paths are
canonicalized with captured ``lstat``/``readlink``/``getcwd`` (on Linux one component at a time from
O_PATH descriptors, the way the kernel walks them: no PATH_MAX blind spot, issue 34); re-imports of neutered modules, ``gc``,
tracing and ``addaudithook`` are refused; modules without audit events are removed or refused.
Audit hooks are not a sandbox: this layer catches mistakes and says in Chinese what was refused;
on Linux layers 2 and 3 (kernel) hold what it cannot, on Windows the low-integrity token and the Job
object run_python starts the guard with. Windows paths are placed by ``xlaguard.winpath``."""
import os
import sys

from . import stdzip, winpath
from .policy import (MARK, SEP, DENIED_IMPORTS, PINNED_IMPORTS, PROCESS_EVENTS, NATIVE_EVENTS, SELF_EVENTS,
                     REGISTRY_EVENTS, PATH_EVENTS, allowed_text, block_message)
from .neuter import neuter

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
                   _protected=(), _report_fd=2, _BaseException=None, _with_tb=None, _L=None, _cbc_code=None,
                   _src_get_code=None, _SourceFileLoader=None, _ext_globals=None, _io_mod=None, _open_code=None,
                   _frozen_types=(), _sock_init_code=None, _pair_code=None, _setown=(), _ioctls=(), _AF_UNIX=1,
                   _winres=None, _wininside=None, _winroots=(), _stdpyc=frozenset(), _sha=None,
                   _os_open=None, _close=None, _O_WALK=-1, _fcntl_denied=()):
    """The audit hook. Every name it uses arrives as a default argument (the install step binds real
    values, all immutable, and gives it private globals), so nothing the script can assign changes
    what it does. Fast path: one frozenset lookup. Helpers are created per call in the slow path.

    A refusal leaves the hook as an exception whose traceback holds only the hook's own frame, and
    only after every local has been deleted: a script that walks ``e.__traceback__`` to the hook's
    frame finds nothing to read or change there (issue 25, E1). Any exception inside the checks
    (including one a signal handler injects) ends the same way: the operation is refused."""
    if event not in _watch:
        return
    if event == "open" and args[2] == _O_WALK and args[1] is None:
        return      # walk()'s own O_PATH folder opens (see the "open" branch): the fast way out
    def _body(event, args):
        memo = []   # the last walk() of this event: check() and the open branch reuse it

        def report(kind, target, message):
            t = _str.replace(_str.replace(target, "\n", "?"), _fsep, "?")
            m = _str.replace(message, "\n", " ")
            line = _mark + _fsep + "block" + _fsep + kind + _fsep + t + _fsep + m + "\n"
            _write(_report_fd, _str.encode(line, "utf-8", "surrogateescape"))

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

        def walk(p, follow):
            """Linux: the path the way the kernel walks it (issue 34). One component at a time, from an
            O_PATH descriptor of the folder reached so far (``stat``/``readlink``/``access`` with
            ``dir_fd``), never the whole string: no PATH_MAX, so links nested past 4096 bytes resolve
            exactly as the kernel follows them. Returns (canonical path, stat of the final file or None,
            the git folder the path lies in or None) or None when a lookup fails other than by a
            missing tail (a folder that cannot be searched, a file used as a folder, a link loop): refuse.
            A folder is a git folder when it is named ``.git`` or looks like one to git (``HEAD`` plus
            ``objects`` and ``refs``, or ``HEAD`` plus ``commondir``: bare repositories, linked worktrees)."""
            todo = [c for c in p.split("/") if c]
            todo.reverse()
            parts = []
            fds = [_os_open("/", _O_WALK)]
            marks = [0]                        # per entered folder: where a git folder starts, or 0
            hops = 0
            missing = False
            final = None
            try:
                while todo:
                    c = todo.pop()
                    if final is not None:
                        return None            # a file used as a folder: the kernel says ENOTDIR
                    if c == ".":
                        continue
                    if c == "..":
                        if missing:
                            parts.append(c)
                        elif parts:
                            parts.pop()
                            _close(fds.pop())
                            marks.pop()
                        continue
                    if missing or (not todo and not follow):
                        parts.append(c)
                        continue
                    d = fds[-1]
                    if not _access(c, 0, dir_fd=d, follow_symlinks=False):
                        if not _access(".", 1, dir_fd=d):
                            return None        # no search right here: not "missing", refuse
                        missing = True
                        parts.append(c)
                        continue
                    st = _stat(c, dir_fd=d, follow_symlinks=False)
                    kind = st.st_mode & 0o170000
                    if kind == 0o120000:
                        hops += 1
                        if hops > 40:
                            return None
                        target = _readlink(c, dir_fd=d)
                        if not target.startswith("/") and ":[" in target:
                            # /proc/<pid>/fd/N of a pipe or socket: no file behind it. Our own: harmless
                            # (our stdout); another process's: its pipes, e.g. the tool's answer (D7).
                            if (_len(parts) >= 3 and parts[0] == "proc" and parts[1] == "%d" % _getpid()
                                    and parts[-1] == "fd"):
                                return "<anon>", None, None
                            return None
                        if target.startswith("/"):
                            parts = []
                            while _len(fds) > 1:
                                _close(fds.pop())
                                marks.pop()
                        more = [x for x in target.split("/") if x]
                        more.reverse()
                        todo.extend(more)
                        continue
                    parts.append(c)
                    if kind != 0o040000:
                        final = st
                        continue
                    fd = _os_open(c, _O_WALK, dir_fd=d)
                    fds.append(fd)
                    mark = marks[-1]
                    if mark == 0 and (c == ".git" or (_access("HEAD", 0, dir_fd=fd) and (
                            (_access("objects", 0, dir_fd=fd) and _access("refs", 0, dir_fd=fd))
                            or _access("commondir", 0, dir_fd=fd)))):
                        mark = _len(parts)
                    marks.append(mark)
                git = "/" + "/".join(parts[:marks[-1]]) if marks[-1] else None
                if git is None and ".git" in parts:          # a .git about to be made
                    git = "/" + "/".join(parts[:parts.index(".git") + 1])
                return "/" + "/".join(parts), final, git
            finally:
                for fd in fds:
                    _close(fd)

        def canonical(p, follow):
            """realpath from lstat/readlink: every symlink resolved (the final one only when follow);
            components that do not exist are appended as written."""
            if _mode == "linux":
                w = walk(p, follow)
                memo.append(w)
                return None if w is None else w[0]
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
                    if not target.startswith("/") and ":[" in target:
                        # /proc/<pid>/fd/N of a pipe or socket: no file behind it. Our own: harmless
                        # (our stdout); another process's: its pipes, e.g. the tool's answer (D7).
                        if (_len(parts) >= 3 and parts[0] == "proc" and parts[1] == "%d" % _getpid()
                                and parts[-1] == "fd"):
                            return "<anon>"
                        return None
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
            if _mode == "windows":
                return _wininside(canon, _winroots)     # xlaguard.winpath: canonical, case-insensitive
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
            del memo[:]
            if _type(dir_fd) is _int and dir_fd == -1:
                dir_fd = None                   # the os.* events write -1 for "no dir_fd"
            if _type(p) is _int or (_isinstance(p, _int) and not _isinstance(p, _bool)):
                if _mode == "windows":
                    return None
                return fd_path(p)
            s = text(p)
            if s is None or "\0" in s:
                return None
            if dir_fd is not None and _type(dir_fd) is not _int:
                return None
            if _mode == "windows":
                # no dir_fd on Windows (the os.* events pass -1 for "none")
                return None if dir_fd is not None and dir_fd != -1 else _winres(s, follow)   # xlaguard.winpath
            a = absolute(s, dir_fd)
            if a is None:
                return None
            if _mode == "windows":
                return a
            return canonical(a, follow)

        def check(p, dir_fd, follow, what=None):
            c = resolve(p, dir_fd, follow)
            if _mode == "linux" and c is not None and c != "<anon>" and inside(c):
                w = memo[-1] if memo else walk(c, follow)
                del memo[:]
                memo.append(w)
                if w is None:
                    deny(what or "write", c)
                if w[2] is not None:
                    deny(what or "write", c, "xla_guard 已拦截：%s 在 git 仓库的内部文件夹 %s 里（钩子、配置会在下次运行 "
                                             "git 时执行），run_python 里的脚本不能改它。" % (c, w[2]))
            shown = c if c is not None else (text(p) if text(p) is not None else "fd")
            if c is None or not inside(c):
                deny(what or "write", shown)
            if _deny is not None and c != "<anon>" and c != "/dev/null" and c != "\\\\.\\NUL":
                why = _deny(c)
                if why is not None:
                    deny(what or "write", c, "xla_guard 已拦截：%s 虽在允许写入的目录里，但%s，run_python 里的脚本不能改它。"
                                             "请把结果写到工作空间里别的位置。" % (c, why))
            return c

        def caller():
            """The Python frame whose call raised the event (0 here, 1 _body, 2 the hook)."""
            return _getframe(3)

        def caller_is_importlib():
            f = _getframe(3)
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
            if _mode == "linux" and _type(flags) is _int and flags == _O_WALK and mode is None:
                # walk()'s own opens (and a script's with exactly these flags): an O_PATH folder fd gives
                # no write of its own - dir_fd writes are refused (hook and seccomp), /proc/self/fd/N
                # paths are walked, fchmod/fchown on O_PATH fail with EBADF
                return
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
                if _mode == "linux":
                    w = (memo[-1] if memo else walk(c, True)) if c != "<anon>" else None
                    st = w[1] if w is not None else None
                    if st is not None and (st.st_mode & 0o170000) == 0o100000 and st.st_nlink > 1:
                        deny("write", c, "xla_guard 已拦截：%s 有多个硬链接，写它可能改到允许目录以外的文件。"
                                        "请先复制一份再写（shutil.copy 到新文件名）。" % c)
                elif _mode != "windows" and _access(c, 0):
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
                if _mode == "windows":
                    return                  # a read-only open of a path winpath will not place (a local share...)
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

        spec = None
        for name, pspec in _path_events:
            if name == event:
                spec = pspec
        if spec is not None:
            if event == "os.chown" or event == "shutil.chown":
                deny("meta", event, "xla_guard 已拦截：run_python 里的脚本不能更改文件的所有者（%s）。" % event)
            if event == "os.setxattr" or event == "os.removexattr":
                deny("meta", event, "xla_guard 已拦截：run_python 里的脚本不能修改文件的扩展属性（%s）。" % event)
            if event == "os.chmod" and _len(args) > 1 and (_type(args[1]) is not _int or args[1] & 0o7000):
                deny("meta", "os.chmod", "xla_guard 已拦截：run_python 里的脚本不能设置 setuid/setgid/粘滞位"
                                         "（chmod %s）。" % ("%o" % args[1] if _type(args[1]) is _int else "?"))
            for index, fd_index, follow in spec:
                if index >= _len(args):
                    continue
                p = args[index]
                if p is None:
                    p = "."                 # unpack_archive(extract_dir=None) means the cwd
                dfd = args[fd_index] if 0 <= fd_index < _len(args) else None
                if _type(dfd) is _int and dfd == -1:
                    dfd = None                  # the os.* events write -1 for "no dir_fd"
                if dfd is not None:
                    # the kernel layer refuses writes relative to a directory fd (seccomp); say why first
                    deny("write", event, "xla_guard 已拦截：run_python 里的脚本改动文件时不能用 dir_fd（%s），"
                                         "请直接写完整路径。" % event)
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

        if event == "socket.__new__":
            # unix sockets reach local services that run commands or grant keys (tmux, ssh-agent,
            # D-Bus, docker): only the connected stream pair socket.socketpair() makes is allowed
            if _mode == "linux" and _len(args) > 1 and (args[1] == 16 or args[1] == 40):
                deny("connect", "socket(AF_NETLINK/AF_VSOCK)", "xla_guard 已拦截：run_python 里的脚本不能建 netlink 或 vsock "
                                                              "套接字（它们通向内核和虚拟机的宿主）。")
            if _len(args) > 1 and args[1] == _AF_UNIX:
                f = caller()
                if not (f.f_code is _sock_init_code and f.f_back is not None and f.f_back.f_code is _pair_code
                        and _type(args[2]) is _int and args[2] & 0xF == 1):
                    deny("connect", "socket(AF_UNIX)")
            return
        if event == "socket.bind" or event == "socket.connect" or event == "socket.sendto" \
                or event == "socket.sendmsg":
            addr = args[1] if _len(args) > 1 else None
            t = _type(addr)
            if t is _str or t is _bytes:
                s = text(addr)
                if event == "socket.bind" and _len(s) > 0 and s[0] != "\0":
                    check(s, None, False)
                    return
                deny("connect", s if _len(s) == 0 or s[0] != "\0" else "@" + s[1:])
            return
        if event == "fcntl.fcntl":
            if _len(args) > 1 and args[1] in _fcntl_denied:
                deny("process", "fcntl F_SETLEASE", "xla_guard 已拦截：脚本试图给文件加租约（fcntl F_SETLEASE），"
                                                   "这会卡住打开同一文件的其他程序。")
            if _len(args) > 2 and args[1] in _setown and not (_type(args[2]) is _int and args[2] == _getpid()):
                deny("process", "fcntl F_SETOWN", "xla_guard 已拦截：脚本试图让别的进程接收 SIGIO 信号（fcntl F_SETOWN）。")
            return
        if event == "fcntl.flock" or event == "fcntl.lockf":
            # a lock on a read-only fd of a file outside (the host's slot locks) stalls other tools (D3)
            c = fd_path(args[0]) if _type(args[0]) is _int else None
            if c is None or not inside(c):
                deny("process", "flock %s" % (c or "fd"), "xla_guard 已拦截：脚本试图给允许目录以外的文件加锁（%s），"
                                                       "这会卡住其他程序。" % (c or "fd"))
            return
        if event == "msvcrt.locking":
            # Windows: a lock on a read-only fd of a file outside (the host's slot locks) stalls
            # other tools (D3); the fd's path is not known here, so every lock is refused
            deny("process", "msvcrt.locking", "xla_guard 已拦截：脚本试图给文件加锁（msvcrt.locking），"
                                              "这会卡住其他程序；run_python 里的脚本不能加文件锁。")
        if event == "resource.prlimit":
            if _len(args) > 2 and args[2] is not None and not (_type(args[0]) is _int and args[0] in (0, _getpid())):
                deny("process", "resource.prlimit", "xla_guard 已拦截：脚本试图修改其他进程的资源限制（prlimit）。")
            return
        if event == "xla_guard.report":
            f = caller()
            if f.f_globals is not _L or _type(args[0]) is not _str:
                deny("self", "xla_guard.report")
            _write(_report_fd, _str.encode(_mark + _fsep + args[0] + "\n", "utf-8", "surrogateescape"))
            return
        if event == "xla_guard.denied":
            f = caller()
            if f.f_globals is not _W or _type(args[0]) is not _str or _type(args[1]) is not _str:
                deny("self", "xla_guard.denied")
            report(args[2] if _len(args) > 2 and _type(args[2]) is _str else "process", args[0], args[1])
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
            if event != "object.__getattr__" and t is _type:
                for x in _frozen_types:
                    if obj is x:
                        deny("self", "%s %s" % (event, text(args[1]) or "?"))
            if _version >= (3, 9) and t is _FunctionType:
                g = obj.__globals__
                mine = g is _G or g is _W
                for x in _protected:
                    if g is x:
                        mine = True
                if mine:
                    deny("self", "%s %s" % (event, text(args[1]) or "?"))
            return
        if event == "marshal.loads":
            # Only the bytecode cache of a source file, read by the real SourceFileLoader from a .pyc
            # outside the writable folders: crafted code objects are memory primitives (D6). Or the
            # very bytes of a module in the interpreter's own stdlib zip (an embeddable CPython has
            # no sources): xlaguard.stdzip hashed them before the script ran.
            if _stdpyc and _type(args[0]) is _bytes and _sha(args[0]).digest() in _stdpyc:
                return
            f = caller()
            if f.f_code is _cbc_code and f.f_back is not None and f.f_back.f_code is _src_get_code:
                loader = f.f_back.f_locals.get("self")
                bp = f.f_locals.get("bytecode_path")
                if (_type(loader) is _SourceFileLoader and _ext_globals.get("_io") is _io_mod
                        and _io_mod.open_code is _open_code and _type(bp) is _str and bp.endswith(".pyc")):
                    c = resolve(bp, None, True)
                    if c is not None and not inside(c):
                        return
            deny("self", event)
        if event == "marshal.load":
            deny("self", event)
        if event == "code.__new__":
            if caller_is_importlib():
                return
            deny("self", event)
        if event == "compile":
            fn = text(args[1]) if _len(args) > 1 and args[1] is not None else None
            if fn is not None and (fn.startswith("<frozen") or fn in _guard_file):
                deny("self", "compile " + fn)
            return
        if event == "fcntl.ioctl":
            req = args[1] if _len(args) > 1 else None
            if _type(req) is not _int or req in (0x5412, 0x80017472, -0x7ffe8b8e):
                deny("self", "ioctl TIOCSTI", "xla_guard 已拦截：脚本试图向终端注入按键（TIOCSTI）。")
            if req in _ioctls or (req & 0xFFFFFFFF) in _ioctls:
                deny("meta", "ioctl 0x%x" % req, "xla_guard 已拦截：脚本试图用 ioctl 修改文件标志或信号接收者"
                                                 "（0x%x，如 FS_IOC_SETFLAGS 只追加/不可改）。" % req)
            return
        if event == "cpython.PyInterpreterState_Clear" or event == "cpython._PySys_ClearAuditHooks":
            _flush()
            _exit(1)


    try:
        _body(event, args)
    except _BaseException as e:
        _with_tb(e, None)
        del _watch, _path_events, _proc, _native, _selfev, _reg, _denied, _pinned, _roots, _root_ids
        del _tmp_roots, _mode, _G, _W, _FunctionType, _FrameType, _str, _bytes, _int, _type, _len, _tuple
        del _list, _bool, _isinstance, _sdecode, _bjoin, _lstat, _stat, _readlink, _getcwd, _access, _getpid
        del _getpgrp, _write, _exit, _getframe, _fcntl, _PermissionError, _ImportError, _RuntimeError, _msg
        del _flush, _wflags, _O_TMPFILE, _O_DIR, _O_PATH, _O_TRUNC, _sep, _mark, _fsep, _frozen_globals
        del _guard_file, _newer_frames, _version, _deny, _protected, _report_fd, _BaseException, _with_tb, _L
        del _cbc_code, _src_get_code, _SourceFileLoader, _ext_globals, _io_mod, _open_code, _frozen_types
        del _sock_init_code, _pair_code, _setown, _ioctls, _AF_UNIX, _winres, _wininside, _winroots, _stdpyc, _sha
        del _os_open, _close, _O_WALK, _fcntl_denied
        del event, args, _body
        raise e


def private_deny_rule():
    """``xlakit.fs.paths.deny_reason`` (the writers' deny list: the toolbox, pydeps, ``.git``, start-up
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
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    saved_path, before = list(sys.path), set(sys.modules)
    sys.path.insert(0, here)
    try:
        paths = importlib.import_module("xlakit.fs.paths")
    except Exception:
        return None, ()
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            if name == "xlakit" or name.startswith("xlakit."):
                del sys.modules[name]
    spec = importlib.util.find_spec(os.path.__name__)
    priv_path = importlib.util.module_from_spec(spec)
    # get_code + exec, not exec_module: an embeddable CPython's zipimporter (3.9) has no exec_module
    exec(spec.loader.get_code(spec.name), priv_path.__dict__)
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


def install(roots, mode=None, deny_rule=(None, ()), nonce="", report_fd=2, launcher_globals=None, policy=True,
            guard_files=()):
    """Neuter what has no audit events, then add the hook. After this, the script cannot remove it.

    ``deny_rule`` is :func:`private_deny_rule`'s answer: writes inside the roots are refused where the
    writers' deny list refuses them. Report lines go to ``report_fd``, each marked with ``MARK`` +
    ``nonce``; the launcher reports through the hook (``sys.audit("xla_guard.report", line)`` from a
    frame with ``launcher_globals``), so no copy of the nonce stays where the script can read it.
    ``policy=False`` (a test seam: "the kernel layers alone") installs the reporting part only."""
    import types
    import stat  # noqa: F401  (imported before the hook: the stdlib needs it)
    import io
    import socket
    if mode is None:
        mode = "linux" if sys.platform.startswith("linux") else (
            "darwin" if sys.platform == "darwin" else ("windows" if os.name == "nt" else "posix"))
    G = {"__builtins__": {}}
    W = {"__builtins__": {}}
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
    frozen, frozen_types = [], []
    for name in ("_frozen_importlib_external", "_frozen_importlib"):
        m = sys.modules.get(name)
        if m is not None:
            frozen.append(m.__dict__)
            frozen_types += [v for v in m.__dict__.values() if isinstance(v, type)]
    ext = sys.modules.get("_frozen_importlib_external")
    import _io

    def flush(_out=sys.__stdout__, _err=sys.__stderr__, _exc=Exception):
        for s in (_out, _err):
            try:
                s.flush()
            except _exc:
                pass
    flush = types.FunctionType(flush.__code__, W, "flush", flush.__defaults__)

    watch = set(PATH_EVENTS) | PROCESS_EVENTS | NATIVE_EVENTS | SELF_EVENTS | REGISTRY_EVENTS | {
        "open", "_winapi.CreateFile", "sqlite3.connect", "socket.__new__", "socket.bind", "socket.connect",
        "socket.sendto", "socket.sendmsg", "os.kill", "os.killpg", "ctypes.dlopen", "import", "sys._getframe",
        "object.__getattr__", "object.__setattr__", "object.__delattr__", "code.__new__", "marshal.loads",
        "marshal.load", "compile", "fcntl.ioctl", "fcntl.fcntl", "fcntl.flock", "fcntl.lockf", "resource.prlimit",
        "msvcrt.locking", "cpython.PyInterpreterState_Clear", "cpython._PySys_ClearAuditHooks"}
    always = {"xla_guard.report", "xla_guard.denied"}
    setown = (8, 15) if mode == "linux" else ((6,) if mode == "darwin" else ())
    values = dict(
        _watch=frozenset((watch if policy else set()) | always), _path_events=tuple(PATH_EVENTS.items()),
        _proc=PROCESS_EVENTS, _native=NATIVE_EVENTS, _selfev=SELF_EVENTS, _reg=REGISTRY_EVENTS,
        _denied=DENIED_IMPORTS, _pinned=frozenset(n for n in PINNED_IMPORTS if n in sys.modules),
        _roots=tuple(roots), _root_ids=frozenset(root_ids), _tmp_roots=(), _mode=mode,
        _G=G, _W=W, _FunctionType=types.FunctionType, _FrameType=types.FrameType,
        _str=str, _bytes=bytes, _int=int, _type=type, _len=len, _tuple=tuple, _list=list, _bool=bool,
        _isinstance=isinstance, _sdecode=None, _bjoin=bytes.join, _lstat=os.lstat, _stat=os.stat,
        _readlink=os.readlink, _getcwd=os.getcwd, _access=os.access, _getpid=os.getpid,
        _getpgrp=getattr(os, "getpgrp", os.getpid), _write=os.write, _exit=os._exit, _getframe=sys._getframe,
        _fcntl=fcntl_fn, _PermissionError=PermissionError, _ImportError=ImportError, _RuntimeError=RuntimeError,
        _msg=None, _flush=flush, _wflags=wflags, _O_TMPFILE=getattr(os, "O_TMPFILE", 0),
        _O_DIR=getattr(os, "O_DIRECTORY", 0), _O_PATH=getattr(os, "O_PATH", 0), _O_TRUNC=os.O_TRUNC,
        _sep="\\/" if mode == "windows" else "/", _mark=MARK + nonce, _fsep=SEP, _frozen_globals=tuple(frozen),
        _guard_file=tuple(guard_files) + (os.path.abspath(__file__),), _newer_frames=sys.version_info >= (3, 11),
        _version=tuple(sys.version_info[:2]), _deny=deny_rule[0], _protected=tuple(deny_rule[1]),
        _report_fd=report_fd, _BaseException=BaseException, _with_tb=BaseException.with_traceback,
        _L=launcher_globals, _cbc_code=ext._compile_bytecode.__code__ if ext else None,
        _src_get_code=ext.SourceLoader.get_code.__code__ if ext else None,
        _SourceFileLoader=ext.SourceFileLoader if ext else None, _ext_globals=ext.__dict__ if ext else {},
        _io_mod=_io, _open_code=_io.open_code, _frozen_types=tuple(frozen_types),
        _sock_init_code=socket.socket.__init__.__code__, _pair_code=getattr(socket.socketpair, "__code__", None),
        _setown=setown, _ioctls=(0x40086602, 0x40046602, 0x401C5820, 0x8901, 0x8902, 0x541C),
        _AF_UNIX=getattr(socket, "AF_UNIX", -1), _os_open=osmod.open, _close=os.close,
        _O_WALK=(os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC) if mode == "linux" else -1,
        _fcntl_denied=(1024,) if mode == "linux" else ())
    values.update(_windows_values(mode, roots))
    values["_msg"] = types.FunctionType(block_message.__code__, {"__builtins__": {}, "allowed_text":
                                        types.FunctionType(allowed_text.__code__, W, "allowed_text")},
                                        "block_message")
    code = _hook_template.__code__
    names = code.co_varnames[2:code.co_argcount]
    hook = types.FunctionType(code, G, "xla_guard_hook", tuple(values[n] for n in names), None)
    if policy:
        neuter(roots, mode, W, osmod, fcntl_fn)
    io.open_code  # noqa: B018  (keep a reference alive before the hook)
    sys.addaudithook(hook)
    return hook


def _windows_values(mode, roots):
    """The hook's Windows path resolution (``xlaguard.winpath``) with the roots canonicalised by it,
    and the stdlib-zip bytecode it may unmarshal (``xlaguard.stdzip``, any platform)."""
    out = dict(_winres=None, _wininside=None, _winroots=(), _stdpyc=frozenset(), _sha=None)
    digests, sha = stdzip.trusted(roots)
    if digests:
        out.update(_stdpyc=digests, _sha=sha)
    if mode == "windows":
        import types
        res = winpath.os_bind()
        canon = [res(r, True) for r in roots]
        out.update(_winres=res, _winroots=tuple(c.upper() for c in canon if c),
                   _wininside=types.FunctionType(winpath.inside.__code__, {"__builtins__": {}}, "inside"))
    return out
