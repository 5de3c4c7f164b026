"""The tool runtime: every script in tools/ runs through ``run(handler)`` so the host contract holds
by construction, and owns what no tool should copy: the time budget, paging, clamping and warnings.

What it guarantees (rules.md sections 1-3 describe the same from the author's side):
- input: one JSON object on stdin; empty stdin means ``{}``; broken JSON is a clear error;
- parameters: checked against the tool's own entry in tools.json (undeclared keys dropped, safe
  coercions such as ``"20"`` -> 20, defaults from the schema), so a script run by hand behaves like
  one run by the host;
- output: exactly one JSON object with a boolean ``ok`` on stdout, never over the host's 20,000
  characters (images excluded); on failure ``{"ok": false, "error": "..."}`` in Chinese, the same
  message on stderr and a non-zero exit; warnings always as one list ``warnings``;
- time: :data:`deadline` starts when the tool starts and ends a little before the host's 60 s
  kill, so a tool can still print a partial answer;
- no bare traceback ever: every exception maps to a Chinese message (``XLA_DEBUG=1`` adds the
  traceback on stderr for developers).

Exit codes: 0 ok, 1 the tool reported a failure (ToolError), 2 the input was invalid,
3 an unexpected internal error.
"""
import json
import os
import sys

from . import manifest as xla_manifest
# The error types are re-exported (``rt.ToolError``) for short tool scripts; paths and files are
# not: a tool imports ``xlakit.fs.paths`` / ``xlakit.fs.files`` so every path and write rule has one home.
from .errors import Deadline, FormatError, InputError, TimeUp, ToolError, os_error, what_broke  # noqa: F401 - re-exported
from . import errors as _errors
from .wire import ERROR_LIMIT, OUTPUT_LIMIT, clean_surrogates, json_text, text_size  # noqa: F401
# rt.progress(done, total, note): one "[xla-progress] {...}" line on stderr (xlakit/progress.py).
from .progress import report as progress  # noqa: F401 - re-exported

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

HOST_TIMEOUT = 60
# The budget a tool may spend: the host kills at 60 s; the rest is for printing a partial answer
# and for Python's own start-up before this module was imported. ``XLA_DEADLINE`` (seconds)
# shortens it in tests of the partial-answer paths.
BUDGET = 50.0


def _budget():
    try:
        value = float(os.environ.get("XLA_DEADLINE", ""))
        if 0 < value <= BUDGET:
            return value
    except ValueError:
        pass
    return BUDGET


deadline = Deadline(_budget())


def _quiet_unraisable(hook_args):
    """Python prints "Exception ignored in ..." with a traceback for errors in ``__del__`` (e.g. a
    zip file closed twice while an error unwinds). The contract says no traceback ever reaches
    the user; developers still see them with XLA_DEBUG=1."""
    if os.environ.get("XLA_DEBUG") == "1":
        sys.__unraisablehook__(hook_args)


sys.unraisablehook = _quiet_unraisable


# ---------------------------------------------------------------------------------------------
# Warnings, clamping, hints

_WARNINGS = []
WARN_ROOM = 600     # characters paging keeps free for warnings added after a page was cut


def warn(text):
    """Add one Chinese warning; the answer carries them all as ``warnings`` (a list)."""
    text = str(text)
    if text and text not in _WARNINGS:
        _WARNINGS.append(text)


def warnings():
    return list(_WARNINGS)


def clamp(params, key, maximum, minimum=None):
    """Clamp ``params[key]`` into ``[minimum, maximum]`` with a warning instead of refusing it:
    a model that asks for ``limit: 100000`` gets the maximum and a note, not an error."""
    value = params.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    if maximum is not None and value > maximum:
        warn("%s=%s 超过上限 %s，已按 %s 处理" % (key, value, maximum, maximum))
        value = maximum
    elif minimum is not None and value < minimum:
        warn("%s=%s 小于下限 %s，已按 %s 处理" % (key, value, minimum, minimum))
        value = minimum
    params[key] = value
    return value


def tool_hint(name, text):
    """``text`` if tool ``name`` is declared in tools.json, else "".

    Errors point the model to the next tool to call ("请用 read_document 读取"), but only to tools
    that exist in this toolbox: a hint naming a missing tool sends the model in circles."""
    return text if name in xla_manifest.declared_tools(ROOT) else ""


def format_error_hint(exc):
    """A FormatError's message plus the hint for the tool it names (only if that tool exists)."""
    tool = getattr(exc, "tool", None)
    return str(exc) + (tool_hint(tool, "（可改用 %s）" % tool) if tool else "")


# ---------------------------------------------------------------------------------------------
# Paging, sized by the real output budget

def budget(base=None, reserve=0):
    """Characters still free in the answer once ``base`` (the other fields) is printed."""
    used = text_size(base) if base else 2
    used += len(json_text(_WARNINGS)) + WARN_ROOM
    return OUTPUT_LIMIT - used - reserve


