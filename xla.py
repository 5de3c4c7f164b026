#!/usr/bin/env python3
"""xla-tools command line: the one entry point for people.

    python3 xla.py check                 validate tools.json as the assistant does
    python3 xla.py list                  the tools, one line each
    python3 xla.py schema                the manifest as a function-calling tool list (JSON)
    python3 xla.py run NAME [JSON]       run a tool like the assistant (JSON from the argument or stdin)
                 [--save-images DIR] [--timeout S] [--env NAME=VALUE ...]
    python3 xla.py mcp [--root DIR]      serve every tool over MCP (stdio) for MCP clients
                 [--config CLIENT]       print the JSON block for claude|cursor|cherry|vscode|cline
    python3 xla.py deps                  pre-install every third-party library into tools/pydeps
    python3 xla.py install ocr           install the OCR engine (~130 MB) ahead of the first scan
    python3 xla.py sync [--remote URL] [--dest DIR] [--force] [--verbose]
                                         update ~/.xla-tools to the newest released tag
    python3 xla.py selftest [--quick] [pytest args]
                                         install what the tests need into .venv and run them all
                                         (--quick: only the tests marked quick, a first check)
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

from xlakit import manifest as xla_manifest  # noqa: E402
from xlakit import text as xla_text  # noqa: E402

# Test-only: oracles and clients the tests compare against (never imported by a tool).
TEST_REQUIREMENTS = ["pytest>=7", "pytest-xdist>=3", "vermin>=1.5", "fonttools>=4", "lunar_python==1.4.8",
                     "jsonschema>=4", 'mcp>=2.3,<3; python_version >= "3.10"', "python-docx>=1"]

USAGE = """xla-tools 命令行

    python3 xla.py check                  按助手的规则校验 tools.json
    python3 xla.py list                   列出全部工具和参数
    python3 xla.py schema                 输出给模型接口用的函数定义（JSON）
    python3 xla.py run 工具名 [JSON]      像助手一样运行一个工具（JSON 也可从标准输入给）
                  [--save-images 目录] [--timeout 秒] [--env 名字=值 ...]
    python3 xla.py mcp                    作为 MCP 服务器（标准输入输出）提供全部工具
                  [--config 客户端]       打印 claude/cursor/cherry/vscode/cline 要粘贴的配置
    python3 xla.py deps                   把全部第三方库预装到 tools/pydeps
    python3 xla.py install ocr            预装文字识别（OCR）引擎（下载约 130 MB），读扫描件和图片用
    python3 xla.py sync [--remote 地址] [--dest 目录] [--force] [--verbose]
                                          把 ~/.xla-tools 更新到最新的版本标签
    python3 xla.py selftest [--quick] [pytest 参数]
                                          在 .venv 里装好测试依赖并运行全部测试（--quick 只跑快速检查的一组）"""


def _usage():
    """USAGE with this interpreter's name (``python3`` is the Store alias on Windows: xlakit.pycmd)."""
    from xlakit import pycmd
    return USAGE.replace("python3 xla.py", pycmd.xla_cmd())


def _print_json(obj):
    from xlakit.wire import clean_surrogates
    print(clean_surrogates(json.dumps(obj, ensure_ascii=False, indent=2)))


def cmd_check(_args):
    data, problems = xla_manifest.load_manifest(ROOT)
    if problems:
        print("tools.json 未通过检查（助手会拒绝整个清单，沿用上一版）：", file=sys.stderr)
        for p in problems:
            print("  - " + p, file=sys.stderr)
        return 1
    print("tools.json 检查通过：%d 个工具" % len(data["tools"]))
    return 0


def cmd_list(_args):
    data, problems = xla_manifest.load_manifest(ROOT)
    if data is None:
        print("\n".join(problems), file=sys.stderr)
        return 1
    tools = data.get("tools", [])
    name_w = max([len(t.get("name", "")) for t in tools] + [4])
    for tool in tools:
        props = (tool.get("parameters") or {}).get("properties") or {}
        required = set((tool.get("parameters") or {}).get("required") or [])
        params = ", ".join(k + ("*" if k in required else "") for k in props)
        summary = tool.get("description", "").split("。")[0]
        summary = xla_text.fit_width(summary, 60)
        print("%-*s  %s\n%*s  参数：%s" % (name_w, tool.get("name"), summary, name_w, "", params or "（无）"))
    print("\n共 %d 个工具（* 为必填参数）" % len(tools))
    return 1 if problems else 0


