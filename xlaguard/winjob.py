"""Windows: the Job object around the script's process, and starting that process (ctypes only).

The Job object is created and held by the *launcher* (run_python, through :func:`spawn`), never by
the script's process: a handle inside that process would let native code lift the limits
(``SetInformationJobObject``) or leave the job (issue 33). The child is created suspended
(``CreateProcessAsUserW`` with the low-integrity token of ``xlaguard.wintoken``, or the normal token
when that cannot be built), assigned to the job, then resumed, so its first instruction already runs
inside the job. Only the three pipe ends are inherited (``PROC_THREAD_ATTRIBUTE_HANDLE_LIST``): none
of run_python's own handles (its answer pipe to the host) reach the script. Limits:

- ``ActiveProcessLimit = 1``: the kernel refuses every ``CreateProcess`` from the script (the audit
  hook refuses them too, but native code could call the API directly);
- ``ProcessMemoryLimit`` = :data:`xlaguard.seccomp.MEMORY_LIMIT`: an allocation beyond it fails
  (Python raises ``MemoryError``, answered as "内存超过上限");
- ``PerProcessUserTimeLimit``: CPU time a little above run_python's timeout (the wall clock is
  run_python's own);
- ``KILL_ON_JOB_CLOSE`` and ``DIE_ON_UNHANDLED_EXCEPTION``: nothing of the job outlives the
  launcher, and a crash does not wait on an error dialog; no breakaway;
- UI restrictions: no access to other processes' windows (USER handles), no clipboard writes or
  reads, no system parameter / display / desktop / global atom changes, no ``ExitWindows``.

The guard inside the job only *reads* its limits (:func:`describe`, ``QueryInformationJobObject``
with no handle) for its status line; started outside run_python it falls back to
:func:`apply_job` (a job of its own, handle in its own process, said so in the status). The
structures are built and checked on every platform (sizes and offsets are unit-tested against the
Windows SDK layout on 64-bit)."""
import ctypes

from . import wintoken  # noqa: F401  (the guard reads its token through winjob.wintoken)

JOB_OBJECT_LIMIT_ACTIVE_PROCESS = 0x00000008
JOB_OBJECT_LIMIT_PROCESS_MEMORY = 0x00000100
JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x00000400
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JobObjectBasicUIRestrictions = 4
JobObjectExtendedLimitInformation = 9
JOB_OBJECT_UILIMIT_HANDLES = 0x0001
JOB_OBJECT_UILIMIT_READCLIPBOARD = 0x0002
JOB_OBJECT_UILIMIT_WRITECLIPBOARD = 0x0004
JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS = 0x0008
JOB_OBJECT_UILIMIT_DISPLAYSETTINGS = 0x0010
JOB_OBJECT_UILIMIT_GLOBALATOMS = 0x0020
JOB_OBJECT_UILIMIT_DESKTOP = 0x0040
JOB_OBJECT_UILIMIT_EXITWINDOWS = 0x0080
UI_LIMITS = 0x00FF

JOB_OBJECT_LIMIT_PROCESS_TIME = 0x00000002
LIMIT_FLAGS = (JOB_OBJECT_LIMIT_ACTIVE_PROCESS | JOB_OBJECT_LIMIT_PROCESS_MEMORY
               | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION | JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)


class IO_COUNTERS(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                                               "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                ("LimitFlags", ctypes.c_uint32), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", ctypes.c_uint32),
                ("Affinity", ctypes.c_size_t), ("PriorityClass", ctypes.c_uint32),
                ("SchedulingClass", ctypes.c_uint32)]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION), ("IoInfo", IO_COUNTERS),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]


class JOBOBJECT_BASIC_UI_RESTRICTIONS(ctypes.Structure):
    _fields_ = [("UIRestrictionsClass", ctypes.c_uint32)]


def limits(memory, cpu_seconds=None):
    """The extended limit record the job gets (built the same way on every platform)."""
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = LIMIT_FLAGS
    info.BasicLimitInformation.ActiveProcessLimit = 1
    info.ProcessMemoryLimit = memory
    if cpu_seconds:
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_TIME
        info.BasicLimitInformation.PerProcessUserTimeLimit = int(cpu_seconds * 10 ** 7)   # 100 ns units
    return info


