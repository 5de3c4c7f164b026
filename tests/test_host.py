"""The reference host (xla_host / xla.py): manifest check, argument filtering, limits, audit log.

These build a throw-away toolbox in a temp folder with scripts that misbehave on purpose (sleep,
flood stdout, spawn grandchildren) and run them through the same code path the CLI uses."""
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from conftest import ROOT, alive
from xlakit import host as xla_host
from xlakit import manifest as xla_manifest


def make_toolbox(tmp_path, scripts, params=None):
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    tools = []
    for name, body in scripts.items():
        (root / "tools" / (name + ".py")).write_text(textwrap.dedent(body), encoding="utf-8")
        tools.append({"name": name, "description": "测试工具", "parameters": (params or {}).get(name, {
            "type": "object", "properties": {"n": {"type": "integer", "description": "数字"},
                                             "s": {"type": "string"}}, "required": []})})
    (root / "tools.json").write_text(json.dumps({"tools": tools}, ensure_ascii=False), encoding="utf-8")
    return str(root)


ECHO = """
    import json, os, sys
    data = json.loads(sys.stdin.read() or "{}")
    print(json.dumps({"ok": True, "args": data, "cwd": os.getcwd(), "env": sorted(os.environ),
                      "pythonpath": os.environ.get("PYTHONPATH"), "argv0": sys.argv[0],
                      "utf8": sys.flags.utf8_mode}))
"""


def test_run_filters_keys_checks_types_and_uses_host_environment(tmp_path, home):
    root = make_toolbox(tmp_path, {"echo": ECHO})
    res = xla_host.run_tool("echo", {"n": "7", "s": "你好", "junk": 1}, root=root, home=str(home),
                            extra_env=None)
    assert res.ok, res.error
    assert res.data["args"] == {"n": 7, "s": "你好"}          # junk dropped, "7" coerced
    assert res.data["cwd"] == os.path.join(root, "tools")
    # LC_CTYPE: Python's UTF-8 mode; PYENV_*: set by a pyenv shim standing in for python3
    # LC_CTYPE: Python's UTF-8 mode; PWD, SHLVL and *PYENV*: a pyenv shim standing in for python3
    own = {k for k in res.data["env"] if "PYENV" not in k and k not in ("LC_CTYPE", "PWD", "SHLVL", "_")}
    assert own == {"PATH", "HOME", "PYTHONPATH"}
    assert res.data["pythonpath"] == os.path.join(root, "tools", "pydeps")
    assert res.data["utf8"] == 1
    bad = xla_host.run_tool("echo", {"n": "seven"}, root=root, home=str(home))
    assert not bad.ok and "参数 n 应为整数" in bad.error


def test_timeout_kills_the_whole_process_tree(tmp_path, home):
    marker = tmp_path / "grandchild.pid"
    root = make_toolbox(tmp_path, {"slow": """
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        open(%r, "w").write(str(p.pid))
        time.sleep(30)
    """ % str(marker)})
    started = time.monotonic()
    res = xla_host.run_tool("slow", {}, root=root, home=str(home), timeout=1.5)
    assert time.monotonic() - started < 10
    assert res.timed_out and not res.ok and "秒被终止" in res.error
    pid = int(marker.read_text())
    time.sleep(0.2)
    assert not alive(pid)                   # the grandchild is gone too: no orphans


def test_output_cap_kills_a_flooding_tool(tmp_path, home):
    root = make_toolbox(tmp_path, {"flood": """
        import sys
        while True:
            sys.stdout.write("x" * 65536)
    """})
    res = xla_host.run_tool("flood", {}, root=root, home=str(home), timeout=30)
    assert res.output_capped and not res.ok and "1MB" in res.error
    assert len(res.text) <= xla_host.OUTPUT_LIMIT


