"""The installable package (pyproject.toml): the wheel built from this checkout, installed into a
fresh venv, serves every tool over MCP from the installed package data, also for an unprivileged
user whose libraries go to the per-user ~/.xla/pydeps (the package folder is not theirs to write).

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
                 "xla_tools/xlakit/tables/formats/__init__.py"):
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
