"""A file another program holds open: short retries for passing holds, a clear answer for Excel/WPS.

Why: on Windows a file open in Excel or WPS cannot be replaced (they open it without
FILE_SHARE_DELETE), and antivirus scanners, the search indexer and OneDrive hold files for a
moment after every change. The first case must end at once with "close it in Excel/WPS" and the
user's file untouched; the second must not fail at all. So:

- :func:`check_replaceable` asks the kernel before anything is written or backed up: it opens the
  target for DELETE with every sharing flag, which fails with a sharing violation exactly when a
  program holds it the way Excel does. It retries briefly (:data:`TRIES` tries over about
  :data:`TOTAL_WAIT` seconds) so a scanner's hold passes;
- :func:`replace` is ``os.replace`` with the same short retry for the rest of the window;
- both end in the Chinese answer of :func:`held_error` (WinError 32/33: "可能正在 Excel/WPS 中打开";
  WinError 5: the same, or read-only / no permission);
- :func:`hide` marks our temp file hidden so Explorer does not show ``.xla-….tmp`` beside the
  user's file while it is written, and :func:`unhide_like` gives it the old file's attributes
  back just before the replace (a replace keeps the new file's attributes).

Off Windows every function is the plain operation (POSIX has no sharing modes).
"""
import os
import time

from ..errors import ToolError, os_error

IS_WINDOWS = os.name == "nt"
TRIES = 5
TOTAL_WAIT = 2.0
_DELAYS = (0.1, 0.25, 0.5, 1.0)           # between the TRIES attempts: about TOTAL_WAIT seconds in all
SHARING = (32, 33)                        # ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
ACCESS_DENIED = 5
_HIDDEN, _NORMAL = 0x2, 0x80
# Attributes SetFileAttributesW can set (others, such as compressed or encrypted, are not settable).
_SETTABLE = 0x1 | 0x2 | 0x4 | 0x20 | 0x100 | 0x1000 | 0x2000


def winerror(exc):
    return getattr(exc, "winerror", None)


def held_error(exc, path):
    """The Chinese error for a target another program holds (WinError 32/33/5), else the usual
    translation of ``exc``."""
    code = winerror(exc)
    name = os.path.basename(path)
    if code in SHARING:
        return ToolError("「%s」正被另一个程序占用，无法替换：文件可能正在 Excel/WPS 中打开，请先关闭它再试"
                         "（也可能是杀毒软件或 OneDrive 正在同步，稍等片刻再试）。原文件没有改动" % name)
    if code == ACCESS_DENIED:
        return ToolError("无法替换「%s」（拒绝访问）：文件可能正在 Excel/WPS 中打开，请先关闭它再试；"
                         "或文件是只读的/没有权限，请检查文件属性和所在文件夹的权限。原文件没有改动" % name)
    return os_error(exc, path, "写入")


def _retry(action, retry_on, sleep=time.sleep):
    """``action()`` retried while it fails with a WinError in ``retry_on`` (at most :data:`TRIES`
    tries); the last error is raised."""
    for attempt in range(TRIES):
        try:
            return action()
        except OSError as exc:
            if winerror(exc) not in retry_on or attempt == TRIES - 1:
                raise
            sleep(_DELAYS[min(attempt, len(_DELAYS) - 1)])


def check_replaceable(path):
    """Raise :func:`held_error` when another program holds ``path`` so that it cannot be replaced
    (Windows: open for DELETE with full sharing fails with a sharing violation). Passing holds are
    waited out. Nothing happens off Windows or when ``path`` does not exist."""
    if not IS_WINDOWS or not os.path.isfile(path):
        return
    try:  # pragma: no cover - Windows only
        _retry(lambda: _probe_delete(path), SHARING)
    except OSError as exc:  # pragma: no cover - Windows only
        if winerror(exc) in SHARING:
            raise held_error(exc, path)
        # anything else (no DELETE right on a share...) is left to the replace, which says it


def _probe_delete(path):  # pragma: no cover - Windows only
    import ctypes
    from ctypes import wintypes
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    k32.CreateFileW.restype = wintypes.HANDLE
    k32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p,
                                wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE]
    k32.CloseHandle.argtypes = [wintypes.HANDLE]
    # DELETE | FILE_READ_ATTRIBUTES; FILE_SHARE_READ|WRITE|DELETE; OPEN_EXISTING
    handle = k32.CreateFileW(path, 0x00010000 | 0x80, 7, None, 3, 0x80, None)
    if handle in (None, ctypes.c_void_p(-1).value):
        raise ctypes.WinError(ctypes.get_last_error())
    k32.CloseHandle(handle)


def replace(src, dst):
    """``os.replace(src, dst)``; on Windows sharing violations and access denials of a moment
    (scanners, the indexer, OneDrive) are retried, a lasting one is :func:`held_error`."""
    if not IS_WINDOWS:
        os.replace(src, dst)
        return
    try:  # pragma: no cover - Windows only
        _retry(lambda: os.replace(src, dst), SHARING + (ACCESS_DENIED,))
    except OSError as exc:  # pragma: no cover - Windows only
        if winerror(exc) in SHARING + (ACCESS_DENIED,):
            raise held_error(exc, dst)
        raise


def _set_attributes(path, attrs):  # pragma: no cover - Windows only
    try:
        import ctypes
        from ctypes import wintypes
        k32 = ctypes.WinDLL("kernel32", use_last_error=True)
        k32.SetFileAttributesW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD]
        return bool(k32.SetFileAttributesW(path, attrs))
    except Exception:                    # noqa: BLE001 - attributes are cosmetic
        return False


def hide(path):
    """Mark our temp file hidden on Windows (Explorer shows no ``.xla-….tmp`` beside the user's file)."""
    if IS_WINDOWS:  # pragma: no cover - Windows only
        _set_attributes(path, _HIDDEN)


def unhide_like(path, old_stat=None):
    """Give the temp file the attributes the replaced file had (hidden only if it was), or plain
    ones for a new file: the replace keeps the temp file's attributes."""
    if IS_WINDOWS:  # pragma: no cover - Windows only
        attrs = getattr(old_stat, "st_file_attributes", 0) & _SETTABLE & ~0x1 if old_stat is not None else 0
        _set_attributes(path, attrs or _NORMAL)
