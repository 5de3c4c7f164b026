"""xla_guard: the launcher run_python starts instead of the model's script, so the fence is up
before the script's first line runs.

Why a launcher and not a wrapper around the script: the fence has to own the process. It installs
itself, runs the script with ``runpy``, then runs atexit handlers, flushes and leaves with a
captured ``os._exit`` so the script never reaches interpreter finalization (where the audit hooks are
cleared before the last destructors run).

Policy: read anywhere; write, delete, rename, create directories, change metadata only under the
allowed roots (``--root``, normally the workspace and the temp directory) and never where the
writers' deny list refuses (the toolbox, pydeps, ``.git``, start-up files, even inside a root); start
no programs; load no native code except what the installed interpreter ships; reach no local
service over a unix socket; signal, trace or re-limit no other process. The layers, in the package
``xlaguard/`` beside this file (standard library only; imported before the script and dropped from
``sys.modules`` afterwards):

1. ``xlaguard.hook``: an audit hook (PEP 578) on every platform; also writes the Chinese reports.
   ``xlaguard.ns`` + ``xlaguard.limits`` (Linux, layer ``ns``): a private mount namespace in which
   everything outside the roots is read-only (chmod/utime/writes outside: EROFS, whatever the path),
   the run's temp folder (``--run-temp``) a size-capped tmpfs, and a cap on tasks (threads).
2. ``xlaguard.landlock`` (Linux): the kernel refuses writes outside the roots and every ``execve``.
3. ``xlaguard.seccomp`` (Linux x86-64): a seccomp-bpf filter for what Landlock does not see (unix
   sockets, other processes, chown/setuid bits/xattrs/file flags, flock, fork, namespaces, keyrings,
   bpf...), every capability dropped, memory and file-size limits.
   ``xlaguard.winjob`` + ``xlaguard.wintoken`` (Windows): run_python starts this process with a
   low-integrity token (writes only where the workspace's Low label allows) inside a Job object it
   holds itself (no child processes, memory and CPU limits); the guard only reports them.

Usage (run_python builds this command)::

    python3 -I -B -X utf8 -u xla_guard.py --root DIR [--root DIR ...] [--path DIR ...]
        [--run-temp DIR] [--report-fd N] [--nonce-stdin] -- SCRIPT [ARGS...]

``-I`` keeps ``PYTHON*`` variables and the user site out; ``--path`` entries (pydeps) and the
script's folder are put on ``sys.path`` here. ``XLA_RUNPY_UNRESTRICTED=1`` (read once, here) skips
every layer, for runs that already happen inside an outer sandbox.

Reports: single lines ``MARK + nonce`` then fields separated by ``\\x1f`` (``status`` before the
script starts, ``block`` per refused operation, ``kernel`` when the script died of an EACCES/EPERM
only a kernel layer can have caused, ``limit`` for the memory limit, ``end`` after the script), on
``--report-fd`` (a pipe of run_python's; stderr without it). With ``--nonce-stdin`` the first line of
stdin is a per-run secret, read and forgotten before the script starts (stdin then reads
``/dev/null``): lines the script prints to look like the guard's lack it and stay script output
(issue 25, D4). Reports still come from inside the script's process, so they are advisory:
run_python words them that way.

Test seam: ``XLA_GUARD_LAYERS`` (a comma list of ``audit``, ``ns``, ``landlock``, ``seccomp``; read once
here and removed from the environment before the script runs) switches layers off, so the escape
suite can count what each layer stops alone. It can only weaken a run it was set for, and the host
never passes it.
"""
import os
import sys

