"""The run_python fence's Windows logic that runs anywhere: path canonicalisation (xlaguard.winpath)
against a simulated Windows file system, the stdlib-zip bytecode rule (xlaguard.stdzip), and the
Windows structures' sizes against the SDK layout (xlaguard.winjob / wintoken). The same code runs
for real in tests/windows/test_win_guard.py."""
import ctypes
import hashlib
import marshal
import os
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from xlaguard import stdzip, winjob, winpath, wintoken  # noqa: E402

CWD = "C:\\Users\\u\\.xla\\workspace"
WS = "C:\\USERS\\U\\.XLA\\WORKSPACE"


class FakeFS:
    """GetFinalPathNameByHandleW over a few existing folders: case-insensitive, with links
    (junctions/symlinks) and an 8.3 short name, answering FileNotFoundError for the rest."""

    def __init__(self):
        self.dirs = {"C:\\", "C:\\Users", "C:\\Users\\u", "C:\\Users\\u\\.xla", "C:\\Users\\u\\.xla\\workspace",
                     "C:\\Users\\u\\Desktop", "C:\\Users\\u\\.xla\\workspace\\sub", "D:\\", "D:\\data"}
        self.links = {"C:\\Users\\u\\.xla\\workspace\\out": "C:\\Users\\u\\Desktop",
                      "C:\\Users\\u\\.xla\\workspace\\ddrive": "D:\\data",
                      "C:\\Users\\U~1": "C:\\Users\\u"}

    def final(self, verb):
        assert verb.startswith("\\\\?\\")
        p = verb[4:]
        if p.upper().startswith("UNC\\"):
            raise FileNotFoundError(p)
        p = p.rstrip("\\") if len(p) > 3 else p
        for link, target in self.links.items():
            lu = link.upper()
            if p.upper() == lu or p.upper().startswith(lu + "\\"):
                p = target + p[len(link):]
        for d in self.dirs:
            if d.upper() == p.upper():
                return "\\\\?\\" + d
        raise FileNotFoundError(p)


@pytest.fixture
def resolve():
    fs = FakeFS()
    return winpath.bind(lambda: CWD, None, fs.final, machine="PC-01")


def inside(resolve, p, follow=True):
    return winpath.inside(resolve(p, follow), (WS,))


@pytest.mark.parametrize("p", [
    "..\\..\\Desktop\\x.txt", "../../Desktop/x.txt", CWD + "\\..\\..\\Desktop\\x.txt",
    CWD + "/..\\../Desktop/x.txt", "\\\\?\\C:\\Users\\u\\Desktop\\x.txt", "\\??\\C:\\Users\\u\\Desktop\\x.txt",
    "\\\\.\\C:\\Users\\u\\Desktop\\x.txt", "\\\\?\\UNC\\localhost\\C$\\Users\\u\\Desktop\\x.txt",
    "\\\\localhost\\c$\\Users\\u\\Desktop\\x.txt", "\\\\127.0.0.1\\C$\\Users\\u\\Desktop\\x",
    "\\\\PC-01\\C$\\Users\\u\\Desktop\\x", "//localhost/C$/Users/u/Desktop/x",
    "\\\\?\\" + CWD + "\\..\\..\\Desktop\\x", "\\\\?\\" + CWD + ".\\x", CWD + "\\out\\x.txt", CWD + "\\ddrive\\x",
    "\\Users\\u\\Desktop\\x", "C:..\\..\\Desktop\\x", "D:x.txt", "\\\\server\\share\\x",
    "C:\\Users\\U~1\\Desktop\\x", "\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1\\x", "\\\\.\\pipe\\x",
    "\\\\.\\PhysicalDrive0", "\\\\?\\Volume{12345678-1234-1234-1234-123456789abc}\\x",
])
def test_escapes_are_outside(resolve, p):
    assert not inside(resolve, p), (p, resolve(p, True))


