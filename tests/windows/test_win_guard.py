"""run_python's fence on a real Windows CPython (3.9.13 embeddable, under Wine in the lane).

Each attack is a script run through the run_python tool the way a Windows host runs it, then the
file system is checked from the Linux side (an escape is a file that exists, whatever the script
printed). What Wine does not enforce (integrity levels, the Job object's limits) keeps its test: it
runs and asserts on real Windows, and is an xfail with the reason under Wine (see rules.md, the
Windows escape matrix)."""
import json
import ntpath
import os
import shutil

import pytest

from winlane import linux_path, profile, win_path, win_tool

pytestmark = pytest.mark.windows

WINE_ONLY = "Wine does not enforce it (no mandatory integrity levels; Job limits are stubs there)"


def under_wine():
    """The lane's Windows is Wine whenever the tests run on Linux (winlane starts python.exe
    through wine); on a real Windows runner it is not."""
    return os.name != "nt"


def kernel_xfail():
    """Wine cannot enforce this layer: the test still runs, and is an xfail there (not a skip)."""
    if under_wine():
        pytest.xfail(WINE_ONLY)


def workspace(home):
    ws = os.path.join(home, ".xla", "workspace")
    os.makedirs(ws, exist_ok=True)
    return ws


def run_script(home, source, env=None, timeout=40, name="attack.py"):
    path = os.path.join(workspace(home), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    res = win_tool("run_python", {"path": win_path(path), "timeout": timeout - 10}, home=home, env=env,
                   timeout=timeout + 20)
    assert res.ok, res
    return res.data


ATTACK = r'''
import json, os, shutil, sys
T = %(target)r          # a folder outside the workspace (Windows path)
WS = os.getcwd()         # the script's folder: the workspace
R = %(rel)r             # T relative to the workspace
PROFILE = %(profile)r
SRC = os.path.join(WS, "victim.txt")
out = {}

def attempt(name, fn):
    try:
        fn()
        out[name] = "done"
    except BaseException as e:
        out[name] = "refused " + type(e).__name__

def write(p):
    return lambda: open(p, "w").close()

def local_unc(host, p):
    return "\\\\" + host + "\\" + p[0] + "$" + p[2:]

open(SRC, "w").close()
attempt("dotdot", write(R + "\\x_dotdot.txt"))
attempt("dotdot_slash", write(R.replace("\\", "/") + "/x_slash.txt"))
attempt("ws_dotdot", write(WS + "\\" + R + "\\x_wsdotdot.txt"))
attempt("mixed", write(WS + "/" + R.replace("\\", "/", 1) + "\\x_mixed.txt"))
attempt("verbatim", write("\\\\?\\" + T + "\\x_verbatim.txt"))
attempt("nt_prefix", write("\\??\\" + T + "\\x_ntprefix.txt"))
attempt("device_ns", write("\\\\.\\" + T + "\\x_devns.txt"))
attempt("unc_verbatim", write("\\\\?\\UNC\\localhost\\" + T[0] + "$" + T[2:] + "\\x_uncv.txt"))
attempt("admin_share", write(local_unc("localhost", T) + "\\x_admin.txt"))
attempt("admin_share_ip", write(local_unc("127.0.0.1", T) + "\\x_adminip.txt"))
attempt("trailing_dot", write(WS + "\\" + R + ".\\x_trail.txt"))
attempt("drive_relative", write(T[:2] + T[2:] + "\\x_drive.txt"))
attempt("verbatim_dotdot", write("\\\\?\\" + WS + "\\" + R + "\\x_vdotdot.txt"))
attempt("startup", write("\\\\?\\" + PROFILE + "\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\x_hello.js"))
attempt("ssh", lambda: (os.makedirs("\\\\?\\" + PROFILE + "\\.ssh", exist_ok=True),
                        open("\\\\?\\" + PROFILE + "\\.ssh\\authorized_keys", "a").close()))
attempt("appdata_temp", write(os.path.join(PROFILE, "AppData", "Local", "Temp", "x_apptemp.txt")))
attempt("device_con", write(WS + "\\CON"))     # the console (Python opens it as _WindowsConsoleIO): no file
attempt("device_com1", write(WS + "\\com1.txt"))
attempt("device_aux_dir", write(WS + "\\aux\\x.txt"))
attempt("ads", write(SRC + ":evil"))
attempt("rename_out", lambda: os.rename(SRC, T + "\\x_renamed.txt"))
attempt("replace_out", lambda: os.replace(SRC, R + "\\x_replaced.txt"))
attempt("move_out", lambda: shutil.move(SRC, "\\\\?\\" + T + "\\x_moved.txt"))
attempt("copy_out", lambda: shutil.copyfile(SRC, "\\\\localhost\\" + T[0] + "$" + T[2:] + "\\x_copied.txt"))
attempt("mkdir_out", lambda: os.mkdir(R + "\\x_dir"))
attempt("remove_out", lambda: os.remove(R + "\\keep.txt"))
attempt("chmod_out", lambda: os.chmod(T + "\\keep.txt", 0o444))
attempt("rmtree_out", lambda: shutil.rmtree("\\\\?\\" + T + "\\keepdir"))
# what must keep working
attempt("ok_relative", write("ok_rel.txt"))
attempt("ok_dotdot_inside", write("sub_missing\\..\\ok_dd.txt"))
attempt("ok_verbatim_inside", write("\\\\?\\" + WS + "\\ok_verb.txt"))
attempt("ok_devnull", write(os.devnull))
attempt("ok_mkdir", lambda: os.makedirs(WS + "\\deep\\er"))
attempt("ok_read_outside", lambda: open(R + "\\keep.txt").read())
attempt("ok_read_verbatim", lambda: open("\\\\?\\" + T + "\\keep.txt", "rb").read())
attempt("ok_read_admin_share", lambda: open(local_unc("localhost", T) + "\\keep.txt").read())
print(json.dumps(out))
'''

ESCAPES = ("dotdot", "dotdot_slash", "ws_dotdot", "mixed", "verbatim", "nt_prefix", "device_ns", "unc_verbatim",
           "admin_share", "admin_share_ip", "trailing_dot", "drive_relative", "verbatim_dotdot", "startup", "ssh",
           "appdata_temp", "device_com1", "device_aux_dir", "ads", "rename_out", "replace_out",
           "move_out", "copy_out", "mkdir_out", "remove_out", "chmod_out", "rmtree_out")
OK = ("ok_relative", "ok_dotdot_inside", "ok_verbatim_inside", "ok_devnull", "ok_mkdir", "ok_read_outside",
      "ok_read_verbatim", "ok_read_admin_share")


def test_escape_suite_paths_hold(lane, win_home, win_tmp):
    r"""Issue 33: `..`, `\\?\`, `\??\`, `\\.\`, UNC and admin shares, trailing dots, Startup, .ssh, the
    AppData temp folder, device names, ADS, remove/rename/move/copy/mkdir/chmod out: all refused."""
    (win_tmp / "keep.txt").write_text("keep")
    (win_tmp / "keepdir").mkdir()
    (win_tmp / "keepdir" / "a.txt").write_text("a")
    ws = workspace(win_home)
    target = win_path(win_tmp)
    rel = ntpath.relpath(target, win_path(ws))
    prof = win_path(profile())
    startup = os.path.join(profile(), "AppData", "Roaming", "Microsoft", "Windows", "Start Menu", "Programs",
                           "Startup", "x_hello.js")
    ssh_keys = os.path.join(profile(), ".ssh", "authorized_keys")
    before_ssh = os.path.exists(ssh_keys)
    data = run_script(win_home, ATTACK % {"target": target, "rel": rel, "profile": prof})
    try:
        assert data["exit_code"] == 0, data
        got = json.loads(data["stdout"].strip().splitlines()[-1])
        escaped = [n for n in ESCAPES if got.get(n) == "done"]
        # Wine serves no admin shares (FileNotFoundError): what counts is that the fence let the read through
        broken = [n for n in OK if got.get(n) != "done"
                  and not (n == "ok_read_admin_share" and got.get(n) == "refused FileNotFoundError")]
        left = sorted(p.name for p in win_tmp.iterdir() if p.name not in ("keep.txt", "keepdir"))
        assert not escaped and not left, (escaped, left, got)
        assert not broken, (broken, [(n, got.get(n)) for n in broken])
        assert (win_tmp / "keep.txt").read_text() == "keep" and (win_tmp / "keepdir" / "a.txt").exists()
        assert os.access(str(win_tmp / "keep.txt"), os.W_OK)
        assert not os.path.exists(startup)
        assert os.path.exists(ssh_keys) == before_ssh
        assert os.path.exists(os.path.join(ws, "ok_rel.txt")) and os.path.exists(os.path.join(ws, "ok_dd.txt"))
        assert data["fence"]["active"] is True and "audit_hook" in data["fence"]["layers"]
        if "low_integrity_token" not in data["fence"]["layers"]:     # Wine: the answer says the hook alone holds
            assert "审计钩子" in data["fence"]["note"] and "启动方" in data["fence"]["token"], data["fence"]
        assert len(data["blocked"]) > 0 and all(b["message"].startswith("xla_guard") for b in data["blocked"])
    finally:
        if os.path.exists(startup):
            os.remove(startup)
        if not before_ssh and os.path.isdir(os.path.dirname(ssh_keys)):
            shutil.rmtree(os.path.dirname(ssh_keys), ignore_errors=True)


TEMPFILES = r'''
import json, os, tempfile
d = tempfile.gettempdir()
fd, name = tempfile.mkstemp(suffix=".bin"); os.write(fd, b"x" * 1000); os.close(fd)
with tempfile.TemporaryFile() as f:
    f.write(b"spool"); f.seek(0); spooled = f.read()
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("a,b\n")
sub = tempfile.mkdtemp()
with tempfile.SpooledTemporaryFile(max_size=10) as f:
    f.write(b"more than ten bytes"); f.rollover()
print(json.dumps({"dir": d, "env": [os.environ.get(k) for k in ("TEMP", "TMP", "TMPDIR")], "mkstemp": name,
                  "spooled": spooled.decode(), "sub": sub}))
'''


def test_tempfile_works_in_a_per_run_folder_removed_afterwards(lane, win_home):
    """Issue 33: %TEMP% is under AppData (refused), so tempfile retried until the timeout. The run gets
    its own temp folder inside the workspace; TEMP/TMP/TMPDIR point there; it is gone afterwards."""
    data = run_script(win_home, TEMPFILES)
    assert data["exit_code"] == 0 and not data["timed_out"], data
    got = json.loads(data["stdout"].strip().splitlines()[-1])
    ws = win_path(workspace(win_home))
    assert got["dir"].lower().startswith(ws.lower() + "\\.xla-tmp\\run-"), got
    assert got["env"] == [got["dir"]] * 3
    assert "appdata" not in got["dir"].lower()
    assert got["spooled"] == "spool" and got["mkstemp"].startswith(got["dir"])
    assert not os.path.exists(linux_path(got["dir"])), "the per-run temp folder is removed after the run"
    assert data["duration"] < 20


def test_fence_starts_on_the_embeddable_python_without_stdlib_sources(lane, win_home):
    """The lane's CPython has its stdlib only as bytecode in python39.zip: the guard accepts that
    bytecode (hashed before the script runs) and the script can import stdlib modules afterwards,
    while crafted bytecode stays refused."""
    folder = os.path.dirname(lane.python_exe)
    assert not os.path.exists(os.path.join(folder, "Lib")) and os.path.isfile(os.path.join(folder, "python39.zip"))
    src = ("import json, csv, decimal, statistics, email.mime.text, xml.dom.minidom, marshal\n"
           "ok = statistics.mean([1, 2, 3]) == 2\n"
           "try:\n    marshal.loads(marshal.dumps(compile('1', 'x', 'eval'))); crafted = 'loaded'\n"
           "except Exception as e:\n    crafted = 'refused'\n"
           "print(json.dumps({'ok': ok, 'crafted': crafted}))\n")
    data = run_script(win_home, src)
    assert data["exit_code"] == 0, data
    assert data["fence"]["active"] is True
    got = json.loads(data["stdout"].strip().splitlines()[-1])
    assert got == {"ok": True, "crafted": "refused"}


def test_msvcrt_locking_refused(lane, win_home):
    """A lock on a file outside (the host's slot locks) would stall other tools."""
    src = ("import msvcrt, os, sys\nfd = os.open(sys.executable, os.O_RDONLY)\n"
           "try:\n    msvcrt.locking(fd, msvcrt.LK_NBRLCK, 1); print('LOCKED')\n"
           "except PermissionError as e:\n    print('refused')\n")
    data = run_script(win_home, src)
    assert data["stdout"].strip() == "refused", data


HANDLES = r'''
import ctypes, json
nt = ctypes.WinDLL("ntdll"); k = ctypes.WinDLL("kernel32")
def typename(h):
    buf = ctypes.create_string_buffer(1024); n = ctypes.c_ulong()
    if nt.NtQueryObject(ctypes.c_void_p(h), 2, buf, 1024, ctypes.byref(n)) != 0:
        return None
    return ctypes.wstring_at(ctypes.c_void_p.from_buffer(buf, 8).value, ctypes.c_ushort.from_buffer(buf, 0).value // 2)
jobs = [h for h in range(4, 0x10000, 4) if typename(h) == "Job"]
injob = ctypes.c_int(0)
k.IsProcessInJob(ctypes.c_void_p(-1), None, ctypes.byref(injob))
print(json.dumps({"job_handles": jobs, "in_job": injob.value}))
'''


def test_job_is_held_by_the_launcher_not_the_script(lane, win_home):
    """Issue 33: the Job object's handle sat in the script's own process (native code could lift its
    limits). Now the script's process is in a job but holds no handle of type Job (enumerated with
    NtQueryObject; audit layer off so ctypes may run)."""
    data = run_script(win_home, HANDLES, env={"XLA_GUARD_LAYERS": ""})
    assert data["exit_code"] == 0, data
    got = json.loads(data["stdout"].strip().splitlines()[-1])
    assert got["in_job"] == 1 and got["job_handles"] == [], got
    assert "由 run_python 持有" in data["fence"]["job"]


CHILD = r'''
import subprocess
try:
    subprocess.run(["cmd.exe", "/c", "echo", "hi"], capture_output=True, timeout=10)
    print("CHILD RAN")
except OSError as e:
    print("refused", e.winerror)
'''


def test_job_refuses_child_processes_without_the_hook(lane, win_home):
    """Kernel layer alone (audit off): ActiveProcessLimit = 1 refuses CreateProcess."""
    data = run_script(win_home, CHILD, env={"XLA_GUARD_LAYERS": ""})
    kernel_xfail()
    assert data["stdout"].strip().startswith("refused"), data


MEMORY = r'''
import ctypes
k = ctypes.WinDLL("kernel32"); k.VirtualAlloc.restype = ctypes.c_void_p
p = k.VirtualAlloc(None, ctypes.c_size_t(5 << 30), 0x3000, 0x04)
print("refused" if not p else "ALLOCATED")
'''


def test_job_memory_limit_without_the_hook(lane, win_home):
    """Kernel layer alone: committing 5 GiB is refused by ProcessMemoryLimit (4 GiB)."""
    data = run_script(win_home, MEMORY, env={"XLA_GUARD_LAYERS": ""})
    kernel_xfail()
    assert data["stdout"].strip() == "refused", data


LOWIL = r'''
import os, sys
T = %(target)r
try:
    fd = os.open(T + "\\x_lowil.txt", os.O_WRONLY | os.O_CREAT); os.close(fd); print("WROTE")
except PermissionError:
    print("refused")
open("inside.txt", "w").close()
print("inside ok")
'''


def test_low_integrity_token_refuses_writes_outside_without_the_hook(lane, win_home, win_tmp):
    """Kernel layer alone: the script's low-integrity token cannot write outside the Low-labelled
    workspace (what native code bypassing the hook would meet)."""
    data = run_script(win_home, LOWIL % {"target": win_path(win_tmp)}, env={"XLA_GUARD_LAYERS": ""})
    assert "inside ok" in data["stdout"], data
    kernel_xfail()
    assert data["stdout"].splitlines()[0].strip() == "refused", data
    assert "low_integrity_token" in data["fence"]["layers"]
    assert not (win_tmp / "x_lowil.txt").exists()


SPAWN = r'''
import json, os, sys
sys.path.insert(0, %(box)r)
from xlaguard import winjob, wintoken
tok, detail = wintoken.low_integrity_token()
code = ("import sys; sys.path.insert(0, sys.argv[1]); from xlaguard import wintoken; "
        "print(sys.stdin.readline().strip(), wintoken.integrity_level())")
child = winjob.spawn([sys.executable, "-c", code, %(box)r], os.getcwd(), dict(os.environ), 1 << 30, 30, tok, detail)
child.stdin.write(b"hello\n"); child.stdin.close()
out = child.stdout.read().decode().split() + [child.stderr.read().decode()[-300:]]
rc = child.wait(20)
child.close()
print(json.dumps({"token": bool(tok), "detail": child.token_detail, "out": out, "rc": rc}))
'''


def test_launcher_starts_the_child_with_the_restricted_token(lane):
    """winjob.spawn with wintoken's token: CreateProcessAsUserW, suspended, into the job, resumed, the
    three pipes work. Wine runs the code path; that the child is really Low is checked on Windows."""
    from winlane import toolbox, win_python
    out = win_python(SPAWN % {"box": win_path(toolbox())})
    assert out.exit_code == 0, out
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["token"] and got["rc"] == 0 and got["out"][0] == "hello", got
    assert "低完整性" in got["detail"]
    kernel_xfail()
    assert got["out"][1] == str(0x1000), got


LINKED = r'''
import json, os, shutil
out = {}
for name, fn in [("via_link", lambda: open("out\\x_link.txt", "w").close()),
                 ("via_link_verbatim", lambda: open("\\\\?\\" + os.getcwd() + "\\out\\x_linkv.txt", "w").close()),
                 ("mkdir_via_link", lambda: os.mkdir("out\\x_dir")),
                 ("rename_into_link", lambda: os.rename("victim.txt", "out\\x_ren.txt")),
                 ("rmtree_via_link", lambda: shutil.rmtree("out\\keepdir"))]:
    try:
        fn(); out[name] = "done"
    except BaseException as e:
        out[name] = type(e).__name__
print(json.dumps(out))
'''


def test_links_out_of_the_workspace_are_followed_to_where_they_lead(lane, win_home, win_tmp):
    """A link in the workspace pointing outside (made from the Linux side: Wine shows it as a
    symlink/junction, and GetFinalPathNameByHandleW resolves it): writes through it are refused."""
    (win_tmp / "keepdir").mkdir()
    (win_tmp / "keepdir" / "a.txt").write_text("a")
    ws = workspace(win_home)
    os.symlink(str(win_tmp), os.path.join(ws, "out"))
    open(os.path.join(ws, "victim.txt"), "w").close()
    data = run_script(win_home, LINKED)
    got = json.loads(data["stdout"].strip().splitlines()[-1])
    assert all(v == "PermissionError" for v in got.values()), got
    assert sorted(p.name for p in win_tmp.iterdir()) == ["keepdir"] and (win_tmp / "keepdir" / "a.txt").exists()
