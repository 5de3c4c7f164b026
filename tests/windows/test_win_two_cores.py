"""Big tables on Windows use both cores where Linux does (issue 39's csv split, spawn-started).

Why in the lane: the csv worker is started with ``multiprocessing``'s spawn method, which on
Windows means a second ``python.exe`` found through ``sys.executable`` under the host's bare
environment, a named pipe for the lifeline and pickled accumulators coming back. A worker that
cannot start there is not an error (the tool quietly reads in one process again), so without this
test a Windows user would silently get half the speed. ``XLA_CSV_WORKERS=2`` splits a csv of any
size; ``XLA_DEBUG=1`` notes the cut (and any restart) on stderr."""
import json
import os

import pytest

from conftest import ok
from test_split_pass import JOBS, ledger_lines, write
from winfixtures import lane, win_home  # noqa: F401 - fixtures
from winlane import win_path, win_tool

pytestmark = pytest.mark.windows

OFFLINE = {"XLA_NET_MAP": json.dumps({"*": "offline"})}


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gb18030"])
def test_csv_on_two_processes_gives_the_one_process_answer(win_home, encoding):
    path = write(os.path.join(win_home, "台账_%s.csv" % encoding), ledger_lines(3000), encoding)
    for job in JOBS[:2]:
        args = dict(job, path=win_path(path))
        one = ok(win_tool("calc_table", args, home=win_home, env=dict(OFFLINE, XLA_CSV_WORKERS="1")))
        res = win_tool("calc_table", args, home=win_home, env=dict(OFFLINE, XLA_CSV_WORKERS="2", XLA_DEBUG="1"))
        two = ok(res)
        assert "split_pass: two processes, cut at byte" in res.stderr, res.stderr[-1500:]
        assert "restart" not in res.stderr, res.stderr[-1500:]
        assert json.dumps(one, ensure_ascii=False) == json.dumps(two, ensure_ascii=False), job
