"""The MCP server driven by a client nobody here wrote: the official TypeScript SDK's stdio client
(npm @modelcontextprotocol/sdk), from tests/mcp_ts_client.cjs. It lists the tools (each with an
outputSchema, which the SDK itself validates every structured answer against), calls probe_table,
gets draw_chart's picture as image content, sees a bad call come back as a Chinese isError
result, receives progress notifications for a long calc_table and cancels a second one.

The SDK is installed once into ~/.cache/xla-tools-tests/ (npm); the test is skipped only when
node/npm are missing or the npm registry cannot be reached."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import CJK, ROOT, TOOL_COUNT

SDK_SPEC = "@modelcontextprotocol/sdk@1"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "xla-tools-tests", "mcp-ts-sdk")
SCRIPT = os.path.join(ROOT, "tests", "mcp_ts_client.cjs")
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")


@pytest.fixture(scope="module")
def sdk_dir():
    return ensure_sdk()


def ensure_sdk():
    """The SDK's install folder (installed on first use); skips the test when npm cannot."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node/npm not installed")
    marker = os.path.join(CACHE, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
    if not os.path.exists(marker):
        os.makedirs(CACHE, exist_ok=True)
        try:
            proc = subprocess.run(["npm", "install", "--prefix", CACHE, "--no-audit", "--no-fund", "--silent",
                                   SDK_SPEC], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install %s timed out" % SDK_SPEC)
        if proc.returncode != 0 or not os.path.exists(marker):
            pytest.skip("npm cannot install %s: %s" % (SDK_SPEC, proc.stdout.decode("utf-8", "replace")[-300:]))
    return CACHE


def test_typescript_sdk_client(sdk_dir, tmp_path):
    drive(sdk_dir, tmp_path, sys.executable, os.path.join(ROOT, "xla.py"))


def drive(sdk_dir, tmp_path, python, xla):
    """Run tests/mcp_ts_client.cjs against ``python -X utf8 xla mcp`` and check what it saw."""
    home = tmp_path / "home"
    home.mkdir()
    big = tmp_path / "大表.csv"
    with open(str(big), "w", encoding="utf-8") as fh:
        fh.write("部门,金额\n")
        for i in range(60000):
            fh.write("部门%d,%d.5\n" % (i % 7, i % 100))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    proc = subprocess.run(["node", SCRIPT, sdk_dir, python, xla, str(home), SAMPLE, str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    got = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
    assert "fatal" not in got, got.get("fatal")
    assert got["server"]["name"] == "xla-tools"
    assert len(got["tools"]) == TOOL_COUNT and got["with_output_schema"] == TOOL_COUNT
    assert got["probe"] == {"isError": False, "ok": True, "columns": ["日期", "部门", "类别", "摘要", "金额", "经办人"]}
    images = [c for c in got["chart"] if c["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png" and images[0]["bytes"] > 500
    assert got["bad"]["isError"] is True and CJK.search(json.loads(got["bad"]["text"])["error"])
    values = [p["progress"] for p in got["progress"]]
    assert len(values) >= 5 and values == sorted(set(values)) and all(p["message"] for p in got["progress"])
    assert got["calc"] == {"isError": False, "rows_used": 60000}
    assert got["cancelled"] != "finished" and "测试取消" in got["cancelled"]
    assert got["ping_after_cancel"] == {}
