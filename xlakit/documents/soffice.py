"""Finding LibreOffice's ``soffice`` and running it so that a timeout stops all of it.

Why its own module: both halves differ by OS and both were wrong on Windows.

Finding. The host hands a tool only PATH, HOME and a few system variables (no ``ProgramFiles``),
and Chinese users often install to ``D:\\`` or another drive, so looking only under
``C:\\Program Files*`` missed real installs. On Windows the order is: ``XLA_SOFFICE`` (tests),
PATH, the registry (``App Paths\\soffice.exe``, then ``SOFTWARE\\LibreOffice\\UNO\\InstallPath``,
both hives and both registry views), then every fixed drive's ``Program Files*`` and top-level
``LibreOffice*`` folders.

Running. On Windows ``soffice.exe`` is a launcher: the work is done by its child ``soffice.bin``,
so killing the launcher on timeout left ``soffice.bin`` running (and holding the profile and the
file). The process is started suspended, put into a Job object with KILL_ON_JOB_CLOSE, then
resumed: everything it starts is in the job, a timeout terminates the job, and if the tool itself
is killed the job's last handle closes and Windows ends the tree. ``taskkill /T`` is the fallback
when a job cannot be made. On POSIX the process gets its own session and the group is killed.
"""
import glob
import os
import shutil
import signal
import string
import subprocess
import sys

EXE = "soffice.exe"


def find_soffice():
    """The soffice program, or None."""
    forced = os.environ.get("XLA_SOFFICE")
    if forced:
        return None if forced == "none" else forced
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    if sys.platform == "win32":
        places = windows_candidates()
    elif sys.platform == "darwin":
        places = ["/Applications/LibreOffice.app/Contents/MacOS/soffice",
                  os.path.expanduser("~/Applications/LibreOffice.app/Contents/MacOS/soffice")]
    else:
        places = ["/usr/lib/libreoffice/program/soffice", "/usr/lib64/libreoffice/program/soffice",
                  "/snap/bin/libreoffice"] + sorted(glob.glob("/opt/libreoffice*/program/soffice"))
    return next((p for p in places if p and os.path.isfile(p) and os.access(p, os.X_OK)), None)


def windows_candidates():  # pragma: no cover - Windows only (run in the Windows lane)
    """Where soffice.exe may be on Windows, best first (see the module docstring)."""
    out = _registry_candidates()
    for var in ("ProgramFiles", "ProgramFiles(x86)", "ProgramW6432"):
        if os.environ.get(var):
            out.append(os.path.join(os.environ[var], "LibreOffice", "program", EXE))
    for drive in fixed_drives():
        root = drive + ":\\"
        for pattern in ("Program Files*\\LibreOffice*\\program\\", "LibreOffice*\\program\\",
                        "Program Files*\\*\\LibreOffice*\\program\\"):
            out += sorted(glob.glob(root + pattern + EXE))
    return out


def _registry_candidates():  # pragma: no cover - Windows only
    try:
        import winreg
    except ImportError:
        return []
    out = []
    views = (0, getattr(winreg, "KEY_WOW64_64KEY", 0), getattr(winreg, "KEY_WOW64_32KEY", 0))
    for hive in (winreg.HKEY_CURRENT_USER, winreg.HKEY_LOCAL_MACHINE):
        for view in views:
            app = _reg_value(winreg, hive, r"SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\soffice.exe", view)
            if app:
                out.append(app.strip('"'))
            uno = _reg_value(winreg, hive, r"SOFTWARE\LibreOffice\UNO\InstallPath", view)
            if uno:
                out.append(os.path.join(uno.strip('"'), EXE))
    return out


def _reg_value(winreg, hive, key, view):  # pragma: no cover - Windows only
    try:
        with winreg.OpenKey(hive, key, 0, winreg.KEY_READ | view) as handle:
            value, _kind = winreg.QueryValueEx(handle, "")
            return os.path.expandvars(value) if isinstance(value, str) and value else None
    except OSError:
        return None