def fit_items(items, room, start=0, stop=None):
    """How many of ``items[start:stop]`` fit into ``room`` characters of a JSON array."""
    used, n = 2, 0
    stop = len(items) if stop is None else min(stop, len(items))
    for i in range(start, stop):
        used += len(json_text(items[i])) + 1
        if used > room:
            break
        n += 1
    return n


def shrink_to_fit(result, keys):
    """Shorten the lists ``result[key]`` (last items first, in the order of ``keys``) until the
    answer fits the output cap, marking each shortened one with ``<key>_shortened``: a very wide
    table then gives a shorter preview, never a paging error instead of a good result."""
    for key in keys:
        items = result.get(key)
        while isinstance(items, list) and items and budget(result) < 0:
            items.pop()
            result["%s_shortened" % key] = True
    return result


def page_items(items, offset=0, limit=None, key="items", base=None, reserve=0):
    """One page of a list, as big as ``limit`` allows and the output cap permits.

    Returns ``base`` plus ``key`` (the page), ``offset``, ``limit``, ``returned``, ``total``,
    ``next_offset`` (None when nothing remains) and ``truncated``. When the page had to be
    shorter than ``limit`` because of the output cap, ``truncated`` is true and ``next_offset``
    says where to continue; the caller never needs its own margin."""
    items = items if isinstance(items, list) else list(items)
    total = len(items)
    offset = max(0, int(offset or 0))
    want = total - offset if limit is None else max(0, int(limit))
    out = dict(base or {})
    probe = dict(out, **{key: [], "offset": offset, "limit": limit, "returned": want, "total": total,
                         "next_offset": total, "truncated": True})
    room = budget(probe, reserve)
    n = fit_items(items, room, offset, offset + want)
    end = offset + n
    more = end < total
    out.update({key: items[offset:end], "offset": offset, "limit": limit, "returned": n, "total": total,
                "next_offset": end if more else None, "truncated": more})
    return out


def page_text(text, offset=0, max_chars=None, key="text", base=None, reserve=0):
    """One window of a long text, cut by its printed JSON size (escapes counted).

    Returns ``base`` plus ``key``, ``offset``, ``max_chars``, ``returned_chars``, ``total_chars``,
    ``next_offset`` (None at the end) and ``truncated``."""
    total = len(text)
    offset = max(0, min(int(offset or 0), total))
    want = total - offset if max_chars is None else max(0, int(max_chars))
    out = dict(base or {})
    probe = dict(out, **{key: "", "offset": offset, "max_chars": max_chars, "returned_chars": want,
                         "total_chars": total, "next_offset": total, "truncated": True})
    room = budget(probe, reserve)
    hi = min(want, total - offset)
    if len(json_text(text[offset:offset + hi])) > room:
        lo = 0          # the longest slice whose JSON fits: binary search on the length
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(json_text(text[offset:offset + mid])) <= room:
                lo = mid
            else:
                hi = mid - 1
        hi = lo
        if 0 < hi < total - offset and "\n" not in text[offset + hi - 1:offset + hi]:
            cut = text.rfind("\n", offset + max(0, hi - 2000), offset + hi)   # end at a line break if near
            if cut > offset:
                hi = cut + 1 - offset
    end = offset + hi
    more = end < total
    out.update({key: text[offset:end], "offset": offset, "max_chars": max_chars, "returned_chars": hi,
                "total_chars": total, "next_offset": end if more else None, "truncated": more})
    return out


# ---------------------------------------------------------------------------------------------
# Output

def _write_stream(stream, text):
    """Write one answer line. A character the stream cannot encode never loses the answer (it is
    replaced); a closed stream is the only write that is given up."""
    try:
        stream.write(clean_surrogates(text) + "\n")
        stream.flush()
    except UnicodeEncodeError:
        try:
            stream.write(text.encode(stream.encoding or "utf-8", "replace").decode(stream.encoding or "utf-8") + "\n")
            stream.flush()
        except (OSError, ValueError, LookupError):
            pass
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
    _log_details(message)
    return code


