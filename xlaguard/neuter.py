"""Layer 1, second half: what the fence replaces before the script runs, because it writes, signals,
starts processes or hands out an unchecked ``posix.open`` without an audit event (``os.mkfifo``/``mknod``,
``_posixsubprocess.fork_exec``, ``signal.signal``'s frames, ``os.open`` with ``dir_fd``, the originals
left in ``os.supports_dir_fd`` and in modules imported earlier, ``_imp.create_builtin``/``create_dynamic``).

Every replacement is a template function cloned with private globals (``W`` of :mod:`.hook`, whose
frames the hook trusts for its "xla_guard.denied" records) and its policy in default arguments, like the
hook itself: nothing here can be changed by assigning to a module attribute."""
import os
import sys

from .policy import DENIED_IMPORTS, PINNED_IMPORTS, block_message


def _os_open_template(path, flags, mode=0o777, dir_fd=None, _orig=None, _fd_path=None, _type=None, _str=None,
                      _bytes=None, _int=None, _TypeError=None):
    """os.open with dir_fd: the 'open' audit event carries no dir_fd, so the hook would resolve a
    relative name against the cwd. Translate it into an absolute path (``/proc/self/fd/N/name`` on
    Linux) so the event names the file the kernel will really open."""
    if dir_fd is None:
        return _orig(path, flags, mode)
    t = _type(path)
    if t is _bytes:
        path = _bytes.decode(path, "utf-8", "surrogateescape")
    elif t is not _str:
        raise _TypeError("xla_guard：带 dir_fd 的 os.open 只接受 str/bytes 路径")
    if _type(dir_fd) is not _int:
        raise _TypeError("dir_fd 必须是整数")
    if path.startswith("/"):
        return _orig(path, flags, mode)
    return _orig(_fd_path(dir_fd) + "/" + path, flags, mode)


def _deny_template(*args, _msg=None, _what="", _kind="process", _audit=None, _PermissionError=None, **kw):
    """Stands in for functions that write or start processes without an audit event."""
    _audit("xla_guard.denied", _what, _msg, _kind)
    raise _PermissionError(_msg)


def _own_pid_template(*args, _orig=None, _index=0, _getpid=None, _what="", _audit=None, _PermissionError=None,
                      _type=None, _int=None, _len=len):
    """setpriority / sched_setaffinity... have no audit event: only pid 0 and our own (E6, D1)."""
    if _index < _len(args) and not (_type(args[_index]) is _int and args[_index] in (0, _getpid())):
        msg = "xla_guard 已拦截：脚本试图修改其他进程的调度或优先级（%s）。" % _what
        _audit("xla_guard.denied", _what, msg, "process")
        raise _PermissionError(msg)
    return _orig(*args)


def _trampoline_template(signum, frame, _handler=None):
    """User signal handlers get no frame: the interrupted frame may be the audit hook's."""
    return _handler(signum, None)


def _signal_template(signalnum, handler, _orig=None, _make=None, _callable=None, _isinstance=None, _int=None,
                     _type=None, _enums=()):
    """``signal.signal`` for the script: callables go through the trampoline; ``SIG_IGN``/``SIG_DFL``
    (IntEnum members, which the C function refuses: issue 34) become plain ints with ``int.__int__``
    (no method of the argument runs), and a plain 0/1 answer comes back as the enum, as the stdlib's
    own wrapper returns it."""
    if _callable(handler):
        handler = _make(handler)
    elif _isinstance(handler, _int):
        handler = _int.__int__(handler)
    if _isinstance(signalnum, _int):
        signalnum = _int.__int__(signalnum)
    old = _orig(signalnum, handler)
    if _type(old) is _int and (old == 0 or old == 1):
        return _enums[old]
    return old


def _create_template(spec, *rest, _orig=None, _pinned=(), _Spec=None, _str=None, _type=None, _isinstance=None,
                     _audit=None, _ImportError=None, _dynamic=False, _report=None):
    """``_imp.create_builtin`` / ``_imp.create_dynamic``: a fresh copy of a module the fence has neutered
    (``posix`` with the original ``open`` and ``mkfifo``, ``_signal``, ``_posixsubprocess``) comes from
    here without any import event (issue 34). The name and origin are read once, copied as exact str,
    and the C function gets a spec of ours, so a spec whose ``name`` changes between reads gains nothing."""
    name = spec.name
    if _type(name) is not _str:
        if not _isinstance(name, _str):
            raise _ImportError("xla_guard：模块名必须是字符串")
        name = _str.__str__(name)
    if name in _pinned:
        msg = "xla_guard 已拦截：脚本试图修改或绕过写入围栏（重新创建模块 %s）。" % name
        _report("重新创建模块 " + name, msg, "self")
        raise _ImportError(msg, name=name)
    origin = None
    if _dynamic:
        origin = spec.origin
        if _type(origin) is not _str:
            if not _isinstance(origin, _str):
                raise _ImportError("xla_guard：扩展模块路径必须是字符串", name=name)
            origin = _str.__str__(origin)
    return _orig(_Spec(name, None, origin=origin), *rest)


def _report_template(what, message, kind, *, _audit=None):
    """A block record from outside the hook: the hook takes "xla_guard.denied" only from W's frames."""
    _audit("xla_guard.denied", what, message, kind)


