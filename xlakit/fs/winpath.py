"""Windows path forms and the real known folders, for the writers' deny list.

Why this exists: on Windows one file has many spellings, and the deny list compares text. The
Startup folder is also ``\\\\?\\C:\\Users\\u\\AppData\\...\\Startup``, ``\\\\localhost\\C$\\Users\\...``,
``\\\\.\\C:\\...``, ``C:/users/U/appdata/.../Startup.\\x.js`` (Windows drops trailing dots and spaces
of a name) or ``C:\\Users\\u\\APPDAT~1\\...`` (an 8.3 short name). A rule that matches only the first
spelling is no rule. So every path is first turned into one comparable drive path
(:func:`canonical`, pure string logic on ``ntpath``, testable on any system), forms that cannot be
compared or written safely are refused outright (:func:`refusal`: data streams, device names,
device-namespace paths, other machines' administrative shares, drive-relative paths), and on
Windows the kernel's own answer for where the path leads (:func:`final_path`, junctions and
symbolic links followed by ``GetFinalPathNameByHandleW``) is checked as well.

The host passes only ``PATH`` and ``HOME``: no ``APPDATA``, ``ProgramFiles`` or ``OneDrive``. So the
folders the rules (and users: "桌面", "文档") name are asked from Windows itself through
``SHGetKnownFolderPath`` (:func:`known_folders`), which knows a Desktop moved to ``D:\\桌面`` or into
OneDrive; the environment and the usual defaults are only the fallback when the call fails.

Nothing here touches the disk except :func:`final_path`, :func:`long_path` and :func:`known_folders`,
which do something only on Windows. ``os`` and ``ntpath`` are module globals on purpose: the
run_python guard gives its private copy of the deny rule private snapshots of them.
"""
import ntpath
import os
import re

IS_WINDOWS = os.name == "nt"
if IS_WINDOWS:  # pragma: no cover - imported here, never from inside the guard's audit hook
    import nt
else:
    nt = None

# Device names Win32 maps to devices in any folder and with any extension ("con.txt", "COM1 .log").
# The superscript digits count too: Windows treats COM¹ and LPT³ as COM1 and LPT3.
_DEVICES = frozenset(["con", "prn", "aux", "nul", "conin$", "conout$", "clock$"] +
                     ["com%s" % d for d in "0123456789\u00b9\u00b2\u00b3"] +
                     ["lpt%s" % d for d in "0123456789\u00b9\u00b2\u00b3"])
_DRIVE_ABS = re.compile(r"^([A-Za-z]):(\\|$)")
_DRIVE_REL = re.compile(r"^[A-Za-z]:(?!\\)")
_SHORT = re.compile(r"~\d")
# Host names that mean "this computer" in a UNC path (\\localhost\C$ is the C: drive).
_LOOPBACK = re.compile(r"^(localhost|127(\.\d{1,3}){3}|::1|\[::1\]|0--1\.ipv6-literal\.net|\.|\?)$", re.I)
_PREFIXES = ("\\\\?\\", "\\\\.\\", "\\??\\")
_CACHE = {}


def _computer_names():
    """This computer's names (DNS and NetBIOS forms), lower case: ``\\\\<name>\\C$`` is also C:.
    Asked once per process: the run_python guard calls the deny rule from inside its audit hook,
    where asking again (an audited socket call) would re-enter the hook."""
    if "names" in _CACHE:
        return _CACHE["names"]
    names = set()
    try:
        import socket
        host = socket.gethostname()
    except Exception:                 # noqa: BLE001 - no name, no match
        host = ""
    for var in ("COMPUTERNAME",):
        if os.environ.get(var):
            names.add(os.environ[var].lower())
    if host:
        names.update({host.lower(), host.split(".")[0].lower(), host.split(".")[0][:15].lower()})
    _CACHE["names"] = frozenset(names)
    return _CACHE["names"]


