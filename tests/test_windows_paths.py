"""Windows path forms, runnable types and backups not multiplied by failed replaces.

The canonicalisation (xlakit/fs/winpath.py) is pure string logic on ``ntpath``, so it is tested
here on any system with Windows-style strings; what only Windows can answer (the kernel's final
path, known folders, sharing violations) is in tests/windows/test_win_paths.py.
"""
import os
import tempfile
import types

import pytest

from conftest import NOBODY, as_nobody, assert_contract, fail, nobody_dir, ok
from xlakit import host as xla_host
from xlakit.fs import paths, winpath

ME = ["DESKTOP-7Q2"]          # this computer's name, for \\<name>\C$
STARTUP = r"C:\Users\u\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup"

CANONICAL = [
    (r"C:\Users\u\Desktop\a.txt", r"C:\Users\u\Desktop\a.txt"),
    (r"c:/users/u/desktop/a.txt", r"C:\users\u\desktop\a.txt"),
    (r"\\?\C:\Users\u\AppData\Roaming\x\hello.js", r"C:\Users\u\AppData\Roaming\x\hello.js"),
    (r"\\.\C:\Windows\x", r"C:\Windows\x"),
    (r"\??\C:\Windows\x", r"C:\Windows\x"),
    (r"//?/C:/Windows/x", r"C:\Windows\x"),
    (r"\\?\UNC\localhost\C$\Users\u\.ssh\authorized_keys", r"C:\Users\u\.ssh\authorized_keys"),
    (r"\\.\UNC\127.0.0.1\c$\Windows\x", r"C:\Windows\x"),
    (r"\\localhost\C$\Users\u\.ssh\authorized_keys", r"C:\Users\u\.ssh\authorized_keys"),
    (r"\\127.0.0.1\c$\Windows\System32\x.dll", r"C:\Windows\System32\x.dll"),
    (r"\\127.5.6.7\d$\x", r"D:\x"),
    (r"\\[::1]\C$\x", r"C:\x"),
    (r"\\0--1.ipv6-literal.net\C$\x", r"C:\x"),
    (r"\\DESKTOP-7Q2\C$\Windows\x", r"C:\Windows\x"),
    (r"\\desktop-7q2.\c$\Windows\x", r"C:\Windows\x"),
    (r"C:\Users\u\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup.\x.js.", STARTUP + r"\x.js"),
    (r"C:\Users\u\Desktop\x.js ", r"C:\Users\u\Desktop\x.js"),
    (r"C:\Users\u\Desktop\x.js. . ", r"C:\Users\u\Desktop\x.js"),
    (r"\\?\C:\Users\u\Desktop\..\AppData\Roaming\x", r"C:\Users\u\AppData\Roaming\x"),
    (r"C:\Users\u\Desktop\..\..\..\..\Windows\x", r"C:\Windows\x"),
    (r"C:\\Users\\\u\.\Desktop\\a.txt", r"C:\Users\u\Desktop\a.txt"),
    (r"\\fileserver\财务\2024\报表.xlsx", r"\\fileserver\财务\2024\报表.xlsx"),
    (r"\\?\UNC\fileserver\财务\报表.xlsx", r"\\fileserver\财务\报表.xlsx"),
    ("/C:/Users/u/Desktop/a.txt", r"C:\Users\u\Desktop\a.txt"),         # file:///C:/... once file:// is cut
]


@pytest.mark.parametrize("raw,want", CANONICAL)
def test_every_spelling_becomes_one_drive_path(raw, want):
    assert winpath.canonical(raw, computer_names=ME) == want


def test_comparable_form_folds_case_and_slashes():
    assert winpath.comparable(r"\\?\C:\USERS\U\AppData\Roaming\\", ME) == "c:/users/u/appdata/roaming"
    assert winpath.comparable(r"\\LOCALHOST\c$\Users\U", ME) == winpath.comparable(r"C:/users/u", ME)


