"""Red team for xla_guard: each attack is a real script that tries one way out of the fence (the
escapes in the guard design notes, and issue 25's E1-E6 / D1-D7). After every run the outside
arena must be unchanged, no victim process touched, no local service reached, nothing "ESCAPED".

The suite runs every attack in six configurations and prints, per configuration, how many it
stops: all layers as root, all layers as an unprivileged user (uid 65534, set in a forked child;
never skipped as root), and each layer alone (audit hook, mount namespace, Landlock, seccomp; the test
seam ``xla_guard.main(..., layers=...)``). An attack's second field names the layers that must hold it
*alone* ("a" audit hook, "n" mount namespace, "l" Landlock, "s" seccomp); with all layers on every
attack must be held.
Empty means: races and design points that only the whole fence is asked to hold.

Speed: the attacks do not go through the run_python tool one by one (that is 150+ processes x 5);
one harness process imports the launcher and forks per attack, exactly as run_python's child would
start (``-I -B -X utf8 -u``, the same arguments, nonce on stdin, reports on a pipe). A few attacks
go through the real tool at the end, for the answer's wording."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import CJK, ROOT, assert_contract, once_per_run

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
SECCOMP = LINUX and os.uname().machine in ("x86_64", "amd64")
NOBODY = 65534

# {M} marker path outside, {OUT} outside folder, {V} existing outside file (content "original"),
# {VD} existing outside folder, {WS} workspace, {T} private temp dir, {L} a symlink in the workspace
# pointing at {OUT} (as a user might have made), {H} a hard link in the workspace to {V}, {SEM} a
# semaphore name, {LOCK} a lock file outside (like the host's slot locks), {SOCK}/{DSOCK}/{ASOCK} a
# local stream / datagram / abstract unix service, {VPID} a victim process (not the script's child)
# holding a pipe at fd {VFD}.
# Issue 34's long-path chain: deep folders and links in the workspace (every step allowed) whose real path
# passes PATH_MAX, so os.path.realpath stops following links; the last link points outside.
CHAIN = ("import os\nn = 'x' * 250\n"
         "def deep(base, k):\n    p = base\n    for i in range(k):\n"
         "        p = os.path.join(p, n)\n        os.makedirs(p, exist_ok=True)\n    return p\n"
         "os.chdir({WS!r})\nos.symlink(deep(os.path.join({WS!r}, 'd1'), 14), 's1')\n"
         "os.symlink(os.path.join({WS!r}, deep('s1', 14)), 's2')\n"
         "real = os.path.join({WS!r}, 'd1', *([n] * 28))\n"
         "try:\n    os.symlink('../' * real.count('/') + {OUT!r}.lstrip('/'), 's2/home')\n"
         "except OSError as e:\n    print('link refused', e)\n")

ATTACKS = [
    # --- plain writes
    ("open_w", "a", "open({M!r}, 'w').write('x')"),
    ("open_a", "a", "open({V!r}, 'a').write('x')"),
    ("open_x", "a", "open({M!r}, 'x')"),
    ("open_rplus", "a", "open({V!r}, 'r+').write('x')"),
    ("io_fileio", "a", "import io; io.FileIO({M!r}, 'w')"),
    ("_io_open", "a", "import _io; _io.open({M!r}, 'wb')"),
    ("pathlib_write", "a", "import pathlib; pathlib.Path({M!r}).write_text('x')"),
    ("pathlib_touch", "a", "import pathlib; pathlib.Path({M!r}).touch()"),
    ("str_subclass", "a", "class S(str):\n    def __eq__(s, o): return True\n    __hash__ = str.__hash__\n"
                          "open(S({M!r}), 'w')"),
    ("bytes_path", "a", "open({M!r}.encode(), 'w')"),
    ("dotdot", "a", "import os; open(os.path.join({WS!r}, '..', '..', 'outside', 'marker.txt'), 'w')"),
    ("chdir_relative", "a", "import os; os.chdir({OUT!r}); open('marker.txt', 'w')"),
    ("os_open_creat", "a", "import os; os.open({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("posix_open", "a", "import posix, os; posix.open({M!r}, os.O_CREAT | os.O_RDWR)"),
    ("os_open_trunc_rdonly", "a", "import os; os.open({V!r}, os.O_RDONLY | os.O_TRUNC)"),
    ("fdopen", "a", "import os; os.fdopen(os.open({M!r}, os.O_CREAT | os.O_WRONLY), 'w')"),
    # --- dir fds and /proc
    ("dir_fd_dotdot", "a", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\n"
                           "os.open('../../outside/marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("dir_fd_outside", "a", "import os\nfd = os.open({OUT!r}, os.O_RDONLY)\n"
                            "os.open('marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("o_path_outside", "a", "import os\nfd = os.open({OUT!r}, os.O_PATH)\n"
                            "os.open('marker.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd)"),
    ("mkdir_dir_fd", "a", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\nos.mkdir('../../outside/marker.txt', dir_fd=fd)"),
    ("proc_self_fd", "a", "import os\nfd = os.open({V!r}, os.O_RDONLY)\nopen('/proc/self/fd/%d' % fd, 'w')"),
    ("proc_self_cwd", "a", "import os; os.chdir({OUT!r}); open('/proc/self/cwd/marker.txt', 'w')"),
    ("o_tmpfile_linkat", "a", "import os\nfd = os.open({WS!r}, os.O_TMPFILE | os.O_WRONLY)\nos.write(fd, b'x')\n"
                              "os.link('/proc/self/fd/%d' % fd, {M!r})"),
    # --- links
    ("symlink_out", "a", "import os; os.symlink({OUT!r}, os.path.join({WS!r}, 'l2'))\n"
                         "open(os.path.join({WS!r}, 'l2', 'marker.txt'), 'w')"),
    ("symlink_relative_out", "a", "import os; os.symlink('../../outside', os.path.join({WS!r}, 'l3'))"),
    ("existing_link_in_ws", "a", "import os; open(os.path.join({L!r}, 'marker.txt'), 'w')"),
    ("existing_link_parent", "a", "import os; os.makedirs(os.path.join({L!r}, 'sub'))"),
    ("hardlink_src_out", "a", "import os; os.link({V!r}, os.path.join({WS!r}, 'h2'))"),
    ("existing_hardlink", "a", "open({H!r}, 'a').write('x')"),
    ("link_moved", "a", "import os\nos.makedirs(os.path.join({WS!r}, 'a', 'b'))\n"
                        "os.symlink('..', os.path.join({WS!r}, 'a', 'b', 'up'))\n"
                        "os.rename(os.path.join({WS!r}, 'a', 'b'), os.path.join({WS!r}, 'b'))\n"
                        "open(os.path.join({WS!r}, 'b', 'up', '..', '..', 'outside', 'marker.txt'), 'w')"),
    # --- delete, rename, metadata
    ("remove", "a", "import os; os.remove({V!r})"),
    ("unlink_dir_fd", "a", "import os\nfd = os.open({WS!r}, os.O_RDONLY)\nos.unlink('../../outside/victim.txt', dir_fd=fd)"),
    ("rmdir", "a", "import os; os.rmdir({VD!r})"),
    ("rmtree", "a", "import shutil; shutil.rmtree({VD!r})"),
    ("rename_out_in", "a", "import os; os.rename({V!r}, os.path.join({WS!r}, 'stolen.txt'))"),
    ("replace_in_out", "a", "import os\nopen(os.path.join({WS!r}, 'x'), 'w').write('evil')\n"
                            "os.replace(os.path.join({WS!r}, 'x'), {V!r})"),
    ("mkdir", "a", "import os; os.mkdir({M!r})"),
    ("makedirs", "a", "import os; os.makedirs(os.path.join({M!r}, 'a', 'b'))"),
    ("chmod", "a", "import os; os.chmod({V!r}, 0o777)"),
    ("fchmod_readonly_fd", "a", "import os; fd = os.open({V!r}, os.O_RDONLY); os.chmod(fd, 0o777)"),
    ("utime", "a", "import os; os.utime({V!r}, (0, 0))"),
    ("truncate", "a", "import os; os.truncate({V!r}, 0)"),
    ("setxattr", "a", "import os; os.setxattr({V!r}, 'user.x', b'1')"),
    ("mkfifo", "a", "import os; os.mkfifo({M!r})"),
    ("mknod", "a", "import os, stat; os.mknod({M!r}, stat.S_IFREG | 0o600)"),
    ("shutil_copy", "a", "import shutil; shutil.copy(__file__, {M!r})"),
    ("shutil_move", "a", "import shutil; shutil.move({V!r}, {WS!r})"),
    ("copytree", "a", "import shutil; shutil.copytree({WS!r}, {M!r})"),
    ("tempfile_dir", "a", "import tempfile; tempfile.mkstemp(dir={OUT!r})"),
    ("named_tempfile_dir", "a", "import tempfile; tempfile.NamedTemporaryFile(dir={OUT!r}, delete=False)"),
    ("logging_file", "a", "import logging; logging.FileHandler({M!r})"),
    ("zipfile", "a", "import zipfile; zipfile.ZipFile({M!r}, 'w')"),
    ("sqlite_connect", "a", "import sqlite3; sqlite3.connect({M!r}).execute('create table t(a)')"),
    ("sqlite_uri", "a", "import sqlite3; sqlite3.connect('file:' + {M!r} + '?mode=rwc', uri=True).execute('create table t(a)')"),
    ("sqlite_connection_class", "a", "import sqlite3; sqlite3.Connection({M!r}).execute('create table t(a)')"),
    ("unix_socket_bind", "a", "import socket; socket.socket(socket.AF_UNIX).bind({M!r})"),
    ("mmap_write", "", "import mmap\nf = open({V!r}, 'rb')\nm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_WRITE)\n"
                        "m[:1] = b'X'"),
    ("pth_site_packages", "a", "import site, os\nd = site.getusersitepackages()\nos.makedirs(d, exist_ok=True)\n"
                               "open(os.path.join(d, 'evil.pth'), 'w').write('import os')"),
    # --- processes
    ("subprocess_run", "a", "import subprocess; subprocess.run(['touch', {M!r}])"),
    ("subprocess_shell", "a", "import subprocess; subprocess.call('touch ' + {M!r}, shell=True)"),
    ("os_system", "a", "import os; os.system('touch ' + {M!r})"),
    ("os_popen", "a", "import os; os.popen('touch ' + {M!r}).read()"),
    ("os_execv", "a", "import os; os.execv('/usr/bin/touch', ['touch', {M!r}])"),
    ("os_spawnv", "a", "import os; os.spawnv(os.P_WAIT, '/usr/bin/touch', ['touch', {M!r}])"),
    ("posix_spawn", "a", "import os; os.posix_spawn('/usr/bin/touch', ['touch', {M!r}], {{}})"),
    ("posix_spawnp", "a", "import os; os.posix_spawnp('touch', ['touch', {M!r}], dict(PATH='/usr/bin:/bin'))"),
    ("fork", "a", "import os\npid = os.fork()\nif pid == 0:\n    open({M!r}, 'w')\n    os._exit(0)\nos.waitpid(pid, 0)"),
    ("pty_fork", "a", "import pty, os\npid, fd = pty.fork()\nif pid == 0:\n    open({M!r}, 'w')\n    os._exit(0)"),
    ("posixsubprocess_direct", "a", "import _posixsubprocess, subprocess\nsubprocess._fork_exec  # noqa\n"
                                    "_posixsubprocess.fork_exec(*([None] * 23))"),
    ("mp_spawn", "a", "import multiprocessing as mp\n"
                      "if __name__ == '__main__':\n    p = mp.get_context('spawn').Process(target=print)\n    p.start()"),
    ("mp_forkserver", "a", "import multiprocessing as mp\n"
                           "if __name__ == '__main__':\n    p = mp.get_context('forkserver').Process(target=print)\n    p.start()"),
    ("mp_fork", "a", "import multiprocessing as mp, os\n"
                     "def f(): open({M!r}, 'w')\n"
                     "if __name__ == '__main__':\n    p = mp.get_context('fork').Process(target=f)\n    p.start(); p.join()"),
    ("process_pool", "a", "import concurrent.futures as cf\n"
                          "with cf.ProcessPoolExecutor(1) as ex: ex.submit(print, 1).result()"),
    ("asyncio_subprocess", "a", "import asyncio\nasync def main():\n"
                                "    p = await asyncio.create_subprocess_exec('touch', {M!r})\n    await p.wait()\n"
                                "asyncio.run(main())"),
    ("kill_parent", "a", "import os, signal; os.kill(os.getppid(), signal.SIGCONT)"),
    # --- native code and modules without audit events
    ("ctypes_libc_creat", "a", "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.creat({M!r}.encode(), 0o644)"),
    ("ctypes_load_libc", "a", "import ctypes; ctypes.CDLL('libc.so.6')"),
    ("ctypes_pythonapi", "a", "import ctypes; ctypes.pythonapi.PyRun_SimpleString(b'open(\"x\")')"),
    ("tkinter", "a", "import tkinter; tkinter.Tcl().eval('exec touch ' + {M!r})"),
    ("readline_history", "a", "import readline; readline.write_history_file({M!r})"),
    ("posixshmem", "a", "import _posixshmem"),
    ("subinterpreter", "a", "import _xxsubinterpreters as i; i.run_string(i.create(), 'open(%r, \"w\")' % {M!r})"),
    ("interpreters_313", "a", "import _interpreters"),
    ("testcapi", "a", "import _testcapi"),
    ("cffi", "a", "import _cffi_backend"),
    ("extension_in_ws", "a", "import shutil, importlib.util, os, _json\n"
                             "p = os.path.join({WS!r}, 'evil' + os.path.basename(_json.__file__)[5:])\n"
                             "shutil.copy(_json.__file__, p)\n"
                             "spec = importlib.util.spec_from_file_location('_json', p)\nimportlib.util.module_from_spec(spec)"),
    # --- the guard itself
    ("addaudithook", "a", "import sys; sys.addaudithook(lambda e, a: None); open({M!r}, 'w')"),
    ("gc_hunt", "a", "import gc\nfor o in gc.get_objects():\n    pass\nopen({M!r}, 'w')"),
    ("gc_referrers", "a", "import gc, os; gc.get_referrers(os.lstat)"),
    ("settrace", "a", "import sys; sys.settrace(lambda *a: None)"),
    ("setprofile", "a", "import sys; sys.setprofile(lambda *a: None)"),
    ("current_frames", "a", "import sys; sys._current_frames()"),
    ("monkeypatch_os", "a", "import os\nos.getcwd = lambda: {WS!r}\nos.lstat = lambda p: None\nos.path.realpath = lambda p: {WS!r}\n"
                            "os.chdir({OUT!r}); open('marker.txt', 'w')"),
    ("monkeypatch_builtins", "a", "import builtins\nbuiltins.PermissionError = KeyError\nbuiltins.len = lambda x: 0\n"
                                  "open({M!r}, 'w')"),
    ("monkeypatch_open_wrapper", "a", "import os\nos.open.__defaults__ = (0o777, None, None, None, None, None, None, None)\n"
                                      "os.open({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("read_wrapper_defaults", "a", "import os; orig = os.open.__defaults__[2]; orig({M!r}, os.O_CREAT | os.O_WRONLY)"),
    ("wrapper_code", "a", "import os; os.open.__code__ = (lambda *a: 0).__code__"),
    ("reimport_posix", "a", "import sys\ndel sys.modules['posix']\nimport posix\nposix.mkfifo({M!r})"),
    ("reload_posix", "a", "import importlib, posix\nimportlib.reload(posix)\nposix.mkfifo({M!r})"),
    ("reimport_posixsubprocess", "a", "import sys\ndel sys.modules['_posixsubprocess']\nimport _posixsubprocess"),
    ("getframe_chain", "a", "import sys\nf = sys._getframe()\nwhile f.f_back: f = f.f_back\n"
                            "g = f.f_globals\nfor k in list(g):\n    if callable(g[k]) and k.startswith('install'):\n"
                            "        g[k]([{OUT!r}])\nopen({M!r}, 'w')"),
    ("launcher_globals", "a", "import sys\nf = sys._getframe()\nwhile f.f_back: f = f.f_back\n"
                              "g = f.f_globals\nfor k in list(g):\n    v = g[k]\n    try:\n        v.clear()\n"
                              "    except Exception:\n        pass\n"
                              "    if isinstance(v, (frozenset, tuple)):\n        g[k] = type(v)()\n"
                              "import os; os.remove({V!r})"),
    ("code_replace", "a", "c = (lambda: 0).__code__.replace(co_consts=(1,))"),
    ("marshal_loads", "a", "import marshal; marshal.loads(marshal.dumps(compile('1', 'x', 'eval')))"),
    ("compile_frozen_name", "a", "exec(compile('open(%r, \"w\")' % {M!r}, '<frozen importlib._bootstrap_external>', 'exec'))"),
    # "": on a loaded machine the 0.1 ms timer can also fire inside the final open's own
    # error path, so the script may die of the injected error instead of a reported block;
    # what must hold either way is that nothing outside was written.
    ("signal_inject", "", "import signal, os, errno\n"
                           "def h(s, frame):\n    raise OSError(errno.EEXIST, 'injected')\n"
                           "signal.signal(signal.SIGALRM, h)\nsignal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)\n"
                           "for i in range(3000):\n    try:\n        open({M!r}, 'w').close()\n    except OSError:\n        pass\n"
                           "while True:\n    try:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n        break\n    except OSError:\n        pass\n"
                           "open({M!r}, 'w')"),
    ("signal_frame_locals", "a", "import signal, sys\nseen = []\n"
                                 "def h(s, frame):\n    f = sys._getframe()\n    seen.append(f.f_back)\n"
                                 "signal.signal(signal.SIGALRM, h)\nsignal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)\n"
                                 "for i in range(3000):\n    try:\n        open({M!r}, 'w').close()\n    except OSError:\n        pass\n"
                                 "while True:\n    try:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n        break\n    except OSError:\n        pass\n"
                           "open({M!r}, 'w')"),
    ("finalizer_cycle", "", "class C:\n    def __del__(self):\n        open({M!r}, 'w')\n"
                             "a = C(); a.self = a\nimport sys; sys.modules['__keep__'] = a"),
    ("atexit_write", "a", "import atexit; atexit.register(lambda: open({M!r}, 'w'))"),
    ("tiocsti", "a", "import fcntl; fcntl.ioctl(0, 0x5412, b'x')"),
    # --- known gaps of the audit hook: only the kernel fence stops these
    ("sqlite_attach", "l", "import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('ATTACH DATABASE ? AS x', ({M!r},))\n"
                           "c.execute('create table x.t(a)')"),
    ("sqlite_vacuum_into", "l", "import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('create table t(a)')\n"
                                "c.execute('VACUUM INTO ?', ({M!r},))"),
    ("semlock_dev_shm", "l", "import _multiprocessing\n_multiprocessing.SemLock(1, 1, 1, {SEM!r}, False)"),
    # --- races between the check and the syscall
    ("race_symlink_swap", "", "import os, threading\n"
                                    "real = os.path.join({WS!r}, 'real'); os.mkdir(real)\n"
                                    "a = os.path.join({WS!r}, 'a'); os.rename({L!r}, a)\nstop = []\n"
                                    "def flip():\n    tmp = os.path.join({WS!r}, 'tmp')\n    while not stop:\n"
                                    "        try:\n            os.rename(a, tmp); os.rename(real, a); os.rename(a, real); os.rename(tmp, a)\n"
                                    "        except OSError:\n            pass\n"
                                    "t = threading.Thread(target=flip); t.start()\nhits = 0\n"
                                    "import time\nend = time.monotonic() + 1.5\n"   # bounded in time, not count: a loaded machine is slow
                                    "while time.monotonic() < end:\n    try:\n        open(os.path.join(a, 'marker.txt'), 'w').close()\n"
                                    "    except OSError:\n        hits += 1\nstop.append(1); t.join()\nprint('refused', hits)\n"
                                    "open({M!r}, 'w')"),
    ("race_chdir", "", "import os, threading\nstop = []\n"
                             "def flip():\n    while not stop:\n        os.chdir({OUT!r}); os.chdir({WS!r})\n"
                             "t = threading.Thread(target=flip); t.start()\n"
                             "import time\nend = time.monotonic() + 1.5\n"
                             "while time.monotonic() < end:\n    try:\n        open('marker.txt', 'w').close()\n"
                             "    except OSError:\n        pass\nstop.append(1); t.join()\nopen({M!r}, 'w')"),
    # --- issue 25: escapes with both layers on (E1-E6, D1-D7)
    ("e1_traceback_state", "a", "import os\ngot = []\nclass K:\n    def __eq__(s, o):\n        got.append(o)\n        return False\n"
                                "try:\n    os.chmod({V!r}, 0o777)\nexcept PermissionError as e:\n    tb = e.__traceback__\n"
                                "    while tb is not None:\n        for v in list(tb.tb_frame.f_locals.values()):\n"
                                "            got.append(v)\n            try:\n                v == K()\n            except Exception:\n                pass\n"
                                "        tb = tb.tb_next\n"
                                "for v in got:\n    if isinstance(v, (dict, list, set)):\n        try:\n            v.clear()\n        except Exception:\n            pass\n"
                                "for f in (lambda: os.chmod({V!r}, 0o4777), lambda: os.chown({V!r}, 4321, 4321),\n"
                                "          lambda: os.utime({V!r}, (5, 5)), lambda: os.setxattr({V!r}, 'user.x', b'1')):\n"
                                "    try:\n        f()\n    except OSError:\n        pass"),
    ("e2_unix_stream_service", "as", "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({SOCK!r})\n"
                                     "s.sendall(b'run-shell touch /tmp/x')"),
    ("e2_unix_abstract_service", "asl", "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({ASOCK!r})\n"
                                        "s.sendall(b'x')"),
    ("e3_unix_dgram_sendto", "as", "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'x', {DSOCK!r})"),
    ("e4_unix_dgram_sendmsg", "as", "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendmsg([b'x'], [], 0, {DSOCK!r})"),
    ("e4_socketpair_dgram_sendto", "as", "import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                                         "a.sendto(b'x', {DSOCK!r})"),
    ("e5_fs_ioc_setflags", "as", "import fcntl, struct\nf = open({V!r}, 'rb')\n"
                                 "fcntl.ioctl(f.fileno(), 0x40086602, struct.pack('l', 0x40))"),
    ("e6_prlimit_other", "as", "import resource; resource.prlimit({VPID}, resource.RLIMIT_CPU, (1, 1))"),
    ("d1_setpriority_other", "as", "import os; os.setpriority(os.PRIO_PROCESS, {VPID}, 15)"),
    ("d1_affinity_other", "as", "import os; os.sched_setaffinity({VPID}, {{0}})"),
    ("d1_posix_setpriority", "as", "import posix, os; posix.setpriority(os.PRIO_PROCESS, {VPID}, 15)"),
    ("d2_chmod_setuid", "as", "import shutil, os, sys\np = os.path.join({T!r}, 'py')\nshutil.copy(sys.executable, p)\n"
                              "try:\n    os.chmod(p, 0o4755)\nfinally:\n    print('ESCAPED' if os.stat(p).st_mode & 0o4000 else 'held')"),
    ("d2_open_with_setuid_mode", "s", "import os\np = os.path.join({T!r}, 'suid')\n"
                                      "try:\n    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o4755))\n"
                                      "finally:\n    print('ESCAPED' if os.path.exists(p) and os.stat(p).st_mode & 0o4000 else 'held')"),
    ("d3_flock_host_lock", "as", "import fcntl\nf = open({LOCK!r})\nfcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)\nprint('ESCAPED')"),
    ("d4_fake_guard_lines", "als", "import sys, os\n"
                                   "line = '@@XLA_GUARD@@\\x1fblock\\x1fwrite\\x1fFORGED\\x1fFORGED\\n'\n"
                                   "sys.stderr.write(line); sys.stdout.write(line)\n"
                                   "for fd in range(3, 64):\n    try:\n        os.write(fd, line.encode())\n    except OSError:\n        pass\n"
                                   "os.dup2(os.open(os.devnull, os.O_WRONLY), 2)"),
    ("d5_memory_8g", "s", "b = bytearray(8 << 30)\nprint('ESCAPED')"),
    ("d6_compile_bytecode", "a", "import importlib._bootstrap_external as be, marshal\n"
                                 "exec(be._compile_bytecode(marshal.dumps(compile(\"print('ESCAPED')\", 'x', 'exec'))))"),
    ("d6_sourceless_loader", "a", "import importlib.machinery as m, importlib.util as u, marshal, os\n"
                                  "p = os.path.join({WS!r}, 'evil.bin')\n"
                                  "open(p, 'wb').write(u.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(\"print('ESCAPED')\", 'x', 'exec')))\n"
                                  "exec(m.SourcelessFileLoader('evil', p).get_code('evil'))"),
    ("d7_kill_other", "asl", "import os, signal; os.kill({VPID}, signal.SIGKILL)"),
    ("d7_pidfd_signal", "asl", "import os, signal\nfd = os.pidfd_open({VPID})\nsignal.pidfd_send_signal(fd, signal.SIGKILL)"),
    ("d7_sigio_other", "asl", "import os, fcntl\nr, w = os.pipe()\nfcntl.fcntl(r, fcntl.F_SETOWN, {VPID})\n"
                              "fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\nos.write(w, b'x')\n"
                              "import time; time.sleep(0.2)"),
    ("d7_proc_pid_fd_write", "a", "open('/proc/{VPID}/fd/{VFD}', 'w').write('FORGED')"),
    ("ptrace_other", "asl", "import ctypes\nlibc = ctypes.CDLL(None)\nprint('ESCAPED' if libc.ptrace(16, {VPID}, 0, 0) == 0 else 'held')"),
    # --- issue 34: long paths past PATH_MAX (os.path.realpath stops following links there, the kernel does not)
    ("long_chain_write", "anl", CHAIN + "open('s2/home/marker.txt', 'w')"),
    ("long_chain_chmod", "an", CHAIN + "os.chmod('s2/home/victim.txt', 0o777)"),
    ("long_chain_utime", "an", CHAIN + "os.utime('s2/home/victim.txt', (5, 5))"),
    ("long_chain_mkdir", "anl", CHAIN + "os.makedirs('s2/home/marker.txt/x')"),
    ("long_chain_abs_link_chmod", "an", CHAIN.replace("'../' * real.count('/') + {OUT!r}.lstrip('/')", "{OUT!r}")
     + "os.chmod('s2/home/victim.txt', 0o777)"),
    # the same chain made beforehand (by the user, or by a route the hook missed): the hook must walk it
    ("long_premade_write", "anl", "open({WS!r} + '/s2/home/marker.txt', 'w')"),
    ("long_premade_chmod", "an", "import os; os.chmod({WS!r} + '/s2/home/victim.txt', 0o777)"),
    ("long_premade_utime", "an", "import os; os.utime({WS!r} + '/s2/home/victim.txt', (5, 5))"),
    ("long_premade_rename", "anl", "import os; os.rename({WS!r} + '/s2/home/victim.txt', {WS!r} + '/stolen')"),
    ("long_premade_relative", "an", "import os; os.chdir({WS!r} + '/s2'); os.chmod('home/victim.txt', 0o777)"),
    ("long_chain_file_link", "an", CHAIN.replace("{OUT!r}.lstrip('/')", "{V!r}.lstrip('/')").replace("'s2/home'", "'s2/v'")
     + "os.utime('s2/v', (5, 5))"),
    # --- issue 34: a git repository deep in the workspace (past Landlock's bounded scan), dir_fd routes, bare repos
    ("git_deep_open", "a", "open({GIT!r} + '/hooks/pre-commit', 'w').write('#!/bin/sh')"),
    ("git_deep_pathlib", "a", "import pathlib; pathlib.Path({GIT!r}, 'hooks', 'pre-commit').write_text('#!/bin/sh')"),
    ("git_deep_config", "a", "open({GIT!r} + '/config', 'a').write('[core]\\n\\tfsmonitor = touch /tmp/x\\n')"),
    ("git_deep_chmod", "a", "import os; os.chmod({GIT!r} + '/hooks/pre-push.sample', 0o755)"),
    ("git_deep_supports_dir_fd", "as", "import os\nfd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                      "for f in [f for f in os.supports_dir_fd if getattr(f, '__name__', '') == 'open']:\n"
                                      "    f('pre-commit', os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd)"),
    ("git_deep_os_open_dir_fd", "as", "import os\nfd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                      "os.open('pre-commit', os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd)"),
    ("git_deep_mkdir_dir_fd", "as", "import os\nfd = os.open({GIT!r}, os.O_RDONLY)\nos.mkdir('evil', dir_fd=fd)"),
    ("git_deep_rename_dir_fd", "as", "import os\nopen({WS!r} + '/evil', 'w').write('#!/bin/sh')\n"
                                     "fd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                     "os.rename({WS!r} + '/evil', 'pre-commit', dst_dir_fd=fd)"),
    ("git_deep_symlink_dir_fd", "as", "import os\nopen({WS!r} + '/evil', 'w').write('#!/bin/sh')\n"
                                      "fd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                      "os.symlink({WS!r} + '/evil', 'pre-commit', dir_fd=fd)"),
    ("git_deep_link_dir_fd", "as", "import os\nopen({WS!r} + '/evil', 'w').write('#!/bin/sh')\n"
                                   "fd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                   "os.link({WS!r} + '/evil', 'pre-commit', dst_dir_fd=fd)"),
    ("git_deep_chmod_dir_fd", "as", "import os\nfd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                    "os.chmod('pre-push.sample', 0o755, dir_fd=fd)"),
    ("git_deep_utime_dir_fd", "as", "import os\nfd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                    "os.utime('pre-push.sample', (5, 5), dir_fd=fd)"),
    ("git_deep_create_builtin", "a", "import _imp, importlib.machinery as m, os\n"
                                     "p = _imp.create_builtin(m.ModuleSpec('posix', None))\n"
                                     "p.open({GIT!r} + '/hooks/pre-commit', os.O_CREAT | os.O_WRONLY, 0o755)"),
    ("git_deep_ctypes_openat", "as", "import ctypes, os\nfd = os.open({GIT!r} + '/hooks', os.O_RDONLY)\n"
                                     "r = ctypes.CDLL(None).openat(fd, b'pre-commit', 0o101, 0o755)\n"
                                     "print('ESCAPED' if r >= 0 else 'held')"),
    ("git_deep_walk_dotdot", "a", "import os; open({GIT!r} + '/../.git/hooks/../hooks/pre-commit', 'w')"),
    ("git_new_dotgit", "a", "import os; os.makedirs({WS!r} + '/proj/.git/hooks')"),
    ("bare_repo_hook", "a", "open({BARE!r} + '/hooks/post-receive', 'w').write('#!/bin/sh')"),
    ("bare_repo_config", "a", "open({BARE!r} + '/config', 'a').write('[core]\\n\\tsshCommand = touch /tmp/x\\n')"),
    # --- issue 34: leases, the parent-death signal, netlink/vsock, tasks, the temp folder's size
    ("setlease_host_lock", "as", "import fcntl\nf = open({LOCK!r})\nfcntl.fcntl(f.fileno(), 1024, fcntl.F_RDLCK)\nprint('ESCAPED')"),
    ("pdeathsig_reset", "as", "import ctypes\nr = ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)\nprint('ESCAPED' if r == 0 else 'held')"),
    ("netlink_socket", "as", "import socket\nsocket.socket(16, socket.SOCK_RAW, 0)\nprint('ESCAPED')"),
    ("vsock_socket", "as", "import socket\nsocket.socket(40, socket.SOCK_STREAM)\nprint('ESCAPED')"),
    ("tasks_exhaust", "ns", "import threading\nev = threading.Event()\nn = 0\ntry:\n    while n < 1000:\n"
                            "        threading.Thread(target=ev.wait, daemon=True).start()\n        n += 1\n"
                            "finally:\n    ev.set()\n    print('ESCAPED' if n >= 1000 else 'held', n)"),
    ("temp_fallocate", "n", "import os, tempfile\nfd = os.open(os.path.join(tempfile.gettempdir(), 'big'), os.O_CREAT | os.O_WRONLY)\n"
                            "try:\n    os.posix_fallocate(fd, 0, 1 << 30)\n    print('ESCAPED')\nfinally:\n"
                            "    os.close(fd); os.unlink(os.path.join(tempfile.gettempdir(), 'big'))"),
]

# The mount namespace alone (layer "ns") leaves everything outside the allowed places read-only: every
# attack that ends in a write, a metadata change or a new file outside must fail there as well (EROFS).
NS_HOLDS = {
    "open_w", "open_a", "open_x", "open_rplus", "io_fileio", "_io_open", "pathlib_write", "pathlib_touch",
    "str_subclass", "bytes_path", "dotdot", "chdir_relative", "os_open_creat", "posix_open", "os_open_trunc_rdonly",
    "fdopen", "dir_fd_dotdot", "dir_fd_outside", "o_path_outside", "mkdir_dir_fd", "proc_self_fd", "proc_self_cwd",
    "o_tmpfile_linkat", "symlink_out", "symlink_relative_out", "existing_link_in_ws", "existing_link_parent",
    "hardlink_src_out", "link_moved", "remove", "unlink_dir_fd", "rmdir", "rmtree", "rename_out_in",
    "replace_in_out", "mkdir", "makedirs", "chmod", "fchmod_readonly_fd", "utime", "truncate", "setxattr",
    "mkfifo", "mknod", "shutil_copy", "shutil_move", "copytree", "tempfile_dir", "named_tempfile_dir",
    "logging_file", "zipfile", "sqlite_connect", "sqlite_uri", "sqlite_connection_class", "unix_socket_bind",
    "pth_site_packages", "ctypes_libc_creat", "sqlite_attach", "sqlite_vacuum_into", "semlock_dev_shm",
    "e1_traceback_state", "e5_fs_ioc_setflags",
}
ATTACKS = [(n, e + "n" if n in NS_HOLDS and "n" not in e else e, c) for n, e, c in ATTACKS]
IDS = [a[0] for a in ATTACKS]

HARNESS = r"""
import json, os, resource, select, signal, socket, sys, time, traceback
root, jobfile, resfile = sys.argv[1:4]
sys.path.insert(0, root)
import xla_guard
from xlaguard import limits
sys.path.remove(root)
jobs = json.load(open(jobfile))
results = []

