"""The lane itself looks like a Chinese Windows 10 with an embeddable CPython, and its harness
runs a tool the way a Windows host does (command line, folder, environment)."""
import json
import os

import pytest

from winfixtures import lane, win_home, win_tmp  # noqa: F401 - fixtures
from winlane import lane_python, linux_path, ping, win_path, win_python, win_tool

pytestmark = pytest.mark.windows


def test_lane_is_a_chinese_windows_with_the_embeddable_python(lane):
    info = ping()
    assert info["version"] == [3, 9, 13]
    assert info["ansi"] == "cp936", "ANSI code page (GBK), as on a Chinese Windows"
    assert info["release"] == "10"
    folder = os.path.dirname(lane.python_exe)
    assert os.path.isfile(os.path.join(folder, "python39.zip")), "stdlib as .pyc in a zip, as hosts ship it"
    assert not os.path.exists(os.path.join(folder, "Lib")), "no stdlib sources added"
    assert not os.path.exists(os.path.join(folder, "python39._pth")), "deleted so PYTHONPATH is honoured"
    for name in ("Desktop", "Documents", "Downloads"):
        path = os.path.join(lane.profile, name)
        assert os.path.isdir(path) and not os.path.islink(path), "a real folder, not a link to $HOME"


def test_temp_is_under_appdata_local(lane):
    out = win_python("import tempfile; print(tempfile.gettempdir())")
    assert out.exit_code == 0, out
    assert out.stdout.strip().lower().endswith("\\appdata\\local\\temp")


def test_path_mapping_round_trips(lane, win_tmp):
    target = win_tmp / "中文 文件.txt"
    wpath = win_path(target)
    assert wpath.startswith("C:\\users\\") and "/" not in wpath
    assert linux_path(wpath) == str(target)
    assert linux_path("\\\\?\\" + wpath) == str(target)
    assert win_path("/tmp/x") == "Z:\\tmp\\x"
    assert lane_python().endswith("\\python.exe")


def test_tool_gets_the_host_command_line_folder_and_environment(lane, win_home):
    """A tool sees what the Windows host hands it: -X utf8, cwd tools\\, PATH/HOME/PYTHONPATH and
    the system variables Windows needs (xlakit.host.tool_env), nothing of the host's own."""
    code = ("import json,os,sys;print(json.dumps({'utf8': sys.flags.utf8_mode, 'cwd': os.getcwd(),"
            "'env': sorted(os.environ), 'home': os.environ.get('HOME'), 'pp': os.environ.get('PYTHONPATH')}))")
    out = win_python(code, host_env=win_home)
    assert out.exit_code == 0, out
    data = json.loads(out.stdout)
    assert data["utf8"] == 1 and data["cwd"].endswith("\\tools")
    names = {n for n in data["env"] if not n.startswith("WINE")}     # Wine adds its own WINE* names
    assert names == {"PATH", "HOME", "PYTHONPATH", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "COMSPEC",
                     "PATHEXT", "USERPROFILE"}, names
    assert data["home"] == win_path(win_home)


def test_a_tool_answers_through_the_harness(lane, win_home):
    res = win_tool("current_time", {"timezone": "北京"}, home=win_home)
    assert res.ok and res.exit_code == 0, res
    assert res.data["utc_offset"] == "+08:00"


def test_why_the_host_passes_the_windows_system_variables(lane):
    """Measured here: without TEMP/TMP a Windows Python's temp folder is C:\\Windows\\Temp (a system
    folder), and without USERPROFILE ``expanduser('~')`` stays "~" (Python ignores HOME on Windows),
    which is why xlakit.host.tool_env passes them on Windows. (Winsock needs SYSTEMROOT on a real
    Windows — WinError 10106 without it; Wine does not need it, so that part is not provable here.)"""
    code = "import os, tempfile; print(tempfile.gettempdir()); print(os.path.expanduser('~'))"
    bare = win_python(code, env={"PATH": "C:\\windows\\system32;C:\\windows", "HOME": "C:\\users\\x"})
    temp, home = bare.stdout.split()
    assert temp.lower() == "c:\\windows\\temp" and home == "~", bare
    full = win_python(code, host_env=lane.profile)
    temp, home = full.stdout.split()
    assert temp.lower().endswith("\\appdata\\local\\temp") and home.lower().startswith("c:\\users\\"), full
