"""The installable package (pyproject.toml): the wheel built from this checkout, installed into a
fresh venv, serves every tool over MCP from the installed package data, also for an unprivileged
user whose libraries go to the per-user ~/.xla/pydeps (the package folder is not theirs to write),
and answers a happy-path call of every tool through its console script as the checkout does.

One wheel and one venv per module (building takes seconds). The working tree is copied (without
.git, tests, pydeps) into a fresh repository tagged v3.4.5, so what is tested is the code as it
stands, the version comes from the tag, and the source tree stays clean."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, TOOL_COUNT, as_nobody, nobody_dir
from netserver import serve  # noqa: F401 - the fixture (the network tools' sites, played locally)
from xlakit import manifest as xla_manifest

pytestmark = pytest.mark.slow          # a wheel build (isolated backend install) and a venv: 20-50 s
VERSION = "3.4.5"
SKIP_PARTS = {".git", ".venv", "pydeps", "tests", "bench", "build", "dist", "__pycache__", "examples"}


def _copy_ignore(_folder, names):
    return [n for n in names if n in SKIP_PARTS or n.endswith((".egg-info", ".pyc")) or n.startswith(".pydeps")]


def venv_python():
    """An interpreter user 65534 can start too (the test venv's may live under root's 0700 home)."""
    if os.geteuid() == 0:
        real = os.path.realpath(sys.executable)
        if not real.startswith(("/root/", "/home/")):
            return sys.executable
        for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"):
            if os.path.exists(candidate):
                return candidate
    return sys.executable


# session, not module: with xdist a worker interleaves other modules' tests, and a module fixture
# is torn down and built again each time the worker comes back to this module.
@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(venv folder, console script) of a fresh venv with the built wheel, readable by user 65534."""
    base = nobody_dir("xla-pkg-")
    if os.geteuid() == 0:
        os.chown(str(base), 0, 0)                  # root's: user 65534 may read it, not write it
    src = base / "src"
    shutil.copytree(ROOT, str(src), ignore=_copy_ignore)
    dist = base / "dist"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "SETUPTOOLS_SCM", "GIT_"))}
    env["PYTHONPATH"] = ""
    # The copy becomes its own repository with a release tag: the version must come from it.
    git = dict(env, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"], ["tag", "v" + VERSION]):
        subprocess.run(["git"] + cmd, cwd=str(src), env=git, check=True, stdout=subprocess.DEVNULL, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                           "-w", str(dist), str(src)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          timeout=300)
    if proc.returncode != 0 and b"setuptools" in proc.stdout and (b"connect" in proc.stdout.lower()
                                                                  or b"No matching distribution" in proc.stdout):
        pytest.skip("the build backend (setuptools, setuptools-scm) cannot be installed here")
    assert proc.returncode == 0, proc.stdout.decode("utf-8", "replace")[-3000:]
    wheels = [p for p in os.listdir(str(dist)) if p.endswith(".whl")]
    assert wheels == ["xla_tools-%s-py3-none-any.whl" % VERSION], wheels
    venv = base / "venv"
    subprocess.run([venv_python(), "-m", "venv", str(venv)], check=True, timeout=300, env=env)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--disable-pip-version-check",
                    str(dist / wheels[0])], check=True, timeout=300, env=env)
    for dirpath, dirnames, filenames in os.walk(str(base)):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444 | (0o111 if os.path.isdir(path) else 0))
    yield {"base": base, "venv": venv, "python": py, "script": str(venv / "bin" / "xla-tools"),
           "wheel": str(dist / wheels[0])}
    shutil.rmtree(str(base), ignore_errors=True)


def package_root(installed):
    out = subprocess.run([installed["python"], "-c", "import xla_tools.xla as x; print(x.ROOT)"],
                         stdout=subprocess.PIPE, check=True, env={"PATH": os.environ["PATH"]}, timeout=60)
    return out.stdout.decode().strip()


def mcp_session(script, home, messages, timeout=120):
    """Write ``messages`` (dicts, one per line) to ``xla-tools mcp`` and return its answers by id."""
    env = {"PATH": os.path.dirname(script) + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home)}
    data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode()
    proc = subprocess.run([script, "mcp"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, cwd=str(home), timeout=timeout)
    answers = {}
    for line in proc.stdout.decode("utf-8").splitlines():
        msg = json.loads(line)
        if "id" in msg:
            answers[msg["id"]] = msg
    return answers, proc.stderr.decode("utf-8", "replace")


SMOKE = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pkg-test", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
         {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
             "name": "lunar_date", "arguments": {"date": "2024-02-10"}}}]


