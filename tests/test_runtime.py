"""The tool runtime (xla_runtime.run): what every script gets for free."""
import json
import os
import textwrap

from xlakit import host as xla_host
from conftest import ROOT, assert_contract


def toolbox(tmp_path, body, params=None):
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    script = "import sys; sys.path.insert(0, %r)\nfrom xlakit import runtime as rt\nfrom xlakit.fs import paths, files\n" % ROOT + textwrap.dedent(body)
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
    assert "找不到这个文件" in assert_contract(three)["error"] and three.exit_code == 2
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
                return {"p": paths.resolve_read(p["path"])}
            if mode == "dir":
                return {"p": paths.resolve_read(p["path"], want="dir")}
            return {"p": paths.resolve_write(p["path"])}
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
            target = paths.resolve_write(p["path"])
            def write(tmp):
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(p["mode"])
                if p["mode"] == "fail":
                    raise rt.ToolError("写入中途失败")
            return {"backup": files.atomic_write(target, write)}
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


# ---------------------------------------------------------------------------------------------
# What the runtime owns so that no tool copies it: paging, clamping, warnings, the deadline

def test_page_items_fills_the_real_budget_and_says_where_to_continue(tmp_path, home):
    root = toolbox(tmp_path, """
        def main(p):
            rows = [{"行": i, "内容": "数据" * 20} for i in range(5000)]
            return rt.page_items(rows, p.get("n") or 0, 2000, key="rows", base={"path": "x", "note": "说明" * 50})
        rt.run(main)
    """)
    first = assert_contract(xla_host.run_tool("t", {"n": 0}, root=root, home=str(home)))
    assert first["truncated"] and first["returned"] == first["next_offset"] > 100
    assert first["rows"][0]["行"] == 0 and first["total"] == 5000 and first["limit"] == 2000
    res = xla_host.run_tool("t", {"n": first["next_offset"]}, root=root, home=str(home))
    second = assert_contract(res)
    assert second["rows"][0]["行"] == first["next_offset"]
    assert 20000 - 1500 < len(res.stdout) <= 20000             # full pages, not a magic margin
    last = assert_contract(xla_host.run_tool("t", {"n": 4990}, root=root, home=str(home)))
    assert last["returned"] == 10 and last["next_offset"] is None and not last["truncated"]


def test_page_text_counts_json_escapes_and_pages_through(tmp_path, home):
    root = toolbox(tmp_path, """
        TEXT = "".join("第%d行\\t\\"引号\\"\\\\路径\\x01\\n" % i for i in range(6000))
        def main(p):
            return rt.page_text(TEXT, p.get("n") or 0, base={"title": "长文"})
        rt.run(main)
    """)
    got, offset, pages = [], 0, 0
    while offset is not None:
        res = xla_host.run_tool("t", {"n": offset}, root=root, home=str(home))
        data = assert_contract(res)
        assert data["ok"] and len(res.stdout) <= 20000
        got.append(data["text"])
        offset, pages = data["next_offset"], pages + 1
        assert data["total_chars"] > 20000
    whole = "".join(got)
    assert whole == "".join("第%d行\t\"引号\"\\路径\x01\n" % i for i in range(6000)) and pages > 5
    assert all(part.endswith("\n") for part in got)            # pages end at a line break


def test_clamp_and_warn_give_one_warnings_list(tmp_path, home):
    root = toolbox(tmp_path, """
        def main(p):
            rt.clamp(p, "n", 100, minimum=1)
            rt.warn("第二条提醒")
            return {"n": p["n"], "warn": ["工具自己的提醒"]}
        rt.run(main)
    """)
    data = assert_contract(xla_host.run_tool("t", {"n": 100000}, root=root, home=str(home)))
    assert data["n"] == 100 and "warn" not in data
    assert data["warnings"][0] == "工具自己的提醒" and any("超过上限 100" in w for w in data["warnings"])
    assert data["warnings"][-1] == "第二条提醒"
    data = assert_contract(xla_host.run_tool("t", {"n": 0}, root=root, home=str(home)))
    assert data["n"] == 1 and any("小于下限" in w for w in data["warnings"])


def test_deadline_gives_a_partial_answer_or_a_chinese_timeout(tmp_path, home):
    root = toolbox(tmp_path, """
        import time
        def main(p):
            done = 0
            while not rt.deadline.expired():
                time.sleep(0.05)
                done += 1
            if p.get("n") == 1:
                rt.deadline.check("统计")
            return {"partial": True, "done": done, "left": rt.deadline.remaining()}
        rt.run(main)
    """)
    res = xla_host.run_tool("t", {}, root=root, home=str(home), extra_env={"XLA_DEADLINE": "1"})
    data = assert_contract(res)
    assert data["partial"] and data["left"] == 0 and res.duration < 10
    res = xla_host.run_tool("t", {"n": 1}, root=root, home=str(home), extra_env={"XLA_DEADLINE": "1"})
    assert "超过时间上限" in assert_contract(res)["error"] and res.exit_code == 1


def test_a_result_with_images_near_the_cap_is_measured_the_same_by_tool_and_host(tmp_path, home):
    """One serialisation on both sides: the tool fills its budget exactly, the host must not cut."""
    root = toolbox(tmp_path, """
        import base64
        def main(p):
            img = {"name": "a.png", "mime": "image/png", "data": base64.b64encode(b"x" * 30000).decode()}
            rows = [[i, "值 %d" % i, {"k": i}] for i in range(3000)]
            out = rt.page_items(rows, 0, 3000, key="rows", base={"summary": "图"})
            out["images"] = [img]
            return out
        rt.run(main)
    """)
    res = xla_host.run_tool("t", {}, root=root, home=str(home))
    assert res.ok and not res.cut, res.error
    assert len(res.images) == 1 and "images" not in res.data
    assert 19000 < len(res.text) <= 20000 and json.loads(res.text)["returned"] == res.data["returned"]


def test_internal_errors_never_ask_the_model_to_set_an_environment_variable(tmp_path, home):
    root = toolbox(tmp_path, "rt.run(lambda p: 1 / 0)")
    err = assert_contract(xla_host.run_tool("t", {}, root=root, home=str(home)))["error"]
    assert "XLA_DEBUG" not in err and "ZeroDivisionError" in err


def test_a_library_printing_to_stdout_cannot_break_the_answer(tmp_path, home):
    root = toolbox(tmp_path, """
        import sys
        def main(p):
            print("WARNING *** a chatty library")
            sys.stdout.write("more noise\\n")
            return {"n": 1}
        rt.run(main)
    """)
    res = xla_host.run_tool("t", {}, root=root, home=str(home))
    assert assert_contract(res)["n"] == 1 and "chatty library" in res.stderr
