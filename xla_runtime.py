"""The tool runtime: every script in tools/ runs through ``run(handler)`` so the host contract holds
by construction.

What it guarantees (rules.md sections 1-3 describe the same from the author's side):
- input: one JSON object on stdin; empty stdin means ``{}``; broken JSON is a clear error;
- parameters: checked against the tool's own entry in tools.json (undeclared keys dropped, safe
  coercions such as ``"20"`` -> 20, defaults from the schema), so a script run by hand behaves like
  one run by the host;
- output: exactly one JSON object with a boolean ``ok`` on stdout, never over the host's 20,000
  characters (images excluded); on failure ``{"ok": false, "error": "..."}`` in Chinese, the same
  message on stderr and a non-zero exit;
- no bare traceback ever: every exception maps to a Chinese message (``XLA_DEBUG=1`` adds the
  traceback on stderr for developers).

Exit codes: 0 ok, 1 the tool reported a failure (ToolError), 2 the input was invalid,
3 an unexpected internal error.
"""
import datetime
import json
import os
import shutil
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import xla_manifest  # noqa: E402

OUTPUT_LIMIT = 20000        # characters of stdout the host keeps
ERROR_LIMIT = 2000          # characters of an error the host keeps
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class ToolError(Exception):
    """A failure the user can act on. ``str(exc)`` is the Chinese message shown to the model.

    ``extra`` is merged into the failure JSON (e.g. ``candidates`` for a retry)."""

    def __init__(self, message, **extra):
        super().__init__(message)
        self.extra = extra


class InputError(ToolError):
    """The call itself is wrong (bad JSON, bad parameter): exit code 2."""


# ---------------------------------------------------------------------------------------------
# Paths

