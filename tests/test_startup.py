"""Small calls stay light: a fresh tool process reading a plain sheet does not import what only
rare paths need (issue 39: a 50-row sheet should feel instant), and those rare paths still work.

The tools run in a fresh ``python -S`` (so this sandbox's own ``site`` additions, which import
tempfile and friends for everyone, do not hide what *our* code imports) with the host's other
settings; the modules loaded at exit are printed on stderr by a small launcher. No timing is
asserted: the test pins *what* is imported, the benchmark (bench/bench_startup.py) measures time.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, assert_contract, ok

LAUNCHER = r'''
import json, runpy, sys
script = sys.argv[1]
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\nMODULES " + json.dumps(sorted(sys.modules)) + "\n")
'''

# Imported only where they are needed: decryption (agile cipher, temp copies), XLA_DEBUG
# tracebacks, "did you mean" suggestions, writing a page-cache entry.
LAZY = ("xlakit.crypt.agile", "tempfile", "traceback", "difflib", "hashlib.pbkdf2_hmac")


def launch(tool, args, home, extra_env=None):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-S", "-X", "utf8", "-u", "-c", LAUNCHER, tool + ".py"],
                          cwd=os.path.join(ROOT, "tools"), input=json.dumps(args, ensure_ascii=False).encode("utf-8"),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    err = proc.stderr.decode("utf-8")
    modules = json.loads(err.rsplit("MODULES ", 1)[1])
    return json.loads(proc.stdout.decode("utf-8")), set(modules), err


@pytest.fixture
def ledger(tmp_path):
    path = tmp_path / "流水.csv"
    lines = ["日期,区域,金额"] + ["2024-01-%02d,%s,%d.5" % (1 + i % 28, "华东华北"[2 * (i % 2):2 * (i % 2) + 2], 100 + i)
                                 for i in range(50)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    return path


@pytest.fixture
def ledger_xlsx(run, ledger, tmp_path):
    out = tmp_path / "流水.xlsx"
    rows = [line.split(",") for line in ledger.read_text(encoding="utf-8-sig").splitlines()]
    body = [rows[0]] + [[r[0], r[1], float(r[2])] for r in rows[1:]]
    ok(run("write_spreadsheet", {"path": str(out), "rows": body}))
    return out


@pytest.mark.parametrize("tool,extra", [
    ("calc_table", {"group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum"}]}),
    ("probe_table", {}),
    ("read_spreadsheet", {}),
])
@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_a_small_table_call_leaves_the_rare_paths_unimported(tool, extra, kind, ledger, ledger_xlsx, home):
    path = ledger if kind == "csv" else ledger_xlsx
    answer, modules, err = launch(tool, dict(extra, path=str(path)), home)
    assert answer["ok"] is True, answer
    if tool == "calc_table":
        assert {g["区域"] for g in answer["groups"]} == {"华北", "华东"}
        total = sum(v for g in answer["groups"] for k, v in g.items() if k.startswith("金额"))
        assert round(total, 2) == sum(100 + i + 0.5 for i in range(50))
    loaded = [m for m in LAZY if m in modules]
    assert not loaded, "imported on a plain small call: %s" % loaded
    assert "Traceback" not in err


def test_the_rare_paths_still_import_what_they_need(run, ledger, home):
    # a column that is not there: the suggestion (difflib) is still made
    wrong = run("calc_table", {"path": str(ledger), "group_by": ["区"], "sum": ["金额"]})
    data = assert_contract(wrong)
    assert data["ok"] is False and "区域" in data["error"]
    # a value that matches nothing: filter_table still names the closest ones
    none = ok(run("filter_table", {"path": str(ledger), "where": [{"column": "区域", "op": "eq", "value": "华"}]}))
    assert any("华东" in s["closest"] for s in none.get("suggestions", [])), none


def test_xla_debug_still_prints_the_traceback(ledger, home):
    """An internal error under XLA_DEBUG=1 still gives developers the traceback (imported on demand)."""
    args = {"path": str(ledger), "group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum"}]}
    answer, _modules, err = launch("calc_table", args, home, {"XLA_DEBUG": "1", "XLA_DEADLINE": "not-a-number"})
    assert answer["ok"] is True       # a bad XLA_DEADLINE is ignored, not an error
    answer, _modules, err = launch("read_spreadsheet", {"path": str(ledger) + ".missing"}, home, {"XLA_DEBUG": "1"})
    assert answer["ok"] is False and "Traceback" in err


def test_writing_a_new_workbook_leaves_the_installer_unimported(tmp_path, home):
    """A new xlsx needs neither openpyxl nor the installer (pydeps_boot: subprocess, locks); an
    existing workbook (openpyxl) and an .xls (xlwt) import it where they need it."""
    out = tmp_path / "新表.xlsx"
    answer, modules, _err = launch("write_spreadsheet", {"path": str(out), "rows": [["名称", "金额"], ["甲", 1.5]]}, home)
    assert answer["ok"] is True and out.is_file()
    # (tempfile is fair here: a written file goes through a temporary file beside it)
    loaded = [m for m in ("pydeps_boot", "subprocess", "shlex", "openpyxl", "traceback", "difflib") if m in modules]
    assert not loaded, "imported when writing a new workbook: %s" % loaded
    answer, modules, _err = launch("write_spreadsheet", {"path": str(out), "rows": [["乙", 2]], "mode": "append"}, home)
    assert answer["ok"] is True and answer["total_rows"] == 3, answer
    old = tmp_path / "老格式.xls"
    answer, modules, _err = launch("write_spreadsheet", {"path": str(old), "rows": [["名称"], ["甲"]]}, home)
    assert answer["ok"] is True and old.read_bytes()[:4] == b"\xd0\xcf\x11\xe0"


def test_a_tool_reads_its_own_entry_without_checking_the_whole_manifest(tmp_path):
    """Every call looks up its own tools.json entry; the whole-manifest check (every schema and
    script) is for the host and ``xla.py check``, and stays what they see."""
    from xlakit import manifest
    data, problems = manifest.load_manifest(ROOT, check=False)
    assert problems == [] and manifest.find_tool(data, "calc_table") is not None
    assert manifest.load_manifest(ROOT)[0] == data
    broken = tmp_path / "toolbox"
    (broken / "tools").mkdir(parents=True)
    (broken / "tools.json").write_text(json.dumps({"tools": [{"name": "ghost", "description": "x",
                                                              "parameters": {"type": "object"}}]}), encoding="utf-8")
    assert manifest.load_manifest(str(broken), check=False)[1] == []
    assert any("ghost" in p for p in manifest.load_manifest(str(broken))[1])