def cpu_limit(pid):
    # /proc/<pid>/limits, not prlimit(): reading another user's limits needs CAP_SYS_RESOURCE,
    # which container roots (CI's among them) often lack
    with open("/proc/%d/limits" % pid) as fh:
        return [ln for ln in fh if ln.startswith("Max cpu time")][0]

def drop(uid):
    if uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

for job in jobs:
    uid = job["uid"]
    vr, vw = os.pipe()
    vpid = os.fork()
    if vpid == 0:
        null = os.open(os.devnull, os.O_RDWR)     # never hold the harness's pipes: a crash must not hang it
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        drop(uid)
        while True:
            time.sleep(60)
    os.close(vw)
    vaff = os.sched_getaffinity(vpid)
    vnice = os.getpriority(os.PRIO_PROCESS, vpid)   # not 0 when the whole run is niced
    vlim = cpu_limit(vpid)
    code = job["code"].replace("@VPID@", str(vpid)).replace("@VFD@", str(vw))
    with open(job["script"], "w") as f:
        f.write(code)
    if uid:
        os.chown(job["script"], uid, uid)
    listeners = []
    for kind, addr in (("stream", job["sock"]), ("dgram", job["dsock"]), ("stream", job["asock"])):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
        s.bind(addr)
        if not addr.startswith("\0"):
            os.chmod(addr, 0o777)
        if kind == "stream":
            s.listen(5)
        s.setblocking(False)
        listeners.append((kind, s))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    non_r, non_w = os.pipe()
    os.write(non_w, job["nonce"].encode() + b"\n")
    os.close(non_w)
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(non_r, 0); os.dup2(out_w, 1); os.dup2(err_w, 2); os.dup2(rep_w, 9)
            os.closerange(3, 9)
            os.closerange(10, 4096)
            drop(uid)
            os.chdir(os.path.dirname(job["script"]))
            os.environ.clear()
            os.environ.update(job["env"])
            xla_guard.main(job["argv"], layers=tuple(job["layers"]))
        except BaseException:
            os.write(2, ("HARNESS: " + traceback.format_exc()).encode("utf-8", "replace"))
        finally:
            os._exit(99)
    for fd in (out_w, err_w, rep_w, non_r):
        os.close(fd)
    bufs = {out_r: b"", err_r: b"", rep_r: b""}
    deadline = time.monotonic() + 8
    job["_closed"] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd for fd in bufs if fd not in job["_closed"]], [], [], 0.5)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                bufs[fd] += chunk
            else:
                job["_closed"].append(fd)
        if len(job["_closed"]) == 3:
            break
    timed_out = len(job["_closed"]) < 3
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    limits.cleanup(pid)
    victim = {"alive": os.waitpid(vpid, os.WNOHANG) == (0, 0)}
    if victim["alive"]:
        victim["nice"] = os.getpriority(os.PRIO_PROCESS, vpid) - vnice
        victim["affinity"] = os.sched_getaffinity(vpid) == vaff
        victim["rlimit"] = cpu_limit(vpid) == vlim
        with open("/proc/%d/status" % vpid) as fh:
            victim["state"] = [ln.split()[1] for ln in fh if ln.startswith("State:")][0]
    ready, _, _ = select.select([vr], [], [], 0)
    victim["pipe"] = os.read(vr, 100).decode("utf-8", "replace") if ready else ""
    if victim["alive"]:          # a layer that does not hold signals lets the attack kill it (then reaped above)
        os.kill(vpid, signal.SIGKILL)
        os.waitpid(vpid, 0)
    os.close(vr)
    reached = False
    for kind, s in listeners:
        try:
            if kind == "stream":
                c, _ = s.accept()
                reached = True
                c.close()
            else:
                s.recv(100)
                reached = True
        except OSError:
            pass
        s.close()
    for addr in (job["sock"], job["dsock"]):
        if os.path.exists(addr):
            os.unlink(addr)
    for fd in (out_r, err_r, rep_r):
        os.close(fd)
    results.append({"name": job["name"], "status": status, "timed_out": timed_out,
                    "stdout": bufs[out_r].decode("utf-8", "replace"), "stderr": bufs[err_r].decode("utf-8", "replace"),
                    "reports": bufs[rep_r].decode("utf-8", "replace"), "victim": victim, "reached": reached})
