"""Progress lines (rules.md section 2): the one stderr form, written by the layers' long loops
(tables, PDF pages, find_files), read live by the host, turned into MCP notifications/progress
for a request with a progressToken and into a bar by ``xla.py run`` on a terminal only, and never
part of the error text. Counts of lines follow the amount of work, never the clock."""
import json
import os
import pty
import subprocess
import sys
import textwrap

from conftest import FIXTURES, ROOT, ok
from xlakit import host as xla_host
from xlakit import progress

XLA = os.path.join(ROOT, "xla.py")
LONG_PDF = os.path.join(FIXTURES, "documents", "long60.pdf")


def big_csv(path, rows):
    with open(str(path), "w", encoding="utf-8") as fh:
        fh.write("部门,金额\n")
        for i in range(rows):
            fh.write("部门%d,%d.5\n" % (i % 7, i % 100))
    return str(path)


def collect(name, args, home, **kw):
    seen = []
    result = xla_host.run_tool(name, args, home=str(home), on_progress=lambda *a: seen.append(a), **kw)
    return result, seen


def increasing(seen):
    done = [d for d, _t, _n in seen]
    return done == sorted(set(done))


def test_line_form_parse_and_thinning(capfd):
    assert progress.line(5, 10, "已读 5 行") == '[xla-progress] {"done": 5, "total": 10, "note": "已读 5 行"}'
    assert progress.parse(progress.line(5, None, "x")) == (5, None, "x")
    assert progress.parse("[xla-progress] {broken") is None and progress.parse("其他日志") is None
    for i in range(1, 1001):                        # a known total: one line per 5 % step
        progress.report(i, 1000, "n")
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith(progress.PREFIX)]
    assert 20 <= len(lines) <= 21 and progress.parse(lines[-1])[0] == 1000
    assert progress.strip("a\n" + lines[0] + "\nb") == "a\nb"


def test_table_tools_report_rows(tmp_path, home):
    path = big_csv(tmp_path / "大表.csv", 30000)
    result, seen = collect("calc_table", {"path": path, "group_by": ["部门"],
                                          "metrics": [{"column": "金额", "func": "sum"}]}, home)
    assert ok(result)["rows_used"] == 30000
    assert len(seen) == 6 and increasing(seen) and all("行" in n for _d, _t, n in seen)
    result, seen = collect("read_spreadsheet", {"path": path, "limit": 5}, home)
    assert ok(result) and len(seen) == 6 and increasing(seen)
    assert "[xla-progress]" not in result.text         # the answer never carries them


def test_long_pdf_reports_pages(home):
    result, seen = collect("read_document", {"path": LONG_PDF, "max_chars": 200000}, home)
    assert ok(result)["pages"] == 60
    assert 10 <= len(seen) <= 21 and increasing(seen) and all(t == 60 for _d, t, _n in seen)


def test_find_files_reports_entries(tmp_path, home):
    tree = tmp_path / "树"
    for d in range(6):
        folder = tree / ("d%d" % d)
        folder.mkdir(parents=True)
        for i in range(2000):
            (folder / ("f%d.txt" % i)).touch()
    result, seen = collect("find_files", {"pattern": "f1999.txt", "path": str(tree)}, home)
    assert ok(result)["returned"] == 6
    assert len(seen) >= 2 and increasing(seen) and all(t is None for _d, t, _n in seen)


def test_error_text_never_keeps_progress_lines(tmp_path, home):
    """Thousands of progress lines, then a failure: the error is the real one, whole."""
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "noisy.py").write_text(textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        from xlakit import runtime as rt

        def main(params):
            for i in range(1, 3001):
                rt.progress(i, None, "第 %%d 步" %% i)
            raise rt.ToolError("真正的错误：第 3000 步之后文件不见了，请检查路径后重试")
        rt.run(main)
    """ % ROOT), encoding="utf-8")
    (root / "tools.json").write_text(json.dumps({"tools": [{"name": "noisy", "description": "测试", "parameters": {
        "type": "object", "properties": {}}}]}), encoding="utf-8")
    result, seen = collect("noisy", {}, home, root=str(root))
    assert not result.ok and result.error == "真正的错误：第 3000 步之后文件不见了，请检查路径后重试"
    assert len(seen) == 3000 and result.stderr.count(progress.PREFIX) == 3000


def mcp_lines(messages, timeout=120):
    data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode()
    proc = subprocess.run([sys.executable, XLA, "mcp"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, cwd=ROOT)
    return [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines()]


def test_mcp_turns_progress_lines_into_notifications(tmp_path):
    path = big_csv(tmp_path / "大表.csv", 30000)
    call = {"name": "calc_table", "arguments": {"path": path, "group_by": ["部门"]}}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    out = mcp_lines([init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": dict(call, _meta={"progressToken": "p-7"})},
                     {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}])
    notes = [m["params"] for m in out if m.get("method") == "notifications/progress"]
    assert len(notes) >= 5 and all(n["progressToken"] == "p-7" for n in notes)   # none for request 3
    values = [n["progress"] for n in notes]
    assert values == sorted(set(values)) and all(n["message"] for n in notes)
    answer = [m for m in out if m.get("id") == 2][0]
    assert out.index(answer) > max(i for i, m in enumerate(out) if m.get("method") == "notifications/progress")
    assert answer["result"]["structuredContent"]["rows_used"] == 30000


def test_run_draws_a_bar_only_on_a_terminal(tmp_path):
    path = big_csv(tmp_path / "大表.csv", 30000)
    args = [sys.executable, XLA, "run", "calc_table", json.dumps({"path": path})]
    env = dict(os.environ, HOME=str(tmp_path))
    piped = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
    assert json.loads(piped.stdout.decode("utf-8"))["ok"] and piped.stderr == b""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:              # the terminal closed: the child is done with it
            break
        if not chunk:
            break
        chunks.append(chunk)
    out = proc.communicate(timeout=120)[0]
    os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert json.loads(out.decode("utf-8"))["ok"]
    assert "\r" in shown and "[~~~~" in shown and "已读" in shown and "[xla-progress]" not in shown


def test_ocr_pages_report_progress(home):
    result, seen = collect("read_document", {"path": os.path.join(FIXTURES, "ocr", "scan.pdf")}, home)
    assert ok(result)
    assert seen and all("文字识别" in n for _d, _t, n in seen) and increasing(seen)


def test_xlsx_rows_report_against_the_declared_size(tmp_path, home):
    """An xlsx says how many rows it has (its dimension): lines come in 5 % steps up to 100 %."""
    import pydeps_boot
    openpyxl = pydeps_boot.ensure("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["部门", "金额"])
    for i in range(20000):
        sheet.append(["部门%d" % (i % 7), i % 100 + 0.5])
    path = str(tmp_path / "大表.xlsx")
    book.save(path)
    result, seen = collect("calc_table", {"path": path, "group_by": ["部门"]}, home)
    assert ok(result)["rows_used"] == 20000
    assert 15 <= len(seen) <= 21 and increasing(seen) and all(t == 20001 for _d, t, _n in seen)
    assert seen[-1][0] == 20001
