"""run_python, spawned as the assistant does: legitimate work still works behind the fence (xlsx
into the workspace with openpyxl, tempfile, reading anywhere, args, cwd, pydeps), output of any size
is drained without deadlock and cut to head + tail with the cut stated, timeouts kill the whole tree,
blocks are reported in Chinese, XLA_RUNPY_UNRESTRICTED lifts the fence, and bad calls get Chinese
errors. The escape attempts live in test_guard.py."""
import os
import sys
import textwrap
import time

import pytest

from conftest import CJK, assert_contract, fail, ok


@pytest.fixture
def env(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"TMPDIR": str(tmp)}


@pytest.fixture
def ws(home):
    path = home / ".xla" / "workspace"
    path.mkdir(parents=True)
    return path


def script(ws, code, name="job.py"):
    path = ws / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return str(path)


def test_xlsx_into_workspace_with_openpyxl(run, ws, env):
    path = script(ws, """
        import openpyxl, sys
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(["类别", "金额"])
        ws.append(["餐饮", 12.5])
        wb.save("汇总.xlsx")
        print("saved", openpyxl.load_workbook("汇总.xlsx").active["A2"].value)
    """)
    data = ok(run("run_python", {"path": path}, extra_env=env))
    assert data["exit_code"] == 0 and data["stdout"].strip() == "saved 餐饮"
    assert (ws / "汇总.xlsx").exists()
    assert data["blocked"] == [] and data["fence"]["active"] is True
    assert "audit_hook" in data["fence"]["layers"]
    assert str(ws) in data["fence"]["allowed_dirs"]
    assert "正常结束" in data["summary"]


def test_tempfile_read_anywhere_args_and_cwd(run, ws, env, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("外面的文件", encoding="utf-8")
    sub = ws / "子目录"
    sub.mkdir()
    path = script(sub, """
        import os, sys, tempfile, shutil
        print(os.getcwd() == os.path.dirname(os.path.abspath(__file__)), sys.argv[1:])
        print(open(sys.argv[1], encoding="utf-8").read())
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.txt"), "w") as f:
                f.write("x")
            os.makedirs(os.path.join(d, "x", "y"))
            shutil.copy(os.path.join(d, "a.txt"), os.path.join(d, "x", "y", "b.txt"))
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("y")
        os.remove(f.name)
        open(os.devnull, "w").write("discard")
        import helper
        print(helper.VALUE)
    """)
    (sub / "helper.py").write_text("VALUE = '同目录模块'\n", encoding="utf-8")
    data = ok(run("run_python", {"path": path, "args": [str(outside), "二"]}, extra_env=env))
    assert data["exit_code"] == 0, data
    lines = data["stdout"].splitlines()
    assert lines[0] == "True %r" % ([str(outside), "二"],)
    assert lines[1] == "外面的文件" and lines[2] == "同目录模块"
    assert data["blocked"] == []


def test_blocked_write_is_reported_in_chinese(run, ws, env, tmp_path):
    target = tmp_path / "not_allowed.txt"
    path = script(ws, "open(%r, 'w').write('x')\n" % str(target))
    data = ok(run("run_python", {"path": path}, extra_env=env))
    assert not target.exists()
    assert data["exit_code"] == 1
    assert data["blocked"][0]["layer"] == "audit_hook" and data["blocked"][0]["target"] == str(target)
    message = data["blocked"][0]["message"]
    assert CJK.search(message) and str(ws) in message and env["TMPDIR"] in message
    assert "拦截" in data["summary"] and str(target) in data["summary"]
    assert "PermissionError" in data["stderr"] and "@@XLA_GUARD@@" not in data["stderr"]


def test_blocked_process_is_reported(run, ws, env):
    path = script(ws, """
        import subprocess
        try:
            subprocess.run(["echo", "hi"])
        except PermissionError as exc:
            print("caught")
    """)
    data = ok(run("run_python", {"path": path}, extra_env=env))
    assert data["exit_code"] == 0 and data["stdout"].strip() == "caught"
    assert data["blocked"][0]["kind"] == "process" and "启动" in data["blocked"][0]["message"]


def test_lots_of_output_on_both_pipes(run, ws, env):
    path = script(ws, """
        import sys
        for i in range(200000):
            sys.stdout.write("第%06d行 stdout\\n" % i)
            if i % 10 == 0:
                sys.stderr.write("err %d\\n" % i)
        print("THE END")
    """)
    data = ok(run("run_python", {"path": path}, extra_env=env))
    assert data["exit_code"] == 0 and not data["timed_out"]
    assert data["stdout_truncated"] and data["stderr_truncated"]
    assert data["stdout"].startswith("第000000行") and data["stdout"].rstrip().endswith("THE END")
    assert "中间省略约" in data["stdout"] and "字节" in data["stdout"]
    assert data["stdout_bytes"] > 4000000
    assert data["stderr"].startswith("err 0\n") and "err 199990" in data["stderr"]
    assert "太长" in data["summary"]


def test_unterminated_output_and_binary(run, ws, env):
    path = script(ws, """
        import sys
        sys.stdout.buffer.write(b"\\xff\\xfe no newline " + b"x" * 100)
        sys.stderr.write("partial line without newline")
        open("/proc/self/fd/1", "w").write(" via proc")
    """)
    data = ok(run("run_python", {"path": path}, extra_env=env))
    assert data["exit_code"] == 0, data
    assert "no newline" in data["stdout"] and data["stderr"] == "partial line without newline"


def test_timeout_kills_the_tree(run, ws, env, tmp_path):
    pidfile = tmp_path / "child.pid"
    path = script(ws, """
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(%r, "w").write(str(child.pid))
        print("started", flush=True)
        time.sleep(60)
    """ % str(pidfile))
    env = dict(env, XLA_RUNPY_UNRESTRICTED="1")    # the fence forbids children; test the kill without it
    data = ok(run("run_python", {"path": path, "timeout": 3}, extra_env=env))
    assert data["timed_out"] is True and data["exit_code"] is None
    assert data["stdout"].strip() == "started"
    assert "超过 3 秒" in data["summary"] and data["fence"]["active"] is False
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open("/proc/%d/stat" % pid) as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.1)
    else:
        pytest.fail("child %d survived the timeout" % pid)