def _split_form(path):
    """``path`` with backslashes -> (kind, rest): "drive" ``C:\\...``, "unc" ``host\\share\\...``,
    "device" (``\\\\.\\PhysicalDrive0``, ``\\\\?\\Volume{...}``: no drive to compare), "relative"."""
    low = path.lower()
    for prefix in _PREFIXES:
        if low.startswith(prefix):
            rest = path[len(prefix):].lstrip("\\")
            if rest.lower().startswith("unc\\"):
                return "unc", rest[4:].lstrip("\\")
            if _DRIVE_ABS.match(rest) or re.match(r"^[A-Za-z]:$", rest):
                return "drive", rest
            return "device", rest
    if path.startswith("\\\\"):
        return "unc", path.lstrip("\\")
    if _DRIVE_ABS.match(path):
        return "drive", path
    return "relative", path


def _clean_parts(parts):
    """Win32 drops trailing dots and spaces of every name (``Startup.`` is ``Startup``)."""
    out = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            out.append(part)
            continue
        stripped = part.rstrip(". ")
        out.append(stripped if stripped else part)
    return out


def canonical(path, computer_names=None):
    """One comparable spelling of a Windows path (case kept, backslashes), never raising.

    ``\\\\?\\`` / ``\\\\.\\`` / ``\\??\\`` prefixes go, ``\\\\?\\UNC\\host\\share`` becomes
    ``\\\\host\\share``, an administrative share of this computer (``\\\\localhost\\C$``,
    ``\\\\127.0.0.1\\c$``, ``\\\\<computer name>\\C$``) becomes its drive, forward slashes become
    backslashes, trailing dots and spaces of each name go, ``..`` is resolved after the prefix.
    A path this cannot map (a device path, a relative one) comes back normalised but otherwise as is:
    :func:`refusal` says whether it may be written at all."""
    if not isinstance(path, str) or not path:
        return path
    text = path.replace("/", "\\")
    if re.match(r"^\\[A-Za-z]:\\", text):      # what is left of file:///C:/...
        text = text[1:]
    kind, rest = _split_form(text)
    if kind == "unc":
        pieces = [p for p in rest.split("\\") if p]
        if len(pieces) >= 2:
            host, share = pieces[0].rstrip("."), pieces[1]
            names = _computer_names() if computer_names is None else {n.lower() for n in computer_names}
            drive = re.match(r"^([A-Za-z])\$$", share)
            if drive and (_LOOPBACK.match(host) or host.lower() in names):
                kind, rest = "drive", drive.group(1).upper() + ":\\" + "\\".join(pieces[2:])
            else:
                tail = _clean_parts(pieces[2:])
                return ntpath.normpath("\\\\%s\\%s\\%s" % (host, share, "\\".join(tail))).rstrip("\\") \
                    if tail else "\\\\%s\\%s" % (host, share)
        else:
            return "\\\\" + rest
    if kind == "drive":
        drive, tail = rest[:2], rest[2:]
        parts = _clean_parts(tail.split("\\"))
        return ntpath.normpath(drive.upper() + "\\" + "\\".join(parts))
    if kind == "device":
        return text
    parts = _clean_parts(rest.split("\\"))
    lead = "\\" if rest.startswith("\\") else ""
    return ntpath.normpath(lead + "\\".join(parts)) if parts else rest


def comparable(path, computer_names=None):
    """:func:`canonical` in the deny list's form: forward slashes, lower case, no trailing slash."""
    text = canonical(path, computer_names).replace("\\", "/")
    if len(text) > 3:
        text = text.rstrip("/")
    return text.lower()


def device_name(part):
    """True when a file or folder name is a Windows device (``CON``, ``nul.txt``, ``COM¹``, ``LPT1 .x``)."""
    return part.split(".")[0].rstrip(" ").lower() in _DEVICES or part.rstrip(". ").lower() in _DEVICES


