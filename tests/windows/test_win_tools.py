"""Every tool on Windows CPython (the lane): its happy path with Chinese file and folder names, the
web tools against the local HTTP server (tests/netserver.py, through XLA_NET_MAP), and bad input
(garbage bytes, a wrong type, a missing file, a folder) answered in Chinese without a traceback."""
import json
import os
import shutil

import pytest

from conftest import FIXTURES, ROOT, assert_contract, fail, ok
from netserver import serve  # noqa: F401 - the fixture
from winfixtures import lane, win_home, win_tmp  # noqa: F401 - fixtures
from winlane import exclusive, win_path, win_tool

pytestmark = pytest.mark.windows

OFFLINE = {"XLA_NET_MAP": json.dumps({"*": "offline"})}
SAMPLE = os.path.join(ROOT, "examples", "示例台账.xlsx")
WEB = os.path.join(FIXTURES, "web")


def web_page(name):
    with open(os.path.join(WEB, name), encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture
def files(win_home):
    """A Chinese-named folder in the tool's HOME with a ledger, a Word file, a GBK csv and a script."""
    folder = os.path.join(win_home, "九月 数据")
    os.makedirs(folder)
    shutil.copy(SAMPLE, os.path.join(folder, "台账.xlsx"))
    shutil.copy(os.path.join(FIXTURES, "sample.docx"), os.path.join(folder, "说明.docx"))
    shutil.copy(os.path.join(FIXTURES, "gbk.csv"), os.path.join(folder, "旧编码.csv"))
    with open(os.path.join(folder, "脚本.py"), "w", encoding="utf-8") as fh:
        fh.write("import sys\nprint('你好', sys.platform)\n")
    return folder


def run(name, args, home, **kw):
    kw.setdefault("env", OFFLINE)
    return win_tool(name, args, home=home, **kw)


def w(folder, name):
    return win_path(os.path.join(folder, name))


def test_table_readers(files, win_home):
    x = w(files, "台账.xlsx")
    probe = ok(run("probe_table", {"path": x}, win_home))
    assert probe["header_row"] == 4 and probe["data_rows"] == 40
    rows = ok(run("read_spreadsheet", {"path": x, "limit": 3}, win_home))
    assert rows["sheets"][0]["rows"][2][0] == "日期"
    calc = ok(run("calc_table", {"path": x, "group_by": ["类别"]}, win_home))
    assert calc["rows_used"] == 40
    filt = ok(run("filter_table", {"path": x, "where": [{"column": "金额", "op": ">", "value": 100}], "limit": 3},
                  win_home))
    assert filt["match_count"] > 0
    piv = ok(run("pivot_table", {"path": x, "row": {"column": "部门"}, "col": {"column": "类别"}, "value": "金额"},
                 win_home))
    assert piv["path"].endswith("台账_透视.xlsx") and os.path.isfile(os.path.join(win_home, ".xla", "workspace", "台账_透视.xlsx"))


def test_table_writers_and_derived_tables(files, win_home):
    x = w(files, "台账.xlsx")
    clean = ok(run("clean_table", {"path": x, "out_path": w(files, "清理后.xlsx")}, win_home))
    assert os.path.isfile(os.path.join(files, "清理后.xlsx")) and clean["path"].endswith("清理后.xlsx")
    ok(run("dedupe_table", {"path": x}, win_home))
    look = ok(run("lookup_table", {"left_path": x, "right_path": x, "left_key": "日期"}, win_home))
    assert look["rows_written"] == 40
    out = w(files, "新表.xlsx")
    wrote = ok(run("write_spreadsheet", {"path": out, "rows": [["名称", "金额"], ["甲", 1.5]]}, win_home))
    assert wrote["rows_written"] == 2
    more = ok(run("write_spreadsheet", {"path": out, "rows": [["乙", 2]], "mode": "append"}, win_home))
    assert more["backup"], "the changed workbook was backed up first"
    back = ok(run("read_spreadsheet", {"path": out}, win_home))
    assert back["sheets"][0]["rows"][-1] == ["乙", 2]
    csv = ok(run("write_spreadsheet", {"path": w(files, "导出.csv"), "rows": [["名称"], ["中文"]]}, win_home))
    assert csv["rows_written"] == 2


def test_documents(files, win_home):
    doc = ok(run("read_document", {"path": w(files, "说明.docx")}, win_home))
    assert "说明文档" in doc["text"]
    made = ok(run("write_document", {"path": w(files, "报告.docx"), "text": "# 九月报告\n正文第一段"}, win_home))
    assert made["headings"] == 1
    again = ok(run("read_document", {"path": w(files, "报告.docx")}, win_home))
    assert "九月报告" in again["text"]
    # No LibreOffice in the lane: the answer says how to get it on Windows (not apt)
    with exclusive():            # test_win_soffice.py may be registering one meanwhile
        err = fail(run("convert_document", {"path": w(files, "报告.docx")}, win_home))
    assert "LibreOffice" in err and "apt" not in err


def test_text_files(files, win_home):
    target = w(files, "笔记.txt")
    made = ok(run("write_text", {"path": target, "text": "第一行\n第二行 ✓"}, win_home))
    assert made["encoding"] == "utf-8"
    read = ok(run("read_text_file", {"path": target}, win_home))
    assert "第二行 ✓" in json.dumps(read, ensure_ascii=False)
    gbk = ok(run("read_text_file", {"path": w(files, "旧编码.csv")}, win_home))
    assert gbk["encoding"] == "gb18030"


def test_file_tools(files, win_home):
    listing = ok(run("list_dir", {"path": win_path(files)}, win_home))
    assert {e["name"] for e in listing["entries"]} >= {"台账.xlsx", "说明.docx"}
    found = ok(run("find_files", {"pattern": "*.xlsx", "path": win_path(win_home)}, win_home))
    assert [e["name"] for e in found["entries"]] == ["台账.xlsx"]
    info = ok(run("file_info", {"path": w(files, "台账.xlsx")}, win_home))
    assert info["size"] == os.path.getsize(SAMPLE)
    ok(run("write_text", {"path": "草稿/删我.txt", "text": "x"}, win_home))
    gone = ok(run("delete_file", {"path": "草稿/删我.txt"}, win_home))
    assert gone and not os.path.exists(os.path.join(win_home, ".xla", "workspace", "草稿", "删我.txt"))


def test_offline_helpers(win_home):
    lunar = ok(run("lunar_date", {"date": "2024-02-10"}, win_home))
    assert lunar["festivals"] == ["春节"]
    now = ok(run("current_time", {"timezone": "中国标准时间"}, win_home))
    assert now["utc_offset"] == "+08:00"
    chart = ok(run("draw_chart", {"type": "bar", "labels": ["一月", "二月"], "values": [1, 2], "title": "费用"}, win_home))
    assert chart["path"].lower().endswith(".png") and os.path.getsize(
        os.path.join(win_home, ".xla", "workspace", "charts", chart["path"].split("\\")[-1])) > 0


def test_run_python_starts_on_the_embeddable_python(files, win_home):
    """run_python on the embeddable CPython that desktop hosts ship (stdlib only as .pyc in a zip):
    the fence must start there (issue 33)."""
    res = run("run_python", {"path": w(files, "脚本.py")}, win_home)
    data = ok(res)
    if data.get("exit_code") != 0:
        pytest.xfail("the run_python fence does not start on the embeddable layout yet (issue 33, helper wt-4): "
                     + json.dumps(data, ensure_ascii=False)[:600])
    assert "你好 win32" in data["stdout"]


def test_web_search(serve, win_home):
    serve.page("/", "<html><body>百度一下</body></html>", host="www.baidu.com")
    serve.page("/s", web_page("baidu_mobile.html"), host="www.baidu.com")
    data = ok(run("web_search", {"query": "样例 天气", "limit": 5}, win_home,
                  env=serve.env("https://www.baidu.com", "https://www.so.com")))
    assert data["engine"] == "baidu" and data["returned"] == 3
    assert serve.hits("/s", host="www.baidu.com")[0].arg("wd") == "样例 天气"


def test_weather_and_location_and_ip(serve, win_home):
    serve.page("/hefei/", web_page("tianqi_city.html"), host="www.tianqi.com")
    weather = ok(run("query_weather", {"city": "合肥市"}, win_home, env=serve.env("https://www.tianqi.com")))
    assert weather["city"] == "合肥" and weather["today"]["weather"] == "多云"
    serve.json("/get", json.loads(web_page("ip9_ok.json").replace("203.0.113.7", "223.5.5.5")), host="ip9.com.cn")
    loc = ok(run("query_location", {"ip": "223.5.5.5"}, win_home, env=serve.env("https://ip9.com.cn")))
    assert loc["province"] == "安徽"
    serve.json("/", {"ip": "223.5.5.5"}, host="ipv4.jsonip.com")
    ip = ok(run("query_ip", {}, win_home, env=serve.env("https://ipv4.jsonip.com", "https://ip9.com.cn", "https://4.ipw.cn")))
    assert ip["ip"] == "223.5.5.5"


def test_express_and_fetch_url(serve, win_home):
    serve.page("/", "<html>快递网</html>", host="www.kuaidi.com", headers=[("Set-Cookie", "kd=1; path=/")])
    serve.json("/index-ajaxselectinfo-773000000000001.html", json.loads(web_page("kuaidi_select.json")), host="www.kuaidi.com")
    serve.page("/index-ajaxselectcourierinfo-773000000000001-zhongtong.html", web_page("kuaidi_trace_ok.json"),
               content_type="application/json", host="www.kuaidi.com")
    exp = ok(run("query_express", {"number": "773000000000001"}, win_home, env=serve.env("http://www.kuaidi.com")))
    assert exp["status"] == "已签收"
    # a GBK page labelled only by <meta>, as old Chinese sites are
    serve.page("/gbk.html", ("<html><head><meta charset='gbk'><title>旧网页</title></head><body><p>"
                             + "这是一个用国标码写的旧网页，正文要读对。" * 5 + "</p></body></html>").encode("gbk"),
               content_type="text/html", host="news.example.cn")
    page = ok(run("fetch_url", {"url": "https://news.example.cn/gbk.html"}, win_home,
                  env=serve.env("https://news.example.cn")))
    assert "国标码" in page["text"]


# ---- bad input: the script itself must survive it (sent raw, past the host's own checks) -------------

from xlakit import manifest as xla_manifest  # noqa: E402

MANIFEST, _ = xla_manifest.load_manifest(ROOT)
TOOLS = MANIFEST["tools"]
WRONG = {"string": {"不是": "字符串"}, "integer": "abc", "number": "abc", "boolean": "maybe", "array": "不是数组",
         "object": "不是对象"}


PATH_FAMILIES = {"read_spreadsheet", "lookup_table", "read_document", "convert_document", "read_text_file",
                 "write_text", "file_info", "run_python"}


def _path_keys(tool):
    props = tool["parameters"].get("properties", {})
    return [k for k in tool["parameters"].get("required", []) if k == "path" or k.endswith("_path")
            and props[k].get("type") == "string"]


def bad_cases():
    out = []
    for tool in TOOLS:
        name, props = tool["name"], tool["parameters"].get("properties", {})
        out.append((name, "garbage_bytes"))
        if props:
            out.append((name, "wrong_type"))
        if _path_keys(tool) and name in PATH_FAMILIES:
            # garbage file contents are the Linux suite's business (the same parsers); paths are ours,
            # resolved by shared code, so one tool per family keeps the lane short
            out += [(name, "missing_file"), (name, "folder")]
    return out


def _base(tool, home):
    props = tool["parameters"].get("properties", {})
    args = {}
    for key in tool["parameters"].get("required", []):
        schema = props[key]
        if "enum" in schema:
            args[key] = schema["enum"][0]
        elif key in _path_keys(tool):
            args[key] = w(home, "台账.xlsx")
        else:
            args[key] = {"string": "测试", "integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}[
                schema["type"]]
    return args


@pytest.mark.parametrize("name,case", bad_cases(), ids=["%s-%s" % c for c in bad_cases()])
def test_bad_input_gets_a_chinese_answer(name, case, win_home):
    tool = next(t for t in TOOLS if t["name"] == name)
    shutil.copy(SAMPLE, os.path.join(win_home, "台账.xlsx"))
    args = _base(tool, win_home)
    if case == "garbage_bytes":
        raw = b"\x00\xff\xfe\x80junk"
    else:
        if case == "wrong_type":
            key, schema = next(iter(tool["parameters"]["properties"].items()))
            args[key] = WRONG[schema["type"]]
        else:
            key = _path_keys(tool)[0]
            if case == "missing_file":
                args[key] = w(win_home, "没有这个文件.xlsx")
            else:
                args[key] = win_path(win_home)
        raw = json.dumps(args, ensure_ascii=False)
    res = win_tool(name, None, home=win_home, raw_input=raw, env=OFFLINE)
    data = assert_contract(res)
    if case in ("garbage_bytes", "wrong_type", "missing_file"):
        assert data["ok"] is False, data
