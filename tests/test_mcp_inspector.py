"""The MCP server driven by the MCP Inspector's CLI mode (npm @modelcontextprotocol/inspector,
``mcp-inspector --cli <server command> --method ...``): tools/list and tools/call as a person
checking a server by hand would run them. Installed once into ~/.cache/xla-tools-tests/ (npm);
skipped only when node/npm are missing or the registry cannot be reached."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import CJK, ROOT, TOOL_COUNT

pytestmark = pytest.mark.slow          # the first install downloads ~150 MB of npm packages
SPEC = "@modelcontextprotocol/inspector@0"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "xla-tools-tests", "mcp-inspector")
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")


@pytest.fixture(scope="module")
def inspector():
    return ensure_inspector()


def ensure_inspector():
    """The CLI's path (installed on first use); skips the test when npm cannot."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node/npm not installed")
    cli = os.path.join(CACHE, "node_modules", ".bin", "mcp-inspector")
    if not os.path.exists(cli):
        os.makedirs(CACHE, exist_ok=True)
        try:
            proc = subprocess.run(["npm", "install", "--prefix", CACHE, "--no-audit", "--no-fund", "--silent", SPEC],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install %s timed out" % SPEC)
        if proc.returncode != 0 or not os.path.exists(cli):
            pytest.skip("npm cannot install %s: %s" % (SPEC, proc.stdout.decode("utf-8", "replace")[-300:]))
    return cli


def cli(inspector, home, *method, server=None):
    server = server or [sys.executable, "-X", "utf8", os.path.join(ROOT, "xla.py"), "mcp"]
    cmd = [inspector, "--cli"] + server + list(method)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180,
                          env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return json.loads(proc.stdout.decode("utf-8"))


def test_inspector_lists_and_calls(inspector, tmp_path):
    check(inspector, tmp_path)


def check(inspector, home, server=None):
    """tools/list and two tools/call through the Inspector CLI, against ``server`` (a command)."""
    listed = cli(inspector, home, "--method", "tools/list", server=server)
    assert len(listed["tools"]) == TOOL_COUNT and all("outputSchema" in t and "inputSchema" in t for t in listed["tools"])
    got = cli(inspector, home, "--method", "tools/call", "--tool-name", "probe_table", "--tool-arg", "path=" + SAMPLE,
              server=server)
    assert not got.get("isError") and got["structuredContent"]["ok"] is True
    assert [c["name"] for c in got["structuredContent"]["columns"]] == ["日期", "部门", "类别", "摘要", "金额", "经办人"]
    assert json.loads(got["content"][0]["text"]) == got["structuredContent"]
    bad = cli(inspector, home, "--method", "tools/call", "--tool-name", "probe_table", server=server)
    assert bad["isError"] is True and CJK.search(bad["structuredContent"]["error"])