def refusal(path, computer_names=None, short_names_expanded=False):
    """Why ``path`` (as the model sent it, absolute) must not be written on Windows, or None.

    Refused outright, whatever the folder: alternate data streams (``a.txt:x``, ``a.js::$DATA``,
    the stream is invisible in Explorer and can carry a script), device names (``CON``, ``nul.txt``,
    ``COM¹``: writing them talks to a device, the error would be nonsense), paths of the device
    namespace (``\\\\.\\PhysicalDrive0``, ``\\\\?\\Volume{…}``, ``\\\\?\\GLOBALROOT``: no drive path to check),
    administrative shares of other computers (``\\\\host\\C$``, ``ADMIN$``: possibly this one under
    another name), other shares of this computer (they can point anywhere), drive-relative paths
    (``C:x``: relative to a per-drive folder nobody sees), names that are only dots, and 8.3 short
    names (``PROGRA~1``) that could not be expanded to their long form."""
    if not isinstance(path, str) or not path:
        return None
    text = path.replace("/", "\\")
    if re.match(r"^\\[A-Za-z]:\\", text):      # what is left of file:///C:/...
        text = text[1:]
    kind, rest = _split_form(text)
    if kind == "device":
        return ("这是 Windows 的设备或卷路径（%s），不是普通的文件夹路径，不能用来保存文件。请写成 C:\\… 这样的普通路径"
                % path)
    if kind == "unc":
        pieces = [p for p in rest.split("\\") if p]
        if len(pieces) >= 2:
            host, share = pieces[0].rstrip("."), pieces[1]
            names = _computer_names() if computer_names is None else {n.lower() for n in computer_names}
            local = bool(_LOOPBACK.match(host)) or host.lower() in names
            admin = bool(re.match(r"^([A-Za-z]\$|admin\$|ipc\$|print\$)$", share, re.I))
            if admin and not (local and re.match(r"^[A-Za-z]\$$", share)):
                return "这是管理共享（%s），不用来保存文件。请写成本机的 C:\\… 路径或普通共享文件夹的路径" % share
            if local and not admin:
                return ("这是本机的共享文件夹路径（\\\\%s\\%s），它可能指向任何位置。请直接写本机路径（如 C:\\…）"
                        % (host, share))
            parts = pieces[2:]
        else:
            parts = []
    elif kind == "drive":
        parts = rest[2:].split("\\")
    else:
        if _DRIVE_REL.match(rest):
            return ("「%s」是相对于 %s 盘“当前文件夹”的写法，指向哪里看不出来。请写完整路径，如 %s\\…"
                    % (path, rest[:2], rest[:2]))
        parts = rest.split("\\")
    for part in parts:
        if not part or part in (".", ".."):
            continue
        if ":" in part:
            return ("文件名「%s」里有冒号：Windows 会把它当作隐藏的“数据流”写进文件里（资源管理器看不到），"
                    "工具不写数据流。请换一个不含冒号的文件名" % part)
        if part.strip(". ") == "":
            return "路径里的「%s」只由点或空格组成，Windows 会把它改成别的名字。请换一个正常的名字" % part
        if device_name(part):
            return ("「%s」是 Windows 的设备名（CON、PRN、AUX、NUL、COM1-9、LPT1-9，带扩展名也一样），"
                    "不能当文件名或文件夹名：写它会写到设备上。请换一个名字" % part)
        if not short_names_expanded and _SHORT.search(part):
            return ("路径里的「%s」像是 Windows 的 8.3 短文件名（如 PROGRA~1），它代表的真实文件夹无法确认。"
                    "请写完整的文件夹名" % part)
    return None


# ---------------------------------------------------------------------------------------------
# The kernel's answer (Windows only)

def _existing_split(path):
    """(deepest existing ancestor, the names below it) of an absolute path."""
    head, tail = path, []
    while head and not os.path.lexists(head):
        parent, name = ntpath.split(head)
        if parent == head:
            return "", []
        tail.insert(0, name)
        head = parent
    return head, tail


def final_path(path):
    """Where ``path`` really leads on Windows: the deepest existing ancestor opened by the kernel
    (``GetFinalPathNameByHandleW`` with FILE_FLAG_BACKUP_SEMANTICS, so junctions, symbolic links,
    8.3 names and ``subst`` drives resolve as the kernel resolves them) plus the missing rest,
    in :func:`canonical` form. None off Windows or when it cannot be asked.

    CPython's own wrapper (``nt._getfinalpathname``, what ``os.path.realpath`` uses) is preferred:
    it raises no audit event, so the run_python guard can call this from inside its hook."""
    if not IS_WINDOWS:
        return None
    head, tail = _existing_split(path)
    if not head:
        return None
    try:
        final = nt._getfinalpathname(head)
    except AttributeError:
        final = _final_by_ctypes(head)
    except (OSError, ValueError):
        return None
    if not final:
        return None
    return canonical(ntpath.join(final, *tail) if tail else final)


