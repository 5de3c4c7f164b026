"""Every reader path gives identical results: the table tool and table_io tests run again with
the xlsx reader forced onto its openpyxl fallback (XLA_XLSX_READER=openpyxl), in a child pytest."""
import os
import subprocess
import sys

import pytest

from xlakit import host as xla_host
from conftest import ROOT

SUITES = ["test_table_io.py", "test_read_spreadsheet.py", "test_probe_table.py", "test_calc_table.py"]


@pytest.mark.skipif(os.environ.get("XLA_XLSX_READER") is not None, reason="already inside the rerun")
def test_table_suites_pass_on_the_openpyxl_reader_path():
    env = dict(os.environ, XLA_XLSX_READER="openpyxl")
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"] +
                         [os.path.join(ROOT, "tests", s) for s in SUITES],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    tail = (res.stdout + res.stderr)[-3000:]
    assert res.returncode == 0, tail
    assert " passed" in tail


def test_the_reader_switch_reaches_a_spawned_tool(home):
    """The rerun above only means something if the switch really reaches the tools."""
    sample = os.path.join(ROOT, "examples", "示例台账.xlsx")
    for reader in ("openpyxl", "fast"):
        env = {"XLA_DEBUG": "1"}
        if reader == "openpyxl":
            env["XLA_XLSX_READER"] = "openpyxl"
        res = xla_host.run_tool("read_spreadsheet", {"path": sample, "limit": 3}, home=str(home), extra_env=env)
        assert res.ok and "xlsx reader: %s" % reader in res.stderr
