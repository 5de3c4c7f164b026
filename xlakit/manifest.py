"""The tool manifest (tools.json): loading, validating, and checking call arguments.

One module, used by three callers that must agree exactly: the reference host (``xla.py check`` /
``run``), the tool runtime inside every script (so a script run by hand checks its input the same
way), and the tag sync (a new version whose manifest fails here is never switched to).
"""
import json
import math
import os

ALLOWED_TYPES = ("string", "integer", "number", "boolean", "array", "object")
TOOLS_DIR = "tools"
MAX_STRING_ECHO = 60
# Arguments nest a few levels at most (rows of cells, a list of conditions with their values: 4);
# past these the call is refused before anything recursive (validation, logging, serialising,
# a tool's own walk) touches it, which Python would answer with a RecursionError traceback.
MAX_DEPTH = 32
MAX_VALUES = 4000000                 # arrays' items plus objects' members, all levels together


class ManifestError(Exception):
    """The manifest cannot be used; ``problems`` lists every reason, not just the first."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class ArgumentError(Exception):
    """Call arguments do not match a tool's schema. The message is Chinese and says what to send."""


def root_dir():
    """The checkout this module lives in (``tools.json`` sits beside it)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_manifest(root=None, check=True):
    """Read tools.json and return (manifest dict, list of problems). Never raises for bad content.
    ``check=False`` skips the whole-manifest check (problems then []): a tool process looking up
    its own entry on every call does not need every other tool's schema and script checked."""
    root = root or root_dir()
    path = os.path.join(root, "tools.json")
    try:
        with open(path, "r", encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None, ["tools.json 不存在：%s" % path]
    except (ValueError, UnicodeDecodeError) as exc:
        return None, ["tools.json 不是合法的 JSON：%s" % exc]
    return data, (check_manifest_data(data, root) if check else [])


def check_manifest(root=None):
    """Problems with the manifest under ``root`` (empty list = the assistant would load it)."""
    return load_manifest(root)[1]


def installed_package(root=None):
    """True when ``root`` is the ``xla_tools`` folder of a pip/pipx/uvx install (a
    ``xla_tools-*.dist-info`` beside it), not a Git-synced checkout."""
    import glob
    root = os.path.abspath(root or root_dir())
    return os.path.basename(root) == "xla_tools" and bool(glob.glob(os.path.join(
        os.path.dirname(root), "xla_tools-*.dist-info")))


def pydeps_dir(root=None, home=None):
    """Where the tools' third-party libraries live: ``tools/pydeps`` in a checkout (and wherever it
    already exists, e.g. an installer's offline copy). An installed package, or a checkout this
    user cannot write, uses the per-user ``~/.xla/pydeps`` instead: site-packages may be
    read-only (a system-wide pip install) or thrown away (a uvx/pipx cache), and on-demand
    installs must still work without root. ``home`` is the HOME the tool runs with."""
    root = os.path.abspath(root or root_dir())
    local = os.path.join(root, TOOLS_DIR, "pydeps")
    if os.path.isdir(local) or (not installed_package(root) and os.access(os.path.join(root, TOOLS_DIR), os.W_OK)):
        return local
    home = home or os.environ.get("HOME") or os.environ.get("USERPROFILE") or os.path.expanduser("~")
    return os.path.join(home, ".xla", "pydeps")


def script_path(tool, root=None):
    root = root or root_dir()
    return os.path.join(root, TOOLS_DIR, tool.get("script") or "%s.py" % tool.get("name"))


def _check_schema(where, schema, problems, depth=0):
    if not isinstance(schema, dict):
        problems.append("%s：参数定义必须是对象" % where)
        return
    typ = schema.get("type")
    if typ not in ALLOWED_TYPES:
        problems.append("%s：未知类型 %r（只允许 %s）" % (where, typ, "/".join(ALLOWED_TYPES)))
        return
    if "description" in schema and not isinstance(schema["description"], str):
        problems.append("%s：description 必须是字符串" % where)
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        problems.append("%s：enum 必须是非空数组" % where)
    if typ == "array":
        # Model APIs reject an array without "items" ("array schema missing items"). An empty
        # items schema {} means "any value" (spreadsheet cells mixing numbers and text).
        items = schema.get("items")
        if not isinstance(items, dict):
            problems.append("%s：数组必须声明 items（元素的类型；任意值写 {}）" % where)
        elif items:
            _check_schema(where + "[]", items, problems, depth + 1)
    if typ == "object" and "properties" in schema:
        props = schema["properties"]
        if not isinstance(props, dict):
            problems.append("%s：properties 必须是对象" % where)
            return
        for key, sub in props.items():
            _check_schema("%s.%s" % (where, key), sub, problems, depth + 1)
        req = schema.get("required", [])
        if not isinstance(req, list) or any(r not in props for r in req if isinstance(r, str)) \
                or not all(isinstance(r, str) for r in req):
            problems.append("%s：required 里有未声明的参数" % where)


# MCP's tool annotations (hints for clients; the MCP server passes them on unchanged).
ANNOTATIONS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _check_annotations(where, notes, problems):
    """``annotations`` is optional; when given, only MCP's four boolean hints (and a ``title``)."""
    if notes is None:
        return
    if not isinstance(notes, dict):
        problems.append("%s：annotations 必须是对象" % where)
        return
    for key, value in notes.items():
        if key == "title":
            if not isinstance(value, str):
                problems.append("%s：annotations.title 必须是字符串" % where)
        elif key not in ANNOTATIONS:
            problems.append("%s：annotations 里的 %s 不是已知的提示（可用：%s）" % (where, key, "、".join(ANNOTATIONS)))
        elif not isinstance(value, bool):
            problems.append("%s：annotations.%s 必须是 true 或 false" % (where, key))
    if notes.get("readOnlyHint") and notes.get("destructiveHint"):
        problems.append("%s：只读工具（readOnlyHint）不能同时标为 destructiveHint" % where)


def check_manifest_data(data, root=None):
    """Validate a parsed manifest the way the assistant does; returns every problem found."""
    root = os.path.realpath(root or root_dir())
    tools_root = os.path.join(root, TOOLS_DIR)
    problems = []
    if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
        return ['tools.json 顶层必须是 {"tools": [...]}']
    seen = set()
    for i, tool in enumerate(data["tools"]):
        where = "tools[%d]" % i
        if not isinstance(tool, dict):
            problems.append("%s：必须是对象" % where)
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name or not name.replace("_", "").isalnum() or not name.isascii():
            problems.append("%s：name 必须是字母、数字、下划线组成的非空字符串" % where)
            name = None
        else:
            where = name
            if name in seen:
                problems.append("%s：工具名重复" % name)
            seen.add(name)
        for key in ("description", "parameters"):
            if key not in tool:
                problems.append("%s：缺少 %s" % (where, key))
        if "description" in tool and (not isinstance(tool["description"], str) or not tool["description"].strip()):
            problems.append("%s：description 必须是非空字符串" % where)
        params = tool.get("parameters")
        if params is not None:
            if not isinstance(params, dict) or params.get("type") != "object":
                problems.append("%s：parameters 必须是 type 为 object 的 JSON Schema" % where)
            else:
                _check_schema(where + ".parameters", params, problems)
        _check_annotations(where, tool.get("annotations"), problems)
        script = tool.get("script")
        if script is not None and (not isinstance(script, str) or not script):
            problems.append("%s：script 必须是非空字符串" % where)
            continue
        if name is None and script is None:
            continue
        rel = script or "%s.py" % name
        if os.path.isabs(rel) or ".." in rel.replace("\\", "/").split("/"):
            problems.append("%s：脚本路径 %s 必须是 tools/ 里的相对路径，不能含 .." % (where, rel))
            continue
        full = os.path.join(tools_root, rel)
        real = os.path.realpath(full)
        if not (real + os.sep).startswith(os.path.realpath(tools_root) + os.sep) or real == os.path.realpath(tools_root):
            problems.append("%s：脚本 %s 解析到 tools/ 之外（链接出去了）" % (where, rel))
        elif not os.path.isfile(real):
            problems.append("%s：脚本 %s 不存在" % (where, rel))
    return problems


_DECLARED = {}


def declared_tools(root=None):
    """Names of the tools in the manifest (cached per root). Hints that point the model to
    another tool use it, so they never name a tool this toolbox does not have."""
    root = root or root_dir()
    if root not in _DECLARED:
        data, _problems = load_manifest(root, check=False)
        _DECLARED[root] = {t.get("name") for t in (data or {}).get("tools", []) if isinstance(t, dict)}
    return _DECLARED[root]


def find_tool(data, name):
    for tool in (data or {}).get("tools", []):
        if isinstance(tool, dict) and tool.get("name") == name:
            return tool
    return None


def find_tool_by_script(data, filename):
    for tool in (data or {}).get("tools", []):
        if isinstance(tool, dict) and (tool.get("script") or "%s.py" % tool.get("name")) == filename:
            return tool
    return None


# ---------------------------------------------------------------------------------------------
# Arguments

_TYPE_NAMES = {"string": "字符串", "integer": "整数", "number": "数字", "boolean": "布尔值（true/false）",
               "array": "数组", "object": "对象"}


def _short(value):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_STRING_ECHO else text[:MAX_STRING_ECHO] + "…"


def _coerce(where, value, schema):
    """Return ``value`` converted to the schema type, or raise ArgumentError.

    Models often send ``"20"`` for an integer or ``"true"`` for a boolean; those unambiguous cases are
    accepted, anything else is a clear error naming the parameter and the expected type.
    """
    typ = schema.get("type")
    ok = True
    if typ == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        ok = isinstance(value, str)
    elif typ == "integer":
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            value = int(value.strip())
        elif isinstance(value, float) and math.isfinite(value) and value == int(value):
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif typ == "number":
        if isinstance(value, str):
            try:
                value = float(value.strip()) if value.strip() else value
            except ValueError:
                pass
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif typ == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            value = value.strip().lower() == "true"
        ok = isinstance(value, bool)
    elif typ == "array":
        ok = isinstance(value, list)
        if ok and schema.get("items"):
            value = [_coerce("%s[%d]" % (where, i), v, schema["items"]) for i, v in enumerate(value)]
    elif typ == "object":
        ok = isinstance(value, dict)
        if ok and isinstance(schema.get("properties"), dict):
            value = _check_object(where, value, schema, drop_unknown=False)
    if not ok:
        shown = "（密码，不显示）" if schema.get("format") == "password" else _short(value)
        raise ArgumentError("参数 %s 应为%s，收到的是 %s" % (where, _TYPE_NAMES.get(typ, typ), shown))
    if "enum" in schema and value not in schema["enum"]:
        raise ArgumentError("参数 %s 只能取 %s，收到的是 %s" % (
            where, " / ".join(json.dumps(e, ensure_ascii=False) for e in schema["enum"]), _short(value)))
    for key, cmp, word in (("minimum", lambda a, b: a < b, "不能小于"), ("maximum", lambda a, b: a > b, "不能大于")):
        if key in schema and isinstance(value, (int, float)) and not isinstance(value, bool) and cmp(value, schema[key]):
            raise ArgumentError("参数 %s %s %s，收到的是 %s" % (where, word, schema[key], _short(value)))
    return value


def _check_object(where, args, schema, drop_unknown):
    props = schema.get("properties") or {}
    out = {}
    for key, value in args.items():
        if key not in props:
            if not drop_unknown:
                out[key] = value
            continue
        if value is None:           # JSON null = "not given": the default applies
            continue
        out[key] = _coerce("%s.%s" % (where, key) if where else key, value, props[key])
    missing = [k for k in schema.get("required", []) if k not in out]
    if missing:
        raise ArgumentError("缺少必填参数：%s%s" % ("、".join(
            ("%s.%s" % (where, k)) if where else k for k in missing), _describe(props, missing)))
    return out


def _describe(props, keys):
    hints = []
    for k in keys:
        desc = (props.get(k) or {}).get("description", "")
        if desc:
            hints.append("%s：%s" % (k, desc.split("。")[0][:80]))
    return "（" + "；".join(hints) + "）" if hints else ""


def too_deep(limit=MAX_DEPTH):
    """The refusal of arguments nested past ``limit`` levels (also said when JSON is too deep to
    parse at all)."""
    return ("参数嵌套超过 %d 层（对象、数组一层套一层），已拒绝。工具的参数最多只套几层，"
            "请把数据展平（例如表格数据用“行的数组”，每行是一个值的数组）后重试" % limit)


def nesting_problem(value, limit=MAX_DEPTH, max_values=MAX_VALUES):
    """The Chinese refusal when ``value`` (parsed JSON) nests deeper than ``limit`` levels (the
    top object is level 1) or holds more than ``max_values`` values; None when it is fine.

    Iterative on purpose: this is the check that runs before every recursive walk, so it must not
    recurse itself."""
    stack, count = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return too_deep(limit)
        count += len(children)
        if count > max_values:
            return ("参数里的值超过 %d 个，已拒绝。请分批调用，或把数据先写进文件再让工具读文件" % max_values)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return None


def validate_args(tool, args):
    """Drop undeclared keys, coerce safe cases, type-check; return clean args or raise ArgumentError.
    Nesting and size are checked first (:func:`nesting_problem`), before anything recursive."""
    problem = nesting_problem(args)
    if problem:
        raise ArgumentError(problem)
    if not isinstance(args, dict):
        raise ArgumentError("输入必须是一个 JSON 对象（{...}），收到的是 %s" % _short(args))
    schema = tool.get("parameters") or {"type": "object", "properties": {}}
    return _check_object("", args, schema, drop_unknown=True)


def function_schema(data):
    """The manifest as an OpenAI-style function-calling tool list."""
    out = []
    for tool in data.get("tools", []):
        out.append({"type": "function", "function": {
            "name": tool["name"], "description": tool["description"], "parameters": tool["parameters"]}})
    return out
