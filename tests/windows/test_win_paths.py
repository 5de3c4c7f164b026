"""Windows lane: path forms, the real Desktop and a file held open, on Windows CPython under Wine.

Each case runs write_text the way a Windows host does (``python.exe -X utf8 -u write_text.py``,
cwd ``tools\\``, the environment of ``xlakit.host.tool_env``: no APPDATA, no OneDrive, no
ProgramFiles), started from a small launcher on the Windows side (Wine drops HOME from an
environment it gets from Linux). The lane (python.exe, prefix, GBK locale) is the project's own
(tests/windows/lane.py, the ``lane`` fixture: skips without Wine, fails under CI=true); the tools
run from this checkout through a small launcher of this module (write_text needs no library).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

pytestmark = pytest.mark.windows

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from winfixtures import lane  # noqa: E402,F401 - fixture: skips without Wine, fails under CI=true

# The lane's paths, filled in by the autouse fixture below (runs before the other fixtures).
PY = PREFIX = USER = PROFILE = None
_LANE = None


@pytest.fixture(autouse=True)
def _lane_paths(lane):  # noqa: F811
    global PY, PREFIX, USER, PROFILE, _LANE
    _LANE = lane
    PY, PREFIX, USER, PROFILE = lane.python_exe, lane.prefix, lane.user, lane.profile


LAUNCHER = r"""
import base64, json, subprocess, sys
req = json.loads(base64.b64decode(sys.argv[1]).decode("utf-8"))
sys.path.insert(0, req["root"])
from xlakit import host
env = host.tool_env(req["root"], req["home"], req.get("env"))
p = subprocess.run([sys.executable, "-X", "utf8", "-u", req["tool"] + ".py"], input=req["input"].encode("utf-8"),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=req["root"] + "\\tools", env=env, timeout=60)
print(json.dumps({"rc": p.returncode, "out": p.stdout.decode("utf-8", "replace"),
                  "err": p.stderr.decode("utf-8", "replace")}))
