"""calc_table on a csv grouped on two processes (xlakit/tables/split_pass.py) gives exactly the
one-process answer: the same JSON, byte for byte, on files with quoted fields (commas, quotes,
line breaks inside), GBK text, blank lines, 合计 and footer rows, text in number columns, dates
to bucket, every metric and a where. ``XLA_CSV_WORKERS=2`` splits a file of any size (the real
threshold is 8 MB), ``=1`` forces one process; ``XLA_DEBUG=1`` says on stderr where the file was
cut and whether the split was undone. Cuts that must be undone (inside a quoted field whose
quote count misleads, right after a 合计 row) are built on purpose. And a killed tool leaves no
worker behind."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, ok

from xlakit.tables import split_pass
from xlakit.tables.formats import delimited

REGIONS = ["华东", "华南", "华北", "西南", "东北"]
KINDS = ["饮料", "零食", "日用", "生鲜"]

JOBS = [
    {"group_by": ["区域", "品类"], "metrics": [{"column": "金额", "func": "sum", "as": "金额"}]},
    {"group_by": [{"column": "日期", "date_bucket": "month"}],
     "metrics": [{"column": "金额", "func": "avg"}, {"column": "数量", "func": "max"}, {"column": "数量", "func": "min"},
                 {"column": "备注", "func": "count"}, {"column": "门店", "func": "distinct_count"},
                 {"func": "count_rows"}]},
    {"group_by": ["区域"], "metrics": [{"column": "金额", "func": "sum"}, {"column": "日期", "func": "max"}],
     "where": [{"column": "数量", "op": "gt", "value": 3}, {"column": "金额", "op": "gt", "value": 100}],
     "sort_by": "金额"},
    {"group_by": ["门店"], "metrics": [{"column": "金额", "func": "sum"}], "include_totals": True},
]


def ledger_lines(n, seed=7):
    """A ledger's lines (header first) with the awkward cases spread over the whole file."""
    lines = ["日期,区域,门店,品类,数量,金额,备注"]
    for i in range(n):
        day = "2024-%02d-%02d" % (i % 12 + 1, i % 28 + 1)
        region, kind = REGIONS[(i * seed) % 5], KINDS[(i * 3) % 4]
        shop = "%s%d号店" % (region, i % 7)
        qty = str(i % 9)
        amount = "%d.%02d" % ((i * 37) % 5000, (i * 11) % 100)
        note = ""
        if i % 97 == 5:
            note = '"含逗号, 和""引号"""'
        elif i % 89 == 3:
            note = '"第一行\n第二行"'           # a line break inside a quoted field
        elif i % 53 == 1:
            amount = "待定"                     # text in the number column: skipped, with examples
        elif i % 61 == 2:
            amount = '"1,234.50"'              # money text with a thousands comma
        elif i % 71 == 4:
            day = "不详"                        # not a date: bucketed to the empty group, counted
        elif i % 43 == 0:
            lines.append("")                    # a blank line (row numbers count it)
        lines.append(",".join([day, region, shop, kind, qty, amount, note]))
        if i % 500 == 499:
            lines.append("小计,,,,,%d.00," % (i * 3))
    lines.append("合计,,,,,999999.99,")
    lines.append("注：本表由系统导出")
    return lines


def write(path, lines, encoding="utf-8-sig"):
    data = ("\r\n".join(lines) + "\r\n").encode(encoding)
    with open(path, "wb") as fh:
        fh.write(data)
    return str(path)


def both(run, path, job, debug=True):
    """(one-process answer, two-process answer, the split run's stderr)."""
    args = dict(job, path=path)
    one = ok(run("calc_table", args, extra_env={"XLA_CSV_WORKERS": "1"}))
    res = run("calc_table", args, extra_env={"XLA_CSV_WORKERS": "2", "XLA_DEBUG": "1" if debug else "0"})
    two = ok(res)
    return one, two, res.stderr


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gb18030"])
def test_two_processes_same_answer(run, tmp_path, encoding):
    path = write(tmp_path / ("账_%s.csv" % encoding), ledger_lines(6000), encoding)
    for job in JOBS:
        one, two, err = both(run, path, job)
        assert "split_pass: two processes, cut at byte" in err
        assert "restart" not in err, err
        assert json.dumps(one, ensure_ascii=False) == json.dumps(two, ensure_ascii=False), job
    assert one["totals_rows_excluded"] == 0     # include_totals
    assert any("无法比较" in w for w in both(run, path, JOBS[2])[0]["warnings"])     # where's uncomparable cells
    first = both(run, path, JOBS[0])[0]
    assert first["totals_rows_excluded"] == 13 and first["skipped"]["金额"]["count"] > 50