def _log_details(message):
    """The library text behind a Chinese error (``errors.what_broke``) goes to the log, not to the
    model: ~/.xla/logs/details-YYYYMMDD.jsonl, one line per failed call; never fails the call."""
    if not _errors.DETAILS:
        return
    try:
        import datetime
        folder = os.path.join(os.path.expanduser("~"), ".xla", "logs")
        os.makedirs(folder, exist_ok=True)
        now = datetime.datetime.now()
        line = json_text({"time": now.isoformat(timespec="seconds"), "error": message[:300],
                          "details": _errors.DETAILS[-5:]})
        with open(os.path.join(folder, "details-%s.jsonl" % now.strftime("%Y%m%d")), "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


def _debug(exc):
    if os.environ.get("XLA_DEBUG") == "1":
        import traceback        # developers only: not worth its import (linecache, tokenize) on every call
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def describe_exception(exc):
    """A Chinese sentence for an unexpected exception, with what the user can do."""
    if isinstance(exc, MemoryError):
        return "内存不足，文件或数据太大。请缩小范围（分段读取或先筛选）后再试"
    if isinstance(exc, TimeoutError):
        return "等待其他工具释放同一个文件超时（另一个工具正在写它）。请稍后重试"
    if isinstance(exc, OSError):
        return str(os_error(exc))
    if isinstance(exc, UnicodeError):
        return "文本编码无法识别（%s）。请把文件另存为 UTF-8 后再试" % what_broke(exc)
    return "工具内部错误（%s：%s）。这是工具的缺陷，不是你的输入问题；可以换一种参数重试，或把这条错误告诉用户" % (
        type(exc).__name__, str(exc)[:300])


def _clean_value(value):
    """Input whose strings may hold ``\\ud800``-style escapes of half a UTF-16 pair: such a character
    can never be written to a file or an answer, so it becomes U+FFFD on the way in (keys too).
    Recursive: run only on input whose depth :func:`read_input` has checked."""
    if isinstance(value, str):
        return clean_surrogates(value)
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_surrogates(k): _clean_value(v) for k, v in value.items()}
    return value


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
    return parse_input(raw)


_KINDS = {list: "列表（[...]）", str: "一段文字", int: "数字", float: "数字", bool: "true/false", type(None): "null"}


def parse_input(raw):
    """One JSON object from text (the tool's stdin, or ``xla.py run``'s argument): {} for nothing,
    InputError in Chinese for bad JSON, too deep a nesting (json's recursion) or not an object."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except RecursionError:
        raise InputError(xla_manifest.too_deep())
    except ValueError as exc:
        raise InputError("输入不是合法的 JSON（%s）。请发送一个 JSON 对象，例如 {\"path\": \"~/a.xlsx\"}" % what_broke(exc))
    problem = xla_manifest.nesting_problem(data)    # before the (recursive) cleaning below
    if problem:
        raise InputError(problem)
    if "\\u" in raw:
        data = _clean_value(data)
    if not isinstance(data, dict):
        raise InputError("输入必须是 JSON 对象（{...}），收到的是%s" % _KINDS.get(type(data), type(data).__name__))
    return data


def tool_entry(script_file):
    """This script's entry in the tools.json one level above its folder (None when undeclared)."""
    script_file = os.path.abspath(script_file)
    data, _problems = xla_manifest.load_manifest(os.path.dirname(os.path.dirname(script_file)), check=False)
    return xla_manifest.find_tool_by_script(data, os.path.basename(script_file))


def apply_defaults(tool, args):
    props = ((tool or {}).get("parameters") or {}).get("properties") or {}
    for key, schema in props.items():
        if key not in args and isinstance(schema, dict) and "default" in schema:
            args[key] = schema["default"]
    return args


def _finish(result):
    """``ok`` first, then the payload, then one ``warnings`` list (the tool's own and rt.warn's)."""
    ok = bool(result.get("ok", True))
    notes = []
    for key in ("warnings", "warn"):
        value = result.get(key)
        if isinstance(value, str) and value:
            notes.append(value)
        elif isinstance(value, (list, tuple)):
            notes.extend(str(v) for v in value if v)
    notes.extend(_WARNINGS)
    out = dict([("ok", ok)] + [(k, v) for k, v in result.items() if k not in ("ok", "warn", "warnings")])
    if notes:
        out["warnings"] = list(dict.fromkeys(notes))
    return out


def _guarded_stdout(handler, params):
    """Run the handler with ``sys.stdout`` pointed at stderr: a library that prints (xlrd's
    warnings, a stray debug print) must not break the one-JSON answer. The answer itself is
    written to the real stdout afterwards."""
    real = sys.stdout
    sys.stdout = sys.stderr
    try:
        return handler(params)
    finally:
        sys.stdout = real


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
        result = _guarded_stdout(handler, params)
        if not isinstance(result, dict):
            raise TypeError("handler returned %s" % type(result).__name__)
        result = _finish(result)
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
    except FormatError as exc:
        _debug(exc)
        return _exit(_fail(format_error_hint(exc), EXIT_FAILED, exc.extra))
    except ToolError as exc:
        _debug(exc)
        return _exit(_fail(exc, EXIT_FAILED, exc.extra))
    except KeyboardInterrupt:
        return _exit(_fail("已取消", EXIT_FAILED))
    except OSError as exc:          # one Chinese sentence per errno; a bad path is the caller's error
        _debug(exc)
        if isinstance(exc, TimeoutError):
            return _exit(_fail(describe_exception(exc), EXIT_FAILED))
        err = os_error(exc)
        return _exit(_fail(err, EXIT_BAD_INPUT if isinstance(err, InputError) else EXIT_FAILED))
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