"""


def wine_env():
    return _LANE.env()


def win_path(path):
    path = os.path.abspath(str(path))
    drive_c = os.path.join(PREFIX, "drive_c")
    if path.startswith(drive_c + os.sep):
        return "C:\\" + path[len(drive_c) + 1:].replace("/", "\\")
    return "Z:" + path.replace("/", "\\")


def win_python(code, *args, timeout=120):
    # Wine wants pipes, not files, on the standard streams
    res = subprocess.run(["wine", PY, "-X", "utf8", "-c", code] + list(args), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=wine_env(), timeout=timeout)
    return res.stdout.decode("utf-8", "replace")


def win_tool(tool, args, home):
    req = {"root": win_path(ROOT), "home": win_path(home), "tool": tool, "input": json.dumps(args, ensure_ascii=False)}
    out = win_python(LAUNCHER, base64.b64encode(json.dumps(req).encode("utf-8")).decode("ascii"))
    got = json.loads(out.strip().splitlines()[-1])
    assert "Traceback" not in got["out"] + got["err"], got
    data = json.loads(got["out"])
    assert (got["rc"] == 0) == data["ok"], got
    if not data["ok"]:
        assert data["error"].strip() in got["err"]
    return data


@pytest.fixture
def home():
    path = tempfile.mkdtemp(prefix="xla-home-", dir=PROFILE)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def folder():
    path = tempfile.mkdtemp(prefix="xla-t-", dir=os.path.join(PROFILE, "Desktop"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


STARTUP = "AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs\\Startup"


def _startup_dir():
    path = os.path.join(PROFILE, *STARTUP.split("\\"))
    os.makedirs(path, exist_ok=True)
    return path


@pytest.mark.parametrize("spelling,why", [
    ("\\\\?\\C:\\users\\{u}\\" + STARTUP + "\\hello.js", "开机启动"),
    ("\\\\?\\C:\\users\\{u}\\" + STARTUP + "\\hello.txt", "开机启动"),
    ("\\\\localhost\\C$\\users\\{u}\\" + STARTUP + ".\\note.txt", "开机启动"),
    ("//?/UNC/127.0.0.1/c$/users/{u}/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/a.txt", "开机启动"),
    ("\\\\?\\C:\\users\\{u}\\.ssh\\authorized_keys", "SSH"),
    ("\\\\localhost\\C$\\users\\{u}\\.ssh\\authorized_keys", "SSH"),
    ("\\\\{host}\\C$\\users\\{u}\\.ssh\\authorized_keys", "SSH"),       # this computer's own name
    ("\\\\otherpc\\C$\\users\\{u}\\a.txt", "管理共享"),
    ("\\\\?\\C:\\windows\\x.txt", ""),
    ("\\\\.\\C:\\Program Files\\x.txt", "系统文件夹"),
    ("C:\\users\\{u}\\Desktop\\CON.txt", "设备名"),
    ("C:\\users\\{u}\\Desktop\\com\u00b9", "设备名"),
    ("C:\\users\\{u}\\Desktop\\a.txt:hidden", "数据流"),
    ("C:\\users\\{u}\\Desktop\\x.js::$DATA", "数据流"),
    ("C:\\users\\{u}\\Desktop\\hello.js", "工作空间"),
    ("C:\\users\\{u}\\Desktop\\run.pyw", "工作空间"),
])
def test_write_text_refuses_every_spelling(spelling, why, home):
    startup = _startup_dir()
    before = set(os.listdir(startup))
    keys = os.path.join(PROFILE, ".ssh", "authorized_keys")
    had_keys = os.path.exists(keys)
    import socket
    path = spelling.format(u=USER, host=socket.gethostname())
    error = win_tool("write_text", {"path": path, "text": "WScript.Echo(1)"}, home)["error"]
    assert "不" in error and why in error, error
    assert set(os.listdir(startup)) == before
    assert os.path.exists(keys) == had_keys


def test_short_name_of_the_startup_folder_is_refused(home):
    startup = _startup_dir()
    code = ("import ctypes,sys; b=ctypes.create_unicode_buffer(1000); "
            "ctypes.windll.kernel32.GetShortPathNameW(sys.argv[1], b, 1000); print(b.value)")
    short = win_python(code, win_path(startup)).strip()
    assert short and short.lower() != win_path(startup).lower(), short
    error = win_tool("write_text", {"path": short + "\\x.txt", "text": "x"}, home)["error"]
    assert "开机启动" in error, error
    assert "x.txt" not in os.listdir(startup)


def test_ordinary_forms_still_write(home, folder):
    data = win_tool("write_text", {"path": "\\\\?\\" + win_path(folder) + "\\报表说明.txt", "text": "好"}, home)
    assert data["ok"] and os.path.isfile(os.path.join(folder, "报表说明.txt"))
    data = win_tool("write_text", {"path": "\\\\localhost\\C$" + win_path(folder)[2:] + "\\b.txt.", "text": "好"}, home)
    assert data["ok"] and os.path.isfile(os.path.join(folder, "b.txt")), data


SHELL_FOLDERS = "HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\User Shell Folders"


def _reg(*args):
    subprocess.run(["wine", "reg"] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, env=wine_env(), timeout=120)


def test_desktop_is_where_windows_put_it(home):
    """The Desktop moved to D:\\桌面 (a registry redirect, as Explorer's "Location" tab does):
    "桌面/…" lands there, and no guessed C:\\users\\<u>\\Desktop file appears."""
    ddrive = tempfile.mkdtemp(prefix="xla-ddrive-")
    os.makedirs(os.path.join(ddrive, "桌面"))
    link = os.path.join(PREFIX, "dosdevices", "d:")
    old_link = os.readlink(link) if os.path.islink(link) else None
    if old_link:
        os.remove(link)
    os.symlink(ddrive, link)
    _reg("add", SHELL_FOLDERS, "/v", "Desktop", "/t", "REG_EXPAND_SZ", "/d", "D:\\桌面", "/f")
    name = "说明-%d.txt" % os.getpid()
    try:
        data = win_tool("write_text", {"path": "桌面/" + name, "text": "在真正的桌面上"}, home)
        assert data["ok"], data
        assert data["path"].lower() == ("d:\\桌面\\" + name).lower(), data["path"]
        assert os.path.isfile(os.path.join(ddrive, "桌面", name))
        assert not os.path.exists(os.path.join(PROFILE, "Desktop", name))
    finally:
        _reg("add", SHELL_FOLDERS, "/v", "Desktop", "/t", "REG_EXPAND_SZ", "/d", "%USERPROFILE%\\Desktop", "/f")
        os.remove(link)
        if old_link:
            os.symlink(old_link, link)
        shutil.rmtree(ddrive, ignore_errors=True)


HOLD = r"""
import ctypes, sys, time
from ctypes import wintypes
k = ctypes.WinDLL("kernel32", use_last_error=True)
k.CreateFileW.restype = wintypes.HANDLE
k.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p, wintypes.DWORD,
                          wintypes.DWORD, wintypes.HANDLE]
