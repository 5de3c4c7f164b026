"""The contract suite: every tool declared in tools.json, fed schema-derived bad input.

Nothing here is written per tool: a tool that lands later is covered the moment it is declared.
Each case is sent straight to the script's stdin (bypassing the host's own checks), so the script
itself must survive it: one JSON object, boolean ok, a Chinese error with a non-zero exit, stdout
within 20,000 characters, no traceback, and well inside the 60 s limit."""
import json
import os
import types

import pytest

from xlakit import host as xla_host
from xlakit import manifest as xla_manifest
from conftest import NOBODY, ROOT, FIXTURES, as_nobody, assert_contract, nobody_dir

MANIFEST, _PROBLEMS = xla_manifest.load_manifest(ROOT)
TOOLS = (MANIFEST or {}).get("tools", [])
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")

WRONG = {"string": {"不是": "字符串"}, "integer": "abc", "number": "abc", "boolean": "maybe",
         "array": "不是数组", "object": "不是对象"}


def is_path(key):
    return key == "path" or key.endswith("_path") or key in ("file", "dir", "folder")


def plausible(key, schema):
    if "enum" in schema:
        return schema["enum"][0]
    typ = schema.get("type")
    if typ == "string":
        if is_path(key):
            return SAMPLE
        return "http://127.0.0.1:9/" if key == "url" else "测试"
    if typ in ("integer", "number"):
        return max(schema.get("minimum", 1), 1)
    return {"boolean": False, "array": [], "object": {}}[typ]


def base_args(tool):
    params = tool.get("parameters") or {}
    props = params.get("properties") or {}
    return {k: plausible(k, props[k]) for k in params.get("required", []) if k in props}


def cases():
    out = []
    for tool in TOOLS:
        name = tool["name"]
        params = tool.get("parameters") or {}
        props = params.get("properties") or {}
        base = base_args(tool)
        out += [(name, "empty", "", None), (name, "broken_json", '{"path": ', False),
                (name, "not_an_object", "[1, 2, 3]", False), (name, "garbage_bytes", b"\x00\xff\xfe\x80junk", False),
                (name, "unknown_keys", dict(base, zz_unknown=1, **{"": None}), None)]
        for key in params.get("required", []):
            args = dict(base)
            args.pop(key, None)
            out.append((name, "missing_" + key, args, False))
        for key, schema in props.items():
            out.append((name, "wrong_type_" + key, dict(base, **{key: WRONG[schema["type"]]}), False))
            if schema.get("type") == "string":
                out.append((name, "huge_" + key, dict(base, **{key: "长" * 300000}), None))
                # half a UTF-16 pair, as a JSON escape: it can never be written as UTF-8
                raw = json.dumps(dict(base, **{key: "@@SURROGATE@@"}), ensure_ascii=False)
                out.append((name, "lone_surrogate_" + key, raw.replace("@@SURROGATE@@", "a\\ud800b\\udc00"), None))
            if is_path(key) and schema.get("type") == "string":
                # an input path must exist; an output path (out_path) that does not exist yet is fine
                must_exist = None if key.startswith("out") else False
                out += [(name, "missing_file_" + key, dict(base, **{key: "~/没有这个文件.xlsx"}), must_exist),
                        (name, "directory_" + key, dict(base, **{key: "~"}), None),
                        (name, "garbage_file_" + key, dict(base, **{key: "@garbage"}), None),
                        (name, "empty_file_" + key, dict(base, **{key: "@empty"}), None),
                        (name, "surrogate_file_" + key, dict(base, **{key: "@surrogates"}), None),
                        # file_info describes a file it cannot read (size, times, owner): that is an answer
                        (name, "unreadable_file_" + key, dict(base, **{key: "@unreadable"}),
                         None if name == "file_info" else must_exist)]
    return out