def apply_job(memory):   # pragma: no cover - Windows only
    """Create the job, set the limits, put this process into it. Returns (applied, detail).
    The handle is deliberately never closed: closing it would kill this process (KILL_ON_JOB_CLOSE)."""
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    kernel32.GetCurrentProcess.restype = ctypes.c_void_p
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        return False, "无法创建作业对象（错误 %d）" % ctypes.get_last_error()
    info = limits(memory)
    if not kernel32.SetInformationJobObject(ctypes.c_void_p(job), JobObjectExtendedLimitInformation,
                                            ctypes.byref(info), ctypes.sizeof(info)):
        return False, "无法设置作业对象的限制（错误 %d）" % ctypes.get_last_error()
    ui = JOBOBJECT_BASIC_UI_RESTRICTIONS(UI_LIMITS)
    kernel32.SetInformationJobObject(ctypes.c_void_p(job), JobObjectBasicUIRestrictions, ctypes.byref(ui),
                                     ctypes.sizeof(ui))
    if not kernel32.AssignProcessToJobObject(ctypes.c_void_p(job), ctypes.c_void_p(kernel32.GetCurrentProcess())):
        return False, "无法把进程放进作业对象（错误 %d）" % ctypes.get_last_error()
    return True, "作业对象：不能启动子进程，内存上限 %d MiB" % (memory >> 20)


# ------------------------------------------------------------------ the launcher's side: spawn


class STARTUPINFOW(ctypes.Structure):
    _fields_ = [("cb", ctypes.c_uint32), ("lpReserved", ctypes.c_wchar_p), ("lpDesktop", ctypes.c_wchar_p),
                ("lpTitle", ctypes.c_wchar_p), ("dwX", ctypes.c_uint32), ("dwY", ctypes.c_uint32),
                ("dwXSize", ctypes.c_uint32), ("dwYSize", ctypes.c_uint32), ("dwXCountChars", ctypes.c_uint32),
                ("dwYCountChars", ctypes.c_uint32), ("dwFillAttribute", ctypes.c_uint32),
                ("dwFlags", ctypes.c_uint32), ("wShowWindow", ctypes.c_uint16), ("cbReserved2", ctypes.c_uint16),
                ("lpReserved2", ctypes.c_void_p), ("hStdInput", ctypes.c_void_p), ("hStdOutput", ctypes.c_void_p),
                ("hStdError", ctypes.c_void_p)]


class STARTUPINFOEXW(ctypes.Structure):
    _fields_ = [("StartupInfo", STARTUPINFOW), ("lpAttributeList", ctypes.c_void_p)]


class PROCESS_INFORMATION(ctypes.Structure):
    _fields_ = [("hProcess", ctypes.c_void_p), ("hThread", ctypes.c_void_p), ("dwProcessId", ctypes.c_uint32),
                ("dwThreadId", ctypes.c_uint32)]


STARTF_USESTDHANDLES = 0x100
CREATE_SUSPENDED = 0x4
CREATE_UNICODE_ENVIRONMENT = 0x400
EXTENDED_STARTUPINFO_PRESENT = 0x80000
CREATE_NEW_PROCESS_GROUP = 0x200
CREATE_NO_WINDOW = 0x08000000
PROC_THREAD_ATTRIBUTE_HANDLE_LIST = 0x20002
JobObjectBasicAccountingInformation = 1


def environment_block(env):
    """``KEY=value\\0...\\0\\0`` as CreateProcessW wants it (sorted case-insensitively)."""
    items = sorted(env.items(), key=lambda kv: kv[0].upper())
    return "".join("%s=%s\0" % (k, v) for k, v in items if "=" not in k[1:] and "\0" not in k + v) + "\0"


