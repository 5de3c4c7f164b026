"""read_spreadsheet, spawned as the assistant does: values as a person reads them, every format,
merged ranges and hidden sheets, header_row records, and the output cap (fewer rows + next_offset,
never a cut JSON) whatever limit says."""
import csv
import datetime
import os

import openpyxl
import pytest

from conftest import FIXTURES, ROOT, assert_contract, ok, fail
import tio_data


@pytest.fixture
def book(tmp_path):
    path = str(tmp_path / "台账.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "明细"
    ws.append(["2024年台账"])
    ws.merge_cells("A1:F1")
    ws.append(["日期", "时间", "金额", "身份证号", "编号", "已付"])
    ws.append([datetime.date(2024, 3, 5), datetime.datetime(2024, 3, 5, 14, 30), 12.0, "110101199003071234", "007", True])
    ws.append([datetime.datetime(2024, 3, 6), datetime.time(8, 5), 0.1 + 0.2, "6222020200112233445", "0100", False])
    ws.cell(3, 1).number_format = "yyyy-mm-dd"
    ws.cell(4, 1).number_format = "yyyy-mm-dd"
    second = wb.create_sheet("汇总")
    second.append(["部门", "合计"])
    second.append(["销售部", 100])
    hidden = wb.create_sheet("底稿")
    hidden.append(["不该读到"])
    hidden.sheet_state = "hidden"
    wb.save(path)
    return path


def test_values_merges_and_hidden_sheets(run, book):
    data = ok(run("read_spreadsheet", {"path": book}))
    assert data["format"] == "xlsx"
    assert data["sheet_names"] == ["明细", "汇总", "底稿"] and data["hidden_sheets"] == ["底稿"]
    assert [s["name"] for s in data["sheets"]] == ["明细", "汇总"]
    first = data["sheets"][0]
    assert first["rows"][2] == ["2024-03-05", "2024-03-05 14:30:00", 12, "110101199003071234", "007", True]
    assert first["rows"][3] == ["2024-03-06", "08:05:00", 0.3, "6222020200112233445", "0100", False]
    assert first["row_numbers"] == [1, 2, 3, 4] and first["total_rows"] == 4
    assert first["merged"] == ["A1:F1"]
    assert first["next_offset"] is None and first["truncated"] is False
    assert any("底稿" in w and "隐藏" in w for w in data["warnings"])
    hidden = ok(run("read_spreadsheet", {"path": book, "sheet": "底稿"}))
    assert hidden["sheets"][0]["rows"] == [["不该读到"]] and hidden["sheets"][0]["hidden"] is True


def test_header_row_gives_records(run, book):
    data = ok(run("read_spreadsheet", {"path": book, "sheet": "明细", "header_row": 2}))
    sheet = data["sheets"][0]
    assert sheet["columns"] == ["日期", "时间", "金额", "身份证号", "编号", "已付"]
    assert sheet["rows"][0] == {"日期": "2024-03-05", "时间": "2024-03-05 14:30:00", "金额": 12,
                                "身份证号": "110101199003071234", "编号": "007", "已付": True}
    assert sheet["row_numbers"] == [3, 4] and sheet["total_rows"] == 2


def test_paging_with_offset_and_limit(run, tmp_path):
    path = str(tmp_path / "long.csv")
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["序号", "名称"])
        for i in range(500):
            w.writerow([i + 1, "项目%d" % (i + 1)])
    first = ok(run("read_spreadsheet", {"path": path}))["sheets"][0]
    assert first["total_rows"] == 501 and first["returned"] == 200
    assert first["next_offset"] == 200 and first["truncated"] is True
    assert first["rows"][1] == ["1", "项目1"]                       # csv text stays text
    last = ok(run("read_spreadsheet", {"path": path, "offset": 400, "limit": 200}))["sheets"][0]
    assert last["returned"] == 101 and last["next_offset"] is None and last["truncated"] is False
    assert last["row_numbers"][0] == 401 and last["rows"][-1] == ["500", "项目500"]
    records = ok(run("read_spreadsheet", {"path": path, "header_row": 1, "offset": 10, "limit": 5}))["sheets"][0]
    assert records["rows"][0] == {"序号": "11", "名称": "项目11"} and records["total_rows"] == 500
    named = ok(run("read_spreadsheet", {"path": path, "sheet": "随便", "limit": 1}))     # csv: sheet ignored
    assert named["sheets"][0]["rows"] == [["序号", "名称"]]
    past = ok(run("read_spreadsheet", {"path": path, "offset": 900}))
    assert past["sheets"][0]["returned"] == 0 and any("offset=900" in w for w in past["warnings"])