def check_smoke(answers, stderr):
    assert set(answers) == {1, 2, 3}, stderr[-2000:]
    assert answers[1]["result"]["serverInfo"]["version"] == VERSION     # the package version, from the v* tag
    names = [t["name"] for t in answers[2]["result"]["tools"]]
    data, _ = xla_manifest.load_manifest(ROOT)
    assert len(names) == TOOL_COUNT and names == [t["name"] for t in data["tools"]]
    call = answers[3]["result"]
    assert call["isError"] is False, call
    answer = json.loads(call["content"][0]["text"])
    assert answer["ok"] and answer["lunar_month_cn"] == "正月" and answer["lunar_day_cn"] == "初一", answer


def test_wheel_ships_the_checkout_layout(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for must in ("xla_tools/xla.py", "xla_tools/tools.json", "xla_tools/pydeps_boot.py", "xla_tools/tools/calc_table.py",
                 "xla_tools/xlakit/raster/data/bitmap24.bin", "xla_tools/xlakit/documents/data/cid2unicode.bin",
                 "xla_tools/xlakit/tables/formats/__init__.py", "xla_tools/xlaguard/__init__.py",
                 "xla_tools/xlaguard/hook.py", "xla_tools/xla_guard.py"):
        assert must in names
    assert not [n for n in names if "/tests/" in n or "/pydeps/" in n or n.endswith(("setup.py", ".pyc"))]
    data, _ = xla_manifest.load_manifest(ROOT)
    for tool in data["tools"]:
        assert "xla_tools/tools/" + (tool.get("script") or tool["name"] + ".py") in names


def test_console_script_lists_and_serves_from_the_package(installed, tmp_path):
    out = subprocess.run([installed["script"], "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, timeout=60)
    assert out.returncode == 0 and "共 %d 个工具" % TOOL_COUNT in out.stdout.decode("utf-8"), out.stderr
    root = package_root(installed)
    assert root.startswith(str(installed["venv"])) and xla_manifest.installed_package(root)
    check_smoke(*mcp_session(installed["script"], tmp_path, SMOKE))
    # The pasted block names the venv's interpreter and the package's own xla.py, and starts.
    out = subprocess.run([installed["script"], "mcp", "--config", "cursor"], stdout=subprocess.PIPE, timeout=60,
                         env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    entry = json.loads(out.stdout.decode("utf-8"))["mcpServers"]["xla-tools"]
    assert entry["command"] == installed["python"] and entry["args"] == ["-X", "utf8", os.path.join(root, "xla.py"), "mcp"]
    assert entry["env"]["PYTHONPATH"] == os.path.join(str(tmp_path), ".xla", "pydeps")
    ping = subprocess.run([entry["command"]] + entry["args"], input=b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n',
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=entry["env"], timeout=60)
    assert json.loads(ping.stdout.decode("utf-8")) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    # The package's libraries go to the per-user folder, never into site-packages.
    assert not os.path.exists(os.path.join(root, "tools", "pydeps"))


def _tiny_wheel(folder):
    """A one-module wheel, so an on-demand install runs offline (pip --no-index)."""
    path = os.path.join(folder, "xlatiny-1.0-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("xlatiny/__init__.py", "VALUE = 42\n")
        zf.writestr("xlatiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: xlatiny\nVersion: 1.0\n")
        zf.writestr("xlatiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                    "Tag: py3-none-any\n")
        zf.writestr("xlatiny-1.0.dist-info/RECORD", "")
    os.chmod(path, 0o644)
    return path


def test_unprivileged_user_gets_a_per_user_pydeps(installed):
    home = nobody_dir("xla-pkg-home-")
    wheel = _tiny_wheel(str(installed["base"]))
    py, script = installed["python"], installed["script"]

    def child():
        probe = ("import sys, pydeps_boot as b; xlatiny = b.ensure(\"xlatiny\", sys.argv[1]);"
                 "print(b.PYDEPS); print(xlatiny.__file__)")
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}
        root = subprocess.run([py, "-c", "import xla_tools.xla as x; print(x.ROOT)"], stdout=subprocess.PIPE,
                              env=env, timeout=60).stdout.decode().strip()
        got = subprocess.run([py, "-c", probe, wheel], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             cwd=root, timeout=120)
        answers, stderr = mcp_session(script, home, SMOKE)
        return {"code": got.returncode, "out": got.stdout.decode(), "err": got.stderr.decode("utf-8", "replace"),
                "answers": {str(k): v for k, v in answers.items()}, "stderr": stderr,
                "can_write_package": os.access(root, os.W_OK)}
    try:
        res = as_nobody(child)
        assert "child_error" not in res, res
        assert res["can_write_package"] is (os.geteuid() != 0)
        assert res["code"] == 0, res["err"]
        deps = os.path.join(str(home), ".xla", "pydeps")
        assert res["out"].split() == [deps, os.path.join(deps, "xlatiny", "__init__.py")]
        check_smoke({int(k): v for k, v in res["answers"].items()}, res["stderr"])
    finally:
        shutil.rmtree(str(home), ignore_errors=True)


def test_python_sdk_client_against_the_installed_wheel(installed, tmp_path):
    """The official Python SDK (test-only; skipped where it is not installed) talks to the
    console script: every tool, and a structured answer it validates against the outputSchema."""
    anyio = pytest.importorskip("anyio")
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import stdio_client
    params = mcp.StdioServerParameters(command=installed["script"], args=["mcp"],
                                       env={"HOME": str(tmp_path), "PATH": os.environ.get("PATH", os.defpath)})

    async def main():
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    tools = (await session.list_tools()).model_dump(by_alias=True, mode="json")["tools"]
                    result = await session.call_tool("lunar_date", {"date": "2024-02-10"})
                    result = result.model_dump(by_alias=True, mode="json")      # SDK 1.x and 2.x alike
                    return ([t["name"] for t in tools], sum(1 for t in tools if t.get("outputSchema")),
                            result["isError"], result["structuredContent"])
    names, with_schema, is_error, structured = anyio.run(main)
    assert len(names) == TOOL_COUNT and with_schema == TOOL_COUNT
    assert is_error is False and structured["ok"] is True and structured["lunar_day_cn"] == "初一"


def test_typescript_sdk_and_inspector_against_the_installed_wheel(installed, tmp_path):
    """The clients nobody here wrote, on the package: the TypeScript SDK's stdio client starts
    the venv's interpreter on the package's xla.py, the Inspector CLI the console script."""
    import test_mcp_inspector
    import test_mcp_typescript
    root = package_root(installed)
    (tmp_path / "ts").mkdir()
    test_mcp_typescript.drive(test_mcp_typescript.ensure_sdk(), tmp_path / "ts", installed["python"],
                              os.path.join(root, "xla.py"))
    (tmp_path / "inspector").mkdir()
    test_mcp_inspector.check(test_mcp_inspector.ensure_inspector(), tmp_path / "inspector",
                             server=[installed["script"], "mcp"])


# ---------------------------------------------------------------------------------------------
# Every tool from the installed wheel, as the checkout's tests call them

def _files(folder):
    """Small real inputs for the happy-path calls."""
    import openpyxl
    os.makedirs(folder, exist_ok=True)
    ledger = os.path.join(folder, "费用.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "明细"
    ws.append(["日期", "部门", "经办人", "金额"])
    for i in range(12):
        ws.append(["2024-%02d-05" % (i % 6 + 1), ["销售部", "财务部", "研发部"][i % 3], ["张三", "李四"][i % 2],
                   "￥%d.50" % (100 + i)])
    ws.append(["合计", None, None, 1218])
    wb.save(ledger)
    other = os.path.join(folder, "经办人.csv")
    with open(other, "w", encoding="utf-8-sig", newline="") as fh:
        fh.write("经办人,电话\r\n张三,13800000001\r\n李四,13800000002\r\n")
    text = os.path.join(folder, "说明.txt")
    with open(text, "w", encoding="gbk") as fh:
        fh.write("第一行\n第二行：金额 100 元\n")
    script = os.path.join(folder, "算一下.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write("print(1 + 1)\n")
    return {"xlsx": ledger, "csv": other, "text": text, "script": script}


def _web(serve):
    """The sites the network tools ask, played by the local server (the web tests' own pages)."""
    import test_fetch_url
    import test_query_ip
    import test_web_tools as web
    web.baidu_home(serve)
    serve.page("/s", web.page("baidu_mobile.html"), host="www.baidu.com")
    serve.page("/hefei/", web.page("tianqi_city.html"), host="www.tianqi.com")
    web.kuaidi(serve, {"zhongtong": web.page("kuaidi_trace_none.json"), "shentong": web.page("kuaidi_trace_ok.json")})
    serve.json("/get", json.loads(web.page("ip9_ok.json").replace("203.0.113.7", "223.5.5.5")), host="ip9.com.cn")
    serve.json("/", {"ip": "223.5.5.5"}, host="ipv4.jsonip.com")
    serve.page("/2025/0701/a.html", test_fetch_url.ARTICLE, host="news.example.cn")
    origins = (web.BAIDU, web.SO, web.TIANQI, web.KUAIDI, web.IP9, test_fetch_url.NEWS) + test_query_ip.ORIGINS
    return serve.env(*origins)["XLA_NET_MAP"]


def _every_call(f, out):
    """(tool, args, check) for every tool in tools.json: a happy path each."""
    o = lambda name: os.path.join(out, name)   # noqa: E731
    x = f["xlsx"]

    def has(*keys):
        return lambda d: all(k in d for k in keys)
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    return [
        ("write_spreadsheet", {"path": o("写.xlsx"), "rows": [["姓名", "金额"], ["张三", 100]]},
         lambda d: d["rows_written"] == 2),
        ("read_spreadsheet", {"path": x}, lambda d: d["sheets"][0]["rows"][1][3] == "￥100.50"),
        ("probe_table", {"path": x}, lambda d: d["data_rows"] == 12 and d["totals_rows"] == [14]),
        ("calc_table", {"path": x, "group_by": ["部门"], "metrics": [{"column": "金额", "func": "sum"}]},
         lambda d: sum(g["金额_求和"] for g in d["groups"]) == 1272),
        ("filter_table", {"path": x, "where": [{"column": "部门", "op": "eq", "value": "销售部"}],
                          "out_path": o("筛.xlsx")}, lambda d: d["written"] == 4),
        ("pivot_table", {"path": x, "row": {"column": "部门"}, "col": {"column": "经办人"}, "value": "金额",
                         "out_path": o("透.xlsx")}, lambda d: d["grand_total"] == 1272),
        ("lookup_table", {"left_path": x, "right_path": f["csv"], "left_key": "经办人", "out_path": o("关联.xlsx")},
         lambda d: d["matched"] == 12),
        ("dedupe_table", {"path": x, "keys": ["部门"], "out_path": o("去重.xlsx")}, has("path")),
        ("clean_table", {"path": x, "date_columns": ["日期"], "out_path": o("洗.xlsx")}, has("path")),
        ("lunar_date", {"date": "2024-02-10"}, lambda d: d["lunar_day_cn"] == "初一"),
        ("web_search", {"query": "样例 天气", "limit": 5}, lambda d: d["returned"] == 3),
        ("query_weather", {"city": "合肥市"}, lambda d: d["city"] == "合肥"),
        ("query_express", {"number": "773000000000001"}, lambda d: d["company"] == "shentong"),
        ("query_location", {"ip": "223.5.5.5"}, has("ip")),
        ("fetch_url", {"url": "https://news.example.cn/2025/0701/a.html"}, lambda d: "4494" in d["text"]),
        ("query_ip", {}, lambda d: d["ip"] == "223.5.5.5"),
        ("current_time", {"timezone": "Asia/Shanghai"}, has("time")),
        ("run_python", {"path": f["script"]}, lambda d: d["exit_code"] == 0 and d["stdout"].strip() == "2"),
        ("read_document", {"path": f["text"]}, lambda d: "金额 100 元" in json.dumps(d, ensure_ascii=False)),
        ("draw_chart", {"type": "bar", "labels": ["华东", "华南"], "values": [3, 5], "title": "销售"}, has("path")),
        ("write_document", {"path": o("报告.docx"), "text": "# 标题\n\n正文一段。"}, has("path")),
        # LibreOffice is a program of its own: where it is missing the answer must say so (in Chinese)
        ("convert_document", {"path": o("报告.docx")}, (lambda d: d["pages"] >= 1) if soffice else None),
        ("write_text", {"path": o("笔记.txt"), "text": "你好"}, has("path")),
        ("list_dir", {"path": out}, lambda d: d["ok"]),
        ("find_files", {"pattern": "*.xlsx", "path": out}, lambda d: d["ok"]),
        ("file_info", {"path": x}, lambda d: d["ok"]),
        ("delete_file", {"path": o("笔记.txt")}, lambda d: d["ok"]),
        ("restore_file", {"item": "笔记.txt"}, lambda d: d["restored"] == "笔记.txt"),
        ("read_text_file", {"path": f["text"]}, lambda d: "第二行" in json.dumps(d, ensure_ascii=False)),
    ]


NET_TOOLS = ("web_search", "query_weather", "query_express", "query_location", "fetch_url", "query_ip", "current_time")


def test_every_tool_from_the_installed_wheel(installed, serve, tmp_path):
    """Each tool once, through the installed console script (``xla-tools run``), the way the
    checkout's tests call it: the package must be as good as the checkout (it once lacked the
    run_python fence, xlaguard, and only lunar_date was tried). The libraries the tools import on
    demand are taken as already installed into the per-user folder (``xla-tools deps`` does that;
    here without the network, from the checkout's own pydeps)."""
    home = tmp_path / "home"
    os.makedirs(str(home / ".xla"))
    pydeps = os.path.realpath(os.path.join(ROOT, "tools", "pydeps"))
    if os.path.isdir(pydeps):
        os.symlink(pydeps, str(home / ".xla" / "pydeps"))
    files = _files(str(home / ".xla" / "workspace" / "输入"))
    out = str(home / ".xla" / "workspace")
    net = _web(serve)
    calls = _every_call(files, out)
    data, _ = xla_manifest.load_manifest(ROOT)
    assert [c[0] for c in calls] == [t["name"] for t in data["tools"]], "every tool, once, in tools.json order"
    env = {"PATH": os.path.dirname(installed["script"]) + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home)}
    failures = []
    for tool, args, check in calls:
        cmd = [installed["script"], "run", tool, json.dumps(args, ensure_ascii=False)]
        if tool in NET_TOOLS:
            cmd += ["--env", "XLA_NET_MAP=" + net]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(home), timeout=120)
        text = proc.stdout.decode("utf-8", "replace")
        try:
            answer = json.loads(text)
        except ValueError:
            failures.append("%s: no JSON answer: %s %s" % (tool, text[:300], proc.stderr.decode("utf-8", "replace")[-500:]))
            continue
        if check is None:
            ok_or_said = answer.get("ok") or "LibreOffice" in (answer.get("error") or "")
            if not ok_or_said:
                failures.append("%s: %s" % (tool, text[:500]))
            continue
        if not answer.get("ok"):
            failures.append("%s: %s" % (tool, text[:500]))
            continue
        try:
            good = check(answer)
        except (KeyError, IndexError, TypeError) as exc:
            good = False
            text += " (%r)" % exc
        if not good:
            failures.append("%s: unexpected answer %s" % (tool, text[:500]))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("runner,cache", [("uvx", ".cache/uv/archive-v0/Xk3v9"), ("pipx", ".local/share/pipx/.cache/5f2e")])
def test_config_under_uvx_or_pipx_run_names_the_runner(installed, tmp_path, runner, cache):
    """``uvx xla-tools`` / ``pipx run xla-tools`` install the wheel into a venv in their cache: a
    pasted block naming that venv's python breaks at the next cache clean, so the block names the
    runner instead and the note says why (the wheel installed into a venv laid out like theirs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env["PYTHONPATH"] = ""
    venv = tmp_path / cache
    subprocess.run([venv_python(), "-m", "venv", str(venv)], check=True, timeout=300, env=env)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--disable-pip-version-check", installed["wheel"]], check=True, timeout=300, env=env)
    out = subprocess.run([str(venv / "bin" / "xla-tools"), "mcp", "--config", "cursor"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=60, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    entry = json.loads(out.stdout.decode("utf-8"))["mcpServers"]["xla-tools"]
    assert os.path.basename(entry["command"]) == runner, entry
    assert entry["args"] == (["xla-tools", "mcp"] if runner == "uvx" else ["run", "xla-tools", "mcp"])
    assert str(venv) not in json.dumps(entry)
    assert "临时创建的环境" in out.stderr.decode("utf-8")


def _fake_wheel(folder, name, version):
    """An empty importable package ``name`` as a wheel, for an offline pip install."""
    path = os.path.join(folder, "%s-%s-py3-none-any.whl" % (name, version))
    info = "%s-%s.dist-info" % (name, version)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("%s/__init__.py" % name, "FAKE = True\n")
        zf.writestr(info + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
        zf.writestr(info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(info + "/RECORD", "")
    return path


def test_ocr_engine_installed_up_front_with_the_package_command(installed, tmp_path):
    """Issue 35: after ``pip install xla-tools`` the first scan installed the OCR engine inside
    its call (43.7 s of 60). The package's setup step (``mcp --config``) and the OCR-needed error
    name ``xla-tools install ocr`` (not ``python3 xla.py``, which a package install has no folder
    for), and that command installs the engine into the per-user libraries up front. Offline:
    the engine's wheels are stand-ins served from a local folder (pip --no-index)."""
    home = tmp_path / "home"
    deps = home / ".xla" / "pydeps"
    os.makedirs(str(deps))
    pydeps = os.path.realpath(os.path.join(ROOT, "tools", "pydeps"))
    engine = ("rapidocr", "onnxruntime", "pypdfium2")
    for name in os.listdir(pydeps):                 # every library but the engine
        if not name.startswith(engine):
            os.symlink(os.path.join(pydeps, name), str(deps / name))
    wheels = tmp_path / "wheels"
    os.makedirs(str(wheels))
    for name, version in (("rapidocr", "3.10.0"), ("onnxruntime", "1.16.0"), ("pypdfium2", "4.20.0")):
        _fake_wheel(str(wheels), name, version)
    env = {"PATH": os.path.dirname(installed["script"]) + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_CONFIG_FILE": os.devnull}
    script = installed["script"]

    def call(*args):
        proc = subprocess.run([script] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              cwd=str(home), timeout=300)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

    code, _out, err = call("mcp", "--config", "cursor")
    assert code == 0 and "在命令行执行一次：xla-tools install ocr" in err, err
    # the last in-call install did not finish: the answer comes at once and names the command
    (home / ".xla" / ".ocr-install-failed").write_text("2026-01-01 00:00:00\n")
    image = os.path.join(ROOT, "tests", "fixtures", "ocr", "notice.png")
    code, out, err = call("run", "read_document", json.dumps({"path": image}))
    answer = json.loads(out)
    assert answer["ok"] is False and "xla-tools install ocr" in answer["error"], answer
    assert "在命令行执行一次" in answer["error"] and "xla.py" not in answer["error"]
    code, out, err = call("install", "ocr")
    assert code == 0 and "已就绪" in out, out + err
    for name in engine:
        assert os.path.isfile(str(deps / name / "__init__.py")), name
    code, _out, err = call("mcp", "--config", "cursor")
    assert code == 0 and "install ocr" not in err, err


# Each tool's own suite (lunar_date's is test_lunar, the four web tools' test_web_tools, the file
# tools' test_file_tools, read_text_file's test_answers_files, convert_document's test_pdf_out).
TOOL_SUITES = ["test_write_spreadsheet.py", "test_read_spreadsheet.py", "test_probe_table.py", "test_calc_table.py",
               "test_filter_table.py", "test_pivot_table.py", "test_lookup_table.py", "test_dedupe_table.py",
               "test_clean_table.py", "test_lunar.py", "test_web_tools.py", "test_fetch_url.py", "test_query_ip.py",
               "test_current_time.py", "test_run_python.py", "test_read_document.py", "test_draw_chart.py",
               "test_write_document.py", "test_pdf_out.py", "test_write_text.py", "test_file_tools.py",
               "test_restore_file.py", "test_answers_files.py"]


@pytest.mark.skipif(os.environ.get("XLA_TEST_PACKAGE_ROOT") is not None, reason="already inside the rerun")
def test_tool_suites_pass_on_the_installed_wheel(installed):
    """Issue 35: the installed wheel passes the same tool tests as the checkout. Every tool's
    own suite runs again in a child pytest whose ``run`` fixture (conftest) starts the tools from
    the installed package with the venv's interpreter and the per-user ~/.xla/pydeps."""
    data, _ = xla_manifest.load_manifest(ROOT)
    here = os.path.dirname(os.path.abspath(__file__))
    for suite in TOOL_SUITES:
        assert os.path.exists(os.path.join(here, suite)), suite
    env = dict(os.environ, XLA_TEST_PACKAGE_ROOT=package_root(installed), XLA_TEST_PACKAGE_PYTHON=installed["python"])
    workers = ["-n", "2"] if _has_xdist() else []
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + workers +
                         [os.path.join(here, s) for s in TOOL_SUITES], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=3000)
    tail = res.stdout.decode("utf-8", "replace")[-4000:]
    assert res.returncode == 0, tail
    assert " passed" in tail and len(data["tools"]) == TOOL_COUNT


def _has_xdist():
    try:
        import xdist  # noqa: F401
        return True
    except ImportError:
        return False
