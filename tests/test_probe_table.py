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