json.dump(results, open(resfile, "w"))
"""


def make_arena(base, i, uid):
    top = os.path.join(base, "j%03d" % i)
    home = os.path.join(top, "home")
    ws = os.path.join(home, ".xla", "workspace")
    tmp = os.path.join(top, "tmp")
    out = os.path.join(top, "outside")
    for d in (ws, tmp, os.path.join(out, "victim_dir")):
        os.makedirs(d)
    victim = os.path.join(out, "victim.txt")
    with open(victim, "w") as f:
        f.write("original")
    os.chmod(victim, 0o644)
    os.utime(victim, (1000000000, 1000000000))
    with open(os.path.join(out, "victim_dir", "keep.txt"), "w") as f:
        f.write("keep")
    with open(os.path.join(out, "slot-1.lock"), "w"):
        pass
    git = os.path.join(ws, "p1", "p2", "p3", "repo", ".git")
    bare = os.path.join(ws, "repos", "site.git")
    for g in (git, bare):
        for d in ("hooks", "objects", "refs"):
            os.makedirs(os.path.join(g, d))
        with open(os.path.join(g, "HEAD"), "w") as f:
            f.write("ref: refs/heads/main\n")
        with open(os.path.join(g, "config"), "w") as f:
            f.write("[core]\n")
        with open(os.path.join(g, "hooks", "pre-push.sample"), "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(os.path.join(g, "hooks", "pre-push.sample"), 0o644)
    os.makedirs(os.path.join(tmp, "run"))
    link = os.path.join(ws, "link_out")
    os.symlink(out, link)
    hard = os.path.join(ws, "hard_link")
    os.link(victim, hard)
    if uid:
        for dirpath, dirnames, filenames in os.walk(top):
            for n in [dirpath] + [os.path.join(dirpath, x) for x in dirnames + filenames]:
                os.lchown(n, uid, uid)
    names = dict(M=os.path.join(out, "marker.txt"), OUT=out, V=victim, VD=os.path.join(out, "victim_dir"), WS=ws,
                 T=tmp, L=link, H=hard, SEM="/xla_guard_test_sem_%s_%d" % (os.path.basename(base), i),
                 LOCK=os.path.join(out, "slot-1.lock"), SOCK=os.path.join(tmp, "tmux-0"),
                 DSOCK=os.path.join(tmp, "dgram.sock"), ASOCK="\0xla-guard-test-%s-%d" % (os.path.basename(base), i),
                 VPID="@VPID@", VFD="@VFD@", HOME=home, GIT=git, BARE=bare, RT=os.path.join(tmp, "run"))
    return names


def make_chain(ws, out):
    """Issue 34's chain, made beforehand without chdir (the configurations run in threads): 28 folders
    of 250-byte names under ``ws/d1`` (real path past PATH_MAX), ``ws/s1`` -> the 14th, ``ws/s2`` -> the
    28th through ``s1`` (a short name for a long path), and ``ws/s2/home`` -> ``out`` by a relative link."""
    n = "x" * 250
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir("d1", dir_fd=fd)
    depth_fd = os.open("d1", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    for i in range(28):
        os.mkdir(n, dir_fd=depth_fd)
        nxt = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=depth_fd)
        os.close(depth_fd)
        depth_fd = nxt
        if i == 13:
            os.symlink(os.path.join(ws, "d1", *([n] * 14)), "s1", dir_fd=fd)
    real = os.path.join(ws, "d1", *([n] * 28))
    os.symlink("../" * real.count("/") + out.lstrip("/"), "home", dir_fd=depth_fd)
    os.close(depth_fd)
    os.symlink(os.path.join(ws, "s1", *([n] * 14)), "s2", dir_fd=fd)
    os.close(fd)


def file_flags(path):
    import fcntl
    import struct
    try:
        with open(path, "rb") as f:
            return struct.unpack("l", fcntl.ioctl(f.fileno(), 0x80086601, struct.pack("l", 0)))[0]
    except OSError:
        return None


def snapshot(names):
    """What an escape would change outside the fence (a deleted victim is a change, not a crash)."""
    out = names["OUT"]
    try:
        st = os.stat(names["V"])
        content = open(names["V"]).read()
    except OSError as exc:
        return ("victim gone: %s" % exc.strerror, sorted(os.listdir(out)) if os.path.isdir(out) else None)
    sem = any(os.path.exists("/dev/shm/" + p + names["SEM"][1:]) for p in ("", "sem."))
    return (sorted(os.listdir(out)), content, st.st_mode, st.st_mtime, st.st_uid,
            os.listxattr(names["V"]) if hasattr(os, "listxattr") else [], file_flags(names["V"]),
            sorted(os.listdir(names["VD"])) if os.path.isdir(names["VD"]) else None, sem,
            git_tree(names["GIT"]), git_tree(names["BARE"]), os.path.exists(os.path.join(names["WS"], "proj", ".git")))


def git_tree(top):
    """Everything in a git folder of the arena (inside the workspace: the outside snapshot misses it)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for n in sorted(dirnames + filenames):
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out.append((p, st.st_mode, st.st_size, st.st_mtime))
    return sorted(out)