def home_dir():
    """The user's home: ``HOME`` first (also on Windows, where Python's expanduser ignores it)."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    return home or os.path.expanduser("~")


def xla_dir(*parts):
    return os.path.join(home_dir(), ".xla", *parts)


def workspace_dir(create=False):
    path = xla_dir("workspace")
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def _expand(path, param):
    if not isinstance(path, str) or not path.strip():
        raise InputError("参数 %s 不能为空，请给出文件路径（绝对路径、~ 开头，或工作空间里的文件名）" % param)
    if "\x00" in path:
        raise InputError("参数 %s 含有空字符，不是合法路径" % param)
    path = path.strip().strip('"').strip("'")
    if path == "~" or path.startswith("~/") or path.startswith("~\\"):
        path = os.path.join(home_dir(), path[2:]) if len(path) > 1 else home_dir()
    return path


def resolve_read(path, param="path", want="file"):
    """Absolute path of an existing input. Relative names are looked up in the workspace.

    ``want`` is "file", "dir" or "any"; a wrong kind or a missing path is a Chinese ToolError that
    says what to do next."""
    raw = path
    path = _expand(path, param)
    if not os.path.isabs(path):
        path = os.path.join(workspace_dir(), path)
    path = os.path.normpath(path)
    if not os.path.exists(path):
        raise ToolError("找不到%s：%s。请确认路径和文件名%s；相对路径按工作空间 %s 解析" % (
            "文件夹" if want == "dir" else "文件", raw, tool_hint("find_files", "（可先用 find_files 按名字查找）"),
            workspace_dir()))
    if want == "file" and os.path.isdir(path):
        raise ToolError("%s 是一个文件夹，不是文件。请给出文件夹里的具体文件%s" % (
            raw, tool_hint("list_dir", "（可先用 list_dir 查看）")))
    if want == "dir" and not os.path.isdir(path):
        raise ToolError("%s 是文件，不是文件夹" % raw)
    if want == "file" and not os.access(path, os.R_OK):
        raise ToolError("没有读取 %s 的权限。请检查文件权限，或先把它复制到工作空间再试" % raw)
    return path


def resolve_write(path, param="path"):
    """Absolute path for an output. Relative names go to the workspace; parents are created."""
    path = _expand(path, param)
    if not os.path.isabs(path):
        path = os.path.join(workspace_dir(create=True), path)
    path = os.path.normpath(path)
    if os.path.isdir(path):
        raise ToolError("%s 是一个已存在的文件夹，不能当作文件写入。请换一个文件名" % path)
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise ToolError("无法创建目录 %s：%s" % (parent, exc.strerror or exc))
    return path


_DECLARED = None


def tool_hint(name, text):
    """``text`` if tool ``name`` is declared in tools.json, else "".

    Errors point the model to the next tool to call ("请用 read_document 读取"), but only to tools
    that exist in this toolbox: a hint naming a missing tool sends the model in circles."""
    global _DECLARED
    if _DECLARED is None:
        data, _problems = xla_manifest.load_manifest(ROOT)
        _DECLARED = {t.get("name") for t in (data or {}).get("tools", []) if isinstance(t, dict)}
    return text if name in _DECLARED else ""


def unique_path(path):
    """``path`` if free, else ``name_2.ext``, ``name_3.ext``...: default outputs never overwrite."""
    if not os.path.exists(path):
        return path
    stem, ext = os.path.splitext(path)
    n = 2
    while os.path.exists("%s_%d%s" % (stem, n, ext)):
        n += 1
    return "%s_%d%s" % (stem, n, ext)


# ---------------------------------------------------------------------------------------------
# Safe writes

def backup_file(path):
    """Copy an existing user file into ~/.xla/backup/ before it is changed; returns the copy's path."""
    if not os.path.isfile(path):
        return None
    folder = xla_dir("backup")
    os.makedirs(folder, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = unique_path(os.path.join(folder, "%s_%s" % (stamp, os.path.basename(path))))
    shutil.copy2(path, target)
    return target


def atomic_write(path, write, backup=True):
    """Write through ``write(tmp_path)`` into a temp file beside ``path``, then replace ``path``.

    A crash or error leaves the old file untouched. Returns the backup path (or None)."""
    folder = os.path.dirname(os.path.abspath(path))
    saved = backup_file(path) if backup else None
    fd, tmp = tempfile.mkstemp(prefix=".xla-", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    try:
        write(tmp)
        if os.path.exists(path):
            try:
                shutil.copymode(path, tmp)
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return saved


# ---------------------------------------------------------------------------------------------
# Output

def json_text(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def _json_default(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def text_size(obj):
    """Characters ``obj`` takes in the answer, images not counted (the host strips them first)."""
    if isinstance(obj, dict) and "images" in obj:
        obj = {k: v for k, v in obj.items() if k != "images"}
    return len(json_text(obj))


def fit_items(items, budget, start=0):
    """How many of ``items`` (from ``start``) fit into ``budget`` characters of JSON; at least 0."""
    used, n = 0, 0
    for item in items[start:]:
        used += len(json_text(item)) + 1
        if used > budget:
            break
        n += 1
    return n


def _write_stream(stream, text):
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def _fail(message, code, extra=None):
    message = str(message).strip() or "工具失败，但没有给出原因"
    if len(message) > ERROR_LIMIT - 100:
        message = message[:ERROR_LIMIT - 100] + "…（错误信息过长已截断）"
    result = {"ok": False, "error": message}
    for key, value in (extra or {}).items():
        result.setdefault(key, value)
    text = json_text(result)
    if len(text) > OUTPUT_LIMIT:
        text = json_text({"ok": False, "error": message})
    _write_stream(sys.stdout, text)
    _write_stream(sys.stderr, message)
    return code


def _debug(exc):
    if os.environ.get("XLA_DEBUG") == "1":
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def describe_exception(exc):
    """A Chinese sentence for an unexpected exception, with what the user can do."""
    if isinstance(exc, MemoryError):
        return "内存不足，文件或数据太大。请缩小范围（分段读取或先筛选）后再试"
    if isinstance(exc, PermissionError):
        return "没有权限访问 %s。请检查文件权限，或确认文件没有被其他程序（如 Excel）占用" % (exc.filename or "该文件")
    if isinstance(exc, FileNotFoundError):
        return "找不到文件：%s" % (exc.filename or exc)
    if isinstance(exc, IsADirectoryError):
        return "%s 是文件夹，不是文件" % (exc.filename or "目标")
    if isinstance(exc, UnicodeError):
        return "文本编码无法识别（%s）。请把文件另存为 UTF-8 后再试" % exc
    if isinstance(exc, OSError):
        return "读写文件出错：%s" % (exc.strerror or exc)
    return "工具内部错误（%s：%s）。这不是你的输入问题；可换一种参数重试，或设置 XLA_DEBUG=1 查看详情" % (
        type(exc).__name__, str(exc)[:300])


def read_input(stream=None):
    stream = stream or sys.stdin
    try:
        raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    except (OSError, ValueError):
        raw = b""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError("输入不是 UTF-8 编码的 JSON。请用 UTF-8 发送一个 JSON 对象")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InputError("输入不是合法的 JSON（%s）。请发送一个 JSON 对象，例如 {\"path\": \"~/a.xlsx\"}" % exc)
    if not isinstance(data, dict):
        raise InputError("输入必须是 JSON 对象（{...}），收到的是 %s" % type(data).__name__)
    return data


def tool_entry(script_file):
    """This script's entry in the tools.json one level above its folder (None when undeclared)."""
    script_file = os.path.abspath(script_file)
    data, _problems = xla_manifest.load_manifest(os.path.dirname(os.path.dirname(script_file)))
    return xla_manifest.find_tool_by_script(data, os.path.basename(script_file))


def apply_defaults(tool, args):
    props = ((tool or {}).get("parameters") or {}).get("properties") or {}
    for key, schema in props.items():
        if key not in args and isinstance(schema, dict) and "default" in schema:
            args[key] = schema["default"]
    return args


def run(handler, script_file=None):
    """Run ``handler(params) -> dict`` under the contract and exit the process.

    ``handler`` returns the success payload (``ok`` is added) or raises ToolError."""
    script_file = script_file or getattr(sys.modules.get("__main__"), "__file__", "") or ""
    try:
        params = read_input()
        tool = tool_entry(script_file) if script_file else None
        if tool is not None:
            try:
                params = xla_manifest.validate_args(tool, params)
            except xla_manifest.ArgumentError as exc:
                raise InputError(str(exc))
            apply_defaults(tool, params)
        result = handler(params)
        if not isinstance(result, dict):
            raise TypeError("handler returned %s" % type(result).__name__)
        ok = bool(result.get("ok", True))
        result = dict([("ok", ok)] + [(k, v) for k, v in result.items() if k != "ok"])
        if not result["ok"]:
            return _exit(_fail(result.get("error", ""), EXIT_FAILED, result))
        text = json_text(result)
        if text_size(result) > OUTPUT_LIMIT:
            return _exit(_fail("结果超过 %d 字的输出上限。请减小 limit、用 offset 分段读取，或先筛选再读" % OUTPUT_LIMIT,
                               EXIT_FAILED))
        _write_stream(sys.stdout, text)
        return _exit(EXIT_OK)
    except InputError as exc:
        _debug(exc)
        return _exit(_fail(exc, EXIT_BAD_INPUT, exc.extra))
    except ToolError as exc:
        _debug(exc)
        return _exit(_fail(exc, EXIT_FAILED, exc.extra))
    except KeyboardInterrupt:
        return _exit(_fail("已取消", EXIT_FAILED))
    except RecursionError as exc:
        _debug(exc)
        return _exit(_fail("输入嵌套太深，无法处理。请简化参数", EXIT_BAD_INPUT))
    except Exception as exc:  # noqa: BLE001 - the contract: never a bare traceback
        _debug(exc)
        return _exit(_fail(describe_exception(exc), EXIT_INTERNAL))


def _exit(code):
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    sys.exit(code)