def test_limit_2000_with_big_cells_stays_under_the_cap_and_pages_through(run, tmp_path):
    path = str(tmp_path / "big.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    for i in range(2000):
        if i % 10 == 0:
            ws.append(["第%d行" % (i + 1), "说明" * 150, "备注" * 300])     # 300 and 600 characters
        else:
            ws.append(["第%d行" % (i + 1), i, "短"])
    wb.save(path)
    seen, offset, pages = [], 0, 0
    while offset is not None:
        res = run("read_spreadsheet", {"path": path, "limit": 2000, "offset": offset})
        data = ok(res)
        assert len(res.stdout) <= 20000
        sheet = data["sheets"][0]
        assert 0 < sheet["returned"] < 2000
        assert sheet["rows"][0][0] == "第%d行" % (offset + 1)
        long_rows = [r for r in sheet["rows"] if len(r[2]) > 1]
        assert long_rows and all(r[2] == "备注" * 250 + "…" for r in long_rows)   # cut at 500 characters
        assert any("超过 500 字" in w for w in data["warnings"])
        seen += sheet["row_numbers"]
        offset = sheet["next_offset"]
        pages += 1
        assert pages < 200
    assert seen == list(range(1, 2001))


def test_a_single_giant_cell_or_row_is_shortened_not_dropped(run, tmp_path):
    path = str(tmp_path / "giant.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["长" * 30000])
    ws.append(["列%d" % i for i in range(300)])
    ws.append(["内容" * 200 for _ in range(300)])
    ws.append(["内容" * 200 for _ in range(2000)])
    wb.save(path)
    res = run("read_spreadsheet", {"path": path, "limit": 2000})
    data = ok(res)
    assert len(res.stdout) <= 20000
    sheet = data["sheets"][0]
    assert sheet["rows"][0] == ["长" * 500 + "…"]
    assert sheet["total_rows"] == 4 and sheet["next_offset"] is not None
    res = run("read_spreadsheet", {"path": path, "offset": 2, "limit": 1})
    data = ok(res)
    assert len(res.stdout) <= 20000
    row = data["sheets"][0]["rows"][0]
    assert len(row) == 300 and all(c.startswith("内容") and c.endswith("…") for c in row)
    assert any("有一行内容太长" in w for w in data["warnings"])
    assert data["sheets"][0]["returned"] == 1 and data["sheets"][0]["next_offset"] == 3
    res = run("read_spreadsheet", {"path": path, "offset": 3})
    data = ok(res)
    assert len(res.stdout) <= 20000
    row = data["sheets"][0]["rows"][0]
    assert row[0].startswith("内容") and row[-1].startswith("…（本行共 2000 列")
    assert data["sheets"][0]["returned"] == 1 and data["sheets"][0]["next_offset"] is None


def test_all_sheets_share_the_budget_first_sheet_first(run, tmp_path):
    path = str(tmp_path / "three.xlsx")
    wb = openpyxl.Workbook()
    for n, name in enumerate(["一月", "二月", "三月"]):
        ws = wb.active if n == 0 else wb.create_sheet(name)
        ws.title = name
        for i in range(300):
            ws.append([name, i, "流水说明文字" * 10])
    wb.save(path)
    res = run("read_spreadsheet", {"path": path, "limit": 300})
    data = ok(res)
    assert len(res.stdout) <= 20000
    got = [s["returned"] for s in data["sheets"]]
    assert all(n > 0 for n in got) and got[0] > got[1] >= got[2]
    for s in data["sheets"]:
        assert s["next_offset"] == s["returned"] and s["truncated"] is True
    assert any("少返回了一些行" in w for w in data["warnings"])


def test_other_formats(run, tmp_path):
    rows = tio_data.messy_rows()[:20]
    xls, html = str(tmp_path / "a.xls"), str(tmp_path / "b.xls")
    gbk, bom = str(tmp_path / "c.csv"), str(tmp_path / "d.csv")
    tio_data.write_xls(xls, rows)
    tio_data.write_html_xls(html, rows)
    tio_data.write_csv(gbk, rows, "gbk")
    tio_data.write_csv(bom, rows, "utf-8-sig")
    a = ok(run("read_spreadsheet", {"path": xls}))
    assert a["format"] == "xls"
    sheet = a["sheets"][0]
    assert sheet["rows"][0] == ["某某科技有限公司 2024 年上半年费用明细"]
    assert sheet["rows"][5][:5] == [1, rows[0]["date"].isoformat(), rows[0]["dept_cell"], rows[0]["person"], rows[0]["id"]]
    assert "F5:G5" in sheet["merged"]
    b = ok(run("read_spreadsheet", {"path": html}))
    assert b["format"] == "html" and "F5:G5" in b["sheets"][0]["merged"]
    assert b["sheets"][0]["rows"][5][4] == rows[0]["id"]
    for path in (gbk, bom):
        c = ok(run("read_spreadsheet", {"path": path, "header_row": 5}))
        first = c["sheets"][0]["rows"][0]
        assert first["部门"] == rows[0]["dept_cell"].strip() or first["部门"] == rows[0]["dept_cell"]
        assert first["身份证号"] == rows[0]["id"] and first["订单号"] == rows[0]["order"]
    lo = ok(run("read_spreadsheet", {"path": os.path.join(FIXTURES, "tio_lo_ledger.xlsx"), "sheet": "门店流水",
                                     "header_row": 4}))
    sheet = lo["sheets"][0]
    assert sheet["header_rows"] == [4, 5]
    assert sheet["rows"][0] == {"区域": "华东", "门店": "上海1号店", "日期": "2024-01-05", "销售-数量": 3,
                                "销售-单价": 19.9, "销售-金额": 59.7}
    assert sheet["rows"][1]["区域"] == "华东"                            # merged block filled for records


def test_errors(run, book, tmp_path):
    err = fail(run("read_spreadsheet", {"path": book, "sheet": "不存在"}))
    assert "不存在" in err and "明细" in err and "汇总" in err
    err = fail(run("read_spreadsheet", {"path": os.path.join(FIXTURES, "tio_encrypted.xlsx")}))
    assert "加密" in err
    junk = tmp_path / "坏.xlsx"
    junk.write_bytes(bytes(range(256)) * 40)
    err = fail(run("read_spreadsheet", {"path": str(junk)}))
    assert "表格" in err or "损坏" in err
    err = fail(run("read_spreadsheet", {"path": book, "sheet": "明细", "header_row": 50}))
    assert "第 50 行" in err


def test_formulas_without_cached_values_are_reported(run, tmp_path):
    path = str(tmp_path / "f.xlsx")
    wb = openpyxl.Workbook()
    wb.active.append(["金额", "两倍"])
    wb.active.append([5, "=A2*2"])
    wb.save(path)                                   # openpyxl writes formulas without cached values
    data = ok(run("read_spreadsheet", {"path": path}))
    assert data["sheets"][0]["rows"] == [["金额", "两倍"], [5]]
    assert any("公式" in w and "缓存" in w for w in data["warnings"])
    assert data["formula_without_value"]["count"] == 1
    assert data["formula_without_value"]["example"] == {"sheet": "Sheet", "cell": "B2", "formula": "=A2*2"}


UNCACHED_NOTE = "1 个公式单元格没有缓存值（例如工作表「Sheet」的 C3：=SUM(C1:C2)）"


@pytest.fixture
def uncached(tmp_path):
    """A ledger whose totals formula was never computed (openpyxl writes no cached values)."""
    path = str(tmp_path / "台账.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["品名", "类别", "金额"])
    ws.append(["苹果", "水果", 5])
    ws.append(["合计", None, "=SUM(C1:C2)"])
    wb.save(path)
    return path


def test_probe_table_reports_formulas_without_cached_values(run, uncached):
    data = ok(run("probe_table", {"path": uncached}))
    assert data["formula_without_value"]["count"] == 1
    assert any(UNCACHED_NOTE in w for w in data["warnings"]), data["warnings"]


@pytest.mark.parametrize("tool, args", [
    ("calc_table", {"metrics": [{"column": "金额", "func": "sum"}]}),
    ("filter_table", {"where": [{"column": "金额", "op": ">", "value": 0}]}),
    ("clean_table", {}),
    ("dedupe_table", {}),
    ("pivot_table", {"row": {"column": "品名"}, "col": {"column": "类别"}, "value": "金额"}),
])
def test_derived_tables_pass_the_note_on(run, uncached, tool, args):
    data = ok(run(tool, dict(args, path=uncached)))
    assert any(UNCACHED_NOTE in w for w in data["warnings"]), (tool, data.get("warnings"))


def test_lookup_table_passes_the_note_on(run, uncached, tmp_path):
    right = str(tmp_path / "价目.xlsx")
    wb = openpyxl.Workbook()
    wb.active.append(["品名", "单价"])
    wb.active.append(["苹果", 3])
    wb.save(right)
    data = ok(run("lookup_table", {"left_path": uncached, "right_path": right, "left_key": "品名"}))
    assert any(UNCACHED_NOTE in w for w in data["warnings"]), data.get("warnings")


def test_too_large_limit_and_negative_offset_are_clamped_not_refused(run):
    sample = os.path.join(ROOT, "examples", "示例台账.xlsx")
    data = ok(run("read_spreadsheet", {"path": sample, "limit": 5000, "offset": -3}))
    page = data["sheets"][0]
    assert page["offset"] == 0 and page["returned"] == page["total_rows"] == 44   # row 3 is blank
    assert page["next_offset"] is None and page["truncated"] is False
    assert any("limit=5000 超过上限 2000" in w for w in data["warnings"])   # rt.clamp's note
