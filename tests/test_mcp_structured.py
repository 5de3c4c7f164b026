"""Structured results over MCP (revision 2025-06-18 on): every tool declares an outputSchema and
answers with structuredContent beside the text; older revisions get text only.

One representative run per tool (real files, real scripts; the web tools offline except
fetch_url against a local server), each answer checked against that tool's own schema with
jsonschema, and stricter than the schema: every top-level key an answer has is one the schema
declares, so the schema stays a true list of what the tool returns."""
import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from netserver import serve  # noqa: F401 - the fixture
from xlakit import host as xla_host
from xlakit import manifest as xla_manifest
from xlakit.mcp import server as xla_mcp
from xlakit.mcp import schema as mcpschema

jsonschema = pytest.importorskip("jsonschema")      # xla.py TEST_REQUIREMENTS

MANIFEST, _ = xla_manifest.load_manifest(ROOT)
TOOLS = {t["name"]: t for t in MANIFEST["tools"]}
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")
OFFLINE = {"XLA_NET_MAP": json.dumps({"*": "offline"})}
NEWS = "https://news.example.cn"


def representative(home):
    """tool -> arguments of one ordinary call (files made under ``home``)."""
    (home / "说明.txt").write_text("第一行\n第二行\n", encoding="utf-8")
    (home / ".xla" / "workspace").mkdir(parents=True)
    (home / ".xla" / "workspace" / "删我.txt").write_text("临时", encoding="utf-8")
    (home / "job.py").write_text("print('你好')\n", encoding="utf-8")
    right = home / "名单.csv"
    right.write_text("经办人,电话\n张三,1001\n李四,1002\n", encoding="utf-8")
    where = [{"column": "金额", "op": ">", "value": 0}]
    return {
        "write_spreadsheet": {"path": str(home / "新表.xlsx"), "rows": [["类别", "金额"], ["餐饮", 12.5]]},
        "read_spreadsheet": {"path": SAMPLE, "limit": 5},
        "probe_table": {"path": SAMPLE},
        "calc_table": {"path": SAMPLE, "group_by": ["部门"], "metrics": [{"column": "金额", "func": "sum"}]},
        "filter_table": {"path": SAMPLE, "where": where, "out_path": str(home / "筛选.xlsx")},
        "pivot_table": {"path": SAMPLE, "row": {"column": "部门"}, "col": {"column": "类别"}, "value": "金额",
                        "out_path": str(home / "透视.xlsx")},
        "lookup_table": {"left_path": SAMPLE, "right_path": str(right), "left_key": "经办人", "bring": ["电话"],
                         "out_path": str(home / "合并.xlsx")},
        "dedupe_table": {"path": SAMPLE, "keys": ["部门"], "mode": "report"},
        "clean_table": {"path": SAMPLE, "out_path": str(home / "清洗.xlsx")},
        "lunar_date": {"date": "2024-02-10"},
        "web_search": {"query": "样例"},
        "query_weather": {"city": "合肥"},
        "query_express": {"number": "773000000000001"},
        "query_location": {"ip": "1.2.3.4"},
        "fetch_url": {"url": NEWS + "/a.html"},
        "query_ip": {},
        "current_time": {"timezone": "Asia/Shanghai"},
        "run_python": {"path": str(home / "job.py")},
        "read_document": {"path": os.path.join(FIXTURES, "sample.docx")},
        "draw_chart": {"type": "bar", "labels": ["一月", "二月"], "values": [3, 5], "title": "销量"},
        "write_document": {"path": str(home / "报告.docx"), "text": "# 标题\n\n正文"},
        "convert_document": {"path": os.path.join(FIXTURES, "sample.docx"), "out_path": str(home / "样例.pdf")},
        "write_text": {"path": str(home / "记.txt"), "text": "一行"},
        "list_dir": {"path": str(home)},
        "find_files": {"pattern": "*.txt", "path": str(home)},
        "file_info": {"path": SAMPLE},
        "delete_file": {"path": "删我.txt"},
        "restore_file": {},
        "read_text_file": {"path": str(home / "说明.txt")},
    }


def check_answer(name, structured):
    schema = xla_mcp.describe_tool(TOOLS[name], "2025-06-18")["outputSchema"]
    jsonschema.validators.validator_for(schema).check_schema(schema)
    jsonschema.validate(structured, schema)
    undeclared = sorted(set(structured) - set(schema["properties"]))
    assert not undeclared, "%s answers keys its outputSchema does not declare: %s" % (name, undeclared)


def test_every_tool_answer_matches_its_output_schema(tmp_path, serve):   # noqa: F811
    home = tmp_path / "home"
    home.mkdir()
    calls = representative(home)
    assert set(calls) == set(TOOLS), "a tool without a representative call: %s" % (set(TOOLS) ^ set(calls))
    serve.page("/a.html", "<html><head><title>新闻</title></head><body><p>正文一段。</p>"
               "<a href='/b.html'>下一篇</a></body></html>", host="news.example.cn")
    oks = []
    for name, args in calls.items():
        env = serve.env(NEWS) if name == "fetch_url" else OFFLINE
        result = xla_host.run_tool(name, args, home=str(home), extra_env=env, log=False)
        out = xla_mcp.call_result(result, structured=True)
        structured = out["structuredContent"]
        assert structured["ok"] is result.ok and out["isError"] is (not result.ok)
        if not result.cut:
            assert json.loads(out["content"][0]["text"]) == structured
        check_answer(name, structured)
        if result.ok:
            oks.append(name)
    # Only the sites this test does not play may fail (offline); everything else answered.
    assert set(calls) - set(oks) <= {"web_search", "query_weather", "query_express", "query_location", "query_ip",
                                     "current_time"}, oks


def test_schema_shape_and_old_revisions_get_text_only():
    for name in TOOLS:
        schema = mcpschema.output_schema(name)
        assert schema["type"] == "object" and schema["required"] == ["ok"]
        assert schema["properties"]["ok"] == {"type": "boolean"} and schema.get("additionalProperties", True)
        assert name in mcpschema.FIELDS, "no declared fields for %s" % name
    assert "outputSchema" not in xla_mcp.describe_tool(TOOLS["probe_table"], "2025-03-26")
    assert "outputSchema" in xla_mcp.describe_tool(TOOLS["probe_table"], "2025-11-25")


def session(messages):
    data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode()
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "xla.py"), "mcp"], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, cwd=ROOT)
    return {m["id"]: m for m in map(json.loads, proc.stdout.decode("utf-8").splitlines()) if "id" in m}


@pytest.mark.parametrize("revision,structured", [("2025-06-18", True), ("2025-11-25", True), ("2025-03-26", False),
                                                 ("2024-11-05", False)])
def test_structured_content_by_revision(revision, structured):
    got = session([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                       "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                   {"jsonrpc": "2.0", "method": "notifications/initialized"},
                   {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                       "name": "probe_table", "arguments": {"path": SAMPLE}}},
                   {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
                       "name": "probe_table", "arguments": {"path": "~/没有这个文件.xlsx"}}}])
    tools = got[2]["result"]["tools"]
    assert all(("outputSchema" in t) is structured for t in tools)
    for call_id, is_error in ((3, False), (4, True)):
        result = got[call_id]["result"]
        assert result["isError"] is is_error
        assert ("structuredContent" in result) is structured
        if structured:
            assert result["structuredContent"] == json.loads(result["content"][0]["text"])
            check_answer("probe_table", result["structuredContent"])