def _cut(path, env):
    old = dict(os.environ)
    os.environ.update(env)
    try:
        return split_pass.split_point(delimited.DelimitedBook(path))
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_cut_inside_quotes_is_undone(run, tmp_path):
    """A stray quote inside an unquoted cell (``12" 屏``) makes the quote count odd, so the first
    line end with an even count is the one inside the next quoted multi-line cell: our part then
    ends inside a quoted field, which the sentinel line shows, and the file is read in one pass."""
    lines = ledger_lines(3000)
    lines = [ln.replace('"第一行\n第二行"', "") for ln in lines]      # no multi-line cells but ours
    size = len(("\r\n".join(lines) + "\r\n").encode("utf-8-sig"))
    at = int(size * split_pass.SHARE)
    # the stray quote well before the middle, the multi-line cell just after it
    pos, k = 0, 0
    for k, ln in enumerate(lines):
        pos += len((ln + "\r\n").encode("utf-8"))
        if pos > at:
            break
    lines[10] = lines[10].replace("号店", '号店 12" 屏', 1)
    lines[k + 2] = lines[k + 2].rsplit(",", 1)[0] + ',"跨行\n的备注"'
    path = write(tmp_path / "引号.csv", lines)
    cut = _cut(path, {"XLA_CSV_WORKERS": "2"})
    with open(path, "rb") as fh:
        before = fh.read()[:cut]
    assert before.endswith('"跨行\n'.encode("utf-8")), before[-40:]
    one, two, err = both(run, path, JOBS[1])
    assert "restart in one process: our part ended inside a quoted field" in err
    assert one == two


def test_cut_after_totals_row_is_undone(run, tmp_path):
    """A 合计 row just before the cut leaves the footer rule open: one pass decides what follows."""
    lines = ledger_lines(3000)
    path = write(tmp_path / "合计.csv", lines)
    cut = _cut(path, {"XLA_CSV_WORKERS": "2"})
    with open(path, "rb") as fh:
        data = fh.read()
    start = data.rfind(b"\n", 0, cut - 1) + 1
    old = data[start:cut - 2].decode("utf-8")              # the line before the cut, without \r\n
    new = "合计,,,,,1.00,"
    new += " " * (len(old.encode("utf-8")) - len(new.encode("utf-8")))
    assert len(new.encode("utf-8")) == len(old.encode("utf-8"))
    with open(path, "wb") as fh:
        fh.write(data[:start] + new.encode("utf-8") + data[cut - 2:])
    assert _cut(path, {"XLA_CSV_WORKERS": "2"}) == cut
    one, two, err = both(run, path, JOBS[0])
    assert "restart in one process: a totals/footer row pending at the cut" in err
    assert one == two


