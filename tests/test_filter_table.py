"""filter_table, spawned as the assistant does, on the 1,000-row messy export (title rows, two-row
merged header, money text, merged cells, a 合计 row) in xlsx / xls / fake-html xls / GBK csv,
checked against the rows the generator wrote (selected here independently with Decimal); plus the
output file read back with openpyxl/csv, faithful cells, the empty result with suggestions, limit,
columns, paths and the Chinese errors."""
import csv
import datetime
import os
from decimal import Decimal


import openpyxl
import pytest

from conftest import assert_contract, ok, fail
import tio_data



@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy_filter")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows)
    return rows, paths


def expected_big(rows, dept="销售部", floor=Decimal(1000)):
    """Rows of ``dept`` whose amount parses and is above ``floor`` (the generator's intent)."""
    return [r for r in rows if r["dept"] == dept and isinstance(r["amount"], Decimal) and r["amount"] > floor]


@pytest.mark.parametrize("kind", ["xlsx", "xls", "html", "gbk"])
def test_filter_matches_independent_selection(run, messy, kind, home):
    rows, paths = messy
    want = expected_big(rows)
    result = run("filter_table", {"path": paths[kind], "where": [
        {"column": "部门", "op": "eq", "value": "销售部"}, {"column": "金额", "op": "gt", "value": 1000}]})
    data = ok(result)
    assert_contract(result)
    assert data["match_count"] == data["written"] == len(want) > 0
    assert data["complete"] is True and data["rows_scanned"] == tio_data.N_ROWS
    if kind in ("xlsx", "xls"):                      # the text exports lay rows out a little differently
        assert data["preview_rows"] == [r["row"] for r in want[:5]]
    assert any("合计" in w for w in data["warnings"])                 # the 合计 row was left out
    out = data["path"]
    assert out.startswith(str(home)) and os.path.basename(out).startswith("费用明细")
    assert "_筛选" in os.path.basename(out)
    if kind == "gbk":
        assert out.endswith(".csv")
        with open(out, encoding="utf-8-sig", newline="") as fh:
            got = without_notes(csv.reader(fh))
        assert got[0] == tio_data.FLAT_HEADER
        assert [r[4] for r in got[1:]] == [r["id"] for r in want]      # ID numbers exactly as text
        return
    wb = openpyxl.load_workbook(out)
    ws = wb["筛选结果"]
    full = list(ws.iter_rows(values_only=True))
    got = without_notes(full)
    assert list(got[0]) == tio_data.FLAT_HEADER
    assert "无法比较" in full[-1][0]             # the 待定 amounts left out: the sheet says so
    assert len(got) == len(want) + 1
    ids = [r[4] for r in got[1:]]
    assert ids == [r["id"] for r in want] and all(isinstance(i, str) for i in ids)
    seqs = [r[0] for r in got[1:]]
    assert seqs == [r["seq"] for r in want]                             # numbers stay (or become) numbers
    if kind in ("xlsx", "xls"):
        dates = [r[1] for r in got[1:] if isinstance(r[1], datetime.datetime)]
        assert dates, "date cells stay dates"


def without_notes(rows):
    """A derived sheet's rows without its trailing ``注：`` rows (what its numbers left out, see
    write.write_derived), which the tests check on their own."""
    rows = list(rows)
    while rows and isinstance(rows[-1][0], str) and rows[-1][0].startswith("注：") and \
            not any(v not in (None, "") for v in rows[-1][1:]):
        rows.pop()
    return rows


def test_columns_limit_and_no_totals(run, messy, tmp_path):
    rows, paths = messy
    want = [r for r in rows if isinstance(r["amount"], Decimal) and r["amount"] > 0]
    out = tmp_path / "大额.xlsx"
    data = ok(run("filter_table", {"path": paths["xlsx"], "where": [{"column": "金额", "op": "gt", "value": 0}],
                                   "columns": ["金额", "B", "部门"], "limit": 10, "out_path": str(out),
                                   "out_sheet": "前十"}))
    assert data["path"] == str(out) and data["out_sheet"] == "前十"
    assert data["match_count"] == len(want) and data["written"] == 10
    assert data["columns"] == ["金额", "日期", "部门"]
    assert any("只写出了前 10 行" in w for w in data["warnings"])
    got = without_notes(openpyxl.load_workbook(str(out))["前十"].iter_rows(values_only=True))
    assert got[0] == ("金额", "日期", "部门") and len(got) == 11
    assert [r[2].strip() for r in got[1:]] == [r["dept"] for r in want[:10]]