@pytest.mark.parametrize("p", [
    "x.txt", ".\\x.txt", "sub\\..\\x.txt", "missing\\..\\x.txt", CWD + "\\x.txt", CWD.upper() + "\\X.TXT",
    CWD.replace("\\", "/") + "/a/b.txt", "\\\\?\\" + CWD + "\\x.txt", "\\\\.\\" + CWD + "\\x.txt",
    "\\\\localhost\\C$\\Users\\u\\.xla\\workspace\\x.txt", "C:x.txt", "\\Users\\u\\.xla\\workspace\\x",
    "C:\\Users\\U~1\\.xla\\workspace\\x", "x.txt.", "new folder\\y\\z.csv", "报表\\九月.xlsx",
])
def test_inside_stays_inside(resolve, p):
    assert inside(resolve, p), (p, resolve(p, True))


@pytest.mark.parametrize("p", [
    "CON", "con.txt", "sub\\NUL.txt\\x", "COM1", "com9.log", "LPT1", "aux", "PRN.csv", "COM\u00b9", "CONIN$",
    "x.txt:evil", "x.txt::$DATA", "sub:stream\\x", "a*b.txt", "a?b", "a<b", "a|b", 'a"b', "...", "x\x01",
    "", "a\0b", "\\\\?\\C:\\Users\\u\\.xla\\workspace\\a/b", "\\\\localhost\\share\\x",
])
def test_refused_outright(resolve, p):
    assert resolve(p, True) is None, p


def test_null_device_is_harmless(resolve):
    for p in ("nul", "NUL", "\\\\.\\NUL", CWD + "\\nul", "nul.txt"):
        assert resolve(p, True) == "\\\\.\\NUL" and winpath.inside(resolve(p, True), (WS,))


def test_links_resolved_unless_not_following(resolve):
    assert resolve(CWD + "\\out\\x.txt", True) == "C:\\Users\\u\\Desktop\\x.txt"
    # remove/rename act on the link itself: its parent is resolved, the name kept
    assert resolve(CWD + "\\out", False) == "C:\\Users\\u\\.xla\\workspace\\out"
    assert resolve(CWD + "\\out", True) == "C:\\Users\\u\\Desktop"
    assert resolve("C:\\Users\\U~1\\Desktop", True) == "C:\\Users\\u\\Desktop"


def test_trailing_dots_and_spaces_of_the_last_component(resolve):
    assert resolve("x.txt. . ", True) == CWD + "\\x.txt"
    assert resolve("\\\\?\\" + CWD + "\\x.txt.", True) == CWD + "\\x.txt."   # verbatim: the dot is the name's


def test_dotdot_never_climbs_above_the_root(resolve):
    assert resolve("C:\\..\\..\\Users\\u\\.xla\\workspace\\x", True) == CWD + "\\x"
    assert resolve("\\\\localhost\\C$\\..\\..\\Users\\u\\Desktop", True) == "C:\\Users\\u\\Desktop"


def test_os_failure_refuses():
    def broken(_p):
        raise PermissionError("access denied")
    r = winpath.bind(lambda: CWD, None, broken)
    assert r("x.txt", True) is None


def test_gets_full_path_from_the_os_when_given():
    seen = []

    def full(p):
        seen.append(p)
        return "\\\\.\\CON" if p.upper().endswith("\\CON") else p

    r = winpath.bind(lambda: CWD, full, FakeFS().final)
    assert r("CON", True) is None and r("x.txt", True) == CWD + "\\x.txt"
    assert seen and all(s.startswith("C:\\") for s in seen)


def test_resolver_globals_are_private(resolve):
    """The script cannot reach or rebind what the resolver uses (the hook's pattern)."""
    assert set(resolve.__globals__) == {"__builtins__"}
    assert "open" not in resolve.__globals__["__builtins__"] and "__import__" not in resolve.__globals__["__builtins__"]


def make_zip(tmp_path, name="python39.zip"):
    z = tmp_path / name
    code = compile("X = 1\n", "mod.py", "exec")
    data = b"\0" * 16 + marshal.dumps(code)
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mod.pyc", data)
        zf.writestr("mod.py", "X = 1\n")
    return z, data[16:]


def test_stdzip_digests_are_the_bytes_zipimport_unmarshals(tmp_path):
    z, body = make_zip(tmp_path)
    digests = stdzip.bytecode_digests([str(z)])
    assert digests == {hashlib.sha256(body).digest()}
    crafted = marshal.dumps(compile("import os", "x", "exec"))
    assert hashlib.sha256(crafted).digest() not in digests


