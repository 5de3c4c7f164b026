"""``xla.py mcp --config CLIENT``: the exact JSON block a desktop MCP client needs to start us.

Why: people paste a block into Claude Desktop, Cursor, Cherry Studio, VS Code or Cline, and the two
mistakes that break it are a relative or wrong interpreter (a desktop app's PATH is short) and a
wrong path to ``xla.py``. Printed from the running interpreter and file, the block is right by
construction, in a checkout and in an installed package alike (the package's own ``xla.py``).
Under ``uvx`` / ``pipx run`` the interpreter sits in a throwaway cache, so the block names the
runner instead (``uvx xla-tools mcp``) and the note on stderr says why.

The command is ``<this python> -X utf8 <absolute xla.py> mcp``; the env is what the host gives a
tool (PATH, HOME, PYTHONPATH = the pydeps folder), so tools started by the client find the same
programs and libraries as in a terminal. Only the JSON goes to stdout; where to paste it goes to
stderr."""
import os
import shutil
import sys

from .. import manifest as xla_manifest
from ..pycmd import throwaway_runner  # noqa: F401 - where it lives: pycmd names commands the same way
from ..fs.paths import home_dir

SERVER_KEY = "xla-tools"

# client -> (top-level key, extra fields of the server entry, where people paste it)
CLIENTS = {
    "claude": ("mcpServers", {}, "Claude Desktop：设置 → 开发者 → 编辑配置（macOS ~/Library/Application Support/Claude/"
               "claude_desktop_config.json，Windows %APPDATA%\\Claude\\claude_desktop_config.json），保存后完全退出再打开"),
    "cursor": ("mcpServers", {}, "Cursor：~/.cursor/mcp.json（全部项目）或项目里的 .cursor/mcp.json"),
    "cherry": ("mcpServers", {"name": "xla 工具箱", "type": "stdio", "isActive": True},
               "Cherry Studio：设置 → MCP 服务器 → 添加服务器 → 从 JSON 导入"),
    "vscode": ("servers", {"type": "stdio"}, "VS Code：项目里的 .vscode/mcp.json，或命令面板 “MCP: Open User Configuration”"),
    "cline": ("mcpServers", {"type": "stdio", "disabled": False, "autoApprove": []},
              "Cline：MCP Servers → Installed → Configure MCP Servers（cline_mcp_settings.json）"),
}


RUNNERS = {"uvx": ["xla-tools", "mcp"], "pipx": ["run", "xla-tools", "mcp"]}


def server_entry(root=None, python=None, extra_args=(), prefix=None):
    """command/args/env for this toolbox, all absolute; under ``uvx`` / ``pipx run`` the command
    that makes the environment again (``uvx xla-tools mcp``) instead of paths inside it."""
    root = os.path.abspath(root or xla_manifest.root_dir())
    script = os.path.join(root, "xla.py")
    python = os.path.abspath(python or sys.executable)
    home = home_dir()
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home,
           "PYTHONPATH": xla_manifest.pydeps_dir(root, home)}
    runner = throwaway_runner(prefix)
    if runner is not None:
        return {"command": shutil.which(runner) or runner, "args": RUNNERS[runner] + list(extra_args), "env": env}
    return {"command": python, "args": ["-X", "utf8", script, "mcp"] + list(extra_args), "env": env}


def config_block(client, root=None, python=None, extra_args=()):
    """The whole JSON object to paste for ``client`` (a key of CLIENTS)."""
    key, extra, _where = CLIENTS[client]
    entry = dict(extra)
    entry.update(server_entry(root, python, extra_args))
    return {key: {SERVER_KEY: entry}}


def where(client, prefix=None):
    """Where to paste the block (and, under uvx / pipx run, why the block names the runner)."""
    runner = throwaway_runner(prefix)
    if runner is None:
        return CLIENTS[client][2]
    return CLIENTS[client][2] + "。注意：现在是 %s 临时创建的环境，清理缓存后其中的路径会失效，所以配置里写的是 " \
        "「%s %s」，每次由它重新准备环境；想固定安装可改用 %s" % (
            "uvx" if runner == "uvx" else "pipx run", runner, " ".join(RUNNERS[runner]),
            "uv tool install xla-tools" if runner == "uvx" else "pipx install xla-tools")
