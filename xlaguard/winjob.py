"""Windows: a Job object for the script's process, through ctypes (the users' main platform has no
Landlock and no seccomp; this is the OS-enforced part available without installing anything).

The guard puts its own process into a new job before the script runs (nested jobs work from
Windows 8 on), with:

- ``ActiveProcessLimit = 1``: the kernel refuses every ``CreateProcess`` from the script (the audit
  hook refuses them too, but native code could call the API directly);
- ``ProcessMemoryLimit`` = :data:`xlaguard.seccomp.MEMORY_LIMIT`: an allocation beyond it fails
  (Python raises ``MemoryError``, answered as "内存超过上限");
- ``KILL_ON_JOB_CLOSE`` and ``DIE_ON_UNHANDLED_EXCEPTION``: nothing of the job outlives the guard,
  and a crash does not wait on an error dialog;
- UI restrictions: no access to other processes' windows (USER handles), no clipboard writes or
  reads, no system parameter / display / desktop / global atom changes, no ``ExitWindows``.

Not done (documented in rules.md): a low-integrity token (``CreateRestrictedToken`` + integrity
SID) would let the kernel refuse writes outside low-integrity folders, but it has to be applied to a
process before it starts (run_python would start the guard with ``CreateProcessAsUser``), and the
workspace would need a low-integrity label; it cannot be exercised on the Linux CI, so it is a
design note, not code. The structures below are built and checked on every platform (their sizes
and offsets are unit-tested against the Windows SDK layout on 64-bit)."""
import ctypes

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


def limits(memory):
    """The extended limit record the job gets (built the same way on every platform)."""
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = LIMIT_FLAGS
    info.BasicLimitInformation.ActiveProcessLimit = 1
    info.ProcessMemoryLimit = memory
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