def test_stdout_cut_at_20000_and_errors_at_2000(tmp_path, home):
    root = make_toolbox(tmp_path, {
        "big": 'import json; print(json.dumps({"ok": True, "s": "长" * 30000}, ensure_ascii=False))',
        "err": 'import sys; sys.stderr.write("错" * 5000); sys.exit(1)'})
    big = xla_host.run_tool("big", {}, root=root, home=str(home))
    assert big.cut and len(big.text) == 20000
    err = xla_host.run_tool("err", {}, root=root, home=str(home))
    assert not err.ok and len(err.error) == 2000 and err.error.startswith("错")


def test_stderr_is_the_error_when_exit_nonzero_or_stdout_empty(tmp_path, home):
    root = make_toolbox(tmp_path, {
        "crash": 'import sys; print("{\\"ok\\": true}"); sys.stderr.write("坏了"); sys.exit(3)',
        "silent": 'import sys; sys.stderr.write("没有输出")',
        "notjson": 'print("hello")'})
    crash = xla_host.run_tool("crash", {}, root=root, home=str(home))
    assert not crash.ok and crash.error == "坏了" and crash.exit_code == 3
    silent = xla_host.run_tool("silent", {}, root=root, home=str(home))
    assert not silent.ok and silent.error == "没有输出"
    notjson = xla_host.run_tool("notjson", {}, root=root, home=str(home))
    assert not notjson.ok and "JSON" in notjson.error


def test_images_are_removed_before_the_cut_and_can_be_saved(tmp_path, home):
    import base64
    png = base64.b64encode(b"\x89PNG fake" * 5000).decode()
    root = make_toolbox(tmp_path, {"img": """
        import json
        print(json.dumps({"ok": True, "summary": "一张图", "images": [
            {"name": "chart.png", "mime": "image/png", "data": %r}]}))
    """ % png})
    res = xla_host.run_tool("img", {}, root=root, home=str(home))
    assert res.ok and not res.cut and "images" not in res.data and res.data["summary"] == "一张图"
    assert len(png) > 20000 and len(res.text) < 200
    paths = xla_host.save_images(res, str(tmp_path / "out"))
    assert open(paths[0], "rb").read() == b"\x89PNG fake" * 5000


def test_at_most_two_runs_at_once_across_processes(tmp_path, home):
    log = tmp_path / "log.txt"
    root = make_toolbox(tmp_path, {"hold": """
        import json, os, time
        with open(%r, "a") as fh: fh.write("start %%f\\n" %% time.time())
        time.sleep(1.0)
        with open(%r, "a") as fh: fh.write("end %%f\\n" %% time.time())
        print(json.dumps({"ok": True}))
    """ % (str(log), str(log))})
    # Four separate host processes, as four assistants' calls would be.
    code = ("import sys; sys.path.insert(0, %r); from xlakit import host as xla_host; "
            "r = xla_host.run_tool('hold', {}, root=%r, home=%r); sys.exit(0 if r.ok else 1)") % (ROOT, root, str(home))
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(4)]
    assert all(p.wait(60) == 0 for p in procs)
    events = sorted((float(t), kind) for kind, t in (ln.split() for ln in log.read_text().splitlines()))
    running, peak = 0, 0
    for _, kind in events:
        running += 1 if kind == "start" else -1
        peak = max(peak, running)
    assert peak == 2


def test_ctrl_c_kills_the_child_tree(tmp_path, home):
    marker = tmp_path / "child.pid"
    root = make_toolbox(tmp_path, {"sleeper": """
        import os, time
        open(%r, "w").write(str(os.getpid()))
        time.sleep(60)
    """ % str(marker)})
    code = ("import sys; sys.path.insert(0, %r); from xlakit import host as xla_host; "
            "xla_host.run_tool('sleeper', {}, root=%r, home=%r)") % (ROOT, root, str(home))
    host = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    for _ in range(200):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.05)
    import signal
    host.send_signal(signal.SIGINT)
    host.wait(20)
    pid = int(marker.read_text())
    time.sleep(0.3)
    assert not alive(pid)