REFUSED = [
    (r"C:\Users\u\Desktop\a.txt:stream", "数据流"),
    (r"C:\Users\u\Desktop\x.js::$DATA", "数据流"),
    (r"\\?\C:\Users\u\Desktop\a.txt:x:$DATA", "数据流"),
    (r"C:\Users\u\Desktop\CON", "设备名"),
    (r"C:\Users\u\Desktop\con.txt", "设备名"),
    (r"C:\Users\u\Desktop\Con .txt", "设备名"),
    (r"C:\Users\u\Desktop\NUL.", "设备名"),
    (r"C:\Users\u\Desktop\nul  ", "设备名"),
    (r"C:\Users\u\Desktop\aux.tar.gz", "设备名"),
    (r"C:\Users\u\Desktop\COM1.log", "设备名"),
    ("C:\\Users\\u\\Desktop\\com\u00b9", "设备名"),
    ("C:\\Users\\u\\Desktop\\LPT\u00b3.txt", "设备名"),
    (r"C:\Users\u\Desktop\PRN\a.txt", "设备名"),
    (r"C:\Users\u\Desktop\CONOUT$", "设备名"),
    (r"\\.\PhysicalDrive0", "设备或卷"),
    (r"\\?\Volume{0b1e2c3d-0000-0000-0000-100000000000}\Windows\x", "设备或卷"),
    (r"\\?\GLOBALROOT\Device\HarddiskVolume2\Windows\x", "设备或卷"),
    (r"\\.\pipe\x", "设备或卷"),
    (r"\\fileserver\C$\Windows\x", "管理共享"),
    (r"\\fileserver\ADMIN$\x", "管理共享"),
    (r"\\localhost\ADMIN$\System32\x", "管理共享"),
    (r"\\localhost\Users\u\.ssh\authorized_keys", "本机的共享"),
    (r"\\DESKTOP-7Q2\公共\x.txt", "本机的共享"),
    (r"D:x.txt", "当前文件夹"),
    (r"C:\Users\u\...\x.txt", "只由点"),
    (r"C:\PROGRA~1\x.txt", "8.3"),
    (r"C:\Users\u\APPDAT~1\Roaming\x.txt", "8.3"),
]


@pytest.mark.parametrize("raw,why", REFUSED)
def test_forms_windows_reads_otherwise_are_refused(raw, why):
    reason = winpath.refusal(raw, computer_names=ME)
    assert reason and why in reason, (raw, reason)


@pytest.mark.parametrize("raw", [
    r"C:\Users\u\Desktop\报表.xlsx", r"C:\Users\u\Desktop\console.txt", r"C:\Users\u\Desktop\com10.txt",
    r"C:\Users\u\Desktop\auxiliary.docx", r"C:\Users\u\Desktop\报表~草稿.xlsx", r"D:\桌面\a.b.c.csv",
    r"\\fileserver\财务\报表.xlsx", r"\\localhost\C$\Users\u\Desktop\a.txt", r"\\?\C:\Users\u\Desktop\a.txt",
    "报表.xlsx", r"子目录\a.txt", r"\\fileserver\users$\u\a.txt", "/C:/Users/u/Desktop/a.txt"])
def test_ordinary_names_are_not_refused(raw):
    assert winpath.refusal(raw, computer_names=ME) is None


def test_short_names_pass_once_windows_expanded_them():
    assert winpath.refusal(r"C:\Users\u\Desktop\NOSUCH~1\x.txt", ME, short_names_expanded=True) is None


# The Windows part of the deny list, with folders as Windows reports them (here: moved ones).
FOLDERS = {
    "startup": r"D:\Profiles\u\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup",
    "common_startup": r"C:\ProgramData\Microsoft\Windows\Start Menu\Programs\StartUp",
    "roaming_app_data": r"D:\Profiles\u\AppData\Roaming", "local_app_data": r"C:\Users\u\AppData\Local",
    "windows": r"E:\WINNT", "program_files": r"E:\Apps", "program_data": r"C:\ProgramData",
    "profile": r"C:\Users\u",
}


@pytest.mark.parametrize("raw,why", [
    (r"\\?\D:\Profiles\u\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\hello.js", "开机启动"),
    (r"\\localhost\d$\PROFILES\U\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\StartUp.\x.txt", "开机启动"),
    (r"//?/C:/ProgramData/Microsoft/Windows/Start Menu/Programs/StartUp/x.txt", "开机启动"),
    (r"\\?\D:\Profiles\u\AppData\Roaming\x.txt", "AppData"),
    (r"C:\Users\u\AppData\LocalLow\x.txt", "AppData"),
    (r"\\.\E:\WINNT\System32\x.txt", "系统文件夹"),
    (r"\\127.0.0.1\e$\Apps\x\y.txt", "系统文件夹"),
    (r"\\?\C:\Windows\x", "系统文件夹"),
    (r"C:\Program Files (x86)\x", "系统文件夹"),
])
def test_windows_deny_rules_see_through_every_spelling(raw, why):
    reason = winpath.deny_reason(winpath.comparable(raw, ME), FOLDERS, env={})
    assert reason and why in reason, (raw, reason)


@pytest.mark.parametrize("raw", [r"C:\Users\u\Desktop\a.txt", r"D:\桌面\报表.xlsx", r"\\fileserver\财务\a.xlsx",
                                 r"E:\WINNT2\a.txt"])
def test_windows_deny_rules_leave_ordinary_folders_alone(raw):
    assert winpath.deny_reason(winpath.comparable(raw, ME), FOLDERS, env={}) is None


def test_env_is_only_a_fallback_and_defaults_always_count():
    assert winpath.deny_reason("c:/windows/x", {}, env={}) is not None
    assert winpath.deny_reason("f:/sys/x", {}, env={"SYSTEMROOT": r"F:\SYS"}) is not None
    assert winpath.deny_reason("f:/sys/x", {}, env={}) is None


def test_known_folders_ask_nothing_off_windows():
    if os.name != "nt":
        assert winpath.known_folders() == {}
        assert winpath.final_path("/tmp") is None


