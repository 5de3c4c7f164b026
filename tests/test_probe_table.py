"""probe_table, spawned as the assistant does: header found under title rows and explained,
merged header combined, per-column statistics checked against counts made here, totals rows,
sampling on big sheets, the output cap on wide sheets, and a next_call that calc_table accepts."""
import csv
import os
from collections import Counter

import openpyxl
import pytest

from conftest import FIXTURES, assert_contract, ok
import table_io
import tio_data


@pytest.fixture(scope="module")
def messy_xlsx(tmp_path_factory):
    rows = tio_data.messy_rows()
    path = str(tmp_path_factory.mktemp("probe") / "费用明细.xlsx")
    tio_data.write_xlsx(path, rows)
    return rows, path


def test_messy_export_structure(run, messy_xlsx):
    rows, path = messy_xlsx
    data = ok(run("probe_table", {"path": path, "sample": 3}))
    assert data["header_row"] == 5 and data["header_rows"] == [5, 6]
    assert "第 1、2、3 行" in data["header_reason"] and "两行合并表头" in data["header_reason"]
    assert data["combined_header"] == ["2024年 + 1月 → 2024年-1月", "2024年 + 2月 → 2024年-2月"]
    assert data["data_rows"] == 1000 and data["rows_exact"] is True and data["sampled_rows"] == 1000
    assert data["column_count"] == 10 and data["totals_rows"] == [1007]
    assert data["merged_in_data"] == ["C100:C102"]
    cols = {c["name"]: c for c in data["columns"]}
    assert [c["name"] for c in data["columns"]] == tio_data.FLAT_HEADER
    assert [c["letter"] for c in data["columns"]] == list("ABCDEFGHIJ")

    amount = cols["金额"]
    kinds = Counter(table_io.number_kind(r["amount_cell"]) for r in rows)
    non_empty = 1000 - kinds["empty"]
    assert amount["type"] == "number" and amount["non_empty"] == non_empty and amount["empty"] == kinds["empty"]
    assert amount["money_text"] == kinds["money_text"]
    parsed = kinds["number"] + kinds["money_text"] + kinds["plain_text"]
    assert amount["numeric_rate"] == round(parsed / float(non_empty), 3)

    date = cols["日期"]
    assert date["type"] == "date"
    assert date["date_formats"] == {"日期单元格": 250, "YYYY/M/D": 250, "YYYY年M月D日": 250, "YYYY-MM-DD": 250}
    assert date["min"] == min(r["date"] for r in rows).isoformat()
    assert cols["身份证号"]["type"] == "text" and cols["身份证号"]["id_text"] == 1000
    assert cols["部门"]["distinct"] == 5 and cols["部门"]["type"] == "text"
    assert cols["备注"]["non_empty"] == 20 and cols["备注"]["empty"] == 980

    assert data["preview_rows"] == [7, 8, 9] and len(data["preview"]) == 3
    assert data["preview"][0][4] == rows[0]["id"]
    assert any("第 1007 行是合计/小计行" in w for w in data["warnings"])

    call = data["next_call"]
    assert call["tool"] == "calc_table"
    assert call["args"]["group_by"] == ["部门"]
    assert call["args"]["metrics"][0]["column"] == "金额"
    follow = ok(run("calc_table", call["args"]))
    assert follow["group_count"] == 5 and follow["rows_used"] == 1000


def test_big_sheet_is_sampled_but_counted(run, tmp_path):
    path = str(tmp_path / "big.csv")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["日期", "类别", "金额"])
        for i in range(12000):
            w.writerow(["2024-%02d-%02d" % (i % 12 + 1, i % 28 + 1), "类%d" % (i % 4), "%d.5" % i])
    data = ok(run("probe_table", {"path": path}))
    assert data["data_rows"] == 12000 and data["sampled_rows"] == 5000
    cols = {c["name"]: c for c in data["columns"]}
    assert cols["金额"]["type"] == "number" and cols["金额"]["number_text"] == 5000
    assert cols["日期"]["date_formats"] == {"YYYY-MM-DD": 5000}
    assert any("前 5000 行" in w for w in data["warnings"])
    assert data["next_call"]["args"]["group_by"] == ["类别"]