h = k.CreateFileW(sys.argv[1], 0xC0000000, 1, None, 3, 0x80, None)   # read/write, others may only read (Excel)
print("held" if h not in (None, ctypes.c_void_p(-1).value) else "failed %d" % ctypes.get_last_error(), flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hold(path, seconds):
    proc = subprocess.Popen(["wine", PY, "-X", "utf8", "-c", HOLD, win_path(path), str(seconds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=wine_env())
    line = proc.stdout.readline().decode().strip()
    assert line == "held", line
    return proc


def _backups(home):
    folder = os.path.join(home, ".xla", "backup")
    out = []
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            out.append(fh.read())
    return out


def test_file_held_open_like_excel_keeps_older_backups(home, folder):
    target = os.path.join(folder, "台账.txt")
    for text in ("v1", "v2", "v3", "v4"):
        assert win_tool("write_text", {"path": win_path(target), "text": text}, home)["ok"]
    assert _backups(home) == ["v1", "v2", "v3"]
    proc = _hold(target, 120)
    try:
        for i in range(5):
            data = win_tool("write_text", {"path": win_path(target), "text": "v5-%d" % i}, home)
            assert not data["ok"]
            assert "Excel/WPS" in data["error"] and "请先关闭它再试" in data["error"], data["error"]
            assert "没有改动" in data["error"]
    finally:
        proc.kill()
        proc.wait()
    with open(target, encoding="utf-8") as fh:
        assert fh.read() == "v4"
    assert _backups(home) == ["v1", "v2", "v3"]          # no copy of the unchanged file at all
    assert [n for n in os.listdir(folder) if n.endswith(".tmp")] == []


MOMENT = r"""
import ctypes, os, sys, threading
from ctypes import wintypes
sys.path.insert(0, sys.argv[1])
from xlakit.errors import ToolError
from xlakit.fs import winshare
k = ctypes.WinDLL("kernel32", use_last_error=True)
k.CreateFileW.restype = wintypes.HANDLE
k.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p, wintypes.DWORD,
                          wintypes.DWORD, wintypes.HANDLE]
k.CloseHandle.argtypes = [wintypes.HANDLE]
target, tmp = os.path.join(sys.argv[2], "a.txt"), os.path.join(sys.argv[2], "new.tmp")
open(target, "w").write("old")
out = []
for release_after in (0.6, None):       # a scanner's moment, then Excel that keeps it open
    open(tmp, "w").write("new")
    h = k.CreateFileW(target, 0xC0000000, 1, None, 3, 0x80, None)
    timer = threading.Timer(release_after, k.CloseHandle, [h]) if release_after else None
    if timer:
        timer.start()
    try:
        winshare.check_replaceable(target)
        winshare.replace(tmp, target)
        out.append("replaced:" + open(target).read())
    except ToolError as exc:
        out.append("refused:" + str(exc))
    finally:
        if timer:
            timer.join()
        else:
            k.CloseHandle(h)
print(repr(out))
"""


def test_a_hold_of_a_moment_is_waited_out(folder):
    """A scanner or OneDrive holds the file for a moment after a change: the replace waits it out;
    a hold that lasts (Excel) ends in the Chinese answer, the file unchanged."""
    got = win_python(MOMENT, win_path(ROOT), win_path(folder)).strip().splitlines()[-1]
    first, second = eval(got)                    # noqa: S307 - our own repr of two strings
    assert first == "replaced:new", got
    assert second.startswith("refused:") and "Excel/WPS" in second, got
    with open(os.path.join(folder, "a.txt"), encoding="utf-8") as fh:
        assert fh.read() == "new"


ATTRS = r"""
import ctypes, os, sys
sys.path.insert(0, sys.argv[1])
from xlakit.fs import files
k = ctypes.windll.kernel32
target = os.path.join(sys.argv[2], "a.txt")
seen = []
def write(tmp):
    seen.append((os.path.basename(tmp), k.GetFileAttributesW(tmp)))
    with open(tmp, "w") as fh:
        fh.write("x")
files.atomic_write(target, write)
files.atomic_write(target, write)
print(repr([seen, k.GetFileAttributesW(target), sorted(os.listdir(sys.argv[2]))]))
"""


def test_temp_file_is_hidden_and_the_result_is_not(folder):
    got = win_python(ATTRS, win_path(ROOT), win_path(folder)).strip().splitlines()[-1]
    seen, final, names = eval(got)               # noqa: S307 - our own repr
    assert all(name.startswith(".xla-") and name.endswith(".tmp") and attrs & 0x2 for name, attrs in seen), got
    assert not final & 0x2, got                  # FILE_ATTRIBUTE_HIDDEN is not carried onto the user's file
    assert names == ["a.txt"], got


def test_link_into_startup_is_refused(home, folder):
    """A link on the Desktop into the Startup folder (Wine shows a Unix symbolic link as the
    junction a Windows user would make with mklink /J): the real target is checked."""
    link = os.path.join(folder, "快捷")
    os.symlink(_startup_dir(), link)
    before = set(os.listdir(_startup_dir()))
    error = win_tool("write_text", {"path": win_path(link) + "\\x.txt", "text": "x"}, home)["error"]
    assert "开机启动" in error, error
    assert set(os.listdir(_startup_dir())) == before