def cmd_schema(_args):
    data, problems = xla_manifest.load_manifest(ROOT)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    _print_json(xla_manifest.function_schema(data))
    return 0


def cmd_run(args):
    from xlakit import host as xla_host
    save_dir, timeout, rest, extra_env = None, xla_host.TIMEOUT, [], {}
    it = iter(args)
    for a in it:
        if a == "--save-images":
            save_dir = next(it, None)
        elif a == "--timeout":
            value = next(it, None)
            try:
                timeout = float(value)
            except (TypeError, ValueError):
                print("--timeout 后面要写秒数（例如 --timeout 120），收到：%s" % value, file=sys.stderr)
                return 2
        elif a == "--env" or a.startswith("--env="):
            # The host hands a tool only PATH, HOME and PYTHONPATH; test seams such as XLA_NET_MAP
            # reach it only when named here (repeatable).
            pair = a[len("--env="):] if a.startswith("--env=") else (next(it, None) or "")
            name, sep, value = pair.partition("=")
            if not sep or not name.strip():
                print("--env 要写成 名字=值（例如 --env XLA_NET_MAP='{\"*\": \"offline\"}'），收到：%s" % pair,
                      file=sys.stderr)
                return 2
            extra_env[name.strip()] = value
        else:
            rest.append(a)
    if not rest:
        from xlakit import pycmd
        print("用法：%s run 工具名 ['{\"参数\": ...}']" % pycmd.xla_cmd(), file=sys.stderr)
        return 2
    name = rest[0]
    raw = rest[1] if len(rest) > 1 else (_read_stdin() if not sys.stdin.isatty() else "")
    from xlakit import runtime
    try:
        params = runtime.parse_input(raw)       # the tools' own rules: Chinese errors, depth bound
    except runtime.InputError as exc:
        _print_json({"ok": False, "error": str(exc)})
        return 2
    bar = _terminal_bar()
    result = xla_host.run_tool(name, params, timeout=timeout, on_progress=bar, extra_env=extra_env)
    if bar is not None:
        bar.clear()                              # the bar's line, blanked before the answer
    answer = result.answer()
    if result.ok and result.cut:
        print(result.text)
    else:
        _print_json(answer)
    if result.images:
        paths = xla_host.save_images(result, save_dir) if save_dir else []
        print("（结果带 %d 张图片%s）" % (len(result.images), "，已保存：" + "、".join(paths) if paths else
              "；加 --save-images 目录 可保存"), file=sys.stderr)
    return 0 if result.ok else 1


def _read_stdin():
    """Piped-in JSON as text. Read as bytes and decoded by the project's decoder (UTF-8 first, then
    GBK and the other legacy code pages): on a Chinese Windows, Python reads a pipe in the ANSI
    code page (936), so UTF-8 JSON from a script or another program would become mojibake and a
    Chinese path would no longer be found; a JSON typed into ``cmd`` and piped with ``echo``
    arrives in GBK and is read right too."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read()
    return xla_text.decode(stream.read())[0]


def _safe_streams():
    """stdout/stderr that can write any answer. Piped or redirected (a file, another program),
    Python on Windows writes in the ANSI code page, where a character outside GBK (an emoji, ✓, a
    rare name) ends in UnicodeEncodeError: there the answer is written as UTF-8, as the tools
    themselves write it (unless PYTHONIOENCODING says otherwise). On a console, characters the
    console cannot show become ``?`` instead of a traceback."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if not stream.isatty() and not os.environ.get("PYTHONIOENCODING"):
                stream.reconfigure(encoding="utf-8", errors="replace")
            else:
                stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass


