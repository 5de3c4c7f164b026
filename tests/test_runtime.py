"""The tool runtime (xla_runtime.run): what every script gets for free."""
import json
import os
import textwrap

from xlakit import host as xla_host
from conftest import ROOT, assert_contract


def toolbox(tmp_path, body, params=None):
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    script = "import sys; sys.path.insert(0, %r)\nfrom xlakit import runtime as rt\n" % ROOT + textwrap.dedent(body)
    (root / "tools" / "t.py").write_text(script, encoding="utf-8")
    schema = params or {"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}}
    (root / "tools.json").write_text(json.dumps({"tools": [
        {"name": "t", "description": "测试", "parameters": schema}]}), encoding="utf-8")
    return str(root)


def run_raw(root, home, raw, **kw):
    return xla_host.run_tool("t", None, root=root, home=str(home), raw_input=raw, **kw)


def test_empty_input_is_an_empty_object_and_broken_json_is_a_chinese_error(tmp_path, home):
    root = toolbox(tmp_path, "rt.run(lambda p: {'got': p})")
    assert assert_contract(run_raw(root, home, ""))["got"] == {}
    for raw in ("{broken", "[1, 2]", b"\xff\xfe\x00\x01garbage", "null"):
        res = run_raw(root, home, raw)
        data = assert_contract(res)
        assert not data["ok"] and res.exit_code == 2


def test_exceptions_map_to_chinese_errors_with_exit_codes(tmp_path, home):
    root = toolbox(tmp_path, """
        def main(p):
            if p.get("n") == 1:
                raise rt.ToolError("用户能看懂的原因", candidates=["a"])
            if p.get("n") == 2:
                raise ValueError("boom")
            if p.get("n") == 3:
                open("/definitely/not/here.txt")
            return {"fine": True}
        rt.run(main)
    """)
    one = run_raw(root, home, '{"n": 1}')
    data = assert_contract(one)
    assert one.exit_code == 1 and data["error"] == "用户能看懂的原因" and data["candidates"] == ["a"]
    two = run_raw(root, home, '{"n": 2}')
    assert two.exit_code == 3 and "内部错误" in assert_contract(two)["error"]
    three = run_raw(root, home, '{"n": 3}')
    assert "找不到文件" in assert_contract(three)["error"]
    debug = run_raw(root, home, '{"n": 2}', extra_env={"XLA_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_the_script_checks_its_own_parameters_against_the_manifest(tmp_path, home):
    root = toolbox(tmp_path, "rt.run(lambda p: {'got': p})", params={
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string"}, "n": {"type": "integer", "default": 5}}})
    missing = run_raw(root, home, '{"n": 1}')
    assert "缺少必填参数：path" in assert_contract(missing)["error"] and missing.exit_code == 2
    wrong = run_raw(root, home, '{"path": "a", "n": "x"}')
    assert "应为整数" in assert_contract(wrong)["error"]
    good = assert_contract(run_raw(root, home, '{"path": "a", "extra": 1}'))
    assert good["got"] == {"path": "a", "n": 5}


def test_paths_home_workspace_and_kinds(tmp_path, home):
    root = toolbox(tmp_path, """
        def main(p):
            mode = p["mode"]
            if mode == "read":
                return {"p": rt.resolve_read(p["path"])}
            if mode == "dir":
                return {"p": rt.resolve_read(p["path"], want="dir")}
            return {"p": rt.resolve_write(p["path"])}
        rt.run(main)
    """, params={"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string"}}})
    (home / "a.txt").write_text("x")
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    (ws / "b.txt").write_text("y")
    call = lambda path, mode: assert_contract(run_raw(root, home, json.dumps({"path": path, "mode": mode})))
    assert call("~/a.txt", "read")["p"] == str(home / "a.txt")
    assert call("b.txt", "read")["p"] == str(ws / "b.txt")
    assert call("新/报告.txt", "write")["p"] == str(ws / "新" / "报告.txt") and (ws / "新").is_dir()
    assert "找不到文件" in call("~/nope.xlsx", "read")["error"]
    assert "文件夹" in call(str(home), "read")["error"]
    assert "不是文件夹" in call("~/a.txt", "dir")["error"]
    assert "不能为空" in call("  ", "read")["error"]


def test_oversized_answers_become_a_paging_hint(tmp_path, home):
    root = toolbox(tmp_path, "rt.run(lambda p: {'rows': ['长' * 100] * 1000})")
    data = assert_contract(run_raw(root, home, "{}"))
    assert not data["ok"] and "offset" in data["error"]


def test_atomic_write_replaces_and_keeps_a_backup(tmp_path, home):
    root = toolbox(tmp_path, """
        def main(p):
            target = rt.resolve_write(p["path"])
            def write(tmp):
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(p["mode"])
                if p["mode"] == "fail":
                    raise rt.ToolError("写入中途失败")
            return {"backup": rt.atomic_write(target, write)}
        rt.run(main)
    """, params={"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string"}}})
    target = home / "doc.txt"
    target.write_text("旧内容", encoding="utf-8")
    first = assert_contract(run_raw(root, home, json.dumps({"path": str(target), "mode": "新内容"})))
    assert target.read_text(encoding="utf-8") == "新内容"
    assert open(first["backup"], encoding="utf-8").read() == "旧内容"
    assert os.path.dirname(first["backup"]) == str(home / ".xla" / "backup")
    failed = run_raw(root, home, json.dumps({"path": str(target), "mode": "fail"}))
    assert not assert_contract(failed)["ok"]
    assert target.read_text(encoding="utf-8") == "新内容"
    assert [n for n in os.listdir(str(home)) if n.startswith(".xla-")] == []