class Child:   # pragma: no cover - Windows only
    """The script's process as run_python sees it: the parts of ``subprocess.Popen`` it uses
    (``pid``, ``stdin``/``stdout``/``stderr``, ``wait``, ``returncode``, ``kill``) plus ``job``."""

    def __init__(self, pid, process, job, stdin, stdout, stderr, token_detail):
        self.pid, self._process, self.job = pid, process, job
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode = None
        self.token_detail = token_detail

    def poll(self):
        import _winapi
        if self.returncode is None and _winapi.WaitForSingleObject(self._process, 0) == 0:
            self.returncode = _winapi.GetExitCodeProcess(self._process)
        return self.returncode

    def wait(self, timeout=None):
        import subprocess
        import _winapi
        if self.returncode is not None:
            return self.returncode
        ms = _winapi.INFINITE if timeout is None else int(max(0, timeout) * 1000)
        if _winapi.WaitForSingleObject(self._process, ms) != 0:
            raise subprocess.TimeoutExpired("xla_guard", timeout)
        self.returncode = _winapi.GetExitCodeProcess(self._process)
        return self.returncode

    def kill(self):
        """End everything in the job (the script and anything it managed to start)."""
        k = ctypes.WinDLL("kernel32", use_last_error=True)
        k.TerminateJobObject(ctypes.c_void_p(self.job), 1)
        k.TerminateProcess(ctypes.c_void_p(self._process), 1)

    def close(self):
        """Close the job (KILL_ON_JOB_CLOSE ends whatever is left) and the process handle."""
        import _winapi
        for h in (self.job, self._process):
            try:
                _winapi.CloseHandle(h)
            except OSError:
                pass
        self.job = self._process = 0


def spawn(cmd, cwd, env, memory, cpu_seconds, token=None, token_detail=""):   # pragma: no cover - Windows only
    """Start ``cmd`` suspended (with ``token`` when given), put it into a new job with the limits,
    resume it. Returns a :class:`Child`; raises OSError with a Chinese message."""
    import _winapi
    import io
    import msvcrt
    import subprocess
    k = ctypes.WinDLL("kernel32", use_last_error=True)
    a = ctypes.WinDLL("advapi32", use_last_error=True)
    vp = ctypes.c_void_p
    k.CreateJobObjectW.restype = vp
    k.InitializeProcThreadAttributeList.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_size_t)]
    k.UpdateProcThreadAttribute.argtypes = [vp, ctypes.c_uint32, ctypes.c_size_t, vp, ctypes.c_size_t, vp, vp]
    k.DeleteProcThreadAttributeList.argtypes = [vp]
    k.ResumeThread.argtypes = [vp]
    k.ResumeThread.restype = ctypes.c_uint32
    k.AssignProcessToJobObject.argtypes = [vp, vp]
    k.SetInformationJobObject.argtypes = [vp, ctypes.c_int, vp, ctypes.c_uint32]
    k.TerminateProcess.argtypes = [vp, ctypes.c_uint32]
    k.CreateProcessW.argtypes = [ctypes.c_wchar_p, ctypes.c_wchar_p, vp, vp, ctypes.c_int, ctypes.c_uint32,
                                 ctypes.c_wchar_p, ctypes.c_wchar_p, vp, vp]
    a.CreateProcessAsUserW.argtypes = [vp] + k.CreateProcessW.argtypes

    def fail(what):
        return OSError("%s（错误 %d）" % (what, ctypes.get_last_error()))

    job = k.CreateJobObjectW(None, None)
    if not job:
        raise fail("无法创建作业对象")
    info = limits(memory, cpu_seconds)
    if not k.SetInformationJobObject(job, JobObjectExtendedLimitInformation, ctypes.byref(info), ctypes.sizeof(info)):
        err = fail("无法设置作业对象的限制")
        _winapi.CloseHandle(job)
        raise err
    ui = JOBOBJECT_BASIC_UI_RESTRICTIONS(UI_LIMITS)
    k.SetInformationJobObject(job, JobObjectBasicUIRestrictions, ctypes.byref(ui), ctypes.sizeof(ui))

    cur = _winapi.GetCurrentProcess()
    ours, theirs = [], []
    for parent_reads in (False, True, True):          # stdin (we write), stdout, stderr
        r, w = _winapi.CreatePipe(None, 0)
        mine, child = (r, w) if parent_reads else (w, r)
        dup = _winapi.DuplicateHandle(cur, child, cur, 0, True, _winapi.DUPLICATE_SAME_ACCESS)
        _winapi.CloseHandle(child)
        ours.append(mine)
        theirs.append(dup)
    size = ctypes.c_size_t(0)
    k.InitializeProcThreadAttributeList(None, 1, 0, ctypes.byref(size))
    attrs = ctypes.create_string_buffer(size.value)
    if not k.InitializeProcThreadAttributeList(attrs, 1, 0, ctypes.byref(size)):
        raise fail("无法准备子进程属性")
    handles = (vp * 3)(*theirs)
    try:
        if not k.UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles,
                                           ctypes.sizeof(handles), None, None):
            raise fail("无法设置子进程继承的句柄")
        si = STARTUPINFOEXW()
        si.StartupInfo.cb = ctypes.sizeof(si)
        si.StartupInfo.dwFlags = STARTF_USESTDHANDLES
        si.StartupInfo.hStdInput, si.StartupInfo.hStdOutput, si.StartupInfo.hStdError = theirs
        si.lpAttributeList = ctypes.cast(attrs, vp)
        pi = PROCESS_INFORMATION()
        flags = (CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT
                 | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW)
        line = subprocess.list2cmdline(cmd)
        block = environment_block(env)
        ok = False
        if token:
            ok = a.CreateProcessAsUserW(vp(token), None, line, None, None, True, flags, block, cwd,
                                        ctypes.byref(si), ctypes.byref(pi))
            if not ok:
                token_detail = "受限令牌没能用上（错误 %d），脚本以普通令牌运行" % ctypes.get_last_error()
        if not ok:
            ok = k.CreateProcessW(None, line, None, None, True, flags, block, cwd, ctypes.byref(si), ctypes.byref(pi))
        if not ok:
            raise fail("无法启动 Python 解释器")
    except BaseException:
        for h in ours + [job]:
            _winapi.CloseHandle(h)
        raise
    finally:
        k.DeleteProcThreadAttributeList(attrs)
        for h in theirs:
            _winapi.CloseHandle(h)
    if not k.AssignProcessToJobObject(job, pi.hProcess):
        err = fail("无法把脚本进程放进作业对象")
        k.TerminateProcess(pi.hProcess, 1)
        for h in ours + [job, pi.hProcess, pi.hThread]:
            _winapi.CloseHandle(h)
        raise err
    k.ResumeThread(pi.hThread)
    _winapi.CloseHandle(pi.hThread)
    stdin = io.open(msvcrt.open_osfhandle(ours[0], 0), "wb", buffering=0)
    stdout = io.open(msvcrt.open_osfhandle(ours[1], 0), "rb")
    stderr = io.open(msvcrt.open_osfhandle(ours[2], 0), "rb")
    return Child(pi.dwProcessId, pi.hProcess, job, stdin, stdout, stderr, token_detail)