def test_stdzip_takes_only_zips_beside_the_interpreter_and_outside_the_roots(tmp_path, monkeypatch):
    z, _ = make_zip(tmp_path)
    monkeypatch.setattr(sys, "path", [str(z), "/nonexistent/python39.zip"] + sys.path)
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    assert stdzip.stdlib_zips() == [str(z)]
    assert stdzip.stdlib_zips(roots=[str(tmp_path)]) == []          # a zip in a writable root is never trusted
    monkeypatch.setattr(sys, "base_prefix", "/nowhere")
    monkeypatch.setattr(sys, "prefix", "/nowhere")
    monkeypatch.setattr(sys, "executable", "/nowhere/python")
    assert stdzip.stdlib_zips() == []                               # not beside the interpreter


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="SDK layout checked for 64-bit")
def test_windows_structures_match_the_sdk_layout():
    assert ctypes.sizeof(winjob.STARTUPINFOW) == 104 and ctypes.sizeof(winjob.STARTUPINFOEXW) == 112
    assert winjob.STARTUPINFOW.hStdInput.offset == 80 and winjob.STARTUPINFOW.dwFlags.offset == 60
    assert ctypes.sizeof(winjob.PROCESS_INFORMATION) == 24
    assert ctypes.sizeof(wintoken.TOKEN_MANDATORY_LABEL) == 16 and wintoken.SID_AND_ATTRIBUTES.Attributes.offset == 8
    info = winjob.limits(4 << 30, 65)
    basic = info.BasicLimitInformation
    assert basic.LimitFlags & winjob.JOB_OBJECT_LIMIT_PROCESS_TIME and basic.PerProcessUserTimeLimit == 65 * 10 ** 7
    assert basic.ActiveProcessLimit == 1 and info.ProcessMemoryLimit == 4 << 30
    assert not winjob.limits(1 << 20).BasicLimitInformation.LimitFlags & winjob.JOB_OBJECT_LIMIT_PROCESS_TIME


def test_environment_block():
    block = winjob.environment_block({"TEMP": "C:\\t", "Path": "C:\\w", "=C:": "C:\\x", "A": "中文"})
    assert block == "=C:=C:\\x\0A=中文\0Path=C:\\w\0TEMP=C:\\t\0\0"   # per-drive cwd entries kept


def test_low_label_sddl():
    assert wintoken.LOW_LABEL_SDDL == "S:(ML;OICI;NW;;;LW)" and wintoken.LOW_SID == "S-1-16-4096"


def test_drive_relative_on_another_drive_asks_the_os():
    """``D:x`` uses drive D's own current folder (the hidden "=D:" variable), which only
    GetFullPathNameW knows: the OS answer decides, not a guess of D:\\x."""
    fs = FakeFS()
    r = winpath.bind(lambda: CWD, lambda p: "D:\\data\\" + p[2:] if p[:2] == "D:" and p[2:3] != "\\" else p,
                     fs.final)
    assert r("D:x.txt", True) == "D:\\data\\x.txt"
    r2 = winpath.bind(lambda: "D:\\data", lambda p: "C:\\Users\\u\\Desktop\\" + p[2:] if p[2:3] != "\\" else p,
                      fs.final)
    assert not winpath.inside(r2("C:x.txt", True), (WS,))


def test_per_run_temp_folder_and_its_clean_up(tmp_path):
    """pyrun.run_temp_dir (used on Windows): a fresh folder in <workspace>/.xla-tmp, leftovers older than
    a day removed on the way, and the .xla-tmp folder itself gone when the last run is cleaned up."""
    import time
    from xlakit import pyrun
    ws = tmp_path / "workspace"
    ws.mkdir()
    stale = ws / pyrun.RUN_TEMP / "run-old"
    stale.mkdir(parents=True)
    (stale / "f.txt").write_text("x")
    os.chmod(stale / "f.txt", 0o444)
    old = time.time() - 2 * 86400
    os.utime(stale, (old, old))
    d = pyrun.run_temp_dir(str(ws))
    assert os.path.dirname(d) == str(ws / pyrun.RUN_TEMP) and os.path.basename(d).startswith("run-")
    assert not stale.exists()
    with open(os.path.join(d, "spool.tmp"), "w") as f:
        f.write("x")
    pyrun._remove_tree(d)
    assert not os.path.exists(d) and not (ws / pyrun.RUN_TEMP).exists()