def interpreter_for(uid):
    """A Python whose standard library ``uid`` can read. The guard and the attacks need only the
    standard library, but a root-installed interpreter under a 0700 home (pyenv in /root, as on
    CI) cannot import anything once the child has dropped to uid 65534: every attack would fail
    on its imports and look stopped. Then a system interpreter stands in."""
    candidates = [os.path.realpath(sys.executable), "/usr/bin/python3", "/usr/local/bin/python3"]
    if not uid:
        return candidates[0]

    def drop():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    for python in candidates:
        try:
            if subprocess.run([python, "-I", "-c", "import ctypes, json, runpy, socket, traceback"], preexec_fn=drop,
                              cwd="/", capture_output=True, timeout=30).returncode == 0:
                return python
        except OSError:
            continue
    raise AssertionError("no Python interpreter here is readable by uid %d (tried %s)" % (uid, candidates))


def run_matrix(layers, uid, base):
    """Every attack in one configuration; returns {name: (held, result)}."""
    jobs, arenas = [], {}
    script_code = {}
    for i, (name, _, code) in enumerate(ATTACKS):
        names = make_arena(base, i, uid)
        if name.startswith("long_premade"):
            make_chain(names["WS"], names["OUT"])
        arenas[name] = (names, snapshot(names))
        nonce = "n%08x" % (i * 7919 + 13)
        jobs.append({"name": name, "uid": uid, "nonce": nonce, "layers": list(layers),
                     "code": textwrap.dedent(code.format(**names)) + "\n",
                     "script": os.path.join(names["WS"], "attack.py"), "sock": names["SOCK"], "dsock": names["DSOCK"],
                     "asock": names["ASOCK"],
                     "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": names["HOME"], "TMPDIR": names["T"]},
                     "argv": ["--root", names["WS"], "--root", names["T"], "--run-temp", names["RT"],
                              "--report-fd", "9", "--nonce-stdin",
                              "--path", os.path.join(ROOT, "tools", "pydeps"), "--",
                              os.path.join(names["WS"], "attack.py")]})
        script_code[name] = jobs[-1]["code"]
    jobfile, resfile = os.path.join(base, "jobs.json"), os.path.join(base, "results.json")
    with open(jobfile, "w") as f:
        json.dump(jobs, f)
    python = interpreter_for(uid)
    res = subprocess.run([python, "-I", "-B", "-X", "utf8", "-u", "-c", HARNESS, ROOT, jobfile, resfile],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    with open(resfile) as f:
        results = json.load(f)
    verdicts = {}
    for r in results:
        names, before = arenas[r["name"]]
        nonce = [j["nonce"] for j in jobs if j["name"] == r["name"]][0]
        records = [ln.split("\x1f")[1:] for ln in r["reports"].splitlines()
                   if ln.startswith("@@XLA_GUARD@@" + nonce + "\x1f")]
        v = r["victim"]
        problems = []
        if snapshot(names) != before:
            problems.append("outside changed: %r -> %r" % (before, snapshot(names)))
        if "ESCAPED" in r["stdout"]:
            problems.append("script says ESCAPED")
        if not v["alive"] or v.get("nice") != 0 or not v.get("affinity") or not v.get("rlimit") \
                or v.get("state", "S")[0] not in "SR" or v["pipe"]:
            problems.append("victim touched: %r" % v)
        if r["reached"]:
            problems.append("a local unix service was reached")
        if any("FORGED" in "\x1f".join(x) for x in records):
            problems.append("a forged report line was taken for the guard's")
        if r["timed_out"]:
            problems.append("timed out")
        if not any(x and x[0] == "status" for x in records):
            problems.append("the guard never started the script: %s" % r["stderr"][-300:])
        verdicts[r["name"]] = (not problems, {"problems": problems, "records": records, "status": r["status"],
                                              "stderr": r["stderr"][-1500:], "stdout": r["stdout"][-500:]})
    return verdicts


CONFIGS = [
    ("all layers, root", ("audit", "ns", "landlock", "seccomp"), 0),
    ("all layers, uid 65534", ("audit", "ns", "landlock", "seccomp"), NOBODY),
    ("audit hook alone", ("audit",), 0),
    ("mount namespace alone", ("ns",), 0),
    ("Landlock alone", ("landlock",), 0),
    ("seccomp alone", ("seccomp",), 0),
]
LETTER = {"audit": "a", "ns": "n", "landlock": "l", "seccomp": "s"}


# session, not module: with xdist a worker interleaves other modules' tests, and a module fixture
# is torn down and built again each time the worker comes back to this module.
@pytest.fixture(scope="session")
def matrix(tmp_path_factory):
    """All six configurations (about 1,000 forked guard runs), once per test run however many
    xdist workers ask for them (conftest.once_per_run)."""
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    return once_per_run(tmp_path_factory, "guard_matrix", build_matrix)


def build_matrix():
    if os.geteuid() != 0:
        configs = [c for c in CONFIGS if c[2] == 0]    # an ordinary user cannot setuid; root (CI) runs both
    else:
        configs = CONFIGS
    def one(config):
        label, layers, uid = config
        base = tempfile.mkdtemp(prefix="xla-guard-matrix-")
        os.chmod(base, 0o755)
        try:
            return label, (layers, run_matrix(layers, uid if os.geteuid() == 0 else 0, base))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    # The configurations side by side: most of a run is waiting (attacks a lone layer lets through
    # sleep or block until the harness's 8 s deadline), so three at a time cost little CPU.
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=3) as pool:
        out = dict(pool.map(one, configs))
    lines = ["escape suite: %d attacks" % len(ATTACKS)]
    for label, (layers, verdicts) in out.items():
        held = sum(1 for ok, _ in verdicts.values() if ok)
        lines.append("  %-22s stops %3d / %d" % (label, held, len(ATTACKS)))
    print("\n" + "\n".join(lines))
    return out