def describe():   # pragma: no cover - Windows only
    """From inside the job: (in a job?, detail) read with ``QueryInformationJobObject(NULL, ...)``."""
    k = ctypes.WinDLL("kernel32", use_last_error=True)
    k.GetCurrentProcess.restype = ctypes.c_void_p
    injob = ctypes.c_int(0)
    if not k.IsProcessInJob(ctypes.c_void_p(k.GetCurrentProcess()), None, ctypes.byref(injob)) or not injob.value:
        return False, "不在作业对象里"
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    if not k.QueryInformationJobObject(None, JobObjectExtendedLimitInformation, ctypes.byref(info),
                                       ctypes.sizeof(info), None):
        return True, "作业对象（由 run_python 持有，限制读不出：错误 %d）" % ctypes.get_last_error()
    basic = info.BasicLimitInformation
    parts = []
    if basic.LimitFlags & JOB_OBJECT_LIMIT_ACTIVE_PROCESS:
        parts.append("不能启动子进程" if basic.ActiveProcessLimit <= 1 else "最多 %d 个进程" % basic.ActiveProcessLimit)
    if basic.LimitFlags & JOB_OBJECT_LIMIT_PROCESS_MEMORY:
        parts.append("内存上限 %d MiB" % (info.ProcessMemoryLimit >> 20))
    if basic.LimitFlags & JOB_OBJECT_LIMIT_PROCESS_TIME:
        parts.append("CPU 时间上限 %d 秒" % (basic.PerProcessUserTimeLimit // 10 ** 7))
    return True, "作业对象（由 run_python 持有，脚本进程里没有它的句柄）：" + ("，".join(parts) or "限制未知")
