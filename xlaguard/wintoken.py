"""Windows: the low-integrity token run_python starts the script's process with, and the label that
lets such a process write into the workspace (through ctypes, standard library only).

Why: audit hooks are not a security boundary (native code bypasses them), and Windows has no
Landlock. Mandatory integrity control is the kernel's own write fence: a process at *Low* integrity
cannot open for writing any object labelled higher, and every file or folder without a label counts
as *Medium*. So the launcher (run_python, at the user's normal Medium level) builds a token from its
own with ``CreateRestrictedToken(DISABLE_MAX_PRIVILEGE)`` (every privilege but SeChangeNotify gone)
and the Low integrity SID (S-1-16-4096), and starts the guard with it (``winjob.spawn``). Writes
then succeed only where a Low label allows them: the workspace, which gets the label
``S:(ML;OICI;NW;;;LW)`` (inherited by everything in it, so also the per-run temp folder) from
:func:`grant_low`. The same rule keeps the script from opening the launcher's process (no write-up,
no read-up on processes), so it cannot duplicate the Job handle the launcher holds.

Side effect, stated in rules.md: other Low-integrity programs (sandboxed browser parts) may also write
into the workspace, as they may into ``%LOCALAPPDATA%Low``.

Wine has no integrity levels: the calls succeed or fail harmlessly there and nothing is enforced;
:func:`integrity_level` tells the guard what its token really says."""
import ctypes

SECURITY_MANDATORY_LOW_RID = 0x1000
SECURITY_MANDATORY_MEDIUM_RID = 0x2000
LOW_SID = "S-1-16-4096"
LOW_LABEL_SDDL = "S:(ML;OICI;NW;;;LW)"
DISABLE_MAX_PRIVILEGE = 0x1
SE_GROUP_INTEGRITY = 0x20
TokenIntegrityLevel = 25
TOKEN_QUERY = 0x0008
TOKEN_DUPLICATE = 0x0002
TOKEN_ASSIGN_PRIMARY = 0x0001
TOKEN_ADJUST_DEFAULT = 0x0080
SE_FILE_OBJECT = 1
LABEL_SECURITY_INFORMATION = 0x10


class SID_AND_ATTRIBUTES(ctypes.Structure):
    _fields_ = [("Sid", ctypes.c_void_p), ("Attributes", ctypes.c_uint32)]


class TOKEN_MANDATORY_LABEL(ctypes.Structure):
    _fields_ = [("Label", SID_AND_ATTRIBUTES)]


def _dlls():   # pragma: no cover - Windows only
    advapi = ctypes.WinDLL("advapi32", use_last_error=True)
    kernel = ctypes.WinDLL("kernel32", use_last_error=True)
    vp, u32, b = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
    kernel.GetCurrentProcess.restype = vp
    kernel.CloseHandle.argtypes = [vp]
    kernel.LocalFree.argtypes = [vp]
    kernel.LocalFree.restype = vp
    advapi.OpenProcessToken.argtypes = [vp, u32, ctypes.POINTER(vp)]
    advapi.CreateRestrictedToken.argtypes = [vp, u32, u32, vp, u32, vp, u32, vp, ctypes.POINTER(vp)]
    advapi.ConvertStringSidToSidW.argtypes = [ctypes.c_wchar_p, ctypes.POINTER(vp)]
    advapi.SetTokenInformation.argtypes = [vp, b, vp, u32]
    advapi.GetTokenInformation.argtypes = [vp, b, vp, u32, ctypes.POINTER(u32)]
    advapi.GetLengthSid.argtypes = [vp]
    advapi.GetSidSubAuthorityCount.argtypes = [vp]
    advapi.GetSidSubAuthorityCount.restype = ctypes.POINTER(ctypes.c_ubyte)
    advapi.GetSidSubAuthority.argtypes = [vp, u32]
    advapi.GetSidSubAuthority.restype = ctypes.POINTER(u32)
    advapi.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [ctypes.c_wchar_p, u32,
                                                                           ctypes.POINTER(vp), vp]
    advapi.GetSecurityDescriptorSacl.argtypes = [vp, ctypes.POINTER(b), ctypes.POINTER(vp), ctypes.POINTER(b)]
    advapi.SetNamedSecurityInfoW.argtypes = [ctypes.c_wchar_p, u32, u32, vp, vp, vp, vp]
    advapi.SetNamedSecurityInfoW.restype = u32
    return advapi, kernel