def test_audit_log_gets_one_line_per_run_with_long_strings_shortened(tmp_path, home):
    root = make_toolbox(tmp_path, {"echo": ECHO})
    xla_host.run_tool("echo", {"s": "长" * 1000}, root=root, home=str(home))
    xla_host.run_tool("echo", {"n": "x"}, root=root, home=str(home))
    logs = list((home / ".xla" / "logs").glob("runs-*.jsonl"))
    lines = [json.loads(ln) for ln in logs[0].read_text(encoding="utf-8").splitlines()]
    assert [ln["tool"] for ln in lines] == ["echo", "echo"]
    assert lines[0]["ok"] is True and len(lines[0]["args"]["s"]) < 300
    assert lines[1]["ok"] is False and "整数" in lines[1]["error"]
    assert {"time", "tool", "args", "duration", "ok", "error"} <= set(lines[0])


def test_unknown_tool_is_reported_with_the_available_names(tmp_path, home):
    root = make_toolbox(tmp_path, {"echo": ECHO})
    res = xla_host.run_tool("nope", {}, root=root, home=str(home))
    assert not res.ok and "echo" in res.error


# --- manifest check -------------------------------------------------------------------------

def test_check_lists_every_problem_and_rejects_the_whole_manifest(tmp_path):
    root = tmp_path / "m"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "a.py").write_text("")
    (tmp_path / "outside.py").write_text("")
    os.symlink(str(tmp_path / "outside.py"), str(root / "tools" / "link.py"))
    manifest = {"tools": [
        {"name": "a", "description": "好", "parameters": {"type": "object", "properties": {}}},
        {"name": "a", "description": "重复", "parameters": {"type": "object", "properties": {}}},
        {"name": "b", "description": "缺脚本", "parameters": {"type": "object", "properties": {}}},
        {"name": "c", "description": "越界", "script": "../x.py", "parameters": {"type": "object"}},
        {"name": "d", "description": "链接", "script": "link.py", "parameters": {"type": "object"}},
        {"name": "e", "description": "类型", "script": "a.py",
         "parameters": {"type": "object", "properties": {"x": {"type": "date"}}, "required": ["y"]}},
        {"name": "f", "script": "a.py"},
        {"name": "g", "description": "数组", "script": "a.py",
         "parameters": {"type": "object", "properties": {"xs": {"type": "array"}}}}]}
    (root / "tools.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    problems = xla_manifest.check_manifest(str(root))
    text = "\n".join(problems)
    for needle in ("a：工具名重复", "b：脚本 b.py 不存在", "c：脚本路径 ../x.py", "d：脚本 link.py 解析到 tools/ 之外",
                   "未知类型 'date'", "required 里有未声明的参数", "f：缺少 description", "f：缺少 parameters",
                   "g.parameters.xs：数组必须声明 items"):
        assert needle in text, (needle, text)


def test_cli_check_list_schema_on_the_real_manifest():
    def cli(*args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "xla.py")] + list(args), capture_output=True,
                              text=True, encoding="utf-8")
    check = cli("check")
    assert check.returncode == 0, check.stderr
    schema = json.loads(cli("schema").stdout)
    data, _ = xla_manifest.load_manifest(ROOT)
    assert [t["function"]["name"] for t in schema] == [t["name"] for t in data["tools"]]
    for tool in schema:
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"
    listing = cli("list")
    assert listing.returncode == 0 and "共 %d 个工具" % len(schema) in listing.stdout


def test_cli_run_prints_json_and_exit_code(tmp_path):
    res = subprocess.run([sys.executable, os.path.join(ROOT, "xla.py"), "run", "no_such_tool", "{}"],
                         capture_output=True, text=True, encoding="utf-8", env=dict(os.environ, HOME=str(tmp_path)))
    assert res.returncode == 1 and json.loads(res.stdout)["ok"] is False