class _TerminalBar:
    """A one-line progress bar on stderr, redrawn in place with a carriage return and padded with
    spaces (no escape codes: the Windows console shows those as text)."""

    def __init__(self):
        import shutil
        self.columns = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        self.drawn = False

    def _write(self, text):
        try:
            sys.stderr.write("\r" + text + " " * max(0, self.columns - xla_text.width(text)) + "\r")
            sys.stderr.flush()
        except (OSError, ValueError, UnicodeError):
            pass

    def __call__(self, done, total, note):
        from xlakit import progress
        self._write(xla_text.fit_width(progress.bar_text(done, total, note), self.columns))
        self.drawn = True

    def clear(self):
        if self.drawn:
            self._write("")


def _terminal_bar():
    """The bar, only when stderr is a terminal (pipes and logs get nothing)."""
    try:
        return _TerminalBar() if sys.stderr.isatty() else None
    except (OSError, ValueError, AttributeError):
        return None


def cmd_mcp(args):
    from xlakit.mcp import server as xla_mcp
    return xla_mcp.main(args)


def cmd_deps(_args):
    import pydeps_boot
    return pydeps_boot.main(["install-all"])


def cmd_install(args):
    """Optional library groups (pydeps_boot.GROUPS), e.g. the OCR engine, installed ahead of time."""
    import pydeps_boot
    return pydeps_boot.main(["install"] + list(args[:1]))


def cmd_sync(args):
    import xla_sync
    return xla_sync.main(args)


def cmd_selftest(args):
    """Fresh-clone test run: a .venv with the test requirements, every tool library in
    tools/pydeps, then pytest over tests/. Used as is by .ci/run. ``--quick`` runs only the tests
    marked ``quick`` (tests/conftest.py), a first check in a minute or two; CI runs everything."""
    quick = "--quick" in args
    args = [a for a in args if a != "--quick"]
    venv = os.path.join(ROOT, ".venv")
    py = os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")
    steps = []
    if not os.path.exists(py):
        steps.append([sys.executable, "-m", "venv", venv])
    steps.append([py, "-m", "pip", "install", "-q", "--disable-pip-version-check"] + TEST_REQUIREMENTS)
    steps.append([py, os.path.join(ROOT, "pydeps_boot.py"), "install-all"])
    # The OCR engine is optional for users but the OCR tests run for real (tests/test_ocr.py).
    steps.append([py, os.path.join(ROOT, "pydeps_boot.py"), "install", "ocr"])
    for step in steps:
        print("$ " + " ".join(step), flush=True)
        code = subprocess.call(step, cwd=ROOT)
        if code != 0:
            print("准备测试环境失败（上一步退出码 %d）" % code, file=sys.stderr)
            return code
    if not quick:
        # The Windows lane (tests/windows/lane.py: Windows CPython under Wine, cached under
        # ~/.cache/xla-wine): prepared here so pytest's workers find it ready. Not fatal: without
        # Wine its tests skip with the reason (and fail under CI=true, where the lane must run).
        lane = [py, os.path.join(ROOT, "tests", "windows", "lane.py"), "setup"]
        print("$ " + " ".join(lane), flush=True)
        if subprocess.call(lane, cwd=ROOT) != 0:
            print("（Windows 测试通道没有准备好，tests/windows 里的测试会跳过；CI=true 时它们会失败）", file=sys.stderr)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, os.path.join(ROOT, "tools", "pydeps")])
    # Both cores: the suite spawns hundreds of tool processes, most of the time is waiting on them.
    # one worker more than cores (at most 4): many tests wait (network deadlines, tool processes,
    # LibreOffice), so a third worker on two cores fills the idle core (full run 10:07 -> 9:40)
    workers = ["-n", str(min(4, (os.cpu_count() or 1) + 1))] if not any(a.startswith("-n") for a in args) else []
    marker = ["-m", "quick"] if quick else []
    cmd = ([py, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + workers + marker + [os.path.join(ROOT, "tests")]
           + list(args))
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


COMMANDS = {"check": cmd_check, "list": cmd_list, "schema": cmd_schema, "run": cmd_run, "mcp": cmd_mcp,
            "deps": cmd_deps, "install": cmd_install, "sync": cmd_sync, "selftest": cmd_selftest}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    _safe_streams()
    if not argv or argv[0] not in COMMANDS:
        print(_usage())
        return 0 if argv[:1] in ([], ["-h"], ["--help"]) else 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except KeyboardInterrupt:
        print("已取消", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