def test_no_split_for_utf16_or_small_files(tmp_path):
    lines = ledger_lines(300)
    assert _cut(write(tmp_path / "u16.csv", lines, "utf-16"), {"XLA_CSV_WORKERS": "2"}) is None
    small = write(tmp_path / "small.csv", lines)
    assert _cut(small, {"XLA_CSV_WORKERS": ""}) is None          # under 8 MB: one process
    assert _cut(small, {"XLA_CSV_WORKERS": "1"}) is None
    assert _cut(small, {"XLA_CSV_WORKERS": "2"}) is not None


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_tool_leaves_no_worker(home, tmp_path):
    """SIGKILL to the tool while its worker groups: the worker sees its lifeline close and exits."""
    path = write(tmp_path / "大.csv", ledger_lines(150000))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XLA_CSV_WORKERS": "2",
           "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    args = json.dumps(dict(JOBS[1], path=path), ensure_ascii=False).encode("utf-8")
    proc = subprocess.Popen([sys.executable, "-X", "utf8", "-u", "calc_table.py"], cwd=os.path.join(ROOT, "tools"),
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.stdin.write(args)
    proc.stdin.close()
    kids = []
    limit = time.monotonic() + 30
    while time.monotonic() < limit and proc.poll() is None:
        kids = _children(proc.pid)
        if kids:
            time.sleep(0.3)         # the worker is grouping now
            kids = _children(proc.pid)
            break
        time.sleep(0.02)
    assert kids and proc.poll() is None, "no worker seen"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    limit = time.monotonic() + 10
    while time.monotonic() < limit and not all(_gone(k) for k in kids):
        time.sleep(0.05)
    left = [k for k in kids if not _gone(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    assert not left, "worker(s) outlived the killed tool"


def test_deadline_on_two_processes_gives_a_labelled_partial_answer(run, tmp_path):
    """When time runs out, the answer holds the rows before ``stopped_at`` as in one process (which
    part ran out, ours or the worker's, depends on the machine: either way it is labelled)."""
    path = write(tmp_path / "慢.csv", ledger_lines(60000))
    full = ok(run("calc_table", dict(JOBS[0], path=path), extra_env={"XLA_CSV_WORKERS": "1"}))
    part = ok(run("calc_table", dict(JOBS[0], path=path), extra_env={"XLA_CSV_WORKERS": "2", "XLA_DEADLINE": "0.01"}))
    if part["complete"]:
        assert part == full
    else:
        assert part["stopped_at"] > 1 and part["rows_used"] < full["rows_used"]
        assert "complete=false" in part["warnings"][0]


def plain_lines(n):
    """``ledger_lines`` without quoted cells, so the reader's quote-free block path (map/zip in C)
    and calc's gathered sums (``group_pass._TextSums``) do the work: blank lines, lines of bare
    delimiters, empty cells before the last filled one, trailing empty cells, 小计/合计 rows,
    text, signs and odd decimals in the summed column, dates that are not dates. Lines from n/8 to
    the last 300 have no empty cell but trailing ones and no blank line, so whole blocks there take
    the C path."""
    out = []
    for i, ln in enumerate(ledger_lines(n)):
        if '"' in ln or "第二行" in ln:
            continue
        if n // 8 < i < n - 300:
            if not ln:
                continue
            ln = ln.replace(",,,,,", ",-,-,-,-,").rstrip(",") + ("," if i % 3 else "")
        elif i % 37 == 9:
            ln = ln.replace(",", ",,", 1).rsplit(",", 1)[0]          # an empty cell in the middle
        elif i % 41 == 7:
            ln += ",,"                                                # trailing empty cells
        elif i % 59 == 11:
            ln = ",,,,,,"                                             # nothing but delimiters
        elif i % 67 == 13:
            parts = ln.split(",")
            if len(parts) > 5:
                parts[5] = ["", "+12.5", "-3", ".5", "7.", "1e3", "0012.340", "1.2.3"][i % 8]
                ln = ",".join(parts)
        out.append(ln)
    return out


PATH_ENVS = [{"XLA_CSV_WORKERS": "1", "XLA_CALC_TEXT_SUMS": "0"}, {"XLA_CSV_WORKERS": "1"},
             {"XLA_CSV_WORKERS": "2"}, {"XLA_CSV_WORKERS": "2", "XLA_CALC_TEXT_SUMS": "0"}]


@pytest.mark.parametrize("encoding,newline", [("utf-8-sig", "\r\n"), ("gb18030", "\n")])
def test_quote_free_paths_same_answer(run, tmp_path, encoding, newline):
    """Every path (one process or two, gathered sums or SumAgg.add per cell) gives the same JSON on
    a quote-free file, where the reader splits whole blocks in C; and so does the file with one
    quoted cell at its top (the csv module reads all of it)."""
    lines = plain_lines(20000)
    path = tmp_path / ("无引号_%s.csv" % encoding)
    path.write_bytes((newline.join(lines) + newline).encode(encoding))
    quoted = tmp_path / ("有引号_%s.csv" % encoding)
    cells = lines[2].split(",")
    cells[1] = '"%s"' % cells[1]                       # the same cell, quoted
    quoted.write_bytes((newline.join(lines[:2] + [",".join(cells)] + lines[3:]) + newline).encode(encoding))
    jobs = JOBS + [{"metrics": [{"column": "金额", "func": "sum"}]},
                   {"group_by": ["备注"], "metrics": [{"column": "金额", "func": "sum"}]},
                   {"group_by": [{"column": "日期", "date_bucket": "week"}], "metrics": [{"column": "金额"}]}]
    for job in jobs:
        answers = []
        for p in (path, quoted):
            for env in PATH_ENVS:
                res = run("calc_table", dict(job, path=str(p)), extra_env=env)
                assert res.stdout, (res.exit_code, res.stderr[-800:], p, env)
                answers.append(json.dumps(ok(res), ensure_ascii=False))
        for answer, (p, env) in zip(answers, [(p, env) for p in (path, quoted) for env in PATH_ENVS]):
            assert answer == answers[0], (job, p.name, env)
    first = json.loads(answers[0])
    assert first["skipped"] and first["rows_used"] > 5000