def _final_by_ctypes(path):  # pragma: no cover - Windows only, when nt lacks the wrapper
    try:
        import ctypes
        from ctypes import wintypes
        k32 = ctypes.WinDLL("kernel32", use_last_error=True)
        k32.CreateFileW.restype = wintypes.HANDLE
        k32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p,
                                    wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE]
        k32.GetFinalPathNameByHandleW.argtypes = [wintypes.HANDLE, wintypes.LPWSTR, wintypes.DWORD, wintypes.DWORD]
        k32.CloseHandle.argtypes = [wintypes.HANDLE]
        handle = k32.CreateFileW(path, 0x80, 7, None, 3, 0x02000000, None)   # READ_ATTRIBUTES, share all, BACKUP_SEMANTICS
        if handle in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            buf = ctypes.create_unicode_buffer(32768)
            n = k32.GetFinalPathNameByHandleW(handle, buf, 32768, 0)
            return buf.value if 0 < n < 32768 else None
        finally:
            k32.CloseHandle(handle)
    except Exception:                  # noqa: BLE001 - no answer is "cannot ask"
        return None


def long_path(path):
    """``path`` with 8.3 short names (``PROGRA~1``) of its existing part expanded by
    ``GetLongPathNameW``; unchanged off Windows or when Windows cannot say. Returns (path, expanded)."""
    if not IS_WINDOWS or "~" not in path:   # PROGRA~1 on Windows, PROG~FBU under Wine
        return path, True
    head, tail = _existing_split(path)
    if not head:
        return path, not any(_SHORT.search(p) for p in ntpath.normpath(path).split("\\"))
    try:  # pragma: no cover - Windows only
        import ctypes
        from ctypes import wintypes
        k32 = ctypes.WinDLL("kernel32", use_last_error=True)
        k32.GetLongPathNameW.argtypes = [wintypes.LPCWSTR, wintypes.LPWSTR, wintypes.DWORD]
        buf = ctypes.create_unicode_buffer(32768)
        n = k32.GetLongPathNameW(head, buf, 32768)
        if not 0 < n < 32768:
            return path, False
        return (ntpath.join(buf.value, *tail) if tail else buf.value), True
    except Exception:                  # noqa: BLE001
        return path, False


# ---------------------------------------------------------------------------------------------
# Known folders

# FOLDERID_* of the folders people name and the folders the deny list guards.
FOLDER_IDS = {
    "desktop": "B4BFCC3A-DB2C-424C-B029-7FE99A87C641",
    "documents": "FDD39AD0-238F-46AF-ADB4-6C85480369C7",
    "downloads": "374DE290-123F-4565-9164-39C4925E467B",
    "pictures": "33E28130-4E1E-4676-835A-98395C3BC3BB",
    "music": "4BD8D571-6D19-48D3-BE97-422220080E43",
    "videos": "18989B1D-99B5-455B-841C-AB7C74E4DDFC",
    "roaming_app_data": "3EB685DB-65F9-4CF6-A03A-E3EF65729F3D",
    "local_app_data": "F1B32785-6FBA-4FCF-9D55-7B8E7F157091",
    "local_app_data_low": "A520A1A4-1780-4FF6-BD18-167343C5AF16",
    "startup": "B97D20BB-F46A-4C97-BA10-5E3608430854",
    "common_startup": "82A5EA35-D9CD-47C5-9629-E15D2F714E6E",
    "program_files": "905E63B6-C1BF-494E-B29C-65B732D3D21A",
    "program_files_x86": "7C5A40EF-A0FB-4BFC-874A-C0F2E0B9FA8E",
    "program_files_x64": "6D809377-6AF0-444B-8957-A3773F02200E",
    "windows": "F38BF404-1D43-42F2-9305-67DE0B28FC23",
    "program_data": "62AB5D82-FDC1-4DC3-A9DD-070D1D495D97",
    "profile": "5E6C858F-0E22-4760-9AFE-EA3317B67173",
}
# The environment variables a full Windows session has for some of them (the host passes none of
# these, a person's own script may): the fallback when the shell cannot be asked.
_ENV_FALLBACK = {
    "roaming_app_data": ("APPDATA",), "local_app_data": ("LOCALAPPDATA",),
    "program_files": ("ProgramW6432", "ProgramFiles"), "program_files_x86": ("ProgramFiles(x86)",),
    "windows": ("SystemRoot", "windir"), "program_data": ("ProgramData", "ALLUSERSPROFILE"),
    "profile": ("USERPROFILE",),
}
_KF_FLAG_DONT_VERIFY = 0x4000      # report the folder even if it is missing; never create it