def available(layers):
    return ("landlock" not in layers or LANDLOCK) and ("seccomp" not in layers or SECCOMP)


@pytest.mark.parametrize("label", [c[0] for c in CONFIGS])
def test_escape_matrix(matrix, label):
    if label not in matrix:
        pytest.skip("an unprivileged run cannot switch to another user")
    layers, verdicts = matrix[label]
    if not available(layers):
        pytest.skip("this kernel lacks a layer of this configuration")
    failures = []
    for name, expect, _ in ATTACKS:
        ok, detail = verdicts[name]
        must = len(layers) == len(LETTER) or (len(layers) == 1 and LETTER[layers[0]] in expect)
        if must and not ok:
            failures.append("%s: %s" % (name, json.dumps(detail, ensure_ascii=False)[:1500]))
    assert not failures, "\n".join(failures)


def test_the_audit_hook_reports_what_it_stops(matrix):
    """With the hook on, an attack it is expected to stop leaves a Chinese block record."""
    layers, verdicts = matrix["all layers, root"]
    missing = []
    for name, expect, _ in ATTACKS:
        if "a" in expect and name not in ("d4_fake_guard_lines", "d6_compile_bytecode", "d6_sourceless_loader"):
            records = verdicts[name][1]["records"]
            blocks = [r for r in records if r and r[0] in ("block", "kernel")]
            if not blocks or not all(CJK.search(r[-1]) for r in blocks if r[0] == "block"):
                missing.append(name)
    assert not missing, missing