def _clone(func, globals_, name, defaults=None, kwdefaults=None):
    import types
    f = types.FunctionType(func.__code__, globals_, name, defaults, None)
    if kwdefaults:   # the template's own defaults (``_len=len``...) stay unless overridden
        f.__kwdefaults__ = dict(func.__kwdefaults__ or {}, **kwdefaults)
    return f


def neuter(roots, mode, W, osmod, fcntl_fn):
    """Replace what writes, signals or starts processes without an audit event by denials (they
    report through the hook: ``sys.audit("xla_guard.denied", ...)`` from a function of ``W``)."""
    import types

    def denier(what, message, kind="process"):
        return _clone(_deny_template, W, "xla_guard_denied", None,
                      dict(_msg=message, _what=what, _kind=kind, _audit=sys.audit, _PermissionError=PermissionError))
    for modobj in (os, osmod):
        for name in ("mkfifo", "mknod"):
            if modobj is not None and hasattr(modobj, name):
                setattr(modobj, name, denier("os." + name, block_message("write", "os.%s（可在任意位置建文件）" % name,
                                                                       roots), "write"))
        if modobj is not None and hasattr(modobj, "pidfd_open"):
            modobj.pidfd_open = denier("os.pidfd_open", "xla_guard 已拦截：脚本试图取得其他进程的 pidfd（os.pidfd_open）。")
        for name in ("setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setparam"):
            if modobj is not None and hasattr(modobj, name):
                index = 1 if name == "setpriority" else 0
                setattr(modobj, name, _clone(_own_pid_template, W, name, None, dict(
                    _orig=getattr(osmod, name), _index=index, _getpid=os.getpid, _what="os." + name,
                    _audit=sys.audit, _PermissionError=PermissionError, _type=type, _int=int)))
    import signal
    import _signal
    for modobj in (signal, _signal):
        if hasattr(modobj, "pidfd_send_signal"):
            modobj.pidfd_send_signal = denier("signal.pidfd_send_signal",
                                              "xla_guard 已拦截：脚本试图通过 pidfd 给其他进程发信号。")
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
            original = osmod.open
            wrapped = types.FunctionType(code, W, "open", (0o777, None, osmod.open, fdp, type, str, bytes, int,
                                                          TypeError))
            os.open = wrapped
            osmod.open = wrapped
            # os.supports_dir_fd (and its sister sets) hold the original posix.open: taken from there,
            # it opens relative to dir_fd while the "open" event names the file against the cwd (issue 34)
            for name in ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids"):
                group = getattr(os, name, None)
                if isinstance(group, set) and any(f is original for f in group):
                    group.difference_update({original})
                    group.add(wrapped)
            # ... and so does every module (or class in one) that took ``os.open`` at import, before the
            # guard: 3.9's ``pathlib._NormalAccessor.open``. Modules imported later take the wrapper.
            for mod in list(sys.modules.values()):
                holders = [mod] + [v for v in list(getattr(mod, "__dict__", {}).values()) if isinstance(v, type)]
                for holder in holders:
                    for key, value in list(getattr(holder, "__dict__", {}).items()):
                        if value is original:
                            try:
                                setattr(holder, key, wrapped)
                            except (AttributeError, TypeError):
                                pass
    # shutil.rmtree's fd-based walk unlinks relative to directory fds, which the fence refuses
    # (see above); the path-based walk does the same job and every step is checked
    import shutil
    shutil._use_fd_functions = False
    if hasattr(shutil, "_rmtree_impl") and hasattr(shutil, "_rmtree_unsafe"):
        shutil._rmtree_impl = shutil._rmtree_unsafe
    import _imp
    import importlib.machinery
    pinned = frozenset(n for n in PINNED_IMPORTS | DENIED_IMPORTS | {"_posixsubprocess", "posix", "nt", "_signal"})
    # the C loaders look names up in the calling frame's builtins: a private copy, not W's empty dict
    import builtins
    CW = {"__builtins__": dict(builtins.__dict__)}
    for fname, dynamic in (("create_builtin", False), ("create_dynamic", True)):
        orig = getattr(_imp, fname, None)
        if orig is not None:
            setattr(_imp, fname, _clone(_create_template, CW, fname, None, dict(
                _orig=orig, _pinned=pinned, _Spec=importlib.machinery.ModuleSpec, _str=str, _type=type,
                _isinstance=isinstance, _audit=sys.audit, _ImportError=ImportError, _dynamic=dynamic,
                _report=_clone(_report_template, W, "report", None, dict(_audit=sys.audit)))))

    # Signal handlers run inside whatever Python code is executing, the hook included: hand them no frame.
    tramp_code = _trampoline_template.__code__

    def make_tramp(handler, _code=tramp_code, _W=W, _F=types.FunctionType):
        return _F(_code, _W, "xla_guard_signal_trampoline", (handler,))
    maker = types.FunctionType(make_tramp.__code__, W, "make", (tramp_code, W, types.FunctionType))
    enums = (signal.Handlers.SIG_DFL, signal.Handlers.SIG_IGN) if hasattr(signal, "Handlers") else (0, 1)
    sig = types.FunctionType(_signal_template.__code__, W, "signal", (_signal.signal, maker, callable, isinstance, int,
                                                                      type, enums))
    signal.signal = sig
    _signal.signal = sig
