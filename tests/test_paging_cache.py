"""read_spreadsheet's page cache (xlakit/tables/page_cache.py): the first call over a big sheet
writes its rows under ~/.xla/cache/pages, later pages come from there, and they are exactly the
pages a fresh read gives. Speed is measured in bench/bench_readers.py, not here."""
import csv
import datetime
import os
import time

import openpyxl
import pytest

from conftest import ok
from xlakit.tables import page_cache
from xlakit.tables.formats import SheetInfo

ROWS = 1200


@pytest.fixture
def ledger(tmp_path):
    path = str(tmp_path / "流水.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "流水"
    ws.append(["2024年流水"])
    ws.merge_cells("A1:D1")
    ws.append(["日期", "品名", "金额", "时间"])
    for i in range(ROWS):
        ws.append([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 300), "品名%d" % i, i * 1.25,
                   datetime.time(8, i % 60)])
        ws.cell(ws.max_row, 1).number_format = "yyyy-mm-dd"
    ws.append(["合计", None, "=SUM(C3:C%d)" % (ROWS + 2)])     # never computed: the note must survive
    wb.save(path)
    return path


def entries(home):
    folder = os.path.join(str(home), ".xla", "cache", "pages")
    return sorted(n for n in os.listdir(folder) if not n.startswith(".")) if os.path.isdir(folder) else []


def page(run, path, home, **args):
    data = ok(run("read_spreadsheet", dict(args, path=path), home=str(home)))
    return data


def strip(data):
    """The answer without what may differ in order between a cached and a fresh read."""
    return {k: v for k, v in data.items() if k != "warnings"}, sorted(data["warnings"])


@pytest.mark.quick
def test_pages_from_the_cache_equal_fresh_reads(run, ledger, home, tmp_path):
    first = page(run, ledger, home, limit=100)
    assert first["sheets"][0]["next_offset"] == 100
    assert len(entries(home)) == 2                      # <key>.rows and <key>.json
    for args in ({"offset": 600, "limit": 100}, {"offset": ROWS - 5, "limit": 100}, {"offset": 0, "limit": 50},
                 {"offset": 700, "limit": 20, "header_row": 2}, {"offset": 0, "limit": 5, "header_row": 2}):
        cached = page(run, ledger, home, **args)
        fresh_home = tmp_path / ("fresh%d" % len(os.listdir(str(tmp_path))))
        fresh_home.mkdir()
        fresh = page(run, ledger, fresh_home, **args)
        assert strip(cached) == strip(fresh), args
        assert cached["formula_without_value"]["count"] == 1
        assert any("C%d：=SUM" % (ROWS + 3) in w for w in cached["warnings"])
    last = page(run, ledger, home, offset=ROWS + 1, limit=100)["sheets"][0]
    assert last["row_numbers"] == [ROWS + 2, ROWS + 3] and last["next_offset"] is None
    assert last["merged"] == ["A1:D1"]


def test_a_saved_file_is_read_again_not_served_from_the_cache(run, ledger, home):
    page(run, ledger, home, limit=100)
    wb = openpyxl.load_workbook(ledger)
    wb.active["B700"] = "改过了"
    wb.save(ledger)
    os.utime(ledger, (time.time() + 5, time.time() + 5))
    data = page(run, ledger, home, offset=697, limit=3)
    assert data["sheets"][0]["row_numbers"][2] == 700
    assert data["sheets"][0]["rows"][2][1] == "改过了"


def test_small_sheets_and_csv(run, home, tmp_path):
    small = str(tmp_path / "小.csv")
    with open(small, "w", encoding="gbk", newline="") as fh:
        csv.writer(fh).writerows([["名称", "数量"]] + [["物品%d" % i, i] for i in range(10)])
    page(run, small, home)
    assert entries(home) == []                          # read in one page: nothing kept
    big = str(tmp_path / "大.csv")
    with open(big, "w", encoding="gbk", newline="") as fh:
        csv.writer(fh).writerows([["名称", "数量", "部门"]] + [["办公用品%d" % i, i, "销售部"] for i in range(3000)])
    first = page(run, big, home, limit=10)
    assert len(entries(home)) == 2
    again = page(run, big, home, offset=2990, limit=100)
    assert again["sheets"][0]["rows"][-1] == ["办公用品2999", "2999", "销售部"]
    assert again["sheets"][0]["total_rows"] == first["sheets"][0]["total_rows"] == 3001


def test_entries_are_bounded_in_age_and_size(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    src = tmp_path / "a.csv"
    src.write_text("x\n")
    info = SheetInfo("Sheet1", False, 0)
    rec = page_cache.Recorder(str(src), info)
    for i in range(page_cache.CHUNK_ROWS * 3 + 7):
        rec.add(i + 1, ["行%d" % i, i, 1.5, None, True, datetime.date(2024, 1, 2),
                        datetime.datetime(2024, 1, 2, 3, 4, 5, 6000), datetime.time(7, 8)])
    assert rec.finish([(1, 1, 2, 2)], ["说明"], None)
    entry = page_cache.lookup(str(src), info)
    assert entry.count == page_cache.CHUNK_ROWS * 3 + 7 and entry.merges == [(1, 1, 2, 2)]
    rows = list(entry.rows(page_cache.CHUNK_ROWS * 2 + 3))
    assert rows[0] == (page_cache.CHUNK_ROWS * 2 + 4, ["行%d" % (page_cache.CHUNK_ROWS * 2 + 3),
                                                     page_cache.CHUNK_ROWS * 2 + 3, 1.5, None, True,
                                                     datetime.date(2024, 1, 2),
                                                     datetime.datetime(2024, 1, 2, 3, 4, 5, 6000),
                                                     datetime.time(7, 8)])
    page_cache.prune(now=time.time() + page_cache.MAX_AGE + 10)
    assert page_cache.lookup(str(src), info) is None
    # an entry past the size cap is dropped while it is written
    monkeypatch.setattr(page_cache, "MAX_ENTRY", 1000)
    rec = page_cache.Recorder(str(src), info)
    for i in range(page_cache.CHUNK_ROWS * 2):
        rec.add(i + 1, ["x" * 20])
    assert not rec.finish([], [], None)
    assert page_cache.lookup(str(src), info) is None
    assert [n for n in os.listdir(page_cache.cache_dir())] == []
    # a cell the cache cannot hold (a value type no reader gives today) means no entry, not an error
    rec = page_cache.Recorder(str(src), info)
    rec.add(1, [object()])
    assert not rec.finish([], [], None)


def test_a_damaged_entry_is_dropped_and_the_file_read_afresh(run, ledger, home):
    page(run, ledger, home, limit=100)
    folder = os.path.join(str(home), ".xla", "cache", "pages")
    rows = [n for n in entries(home) if n.endswith(".rows")][0]
    size = os.path.getsize(os.path.join(folder, rows))
    with open(os.path.join(folder, rows), "wb") as fh:
        fh.write(b"{" * size)                          # same size, not JSON
    data = page(run, ledger, home, offset=700, limit=3)
    assert data["sheets"][0]["row_numbers"] == [701, 702, 703]
    assert data["sheets"][0]["rows"][0][1] == "品名698"