# ---------------------------------------------------------------------------------------------
# Runnable types: refused outside the workspace, fine inside; office files fine everywhere

RUNNABLE = ["hello.js", "tool.JAR", "console.msc", "panel.cpl", "x.wsc", "run.py", "run.pyw", "x.pyc", "app.pyz",
            "setup.exe", "a.com", "b.msi", "version.dll", "drv.sys", "x.ps1xml", "a.appref-ms", "a.library-ms",
            "a.settingcontent-ms", "a.application", "a.gadget", "x.inf", "a.ins", "a.isp", "a.job", "a.msh",
            "a.mst", "a.msp", "a.sct", "a.shb", "a.shs", "a.vb", "a.vbscript", "a.ws", "addin.xll", "help.chm"]
OFFICE = ["报表.xlsx", "报表.xls", "合同.docx", "数据.csv", "说明.txt", "笔记.md", "扫描.pdf", "宏.xlsm", "图.png",
          "演示.pptx", "a.json", "a.html", "a.xml"]


@pytest.mark.parametrize("name", RUNNABLE)
def test_runnable_types_refused_outside_the_workspace(name, home, tmp_path):
    reason = paths.deny_reason(str(tmp_path / "out" / name))
    assert reason and "工作空间" in reason, (name, reason)


@pytest.mark.parametrize("name", OFFICE)
def test_office_files_stay_writable(name, tmp_path):
    assert paths.deny_reason(str(tmp_path / "out" / name)) is None


def test_write_text_refuses_a_script_outside_but_writes_it_in_the_workspace(run, home, tmp_path):
    error = fail(run("write_text", {"path": str(tmp_path / "hello.js"), "text": "WScript.Echo(1)"}))
    assert "工作空间" in error and not (tmp_path / "hello.js").exists()
    data = ok(run("write_text", {"path": "hello.js", "text": "WScript.Echo(1)"}))
    assert data["path"].endswith("hello.js") and os.path.isfile(data["path"])
    ok(run("write_text", {"path": str(tmp_path / "报表.csv"), "text": "a,b\n1,2\n"}))


def test_colons_and_device_names_mean_nothing_special_on_posix(run, tmp_path):
    if os.name == "nt":
        pytest.skip("POSIX names")
    assert paths.deny_reason(str(tmp_path / "a:b.txt")) is None
    assert paths.deny_reason(str(tmp_path / "CON.txt")) is None


# ---------------------------------------------------------------------------------------------
# Backups: a failed replace does not multiply them

def _backups(home):
    folder = os.path.join(str(home), ".xla", "backup")
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            out.append(fh.read())
    return out


def test_same_content_is_not_backed_up_twice(run, home, tmp_path):
    target = str(tmp_path / "台账.txt")
    for text in ("v1", "v2", "v2", "v2", "v2"):
        ok(run("write_text", {"path": target, "text": text}))
    assert _backups(home) == ["v1", "v2"]


def test_five_failed_replaces_keep_the_older_backups():
    """The file cannot be replaced (Linux stand-in for Excel holding it: a sticky shared folder
    where the file belongs to someone else, so the rename fails after the backup step). Five
    failed writes leave the three older versions in the backup folder and add one copy at most."""
    if os.name == "nt":
        pytest.skip("POSIX mode bits")
    base = nobody_dir("xla-held-")
    home = base / "home"
    home.mkdir()
    shared = tempfile.mkdtemp(prefix="xla-shared-")
    os.chmod(shared, 0o1777)                      # like /tmp: anyone creates, only owners rename over
    target = os.path.join(shared, "台账.txt")
    if os.geteuid() == 0:
        os.chown(str(home), NOBODY, NOBODY)

    def write(text):
        return lambda: vars(xla_host.run_tool("write_text", {"path": target, "text": text}, home=str(home),
                                              timeout=60))

    for text in ("v1", "v2", "v3", "v4"):
        got = as_nobody(write(text)) if os.geteuid() == 0 else vars(xla_host.run_tool(
            "write_text", {"path": target, "text": text}, home=str(home), timeout=60))
        assert "child_error" not in got, got
        assert_contract(types.SimpleNamespace(**got))
    assert _backups(home) == ["v1", "v2", "v3"]
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the file to another owner")
    os.chown(target, 0, 0)                        # now only root may replace it
    os.chmod(target, 0o644)
    errors = []
    for i in range(5):
        got = as_nobody(write("v5-%d" % i))
        assert "child_error" not in got, got
        data = assert_contract(types.SimpleNamespace(**got))
        assert not data["ok"]
        errors.append(data["error"])
    with open(target, encoding="utf-8") as fh:
        assert fh.read() == "v4"                  # the user's file is untouched
    assert _backups(home) == ["v1", "v2", "v3", "v4"], _backups(home)
    assert all("没有被改动" in e for e in errors), errors
    assert not [n for n in os.listdir(shared) if n.endswith(".tmp")]
