"""Deeply nested tool arguments (issue 34): refused in Chinese before anything recursive touches
them, on every way in: the MCP server, ``python3 xla.py run``, the host's runner and a tool script
started directly. Before, 600 levels made the host's validation and audit log raise RecursionError
("Internal error" and a 140 KB traceback per call on the MCP server's stderr)."""
import json
import os
import subprocess
import sys

from conftest import ROOT
from test_mcp import Raw
from xlakit import host as xla_host
from xlakit import manifest as xla_manifest

XLA = os.path.join(ROOT, "xla.py")
SAY = "参数嵌套超过 %d 层" % xla_manifest.MAX_DEPTH


def nested_list(depth):
    return "[" * depth + "]" * depth


def nested_object(depth):
    return '{"a":' * depth + "1" + "}" * depth


def deep_value(depth):
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_mcp_server_answers_deep_arguments_as_a_tool_error_without_a_traceback(home):
    s = Raw(home)
    try:
        s.initialize()
        cases = [("lunar_date", '{"date":%s}' % nested_list(600)),              # a declared key
                 ("write_text", '{"path":"x.txt","content":"a","x":%s}' % nested_object(600)),   # undeclared
                 ("calc_table", '{"path":%s}' % nested_object(34)),                  # past the server's cut
                 ("calc_table", '{"path":%s}' % nested_object(32))]                  # the host's own check
        for n, (tool, args) in enumerate(cases):
            s.write('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n'
                    % (n, tool, args))
            answer = s.receive(lambda m: m.get("id") == n)["result"]
            assert answer["isError"] is True, answer
            assert SAY in json.loads(answer["content"][0]["text"])["error"]
            assert answer["structuredContent"]["ok"] is False
        # not a tool call: a JSON-RPC error; deeper than Python parses at all: a parse error
        s.write('{"jsonrpc":"2.0","id":"p","method":"ping","params":{"x":%s}}\n' % nested_list(600))
        assert SAY in s.receive(lambda m: m.get("id") == "p")["error"]["message"]
        s.write(nested_list(100000) + "\n")
        assert SAY in s.receive(lambda m: "error" in m and m.get("id") is None)["error"]["message"]
        assert s.request("ping")["result"] == {}
        assert s.close() == 0
        err = s.stderr()
        assert "Traceback" not in err and "RecursionError" not in err and len(err) < 4000, err[-2000:]
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def test_xla_run_refuses_deep_arguments_in_chinese(home):
    proc = subprocess.run([sys.executable, XLA, "run", "lunar_date", '{"date":%s}' % nested_list(600)],
                          capture_output=True, env={"HOME": str(home), "PATH": os.environ.get("PATH", "")},
                          timeout=60)
    assert SAY in proc.stdout.decode("utf-8"), proc.stdout[-500:]
    assert b"Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_xla_run_answers_json_deeper_than_pythons_recursion_and_other_bad_input_in_chinese(home):
    """100,000 nested lists make json.loads itself raise RecursionError (not ValueError): the CLI
    parses through the tools' own runtime.parse_input, so it answers the same Chinese refusal;
    a list instead of an object and a --timeout that is no number are said in Chinese too."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    deep = '{"date":%s}' % ("[" * 100000 + "]" * 100000)      # on stdin: too long for one argv string
    for args, said in (([], SAY), (["[1, 2]"], "收到的是列表"), (['{"date": '], "不是合法的 JSON"),
                       (["--timeout", "abc", "{}"], "--timeout 后面要写秒数")):
        proc = subprocess.run([sys.executable, XLA, "run", "lunar_date"] + args, capture_output=True, env=env,
                              input=deep.encode(), timeout=60)
        assert proc.returncode == 2
        assert said in (proc.stdout + proc.stderr).decode("utf-8"), (args[0][:20], proc.stdout[-500:], proc.stderr[-500:])
        assert b"Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_host_refuses_deep_arguments_and_logs_them_shortened(home):
    res = xla_host.run_tool("lunar_date", {"date": "2024-02-10", "junk": deep_value(600)}, home=str(home))
    assert not res.ok and SAY in res.error and res.exit_code == 2
    logs = os.path.join(str(home), ".xla", "logs")
    line = open(os.path.join(logs, os.listdir(logs)[0]), encoding="utf-8").read().splitlines()[-1]
    assert len(line) < 2000 and json.loads(line)["ok"] is False
    # exactly at the limit: accepted (the undeclared key is dropped), the tool answers
    res = xla_host.run_tool("lunar_date", {"date": "2024-02-10", "junk": deep_value(xla_manifest.MAX_DEPTH - 1)},
                            home=str(home))
    assert res.ok, res.error


def test_tool_started_directly_refuses_deep_input_in_chinese(home):
    for body in ('{"date":%s}' % nested_list(600), '{"date":%s}' % nested_list(50000),
                 '{"date":"\\ud800","x":%s}' % nested_object(600)):     # the surrogate-cleaning path
        proc = subprocess.run([sys.executable, "-X", "utf8", "-u", "lunar_date.py"], input=body.encode(),
                              cwd=os.path.join(ROOT, "tools"), capture_output=True, timeout=60,
                              env={"HOME": str(home), "PATH": os.environ.get("PATH", ""),
                                   "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")})
        answer = json.loads(proc.stdout.decode("utf-8"))
        assert answer["ok"] is False and SAY in answer["error"] and proc.returncode != 0
        assert b"Traceback" not in proc.stderr


def test_nesting_check_is_iterative_and_counts_values():
    assert xla_manifest.nesting_problem(deep_value(200000)) == xla_manifest.too_deep()
    assert xla_manifest.nesting_problem({"rows": [[1, 2]] * 1000}) is None
    assert "超过 10 个" in xla_manifest.nesting_problem({"rows": list(range(11))}, max_values=10)