def low_integrity_token():   # pragma: no cover - Windows only
    """A primary token for the script's process: this process's token with every privilege but
    SeChangeNotify removed and the Low integrity label. Returns (handle or None, detail)."""
    advapi, kernel = _dlls()
    vp = ctypes.c_void_p
    mine = vp()
    if not advapi.OpenProcessToken(kernel.GetCurrentProcess(), TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY
                                   | TOKEN_ADJUST_DEFAULT, ctypes.byref(mine)):
        return None, "无法打开本进程的令牌（错误 %d）" % ctypes.get_last_error()
    new = vp()
    try:
        if not advapi.CreateRestrictedToken(mine, DISABLE_MAX_PRIVILEGE, 0, None, 0, None, 0, None, ctypes.byref(new)):
            return None, "无法创建受限令牌（错误 %d）" % ctypes.get_last_error()
    finally:
        kernel.CloseHandle(mine)
    sid = vp()
    if not advapi.ConvertStringSidToSidW(LOW_SID, ctypes.byref(sid)):
        kernel.CloseHandle(new)
        return None, "无法构造低完整性 SID（错误 %d）" % ctypes.get_last_error()
    try:
        label = TOKEN_MANDATORY_LABEL(SID_AND_ATTRIBUTES(sid, SE_GROUP_INTEGRITY))
        if not advapi.SetTokenInformation(new, TokenIntegrityLevel, ctypes.byref(label),
                                          ctypes.sizeof(label) + advapi.GetLengthSid(sid)):
            err = ctypes.get_last_error()
            kernel.CloseHandle(new)
            return None, "无法把令牌降为低完整性（错误 %d）" % err
    finally:
        kernel.LocalFree(sid)
    return new.value, "受限令牌（去掉特权）+ 低完整性"


def has_low_label(folder):   # pragma: no cover - Windows only
    """Does ``folder`` already carry the inheritable Low label (so :func:`grant_low` can skip the
    relabelling, which walks every file below)?"""
    advapi, kernel = _dlls()
    vp = ctypes.c_void_p
    advapi.GetNamedSecurityInfoW.argtypes = [ctypes.c_wchar_p, ctypes.c_uint32, ctypes.c_uint32, vp, vp, vp, vp,
                                             ctypes.POINTER(vp)]
    advapi.GetNamedSecurityInfoW.restype = ctypes.c_uint32
    advapi.ConvertSecurityDescriptorToStringSecurityDescriptorW.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32,
                                                                           ctypes.POINTER(ctypes.c_wchar_p), vp]
    sd = vp()
    if advapi.GetNamedSecurityInfoW(folder, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, None, None, None, None,
                                    ctypes.byref(sd)):
        return False
    try:
        text = ctypes.c_wchar_p()
        if not advapi.ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, 1, LABEL_SECURITY_INFORMATION,
                                                                           ctypes.byref(text), None):
            return False
        found = "ML;OICI;NW;;;LW" in (text.value or "")
        kernel.LocalFree(text)
        return found
    finally:
        kernel.LocalFree(sd)


def grant_low(folder):   # pragma: no cover - Windows only
    """Label ``folder`` Low (no-write-up, inherited by files and folders in it): a Low-integrity
    process may write there. Idempotent; returns (ok, detail)."""
    if has_low_label(folder):
        return True, "%s 已有低完整性写入标签" % folder
    advapi, kernel = _dlls()
    vp = ctypes.c_void_p
    sd = vp()
    if not advapi.ConvertStringSecurityDescriptorToSecurityDescriptorW(LOW_LABEL_SDDL, 1, ctypes.byref(sd), None):
        return False, "无法构造低完整性标签（错误 %d）" % ctypes.get_last_error()
    try:
        present, defaulted = ctypes.c_int(), ctypes.c_int()
        sacl = vp()
        if not advapi.GetSecurityDescriptorSacl(sd, ctypes.byref(present), ctypes.byref(sacl), ctypes.byref(defaulted)):
            return False, "无法读取低完整性标签（错误 %d）" % ctypes.get_last_error()
        err = advapi.SetNamedSecurityInfoW(folder, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, None, None, None, sacl)
        if err:
            return False, "无法给 %s 加低完整性标签（错误 %d）" % (folder, err)
        return True, "已给 %s 加低完整性写入标签" % folder
    finally:
        kernel.LocalFree(sd)


def integrity_level():   # pragma: no cover - Windows only
    """This process's integrity RID (0x1000 Low, 0x2000 Medium...), or None when it cannot be read."""
    advapi, kernel = _dlls()
    tok = ctypes.c_void_p()
    if not advapi.OpenProcessToken(kernel.GetCurrentProcess(), TOKEN_QUERY, ctypes.byref(tok)):
        return None
    try:
        need = ctypes.c_uint32()
        advapi.GetTokenInformation(tok, TokenIntegrityLevel, None, 0, ctypes.byref(need))
        if not need.value:
            return None
        buf = ctypes.create_string_buffer(need.value)
        if not advapi.GetTokenInformation(tok, TokenIntegrityLevel, buf, need.value, ctypes.byref(need)):
            return None
        sid = TOKEN_MANDATORY_LABEL.from_buffer(buf).Label.Sid
        count = advapi.GetSidSubAuthorityCount(sid)[0]
        return advapi.GetSidSubAuthority(sid, count - 1)[0]
    finally:
        kernel.CloseHandle(tok)


def describe():   # pragma: no cover - Windows only
    """The guard's status line for its token."""
    try:
        rid = integrity_level()
    except Exception:
        rid = None
    if rid is None:
        return False, "令牌完整性级别未知"
    if rid <= SECURITY_MANDATORY_LOW_RID:
        return True, "低完整性令牌：只能写入带低完整性标签的工作空间"
    return False, "普通令牌（完整性 0x%x，未降权）" % rid