def fixed_drives():  # pragma: no cover - Windows only
    """Letters of the local fixed disks (no floppy, CD or network drive is touched)."""
    try:
        import ctypes
        k32 = ctypes.windll.kernel32
        # GetDriveTypeW reads no media (a missing drive is DRIVE_NO_ROOT_DIR); asked for every letter
        # since GetLogicalDrives can lag behind a drive mapped a moment ago
        return [c for c in string.ascii_uppercase if k32.GetDriveTypeW(c + ":\\") == 3]       # DRIVE_FIXED
    except (AttributeError, OSError):
        return ["C"]


class _Job:  # pragma: no cover - Windows only
    """A Job object that kills every process in it when closed or terminated."""

    def __init__(self):
        import ctypes
        from ctypes import wintypes
        self.ctypes = ctypes
        self.k32 = ctypes.WinDLL("kernel32", use_last_error=True)
        self.k32.CreateJobObjectW.restype = wintypes.HANDLE
        self.handle = self.k32.CreateJobObjectW(None, None)
        if not self.handle:
            raise OSError("CreateJobObject failed")

        class Basic(ctypes.Structure):
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                        ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                        ("SchedulingClass", wintypes.DWORD)]

        class Extended(ctypes.Structure):
            _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", ctypes.c_uint64 * 6),
                        ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                        ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

        info = Extended()
        info.BasicLimitInformation.LimitFlags = 0x2000          # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not self.k32.SetInformationJobObject(wintypes.HANDLE(self.handle), 9, ctypes.byref(info),
                                                ctypes.sizeof(info)):
            self.close()
            raise OSError("SetInformationJobObject failed")

    def adopt(self, proc):
        from ctypes import wintypes
        return bool(self.k32.AssignProcessToJobObject(wintypes.HANDLE(self.handle), wintypes.HANDLE(int(proc._handle))))

    def terminate(self):
        from ctypes import wintypes
        if self.handle:
            self.k32.TerminateJobObject(wintypes.HANDLE(self.handle), 1)

    def close(self):
        from ctypes import wintypes
        if self.handle:
            self.k32.CloseHandle(wintypes.HANDLE(self.handle))
            self.handle = None


def _resume(proc):  # pragma: no cover - Windows only
    import ctypes
    from ctypes import wintypes
    ctypes.WinDLL("ntdll").NtResumeProcess(wintypes.HANDLE(int(proc._handle)))


def run(cmd, timeout, cwd=None, env=None):
    """Run ``cmd`` (stdin closed, output captured) and return ``(returncode, stdout, stderr)``.
    Past ``timeout`` seconds the whole process tree is killed and ``subprocess.TimeoutExpired``
    raised. Raises OSError when it cannot start."""
    if os.name != "nt":
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            _reap(proc)
            raise
        return proc.returncode, out, err
    return _run_windows(cmd, timeout, cwd, env)  # pragma: no cover


def _run_windows(cmd, timeout, cwd, env):  # pragma: no cover - Windows only
    job = None
    try:
        job = _Job()
    except (OSError, AttributeError, ValueError):
        job = None
    flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "CREATE_NO_WINDOW", 0)
    suspended = 0x4 if job is not None else 0                       # CREATE_SUSPENDED
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd, env=env, creationflags=flags | suspended)
    try:
        if job is not None:
            if not job.adopt(proc):
                job.close()
                job = None
            _resume(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc, job)
            _reap(proc)
            raise
        return proc.returncode, out, err
    finally:
        if job is not None:
            job.close()            # KILL_ON_JOB_CLOSE: nothing it started outlives the conversion


def kill_tree(proc, job=None):  # pragma: no cover - Windows only
    """Kill ``proc`` and all it started: through its job, else as the host kills a tool's tree
    (``taskkill /T``, :func:`xlakit.host.kill_tree`)."""
    if job is None:
        from ..host import kill_tree as host_kill_tree
        host_kill_tree(proc)
        return
    job.terminate()
    try:
        proc.kill()
    except OSError:
        pass


def _reap(proc):
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass
