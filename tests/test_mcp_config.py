"""``xla.py mcp --config CLIENT``: the block people paste into a desktop client is valid JSON,
points at an interpreter and an xla.py that exist, and really starts the server."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from xlakit.mcp import config as mcpconfig

XLA = os.path.join(ROOT, "xla.py")
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def config(client, *extra, python=sys.executable, cwd=None):
    proc = subprocess.run([python, XLA, "mcp", "--config", client] + list(extra), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60, cwd=cwd)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    return json.loads(proc.stdout.decode("utf-8")), proc.stderr.decode("utf-8")


def check_entry(entry, script=XLA):
    assert os.path.isabs(entry["command"]) and os.access(entry["command"], os.X_OK), entry
    assert entry["args"][:2] == ["-X", "utf8"] and entry["args"][3] == "mcp"
    assert entry["args"][2] == script and os.path.isfile(entry["args"][2])
    assert set(entry["env"]) == {"PATH", "HOME", "PYTHONPATH"} and all(os.path.isabs(v.split(os.pathsep)[0])
                                                                     for v in entry["env"].values())


@pytest.mark.parametrize("client,key", [("claude", "mcpServers"), ("cursor", "mcpServers"), ("cherry", "mcpServers"),
                                        ("vscode", "servers"), ("cline", "mcpServers")])
def test_config_block_per_client(client, key, tmp_path):
    block, where = config(client, cwd=str(tmp_path))
    assert list(block) == [key] and list(block[key]) == ["xla-tools"]
    entry = block[key]["xla-tools"]
    check_entry(entry)
    assert entry["command"] == os.path.abspath(sys.executable)
    assert where.strip() and mcpconfig.where(client) in where
    if client in ("vscode", "cherry", "cline"):
        assert entry["type"] == "stdio"
    if client == "cherry":
        assert entry["isActive"] is True and entry["name"]


def test_pasted_block_starts_the_server(tmp_path):
    """What the client would do with the block: start it (env replaced, not merged) and talk."""
    block, _ = config("claude", "--timeout", "30")
    entry = block["mcpServers"]["xla-tools"]
    assert entry["args"][-2:] == ["--timeout", "30"]
    env = dict(entry["env"], HOME=str(tmp_path))
    proc = subprocess.run([entry["command"]] + entry["args"], input=PING, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=str(tmp_path), timeout=60)
    assert json.loads(proc.stdout.decode("utf-8")) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_root_is_made_absolute_and_unknown_client_is_refused(tmp_path):
    block, _ = config("cursor", "--root", ".", cwd=ROOT)
    assert block["mcpServers"]["xla-tools"]["args"][-2:] == ["--root", ROOT]
    proc = subprocess.run([sys.executable, XLA, "mcp", "--config", "chatgpt"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2 and not proc.stdout and "claude" in proc.stderr.decode("utf-8")