def materialise(args, home):
    """Replace @garbage/@empty markers by real files in the tool's HOME."""
    if not isinstance(args, dict):
        return args
    out = dict(args)
    for key, value in args.items():
        if value == "@garbage":
            path = os.path.join(str(home), "乱码.xlsx")
            with open(path, "wb") as fh:
                fh.write(os.urandom(4096))
            out[key] = path
        elif value == "@surrogates":
            # UTF-16 text holding a lone surrogate (U+D800) in a cell
            path = os.path.join(str(home), "半个字符.csv")
            with open(path, "wb") as fh:
                fh.write(b"\xff\xfe" + "名称,金额\n甲,".encode("utf-16-le") + b"\x00\xd8" + "1\n".encode("utf-16-le"))
            out[key] = path
        elif value == "@unreadable":
            path = os.path.join(str(home), "无权限.xlsx")
            with open(path, "wb") as fh:
                fh.write(b"PK")
            os.chmod(path, 0)
            out[key] = path
        elif value == "@empty":
            path = os.path.join(str(home), "空文件.csv")
            open(path, "wb").close()
            out[key] = path
    return out


CASES = cases()
# No case may reach the internet: every origin behaves as if the machine were offline.
OFFLINE = {"XLA_NET_MAP": json.dumps({"*": "offline"})}


def test_manifest_passes_check():
    assert _PROBLEMS == [], _PROBLEMS
    assert TOOLS, "tools.json declares no tool"


@pytest.mark.parametrize("name,case,payload,expect_ok", CASES, ids=["%s-%s" % (c[0], c[1]) for c in CASES])
def test_tool_survives_bad_input(name, case, payload, expect_ok, home):
    if case.startswith("unreadable_file_") and os.geteuid() == 0:
        home = nobody_dir()        # root reads every file: the unreadable case runs as user 65534
    payload = materialise(payload, home)
    raw = payload if isinstance(payload, (str, bytes)) else json.dumps(payload, ensure_ascii=False)
    if case.startswith("unreadable_file_") and os.geteuid() == 0:
        for entry in os.listdir(str(home)):
            os.chown(os.path.join(str(home), entry), NOBODY, NOBODY)
        got = as_nobody(lambda: vars(xla_host.run_tool(name, None, home=str(home), raw_input=raw, timeout=60,
                                                       extra_env=OFFLINE)))
        assert "child_error" not in got, got
        result = types.SimpleNamespace(**got)
    else:
        result = xla_host.run_tool(name, None, home=str(home), raw_input=raw, timeout=60,
                                   extra_env=OFFLINE)
    data = assert_contract(result)
    if expect_ok is not None:
        assert data["ok"] is expect_ok, data


@pytest.mark.parametrize("tool", TOOLS, ids=[t["name"] for t in TOOLS])
def test_host_rejects_wrong_types_before_spawning(tool, home):
    props = (tool.get("parameters") or {}).get("properties") or {}
    if not props:
        pytest.skip("no parameters")
    key, schema = next(iter(props.items()))
    result = xla_host.run_tool(tool["name"], dict(base_args(tool), **{key: WRONG[schema["type"]]}), home=str(home),
                                 extra_env=OFFLINE)
    assert not result.ok and result.exit_code == 2 and "参数 %s" % key in result.error


@pytest.mark.parametrize("tool", TOOLS, ids=[t["name"] for t in TOOLS])
def test_description_is_chinese_and_says_what_comes_back(tool):
    desc = tool["description"]
    assert len(desc) >= 40 and any("\u4e00" <= ch <= "\u9fff" for ch in desc)
    assert "例" in desc, "the description gives the model a short example"
    others = [t["name"] for t in TOOLS if t["name"] != tool["name"]]
    assert not others or any(name in desc for name in others), "say which tool comes before or after"
    for key, schema in ((tool.get("parameters") or {}).get("properties") or {}).items():
        assert schema.get("description"), "%s.%s has no description" % (tool["name"], key)


def test_readme_lists_every_tool_and_nothing_else():
    import re
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    listed = set(re.findall(r"\[`(\w+)`\]\(tools/\w+\.py\)", readme))
    assert listed == {t["name"] for t in TOOLS}