def _shell_folder(guid):  # pragma: no cover - Windows only
    import ctypes
    import uuid
    from ctypes import wintypes

    class GUID(ctypes.Structure):
        _fields_ = [("d1", ctypes.c_uint32), ("d2", ctypes.c_uint16), ("d3", ctypes.c_uint16),
                    ("d4", ctypes.c_ubyte * 8)]
    gid = GUID.from_buffer_copy(uuid.UUID(guid).bytes_le)
    shell32 = ctypes.WinDLL("shell32")
    ole32 = ctypes.WinDLL("ole32")
    shell32.SHGetKnownFolderPath.argtypes = [ctypes.POINTER(GUID), wintypes.DWORD, wintypes.HANDLE,
                                             ctypes.POINTER(ctypes.c_void_p)]
    shell32.SHGetKnownFolderPath.restype = ctypes.c_long
    ole32.CoTaskMemFree.argtypes = [ctypes.c_void_p]
    out = ctypes.c_void_p()
    hr = shell32.SHGetKnownFolderPath(ctypes.byref(gid), _KF_FLAG_DONT_VERIFY, None, ctypes.byref(out))
    try:
        if hr != 0 or not out.value:
            return None
        return ctypes.wstring_at(out.value) or None
    finally:
        if out.value:
            ole32.CoTaskMemFree(out)


def known_folders():
    """{name: path or None} for :data:`FOLDER_IDS`, asked from Windows once per process
    (``SHGetKnownFolderPath``), else from the environment; {} off Windows."""
    if not IS_WINDOWS:
        return {}
    if "folders" not in _CACHE:
        found = {}
        for name, guid in FOLDER_IDS.items():
            path = None
            try:
                path = _shell_folder(guid)
            except Exception:          # noqa: BLE001 - no shell32 (a server core, Wine without it)
                path = None
            if not path:
                for var in _ENV_FALLBACK.get(name, ()):
                    if os.environ.get(var):
                        path = os.environ[var]
                        break
            found[name] = path
        _CACHE["folders"] = found
    return _CACHE["folders"]


# ---------------------------------------------------------------------------------------------
# The Windows part of the deny list (pure: folders come in as arguments)

_DEFAULT_SYSTEM = ("C:\\Windows", "C:\\Program Files", "C:\\Program Files (x86)", "C:\\ProgramData")
_STARTUP = ("startup", "common_startup")
_APPDATA = ("roaming_app_data", "local_app_data", "local_app_data_low")
_SYSTEM = ("windows", "program_files", "program_files_x86", "program_files_x64", "program_data")


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def deny_reason(norm, folders, env=None):
    """Why the comparable path ``norm`` (see :func:`comparable`) is refused on Windows, or None.

    ``folders`` is :func:`known_folders`' answer (tests pass their own), ``env`` the environment
    for the variables a full session has; the usual default locations always count."""
    env = os.environ if env is None else env
    for key in _STARTUP:
        if folders.get(key) and _inside(norm, comparable(folders[key])):
            return "这是 Windows 开机启动文件夹，放进去的文件会在开机时运行"
    profile = folders.get("profile")
    appdata = [folders.get(k) for k in _APPDATA] + [env.get("APPDATA"), env.get("LOCALAPPDATA")]
    if profile:
        appdata.append(ntpath.join(profile, "AppData"))
    for folder in appdata:
        if folder and _inside(norm, comparable(folder)):
            return "这是 Windows 的程序数据目录 AppData：开机启动项、程序配置都在这里"
    roots = [folders.get(k) for k in _SYSTEM] + list(_DEFAULT_SYSTEM)
    roots += [env.get(v) for v in ("SYSTEMROOT", "WINDIR", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432",
                                    "PROGRAMDATA")]
    for root in roots:
        if root and _inside(norm, comparable(root)):
            return "这是系统文件夹（%s）" % root
    return None
