"""Bounded csv line reading (issue 34): a 20 MB single-line csv made probe_table use 3.4 GB until
the host killed it, read_spreadsheet on a 60 MB line likewise. Now a physical line or a quoted
field past 16 MB characters, or a record past 65,536 fields, stops the read with a Chinese error
naming the row and the cap, within seconds, and the tool's peak memory stays small.

Each run goes through the real host runner (``xlakit.host.run_tool``) in a fresh wrapper process,
which prints the answer and its children's peak RSS (``RUSAGE_CHILDREN``): the tool is the
wrapper's only child, so that peak is the tool's own."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

PEAK_MB = 500
WRAPPER = ("import json, resource, sys\n"
           "sys.path.insert(0, %r)\n"
           "from xlakit import host\n"
           "res = host.run_tool(sys.argv[1], json.loads(sys.argv[2]), home=sys.argv[3], log=False)\n"
           "print(json.dumps({'answer': res.answer(), 'took': res.duration,\n"
           "                  'peak_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0}))\n" % ROOT)


def measured(home, tool, path):
    out = subprocess.run([sys.executable, "-c", WRAPPER, tool, json.dumps({"path": str(path)}), str(home)],
                         capture_output=True, timeout=120, check=True)
    return json.loads(out.stdout.decode("utf-8"))


def write(path, *parts):
    with open(str(path), "w", encoding="utf-8") as fh:
        for part in parts:
            fh.write(part)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("csvbounds")
    return {
        # 20 MB, one line, 2.6 million short fields (the probe_table case)
        "line20": write(d / "line20.csv", ",".join("v%d" % i for i in range(2600000))[:20 << 20], "\n"),
        # 60 MB, one line of 50-character fields (the read_spreadsheet case)
        "line60": write(d / "line60.csv", ("x" * 50 + ",") * ((60 << 20) // 51), "\n"),
        # a header, then one 60 MB quote-free field
        "field60": write(d / "field60.csv", "a,b\n1,", "y" * (60 << 20), "\n"),
        # a header, then 3 million fields in a 6 MB line (short enough, far too wide)
        "wide": write(d / "wide.csv", "a,b\n", ",".join(["1"] * 3000000), "\n"),
        # a quoted field that never closes: 30 MB of lines swallowed into one cell
        "unclosed": write(d / "unclosed.csv", "a,b\n1,\"x\n", ("z" * 1000 + "\n") * 30000),
    }


@pytest.mark.parametrize("tool", ["probe_table", "read_spreadsheet"])
@pytest.mark.parametrize("name, says", [("line20", "第 1 行超过 16,777,216 个字符"),
                                        ("line60", "第 1 行超过 16,777,216 个字符"),
                                        ("field60", "第 2 行超过 16,777,216 个字符"),
                                        ("wide", "第 2 行超过 65536 列"),
                                        ("unclosed", "引号没有配对")])
def test_overlong_lines_are_refused_in_chinese_with_bounded_memory(home, files, tool, name, says):
    got = measured(home, tool, files[name])
    answer = got["answer"]
    print("%s %s: %.1f s, peak %.0f MB" % (tool, name, got["took"], got["peak_mb"]))
    assert answer["ok"] is False and says in answer["error"], answer
    assert "Error" not in answer["error"] and "Traceback" not in answer["error"]
    assert got["peak_mb"] < PEAK_MB
    assert got["took"] < 30


def test_a_long_cell_under_the_cap_still_reads(home, tmp_path):
    """5 MB in one quote-free cell and 3 MB in a quoted one (far past any real cell): read whole."""
    path = write(tmp_path / "long.csv", "a,b\n1,", "w" * (5 << 20), "\n2,\"", "q" * (3 << 20), "\"\n3,x\n")
    got = measured(home, "read_spreadsheet", path)
    rows = got["answer"]["sheets"][0]["rows"]
    assert got["answer"]["ok"] and len(rows) == 4, got["answer"]      # the answer shortens long cells
    assert rows[1][1].startswith("www") and rows[2][1].startswith("qqq") and rows[3] == ["3", "x"]
    assert got["peak_mb"] < PEAK_MB