def test_wide_sheet_stays_under_the_cap(run, tmp_path):
    path = str(tmp_path / "wide.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["指标说明字段第%03d列" % i for i in range(400)])
    for r in range(30):
        ws.append(["文字内容%d-%d" % (r, i) if i % 2 else r * i + 0.5 for i in range(400)])
    wb.save(path)
    res = run("probe_table", {"path": path, "sample": 20})
    data = ok(res)
    assert len(res.stdout) <= 20000
    assert data["column_count"] == 400 and 0 < len(data["columns"]) < 400
    assert any("只列出前" in w for w in data["warnings"])


def test_header_row_parameter_and_no_header(run, tmp_path):
    path = str(tmp_path / "plain.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    for r in range(5):
        ws.append([r, r * 1.5, "2024-01-0%d" % (r + 1)])
    wb.save(path)
    auto = ok(run("probe_table", {"path": path}))
    assert auto["header_row"] is None and [c["name"] for c in auto["columns"]] == ["列A", "列B", "列C"]
    assert auto["data_rows"] == 5
    forced = ok(run("probe_table", {"path": path, "header_row": 2}))
    assert forced["header_row"] == 2 and forced["data_rows"] == 3
    assert "header_row=2" in forced["header_reason"] and forced["next_call"]["args"]["header_row"] == 2


def test_libreoffice_fixture_and_errors(run):
    data = ok(run("probe_table", {"path": os.path.join(FIXTURES, "tio_lo_ledger.xlsx")}))
    assert data["hidden_sheets"] == ["备份"] and data["header_rows"] == [4, 5]
    cols = {c["name"]: c for c in data["columns"]}
    assert cols["销售-金额"]["type"] == "number" and cols["销售-金额"]["max"] == 2469
    assert cols["区域"]["non_empty"] == 8                    # merged 区域 filled down
    assert data["next_call"]["args"]["metrics"][0]["column"] == "销售-金额"
    res = run("probe_table", {"path": os.path.join(FIXTURES, "tio_encrypted.xlsx")})
    data = assert_contract(res)
    assert not data["ok"] and "加密" in data["error"]


def _sheet(path, title, width, merges, cells, data):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = title
    ws.merge_cells("A1:%s1" % "ABCDEFGH"[width - 1])
    for ref, value in cells.items():
        ws[ref] = value
    for ref in merges:
        ws.merge_cells(ref)
    for row in data:
        ws.append(row)
    wb.save(str(path))
    return str(path)


def test_three_row_headers_like_real_chinese_sheets(run, tmp_path):
    """Issue 35: three-row headers were cut to two. A title row, then 姓名/部门 merged down three
    rows, 2024年 over 上半年/下半年 over the quarters; and a 金额 group over 预算/实际 over a unit
    row (万元). Every column gets its full name, the data starts under the third row."""
    path = _sheet(tmp_path / "业绩.xlsx", "2024年销售业绩表", 6, ["A2:A4", "B2:B4", "C2:F2", "C3:D3", "E3:F3"],
                  {"A2": "姓名", "B2": "部门", "C2": "2024年", "C3": "上半年", "E3": "下半年", "C4": "一季度",
                   "D4": "二季度", "E4": "三季度", "F4": "四季度"},
                  [["张三", "销售一部", 100, 200, 300, 400], ["李四", "销售二部", 110, 210, 310, 410]])
    data = ok(run("probe_table", {"path": path}))
    assert data["header_rows"] == [2, 3, 4] and data["data_rows"] == 2
    assert [c["name"] for c in data["columns"]] == ["姓名", "部门", "2024年-上半年-一季度", "2024年-上半年-二季度",
                                                    "2024年-下半年-三季度", "2024年-下半年-四季度"]
    assert "三行合并表头" in data["header_reason"]
    total = ok(run("calc_table", {"path": path, "metrics": [{"column": "2024年-下半年-四季度", "func": "sum"}]}))
    assert total["groups"][0]["2024年-下半年-四季度_求和"] == 810
    path = _sheet(tmp_path / "报销.xlsx", "报销台账", 4, ["A2:A4", "B2:C2", "D2:D4"],
                  {"A2": "项目", "B2": "金额", "D2": "备注", "B3": "预算", "C3": "实际", "B4": "万元", "C4": "万元"},
                  [["差旅", 10.5, 9.8, "无"], ["办公", 3, 2.5, "无"]])
    data = ok(run("probe_table", {"path": path}))
    assert data["header_rows"] == [2, 3, 4] and data["data_rows"] == 2
    assert [c["name"] for c in data["columns"]] == ["项目", "金额-预算-万元", "金额-实际-万元", "备注"]


def test_template_first_data_row_is_not_header(run, tmp_path):
    """A template merged 序号 down into the first data row (A2:A3): that row is data, not a
    second header row (it used to become 姓名-张三, 性别-男...)."""
    path = _sheet(tmp_path / "登记.xlsx", "员工登记表", 4, ["A2:A3"],
                  {"A2": "序号", "B2": "姓名", "C2": "性别", "D2": "部门", "B3": "张三", "C3": "男", "D3": "销售部"},
                  [[2, "李四", "女", "财务部"], [3, "王五", "男", "人事部"]])
    data = ok(run("probe_table", {"path": path}))
    assert data["header_row"] == 2 and data.get("header_rows") in (None, [2])
    assert [c["name"] for c in data["columns"]] == ["序号", "姓名", "性别", "部门"] and data["data_rows"] == 3