MARK = "@@XLA_GUARD@@"
SEP = "\x1f"
UNRESTRICTED_ENV = "XLA_RUNPY_UNRESTRICTED"
LAYERS_ENV = "XLA_GUARD_LAYERS"
ALL_LAYERS = ("audit", "ns", "landlock", "seccomp")
# The script's own traceback, headed in Chinese (the answer is read by a Chinese assistant).
TRACEBACK_HEADER = "脚本出错，调用栈（最近的调用在最后）：\n"
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv):
    opts = {"roots": [], "paths": [], "report_fd": None, "nonce_stdin": False, "run_temp": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--root", "--path", "--report-fd", "--run-temp") and i + 1 < len(argv):
            if a == "--report-fd":
                opts["report_fd"] = int(argv[i + 1])
            elif a == "--run-temp":
                opts["run_temp"] = argv[i + 1]
            else:
                opts[a[2:] + "s"].append(argv[i + 1])
            i += 2
        elif a == "--nonce-stdin":
            opts["nonce_stdin"] = True
            i += 1
        elif a == "--":
            i += 1
            break
        else:
            break
    rest = argv[i:]
    if not rest:
        raise SystemExit("用法：xla_guard.py --root 目录 [--root 目录] [--path 目录] -- 脚本 [参数...]")
    return opts, rest[0], rest[1:]


def read_nonce():
    """The per-run secret: the first line of stdin (at most 128 bytes), then stdin is /dev/null."""
    data = b""
    while b"\n" not in data and len(data) < 128:
        chunk = os.read(0, 128 - len(data))
        if not chunk:
            break
        data += chunk
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return data.split(b"\n", 1)[0].decode("ascii", "replace").strip()


def import_layers():
    """The layer modules, imported from beside this file (``-I`` leaves the script's folder off
    ``sys.path``), then taken out of ``sys.modules``: the script cannot get at them by name."""
    sys.path.insert(0, HERE)
    try:
        from xlaguard import hook, landlock, seccomp, winjob, ns, limits
    finally:
        sys.path.remove(HERE)
        for name in [n for n in sys.modules if n == "xlaguard" or n.startswith("xlaguard.")]:
            del sys.modules[name]
    return hook, landlock, seccomp, winjob, ns, limits


def linux_prelude(roots, layers, run_temp, ns, limits):
    """Linux, before Landlock and seccomp (both forbid what this needs): the task cap (a pids cgroup
    joined before the mounts turn read-only, or RLIMIT_NPROC once a user namespace of our own exists),
    then the private read-only mount namespace with the per-run tmpfs (``xlaguard.ns``). Returns the
    status fields and whether the namespace is on."""
    fields, on = [], False
    import tempfile
    tempfile.gettempdir()     # chosen (it probes by writing) while the system temp folder is still writable
    root = os.geteuid() == 0
    capped = "ns" in layers or "seccomp" in layers
    tasks = limits.limit_tasks(False) if capped and root else None
    if "ns" in layers:
        try:
            on, detail, userns = ns.enter(roots, run_temp)
        except Exception as exc:   # a broken ctypes/libc must not stop the other layers
            on, detail, userns = False, "挂载命名空间出错：%s" % exc, False
    else:
        detail, userns = "已按 %s 关闭（测试用）" % LAYERS_ENV, False
    fields.append(("ns", detail))
    if capped and not root:
        tasks = limits.limit_tasks(on and userns)
    if tasks is not None:
        fields.append(("tasks", tasks[1] if tasks[0] else "未限制：%s" % tasks[1]))
    if run_temp:
        os.environ["TMPDIR"] = run_temp
        tempfile.tempdir = run_temp
    return fields, on


def guard_files():
    folder = os.path.join(HERE, "xlaguard")
    return (os.path.abspath(__file__),) + tuple(os.path.join(folder, n) for n in sorted(os.listdir(folder))
                                               if n.endswith(".py"))


def apply_layers(roots, layers, nonce, report_fd, run_temp=None):
    """Everything before the script: kernel layers (Linux), the job object (Windows), the hook.
    Returns the status fields and whether a kernel layer is on. Order: the mount namespace and the task
    cap, Landlock and the limits, then the seccomp filter (it refuses some of what the set-up itself
    needs), the hook last."""
    hook, landlock, seccomp, winjob, ns, limits = import_layers()
    fields, kernel = [], []
    if os.name == "posix":
        import subprocess  # noqa: F401   (the hook neuters it; import it while imports are free)
    if sys.platform.startswith("linux"):
        more, on = linux_prelude(roots, layers, run_temp, ns, limits)
        fields += more
        if on:
            kernel.append("ns")
    try:
        if "landlock" in layers:
            carved = {r: landlock.carve_outs(r, roots) for r in roots}
            landlock.private_temp_dir(roots, carved)
            on, detail = landlock.apply_landlock(roots, carved)
        else:
            on, detail = False, "已按 %s 关闭（测试用）" % LAYERS_ENV
    except Exception as exc:   # a broken ctypes/libc must not stop the other layers
        on, detail = False, "Landlock 初始化出错：%s" % exc
    fields.append(("landlock", detail))
    if on:
        kernel.append("landlock")
    if os.name == "nt":
        on, detail = windows_layers(winjob, seccomp.MEMORY_LIMIT, fields)
        kernel += on
    elif "seccomp" in layers:
        limited = seccomp.set_limits()
        try:
            on, detail = seccomp.apply_seccomp()
        except Exception as exc:
            on, detail = False, "seccomp 初始化出错：%s" % exc
        fields.append(("seccomp", detail))
        fields.append(("limits", ",".join(limited)))
        if on:
            kernel.append("seccomp")
    else:
        fields.append(("seccomp", "已按 %s 关闭（测试用）" % LAYERS_ENV))
    audit = "audit" in layers
    deny_rule = hook.private_deny_rule() if audit else (None, ())
    hook.install(roots, deny_rule=deny_rule, nonce=nonce, report_fd=report_fd, launcher_globals=globals(),
                 policy=audit, guard_files=guard_files())
    names = (["audit"] if audit else []) + kernel
    return [("fence", "on"), ("layers", ",".join(names))] + fields, kernel


def windows_layers(winjob, memory, fields):
    """Windows: the job and the token run_python started this process with (``xlaguard.winjob.spawn``)
    are only read here, for the status line. Started some other way (no job around this process),
    the guard makes a job of its own, whose handle then sits in this process: said so."""
    on = []
    try:
        injob, detail = winjob.describe()
        if not injob:
            injob, detail = winjob.apply_job(memory)
            detail += "（作业对象由守卫自己建立，句柄在脚本进程里）"
    except Exception as exc:
        injob, detail = False, "作业对象出错：%s" % exc
    fields.append(("job", detail))
    if injob:
        on.append("job")
    try:
        low, detail = winjob.wintoken.describe()
    except Exception as exc:
        low, detail = False, "令牌出错：%s" % exc
    fields.append(("token", detail))
    if low:
        on.append("token")
    return on, detail


def report(line, _audit=sys.audit):
    """One report line, written by the hook (which alone knows the nonce)."""
    _audit("xla_guard.report", line.replace("\n", " "))


def field(text):
    return str(text).replace("\n", "?").replace(SEP, "?")


def kernel_record(exc, kernel):
    """The script died of an error only a kernel layer explains: say so once."""
    if not kernel:
        return
    if type(exc).__name__ == "OperationalError" and "unable to open" in str(exc):
        report(SEP.join(("kernel", "write", "sqlite 数据库文件", "+".join(kernel))))
    elif isinstance(exc, OSError) and exc.errno in (1, 13, 30):
        name = exc.filename if exc.filename is not None else "（未知路径）"
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        report(SEP.join(("kernel", "syscall" if exc.errno == 1 else "write", field(name), "+".join(kernel))))


def limit_record(exc):
    """The script died at one of the run's caps (issue 34): say which, so run_python answers in
    Chinese. ENOSPC: the temp folder's tmpfs (or the disk) is full; EFBIG: the file-size limit;
    "can't start new thread": the task cap."""
    if isinstance(exc, OSError) and exc.errno == 28:
        report(SEP.join(("limit", "disk", field(exc.filename or ""), "磁盘空间")))
    elif isinstance(exc, OSError) and exc.errno == 27:
        report(SEP.join(("limit", "fsize", field(exc.filename or ""), "单个文件")))
    elif isinstance(exc, RuntimeError) and "new thread" in str(exc):
        report(SEP.join(("limit", "tasks", "threads", "线程数")))


def main(argv=None, layers=None):
    """``layers``: the in-process form of the test seam (the escape suite's harness forks and calls
    this directly); None means the environment's choice, normally every layer."""
    opts, script, script_args = parse_args(sys.argv[1:] if argv is None else argv)
    unrestricted = os.environ.get(UNRESTRICTED_ENV) == "1"
    if layers is None:
        chosen = os.environ.get(LAYERS_ENV)
        layers = tuple(x for x in chosen.split(",") if x in ALL_LAYERS) if chosen is not None else ALL_LAYERS
    os.environ.pop(LAYERS_ENV, None)
    exit_ = os._exit
    script = os.path.abspath(script)
    roots = [os.path.realpath(r) for r in opts["roots"] if r]
    report_fd = opts["report_fd"] if opts["report_fd"] is not None else 2
    nonce = read_nonce() if opts["nonce_stdin"] else ""
    # Everything the runner needs later is imported now, while imports are unrestricted.
    import atexit
    import runpy
    import threading
    import traceback
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, ctypes.c_long(9), ctypes.c_long(0), ctypes.c_long(0),
                                                    ctypes.c_long(0))   # PR_SET_PDEATHSIG: die with run_python
        except (OSError, AttributeError):
            pass
    kernel = []
    if unrestricted:
        line = MARK + nonce + SEP + "status" + SEP + "fence=off" + SEP + "layers=" + "\n"
        os.write(report_fd, line.encode("utf-8"))
        fields = None
    else:
        fields, kernel = apply_layers(roots, layers, nonce, report_fd,
                                      os.path.realpath(opts["run_temp"]) if opts["run_temp"] else None)
    del nonce
    if fields is not None:
        fields.append(("python", "%d.%d.%d" % tuple(sys.version_info[:3])))
        report(SEP.join(["status"] + ["%s=%s" % (k, field(v)) for k, v in fields]))

    sys.dont_write_bytecode = True
    sys.argv = [script] + list(script_args)
    sys.path[:0] = [os.path.dirname(script)] + [p for p in opts["paths"] if p]
    mine = set(guard_files()) if not unrestricted else {os.path.abspath(__file__)}
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
            frames = [f for f in traceback.extract_tb(exc.__traceback__)
                      if f.filename not in mine and not f.filename.startswith("<frozen runpy")]
            sys.stderr.write(TRACEBACK_HEADER + "".join(traceback.format_list(frames))
                             + "".join(traceback.format_exception_only(type(exc), exc)))
        except Exception:
            try:
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            except Exception:
                pass
        if isinstance(exc, MemoryError) and not unrestricted:
            report(SEP.join(("limit", "memory", "内存", "内存超过上限")))
        elif not unrestricted:
            limit_record(exc)
            kernel_record(exc, kernel)

    def unraisable(info):
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
    if not unrestricted:
        try:
            report(SEP.join(("end", str(code))))
        except BaseException:
            pass
    exit_(code & 0xFF if isinstance(code, int) else 1)


if __name__ == "__main__":
    main()
