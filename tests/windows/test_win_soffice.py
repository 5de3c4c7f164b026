"""LibreOffice on Windows (xlakit/documents/soffice.py): found where Windows says it is (registry
App Paths, the UNO InstallPath, any drive's Program Files, not only C:), and a conversion that runs
past its time is stopped with everything it started (soffice.exe is a launcher; soffice.bin, its
child, does the work).

The stand-in soffice.exe is pip's own Windows script launcher (distlib's t64.exe) with a script
appended: like soffice.exe it is a real .exe that starts a Python child and waits for it. That
child either writes a PDF (so convert_document succeeds and we know this soffice was used) or
starts a grandchild that sleeps (the soffice.bin a timeout must not leave behind)."""
import io
import os
import shutil
import time
import zipfile

import pytest

from conftest import fail, ok
from winfixtures import lane, win_home, win_tmp  # noqa: F401 - fixtures
from winlane import exclusive, lane_python, win_path, win_python, win_tool

pytestmark = pytest.mark.windows

CONVERT = r'''
import os, sys
args = sys.argv[1:]
out = args[args.index("--outdir") + 1]
os.makedirs(out, exist_ok=True)
name = os.path.splitext(os.path.basename(args[-1]))[0]
body = b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 1 /Kids [] >> endobj\n" + b"% stand-in soffice\n" * 8 + b"%%EOF\n"
with open(os.path.join(out, name + ".pdf"), "wb") as fh:
    fh.write(body)
'''

HANG = r'''
import os, subprocess, sys
pidfile = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "child.pid")
code = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
subprocess.Popen([sys.executable, "-c", code, pidfile]).wait()
'''


def _launcher():
    try:
        import pip._vendor.distlib as distlib
    except ImportError:
        pytest.skip("pip's Windows script launcher (distlib t64.exe) is needed for the stand-in soffice.exe")
    path = os.path.join(os.path.dirname(distlib.__file__), "t64.exe")
    if not os.path.isfile(path):
        pytest.skip("pip has no t64.exe here")
    with open(path, "rb") as fh:
        return fh.read()


def fake_soffice(folder, script):
    """``folder\\program\\soffice.exe`` running ``script`` (Linux path of the exe)."""
    program = os.path.join(str(folder), "program")
    os.makedirs(program, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("__main__.py", script)
    exe = os.path.join(program, "soffice.exe")
    with open(exe, "wb") as fh:
        fh.write(_launcher() + b"#!" + lane_python().encode() + b"\n" + buf.getvalue())
    return exe


def _source(home):
    path = os.path.join(home, "通知.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("明天上午九点开会。\n")
    return win_path(path)


def _alive(pid):
    code = ("import ctypes, sys\nk = ctypes.windll.kernel32\nh = k.OpenProcess(0x1000 | 0x100000, False, int(sys.argv[1]))\n"
            "c = ctypes.c_ulong()\nprint(bool(h) and bool(k.GetExitCodeProcess(h, ctypes.byref(c))) and c.value == 259)")
    return win_python(code, args=[str(pid)]).stdout.strip() == "True"


def test_timeout_kills_the_launchers_child_too(win_home, win_tmp):
    exe = fake_soffice(win_tmp / "LibreOffice", HANG)
    err = fail(win_tool("convert_document", {"path": _source(win_home)}, home=win_home,
                        env={"XLA_SOFFICE": win_path(exe), "XLA_DEADLINE": "12"}))
    assert "已停止" in err
    pidfile = os.path.join(os.path.dirname(exe), "child.pid")
    assert os.path.isfile(pidfile), "the stand-in's child started"
    pid = int(open(pidfile).read())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _alive(pid), "soffice.bin's stand-in outlived the timeout"


def _reg(action, key, value=None):
    code = ("import sys, winreg\nhive = getattr(winreg, sys.argv[1])\n"
            "if sys.argv[3] == 'set':\n    k = winreg.CreateKey(hive, sys.argv[2]); winreg.SetValueEx(k, '', 0, winreg.REG_SZ, sys.argv[4])\n"
            "else:\n    winreg.DeleteKey(hive, sys.argv[2])\n")
    hive, _, path = key.partition("\\")
    out = win_python(code, args=[hive, path, action] + ([value] if value else []))
    assert out.exit_code == 0, out


@pytest.mark.parametrize("key,value", [
    ("HKEY_CURRENT_USER\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\App Paths\\soffice.exe", "exe"),
    ("HKEY_LOCAL_MACHINE\\SOFTWARE\\LibreOffice\\UNO\\InstallPath", "program"),
], ids=["app_paths", "uno_install_path"])
def test_found_through_the_registry(win_home, win_tmp, key, value):
    exe = fake_soffice(win_tmp / "办公软件" / "LibreOffice", CONVERT)
    with exclusive():
        _reg("set", key, win_path(exe) if value == "exe" else win_path(os.path.dirname(exe)))
        try:
            data = ok(win_tool("convert_document", {"path": _source(win_home)}, home=win_home))
        finally:
            _reg("delete", key)
    assert data["path"].endswith(".pdf")


def test_found_on_another_drive(lane, win_home, win_tmp):
    """An install on D:\\Program Files (not C:, not in the environment the host passes)."""
    drive = win_tmp / "d-drive"
    fake_soffice(drive / "Program Files" / "LibreOffice", CONVERT)
    link = os.path.join(lane.prefix, "dosdevices", "d:")
    with exclusive():
        if os.path.lexists(link):
            pytest.skip("the lane's prefix already has a D: drive")
        os.symlink(str(drive), link)
        try:
            data = ok(win_tool("convert_document", {"path": _source(win_home)}, home=win_home))
        finally:
            os.unlink(link)
    assert data["path"].endswith(".pdf")