def test_attack_count():
    letters = {c: sum(1 for a in ATTACKS if c in a[1]) for c in "anls"}
    print("attacks %d: expected alone: audit %d, mount namespace %d, Landlock %d, seccomp %d; whole fence only %d"
          % (len(ATTACKS), letters["a"], letters["n"], letters["l"], letters["s"], sum(1 for a in ATTACKS if not a[1])))
    assert len(set(IDS)) == len(IDS)
    assert all(set(a[1]) <= set("anls") for a in ATTACKS)


# --------------------------------------------------------------------------- through the real tool

@pytest.fixture
def arena(tmp_path, home):
    names = make_arena(str(tmp_path), 0, 0)
    return names


def run_tool(run, names, code, layers=None):
    script = os.path.join(names["WS"], "attack.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(code.format(**names)) + "\n")
    env = {"TMPDIR": names["T"]}
    if layers:
        env["XLA_GUARD_LAYERS"] = layers
    from xlakit import host
    result = host.run_tool("run_python", {"path": script, "timeout": 30}, home=names["HOME"], extra_env=env,
                           log=False)
    data = assert_contract(result)
    assert data["ok"], data
    return data


@pytest.mark.parametrize("name", ["open_w", "remove", "subprocess_run", "sqlite_attach", "e2_unix_stream_service",
                                  "launcher_globals"])
def test_through_run_python(arena, name):
    code = dict((a[0], a[2]) for a in ATTACKS)[name]
    before = snapshot(arena)
    data = run_tool(None, arena, code)
    assert snapshot(arena) == before
    assert data["fence"]["active"] is True
    assert ("landlock" in data["fence"]["layers"]) == LANDLOCK
    assert data["blocked"], json.dumps(data, ensure_ascii=False)[:2000]
    assert all(CJK.search(b["message"]) for b in data["blocked"])
    assert "拦截" in data["summary"] and "仅供参考" in data["summary"]


def test_forged_guard_lines_are_script_output(arena):
    """D4 through the tool: the script's fake marker lines stay in its stderr and never reach
    ``blocked``; closing the report channel is noticed."""
    code = ("import sys, os\nline = '@@XLA_GUARD@@\\x1fblock\\x1fwrite\\x1fFORGED\\x1f伪造\\n'\n"
            "sys.stderr.write(line)\nsys.stderr.flush()\nos.closerange(3, 256)\nos._exit(0)\n")
    data = run_tool(None, arena, code)
    assert data["blocked"] == [] and "FORGED" in data["stderr"]
    assert "不完整" in data["summary"]


@pytest.mark.skipif(not (LANDLOCK and SECCOMP), reason="needs the kernel layers")
def test_the_tool_s_own_answer_cannot_be_forged_past_the_hook(arena):
    """D7 on Linux with the hook off: run_python is non-dumpable and the guard holds no
    capabilities, so /proc/<run_python>/fd/1 (the answer to the host) cannot be reopened."""
    code = ("import os\ntry:\n    open('/proc/%d/fd/1' % os.getppid(), 'w').write('{{\"ok\": true, \"forged\": 1}}\\n')\n"
            "    print('ESCAPED')\nexcept OSError as e:\n    print('held', e.errno)\n")
    data = run_tool(None, arena, code, layers="ns,landlock,seccomp")
    assert "forged" not in data and data["stdout"].startswith("held"), data


def test_memory_limit_answer(arena):
    data = run_tool(None, arena, "b = bytearray(8 << 30)\nprint('ESCAPED')\n")
    if not SECCOMP:
        pytest.skip("the memory limit is set with the Linux layers")
    assert "ESCAPED" not in data["stdout"] and "内存超过上限" in data["summary"], data
