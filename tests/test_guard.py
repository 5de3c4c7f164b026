"""Red team for xla_guard, through run_python as the host runs it: each attack is a real script that
tries one way to write outside the allowed directories or to start a program (the escapes listed in
the guard design notes). After every run the outside target must not exist / be unchanged, and the
answer must report the refusal in Chinese.

Each attack says which layer is expected to stop it:
  "1"      the audit hook alone (checked a second time with XLA_GUARD_LAYERS=audit);
  "2"      only the kernel fence (Landlock): layer 1 is known to let it through;
  "either" races: whichever layer loses the race, the other one must hold;
  "design" defeated by how the launcher runs the script (no finalization), nothing to report;
  "os"     the operating system refuses it anyway (a write mapping needs a writable fd).
The allowed roots in these tests are the workspace under the private HOME and a private TMPDIR, so
"outside" is a folder next to them that the test can inspect."""
import json
import os
import sys
import textwrap

import pytest

from conftest import CJK, assert_contract

LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(os.name == "nt", reason="the attack scripts use POSIX paths")


def landlock_available():
    if not LINUX:
        return False
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1)) > 0


LANDLOCK = landlock_available()

# {M} marker path outside, {OUT} outside folder, {V} existing outside file (content "original"),
# {VD} existing outside folder, {WS} workspace, {T} private temp dir, {L} a symlink in the workspace
# pointing at {OUT} (as a user might have made), {H} a hard link in the workspace to {V}.
ATTACKS = [
    # --- plain writes
    ("open_w", "1", "open({M!r}, 'w').write('x')"),
    ("open_a", "1", "open({V!r}, 'a').write('x')"),
    ("open_x", "1", "open({M!r}, 'x')"),
    ("open_rplus", "1", "open({V!r}, 'r+').write('x')"),
    ("io_fileio", "1", "import io; io.FileIO({M!r}, 'w')"),
    ("_io_open", "1", "import _io; _io.open({M!r}, 'wb')"),
    ("pathlib_write", "1", "import pathlib; pathlib.Path({M!r}).write_text('x')"),
    ("pathlib_touch", "1", "import pathlib; pathlib.Path({M!r}).touch()"),
    ("str_subclass", "1", "class S(str):\n    def __eq__(s, o): return True\n    __hash__ = str.__hash__\n"
                          "open(S({M!r}), 'w')"),
    ("bytes_path", "1", "open({M!r}.encode(), 'w')"),
    ("dotdot", "1", "import os; open(os.path.join({WS!r}, '..', '..', 'outside', 'marker.txt'), 'w')"),
    ("chdir_relative", "1", "import os; os.chdir({OUT!r}); open('marker.txt', 'w')"),
    ("os_open_creat", "1", "import os; os.open({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("posix_open", "1", "import posix, os; posix.open({M!r}, os.O_CREAT | os.O_RDWR)"),
    ("os_open_trunc_rdonly", "1", "import os; os.open({V!r}, os.O_RDONLY | os.O_TRUNC)"),
    ("fdopen", "1", "import os; os.fdopen(os.open({M!r}, os.O_CREAT | os.O_WRONLY), 'w')"),
    # --- dir fds and /proc
    ("dir_fd_dotdot", "1", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\n"
                           "os.open('../../outside/marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("dir_fd_outside", "1", "import os\nfd = os.open({OUT!r}, os.O_RDONLY)\n"
                            "os.open('marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("o_path_outside", "1", "import os\nfd = os.open({OUT!r}, os.O_PATH)\n"
                            "os.open('marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("mkdir_dir_fd", "1", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\nos.mkdir('../../outside/marker.txt', dir_fd=fd)"),
    ("proc_self_fd", "1", "import os\nfd = os.open({V!r}, os.O_RDONLY)\nopen('/proc/self/fd/%d' % fd, 'w')"),
    ("proc_self_cwd", "1", "import os; os.chdir({OUT!r}); open('/proc/self/cwd/marker.txt', 'w')"),
    ("o_tmpfile_linkat", "1", "import os\nfd = os.open({WS!r}, os.O_TMPFILE | os.O_WRONLY)\nos.write(fd, b'x')\n"
                              "os.link('/proc/self/fd/%d' % fd, {M!r})"),
    # --- links
    ("symlink_out", "1", "import os; os.symlink({OUT!r}, os.path.join({WS!r}, 'l2'))\n"
                         "open(os.path.join({WS!r}, 'l2', 'marker.txt'), 'w')"),
    ("symlink_relative_out", "1", "import os; os.symlink('../../outside', os.path.join({WS!r}, 'l3'))"),
    ("existing_link_in_ws", "1", "import os; open(os.path.join({L!r}, 'marker.txt'), 'w')"),
    ("existing_link_parent", "1", "import os; os.makedirs(os.path.join({L!r}, 'sub'))"),
    ("hardlink_src_out", "1", "import os; os.link({V!r}, os.path.join({WS!r}, 'h2'))"),
    ("existing_hardlink", "1", "open({H!r}, 'a').write('x')"),
    ("link_moved", "1", "import os\nos.makedirs(os.path.join({WS!r}, 'a', 'b'))\n"
                        "os.symlink('..', os.path.join({WS!r}, 'a', 'b', 'up'))\n"
                        "os.rename(os.path.join({WS!r}, 'a', 'b'), os.path.join({WS!r}, 'b'))\n"
                        "open(os.path.join({WS!r}, 'b', 'up', '..', '..', 'outside', 'marker.txt'), 'w')"),
    # --- delete, rename, metadata
    ("remove", "1", "import os; os.remove({V!r})"),
    ("unlink_dir_fd", "1", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\nos.unlink('../../outside/victim.txt', dir_fd=fd)"),
    ("rmdir", "1", "import os; os.rmdir({VD!r})"),
    ("rmtree", "1", "import shutil; shutil.rmtree({VD!r})"),
    ("rename_out_in", "1", "import os; os.rename({V!r}, os.path.join({WS!r}, 'stolen.txt'))"),
    ("replace_in_out", "1", "import os\nopen(os.path.join({WS!r}, 'x'), 'w').write('evil')\n"
                            "os.replace(os.path.join({WS!r}, 'x'), {V!r})"),
    ("mkdir", "1", "import os; os.mkdir({M!r})"),
    ("makedirs", "1", "import os; os.makedirs(os.path.join({M!r}, 'a', 'b'))"),
    ("chmod", "1", "import os; os.chmod({V!r}, 0o777)"),
    ("fchmod_readonly_fd", "1", "import os; fd = os.open({V!r}, os.O_RDONLY); os.chmod(fd, 0o777)"),
    ("utime", "1", "import os; os.utime({V!r}, (0, 0))"),
    ("truncate", "1", "import os; os.truncate({V!r}, 0)"),
    ("setxattr", "1", "import os; os.setxattr({V!r}, 'user.x', b'1')"),
    ("mkfifo", "1", "import os; os.mkfifo({M!r})"),
    ("mknod", "1", "import os, stat; os.mknod({M!r}, stat.S_IFREG | 0o600)"),
    ("shutil_copy", "1", "import shutil; shutil.copy(__file__, {M!r})"),
    ("shutil_move", "1", "import shutil; shutil.move({V!r}, {WS!r})"),
    ("copytree", "1", "import shutil; shutil.copytree({WS!r}, {M!r})"),
    ("tempfile_dir", "1", "import tempfile; tempfile.mkstemp(dir={OUT!r})"),
    ("named_tempfile_dir", "1", "import tempfile; tempfile.NamedTemporaryFile(dir={OUT!r}, delete=False)"),
    ("logging_file", "1", "import logging; logging.FileHandler({M!r})"),
    ("zipfile", "1", "import zipfile; zipfile.ZipFile({M!r}, 'w')"),
    ("sqlite_connect", "1", "import sqlite3; sqlite3.connect({M!r}).execute('create table t(a)')"),
    ("sqlite_uri", "1", "import sqlite3; sqlite3.connect('file:' + {M!r} + '?mode=rwc', uri=True).execute('create table t(a)')"),
    ("sqlite_connection_class", "1", "import sqlite3; sqlite3.Connection({M!r}).execute('create table t(a)')"),
    ("unix_socket_bind", "1", "import socket; socket.socket(socket.AF_UNIX).bind({M!r})"),
    ("mmap_write", "os", "import mmap\nf = open({V!r}, 'rb')\nm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_WRITE)\n"
                        "m[:1] = b'X'"),
    ("pth_site_packages", "1", "import site, os\nd = site.getusersitepackages()\nos.makedirs(d, exist_ok=True)\n"
                               "open(os.path.join(d, 'evil.pth'), 'w').write('import os')"),
    # --- processes
    ("subprocess_run", "1", "import subprocess; subprocess.run(['touch', {M!r}])"),
    ("subprocess_shell", "1", "import subprocess; subprocess.call('touch ' + {M!r}, shell=True)"),
    ("os_system", "1", "import os; os.system('touch ' + {M!r})"),
    ("os_popen", "1", "import os; os.popen('touch ' + {M!r}).read()"),
    ("os_execv", "1", "import os; os.execv('/usr/bin/touch', ['touch', {M!r}])"),
    ("os_spawnv", "1", "import os; os.spawnv(os.P_WAIT, '/usr/bin/touch', ['touch', {M!r}])"),
    ("posix_spawn", "1", "import os; os.posix_spawn('/usr/bin/touch', ['touch', {M!r}], {{}})"),
    ("posix_spawnp", "1", "import os; os.posix_spawnp('touch', ['touch', {M!r}], dict(PATH='/usr/bin:/bin'))"),
    ("fork", "1", "import os\npid = os.fork()\nif pid == 0:\n    open({M!r}, 'w')\n    os._exit(0)\nos.waitpid(pid, 0)"),
    ("pty_fork", "1", "import pty, os\npid, fd = pty.fork()\nif pid == 0:\n    open({M!r}, 'w')\n    os._exit(0)"),
    ("posixsubprocess_direct", "1", "import _posixsubprocess, subprocess\nsubprocess._fork_exec  # noqa\n"
                                    "_posixsubprocess.fork_exec(*([None] * 23))"),
    ("mp_spawn", "1", "import multiprocessing as mp\n"
                      "if __name__ == '__main__':\n    p = mp.get_context('spawn').Process(target=print)\n    p.start()"),
    ("mp_forkserver", "1", "import multiprocessing as mp\n"
                           "if __name__ == '__main__':\n    p = mp.get_context('forkserver').Process(target=print)\n    p.start()"),
    ("mp_fork", "1", "import multiprocessing as mp, os\n"
                     "def f(): open({M!r}, 'w')\n"
                     "if __name__ == '__main__':\n    p = mp.get_context('fork').Process(target=f)\n    p.start(); p.join()"),
    ("process_pool", "1", "import concurrent.futures as cf\n"
                          "with cf.ProcessPoolExecutor(1) as ex: ex.submit(print, 1).result()"),
    ("asyncio_subprocess", "1", "import asyncio\nasync def main():\n"
                                "    p = await asyncio.create_subprocess_exec('touch', {M!r})\n    await p.wait()\n"
                                "asyncio.run(main())"),
    ("kill_parent", "1", "import os, signal; os.kill(os.getppid(), signal.SIGCONT)"),
    # --- native code and modules without audit events
    ("ctypes_libc_creat", "1", "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.creat({M!r}.encode(), 0o644)"),
    ("ctypes_load_libc", "1", "import ctypes; ctypes.CDLL('libc.so.6')"),
    ("ctypes_pythonapi", "1", "import ctypes; ctypes.pythonapi.PyRun_SimpleString(b'open(\"x\")')"),
    ("tkinter", "1", "import tkinter; tkinter.Tcl().eval('exec touch ' + {M!r})"),
    ("readline_history", "1", "import readline; readline.write_history_file({M!r})"),
    ("posixshmem", "1", "import _posixshmem"),
    ("subinterpreter", "1", "import _xxsubinterpreters as i; i.run_string(i.create(), 'open(%r, \"w\")' % {M!r})"),
    ("interpreters_313", "1", "import _interpreters"),
    ("testcapi", "1", "import _testcapi"),
    ("cffi", "1", "import _cffi_backend"),
    ("extension_in_ws", "1", "import shutil, importlib.util, os, _json\n"
                             "p = os.path.join({WS!r}, 'evil' + os.path.basename(_json.__file__)[5:])\n"
                             "shutil.copy(_json.__file__, p)\n"
                             "spec = importlib.util.spec_from_file_location('_json', p)\nimportlib.util.module_from_spec(spec)"),
    # --- the guard itself
    ("addaudithook", "1", "import sys; sys.addaudithook(lambda e, a: None); open({M!r}, 'w')"),
    ("gc_hunt", "1", "import gc\nfor o in gc.get_objects():\n    pass\nopen({M!r}, 'w')"),
    ("gc_referrers", "1", "import gc, os; gc.get_referrers(os.lstat)"),
    ("settrace", "1", "import sys; sys.settrace(lambda *a: None)"),
    ("setprofile", "1", "import sys; sys.setprofile(lambda *a: None)"),
    ("current_frames", "1", "import sys; sys._current_frames()"),
    ("monkeypatch_os", "1", "import os\nos.getcwd = lambda: {WS!r}\nos.lstat = lambda p: None\nos.path.realpath = lambda p: {WS!r}\n"
                            "os.chdir({OUT!r}); open('marker.txt', 'w')"),
    ("monkeypatch_builtins", "1", "import builtins\nbuiltins.PermissionError = KeyError\nbuiltins.len = lambda x: 0\n"
                                  "open({M!r}, 'w')"),
    ("monkeypatch_open_wrapper", "1", "import os\nos.open.__defaults__ = (0o777, None, None, None, None, None, None, None)\n"
                                      "os.open({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("read_wrapper_defaults", "1", "import os; orig = os.open.__defaults__[2]; orig({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("wrapper_code", "1", "import os; os.open.__code__ = (lambda *a: 0).__code__"),
    ("reimport_posix", "1", "import sys\ndel sys.modules['posix']\nimport posix\nposix.mkfifo({M!r})"),
    ("reload_posix", "1", "import importlib, posix\nimportlib.reload(posix)\nposix.mkfifo({M!r})"),
    ("reimport_posixsubprocess", "1", "import sys\ndel sys.modules['_posixsubprocess']\nimport _posixsubprocess"),
    ("getframe_chain", "1", "import sys\nf = sys._getframe()\nwhile f.f_back: f = f.f_back\n"
                            "g = f.f_globals\nfor k in list(g):\n    if callable(g[k]) and k.startswith('install'):\n"
                            "        g[k]([{OUT!r}])\nopen({M!r}, 'w')"),
    ("launcher_globals", "1", "import sys\nf = sys._getframe()\nwhile f.f_back: f = f.f_back\n"
                              "g = f.f_globals\ng['PATH_EVENTS'].clear()\ng['DENIED_IMPORTS'] = frozenset()\n"
                              "import os; os.remove({V!r})"),
    ("code_replace", "1", "c = (lambda: 0).__code__.replace(co_consts=(1,))"),
    ("marshal_loads", "1", "import marshal; marshal.loads(marshal.dumps(compile('1', 'x', 'eval')))"),
    ("compile_frozen_name", "1", "exec(compile('open(%r, \"w\")' % {M!r}, '<frozen importlib._bootstrap_external>', 'exec'))"),
    # "either": on a loaded machine the 0.1 ms timer can also fire inside the final open's own
    # error path, so the script may die of the injected error instead of a reported block;
    # what must hold either way is that nothing outside was written.
    ("signal_inject", "either", "import signal, os, errno\n"
                           "def h(s, frame):\n    raise OSError(errno.EEXIST, 'injected')\n"
                           "signal.signal(signal.SIGALRM, h)\nsignal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)\n"
                           "for i in range(3000):\n    try:\n        open({M!r}, 'w').close()\n    except OSError:\n        pass\n"
                           "while True:\n    try:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n        break\n    except OSError:\n        pass\n"
                           "open({M!r}, 'w')"),
    ("signal_frame_locals", "1", "import signal, sys\nseen = []\n"
                                 "def h(s, frame):\n    f = sys._getframe()\n    seen.append(f.f_back)\n"
                                 "signal.signal(signal.SIGALRM, h)\nsignal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)\n"
                                 "for i in range(3000):\n    try:\n        open({M!r}, 'w').close()\n    except OSError:\n        pass\n"
                                 "while True:\n    try:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n        break\n    except OSError:\n        pass\n"
                           "open({M!r}, 'w')"),
    ("finalizer_cycle", "design", "class C:\n    def __del__(self):\n        open({M!r}, 'w')\n"
                             "a = C(); a.self = a\nimport sys; sys.modules['__keep__'] = a"),
    ("atexit_write", "1", "import atexit; atexit.register(lambda: open({M!r}, 'w'))"),
    ("tiocsti", "1", "import fcntl; fcntl.ioctl(0, 0x5412, b'x')"),
    # --- known gaps of the audit hook: only the kernel fence stops these
    ("sqlite_attach", "2", "import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('ATTACH DATABASE ? AS x', ({M!r},))\n"
                           "c.execute('create table x.t(a)')"),
    ("sqlite_vacuum_into", "2", "import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('create table t(a)')\n"
                                "c.execute('VACUUM INTO ?', ({M!r},))"),
    ("semlock_dev_shm", "2", "import _multiprocessing\n_multiprocessing.SemLock(1, 1, 1, '/xla_guard_test_sem', False)"),
    # --- races between the check and the syscall
    ("race_symlink_swap", "either", "import os, threading\n"
                                    "real = os.path.join({WS!r}, 'real'); os.mkdir(real)\n"
                                    "a = os.path.join({WS!r}, 'a'); os.rename({L!r}, a)\nstop = []\n"
                                    "def flip():\n    tmp = os.path.join({WS!r}, 'tmp')\n    while not stop:\n"
                                    "        try:\n            os.rename(a, tmp); os.rename(real, a); os.rename(a, real); os.rename(tmp, a)\n"
                                    "        except OSError:\n            pass\n"
                                    "t = threading.Thread(target=flip); t.start()\nhits = 0\n"
                                    "for i in range(3000):\n    try:\n        open(os.path.join(a, 'marker.txt'), 'w').close()\n"
                                    "    except OSError:\n        hits += 1\nstop.append(1); t.join()\nprint('refused', hits)\n"
                                    "open({M!r}, 'w')"),
    ("race_chdir", "either", "import os, threading\nstop = []\n"
                             "def flip():\n    while not stop:\n        os.chdir({OUT!r}); os.chdir({WS!r})\n"
                             "t = threading.Thread(target=flip); t.start()\n"
                             "for i in range(3000):\n    try:\n        open('marker.txt', 'w').close()\n"
                             "    except OSError:\n        pass\nstop.append(1); t.join()\nopen({M!r}, 'w')"),
]
IDS = [a[0] for a in ATTACKS]


@pytest.fixture
def arena(tmp_path, home):
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "outside"
    out.mkdir()
    victim = out / "victim.txt"
    victim.write_text("original")
    os.chmod(str(victim), 0o644)
    os.utime(str(victim), (1000000000, 1000000000))
    vdir = out / "victim_dir"
    vdir.mkdir()
    (vdir / "keep.txt").write_text("keep")
    link = ws / "link_out"
    os.symlink(str(out), str(link))
    hard = ws / "hard_link"
    os.link(str(victim), str(hard))
    names = dict(M=str(out / "marker.txt"), OUT=str(out), V=str(victim), VD=str(vdir), WS=str(ws), T=str(tmp),
                 L=str(link), H=str(hard))
    return names


def snapshot(names):
    out = names["OUT"]
    st = os.stat(names["V"])
    items = sorted(os.listdir(out))
    return (items, open(names["V"]).read(), st.st_mode, st.st_mtime, os.listdir(names["VD"]),
            os.path.exists("/dev/shm/xla_guard_test_sem") or os.path.exists("/dev/shm/sem.xla_guard_test_sem"))


def run_attack(run, names, code, layers=None):
    script = os.path.join(names["WS"], "attack.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(code.format(**names)) + "\n")
    env = {"TMPDIR": names["T"]}
    if layers:
        env["XLA_GUARD_LAYERS"] = layers
    result = run("run_python", {"path": script, "timeout": 40}, extra_env=env)
    data = assert_contract(result)
    assert data["ok"], data
    return data


def assert_held(names, before, data):
    after = snapshot(names)
    assert after == before, "outside changed: %r -> %r\n%s" % (before, after, json.dumps(data, ensure_ascii=False)[:3000])


@pytest.mark.parametrize("name,layer,code", ATTACKS, ids=IDS)
def test_attack_is_stopped(run, arena, name, layer, code):
    if layer == "2" and not LANDLOCK:
        pytest.skip("needs Landlock")
    before = snapshot(arena)
    data = run_attack(run, arena, code)
    assert_held(arena, before, data)
    assert data["fence"]["active"] is True
    assert ("landlock" in data["fence"]["layers"]) == LANDLOCK
    if layer in ("1", "2") or data["blocked"]:
        assert data["blocked"], json.dumps(data, ensure_ascii=False)[:3000]
        assert all(CJK.search(b["message"]) for b in data["blocked"])
        assert "拦截" in data["summary"]
    if layer == "2":
        # the kernel refused it; the audit hook had nothing to say
        assert data["exit_code"] != 0
        assert not [b for b in data["blocked"] if b["layer"] == "audit_hook"]
        assert [b for b in data["blocked"] if b["layer"] == "landlock"]


@pytest.mark.parametrize("name,layer,code", [a for a in ATTACKS if a[1] == "1"],
                         ids=[a[0] for a in ATTACKS if a[1] == "1"])
def test_attack_is_stopped_by_the_audit_hook_alone(run, arena, name, layer, code):
    before = snapshot(arena)
    data = run_attack(run, arena, code, layers="audit")
    assert_held(arena, before, data)
    assert data["fence"]["layers"] == ["audit_hook"]
    assert data["blocked"] and "拦截" in data["summary"]


@pytest.mark.skipif(not LANDLOCK, reason="needs Landlock")
@pytest.mark.parametrize("name,layer,code", [a for a in ATTACKS if a[1] == "2"],
                         ids=[a[0] for a in ATTACKS if a[1] == "2"])
def test_known_gaps_of_the_audit_hook(run, arena, name, layer, code):
    """Documents the honest limit: without the kernel layer these get through (README says so)."""
    data = run_attack(run, arena, code, layers="audit")
    changed = snapshot(arena) != snapshot_clean(arena)
    assert changed or data["exit_code"] == 0, json.dumps(data, ensure_ascii=False)[:2000]
    for p in ("/dev/shm/xla_guard_test_sem", "/dev/shm/sem.xla_guard_test_sem"):
        if os.path.exists(p):
            os.unlink(p)


def snapshot_clean(names):
    return (sorted(["victim.txt", "victim_dir"]), "original", os.stat(names["V"]).st_mode,
            os.stat(names["V"]).st_mtime, ["keep.txt"], False)


def test_attack_count():
    """The numbers the issue asks for; printed with -s."""
    one = sum(1 for a in ATTACKS if a[1] == "1")
    two = sum(1 for a in ATTACKS if a[1] == "2")
    either = sum(1 for a in ATTACKS if a[1] == "either")
    other = sum(1 for a in ATTACKS if a[1] in ("os", "design"))
    print("attacks %d: layer 1 alone %d, only layer 2 %d, races (either) %d, os/design %d"
          % (len(ATTACKS), one, two, either, other))
    assert len(set(IDS)) == len(IDS) and one + two + either + other == len(ATTACKS)