def test_nothing_matched_suggests_the_closest_values(run, messy, home):
    _rows, paths = messy
    data = ok(run("filter_table", {"path": paths["xlsx"], "where": [{"column": "部门", "op": "eq", "value": "销售bu"}]}))
    assert data["match_count"] == 0 and data["written"] == 0 and data["path"] is None
    assert any(s["column"] == "部门" and "销售部" in s["closest"] for s in data["suggestions"])
    assert any("没有符合条件的行" in w for w in data["warnings"])
    assert not os.listdir(os.path.join(str(home), ".xla", "workspace")) if os.path.isdir(
        os.path.join(str(home), ".xla", "workspace")) else True


def test_default_names_never_overwrite(run, messy):
    _rows, paths = messy
    args = {"path": paths["xls"], "where": [{"column": "部门", "op": "eq", "value": "财务部"}]}
    first = ok(run("filter_table", args))["path"]
    second = ok(run("filter_table", args))["path"]
    assert first != second and os.path.isfile(first) and os.path.isfile(second)
    assert second.endswith("_筛选_2.xlsx")


def test_text_operators_on_a_small_csv(run, tmp_path):
    src = tmp_path / "名单.csv"
    src.write_text("姓名,城市,编号,金额\n张三,北京,007,1234.5\n李四,上海 ,0012,\"￥2,000\"\n王五,北京,110101199001011234,\n",
                   encoding="utf-8")
    data = ok(run("filter_table", {"path": str(src), "where": [{"column": "城市", "op": "in", "value": ["上海", "深圳"]}],
                                   "out_path": str(tmp_path / "上海.xlsx")}))
    assert data["written"] == 1
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got[1] == ("李四", "上海 ", "0012", 2000)          # codes as written, money as a number (issue 20)
    data = ok(run("filter_table", {"path": str(src), "where": [{"column": "编号", "op": "starts_with", "value": "0"}],
                                   "out_path": str(tmp_path / "零.xlsx")}))
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got[1] == ("张三", "北京", "007", 1234.5)                     # plain number text becomes a number
    data = ok(run("filter_table", {"path": str(src), "where": [{"column": "金额", "op": "empty"}],
                                   "out_path": str(tmp_path / "空.csv")}))
    assert data["written"] == 1 and data["format"] == "csv"


def test_errors_are_chinese_and_actionable(run, messy, tmp_path):
    _rows, paths = messy
    assert "至少要有一个条件" in fail(run("filter_table", {"path": paths["xlsx"], "where": []}))
    msg = fail(run("filter_table", {"path": paths["xlsx"], "where": [{"column": "不存在", "op": "eq", "value": 1}]}))
    assert "找不到列" in msg and "部门" in msg
    msg = fail(run("filter_table", {"path": paths["xlsx"], "where": [{"column": "金额", "op": "大约", "value": 1}]}))
    assert "不支持" in msg
    msg = fail(run("filter_table", {"path": paths["xlsx"], "out_path": paths["xlsx"],
                                    "where": [{"column": "金额", "op": "gt", "value": 1}]}))
    assert "不能和源文件相同" in msg
    msg = fail(run("filter_table", {"path": paths["xlsx"], "out_path": str(tmp_path / "x.pdf"),
                                    "where": [{"column": "金额", "op": "gt", "value": 1}]}))
    assert ".xlsx" in msg
    assert "找不到" in fail(run("filter_table", {"path": str(tmp_path / "没有.xlsx"),
                                                "where": [{"column": "A", "op": "eq", "value": 1}]}))