def test_unrestricted_lifts_the_fence(run, ws, env, tmp_path):
    target = tmp_path / "free.txt"
    path = script(ws, "open(%r, 'w').write('x')\n" % str(target))
    data = ok(run("run_python", {"path": path}, extra_env=dict(env, XLA_RUNPY_UNRESTRICTED="1")))
    assert data["exit_code"] == 0 and target.exists()
    assert data["fence"]["active"] is False and "没有写入围栏" in data["summary"]


def test_exit_codes_and_system_exit(run, ws, env):
    data = ok(run("run_python", {"path": script(ws, "import sys; sys.exit(7)")}, extra_env=env))
    assert data["exit_code"] == 7 and "退出码 7" in data["summary"]
    data = ok(run("run_python", {"path": script(ws, "raise ValueError('坏数据')")}, extra_env=env))
    assert data["exit_code"] == 1 and "ValueError: 坏数据" in data["stderr"]
    assert "调用栈" in data["stderr"] and "xla_guard.py" not in data["stderr"]


def test_timeout_beyond_host_limit_is_clamped(run, ws, env):
    data = ok(run("run_python", {"path": script(ws, "print(1)"), "timeout": 60}, extra_env=env))
    assert data["exit_code"] == 0 and any("60 秒" in w for w in data.get("warnings", []))


def test_missing_script(run, home, env):
    error = fail(run("run_python", {"path": "~/没有这个脚本.py"}, extra_env=env))
    assert "找不到" in error


def test_relative_name_is_looked_up_in_the_workspace(run, ws, env):
    script(ws, "print('工作空间里的脚本')", name="相对.py")
    data = ok(run("run_python", {"path": "相对.py"}, extra_env=env))
    assert data["stdout"].strip() == "工作空间里的脚本"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux only")
def test_layers_reported(run, ws, env):
    data = ok(run("run_python", {"path": script(ws, "pass")}, extra_env=env))
    fence = data["fence"]
    if "landlock" in fence["layers"]:
        assert fence["landlock"].startswith("Landlock ABI")
    else:
        assert "只有第一层" in fence["note"]
    data = ok(run("run_python", {"path": script(ws, "pass")}, extra_env=dict(env, XLA_GUARD_LAYERS="audit")))
    assert data["fence"]["layers"] == ["audit_hook"] and "只有第一层" in data["fence"]["note"]


PYENV = os.path.expanduser("~/.pyenv/versions")
OTHER_PYTHONS = sorted(os.path.join(PYENV, v, "bin", "python3") for v in (os.listdir(PYENV) if os.path.isdir(PYENV) else [])
                       if v[:4] in ("3.9.", "3.10", "3.12", "3.13"))


@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other Python versions installed")
@pytest.mark.parametrize("python", OTHER_PYTHONS)
def test_guard_on_other_python_versions(python, tmp_path):
    """The guard itself, on each interpreter the assistant may ship (3.9+): legitimate work passes,
    a write outside and a process start are refused."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ws = tmp_path / "ws"
    ws.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    job = ws / "job.py"
    job.write_text(textwrap.dedent("""
        import os, subprocess, tempfile, json, sqlite3, collections, dataclasses, logging
        logging.getLogger("x").warning("log works")
        open("ok.txt", "w").write("fine")
        for attempt in (lambda: open(%r, "w"), lambda: subprocess.run(["true"]), lambda: os.mkfifo(%r)):
            try:
                attempt()
                print("ESCAPED")
            except PermissionError:
                print("blocked")
    """ % (str(out / "m"), str(out / "f"))))
    res = subprocess.run([python, "-I", "-B", "-X", "utf8", "-u", os.path.join(root, "xla_guard.py"),
                          "--root", str(ws), "--", str(job)], cwd=str(ws), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["blocked"] * 3, res.stdout + res.stderr
    assert (ws / "ok.txt").exists() and os.listdir(str(out)) == []


def test_a_traceback_the_script_prints_itself_is_labelled_in_chinese(run, home, tmp_path):
    """The answer never carries Python's bare traceback header, even when the script (or the
    interpreter, bypassing the guard's handler) prints one."""
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    script = ws / "tb.py"
    script.write_text("import sys, traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                      "    traceback.print_exc()\nprint('Traceback (most recent call last): 也在标准输出里')\n",
                      encoding="utf-8")
    data = ok(run("run_python", {"path": str(script)}))
    assert "ZeroDivisionError" in data["stderr"] and "调用栈" in data["stderr"]
    assert "Traceback (most recent call last)" not in data["stdout"] + data["stderr"]
