"""lookup_table, spawned as the assistant does: merge (VLOOKUP) and reconcile on real files (the
1,000-row messy export from part 1 in xlsx / xls / fake-html xls / GBK csv as the left table, right
tables written by openpyxl, xlwt and the csv module with the key variants people really have:
trailing and full-width spaces, zero-width characters, NBSP, full-width digits, 1001 vs 1001.0
vs "1001", 18- and 20-digit IDs as text). Every expectation is computed here, independently, from
the generator's intent (Decimal amounts, the keys it meant); the output files are read back with
openpyxl / csv. Plus the key rules as pure functions, duplicates on the right, default names and
the Chinese errors."""
import csv
import datetime
import os
from decimal import Decimal

import openpyxl
import pytest

from conftest import fail, ok
import tio_data


FW = str.maketrans("0123456789", "０１２３４５６７８９")


def messy_key(text, i):
    """The same key as another system exports it (what a person still calls the same key)."""
    kind = i % 5
    if kind == 1:
        return text + "\u3000"                  # full-width space
    if kind == 2:
        return "\u200b" + text + "\u00a0"       # zero-width space + NBSP
    if kind == 3:
        return text.translate(FW)               # typed with a Chinese input method
    if kind == 4:
        return "  " + text + " "
    return text


# ---------------------------------------------------------------------------------------------
# The key rules themselves (pure functions)

def test_key_rules():
    from xlakit.tables.keys import KeyMaker, norm_key
    same = [1001, 1001.0, "1001", " 1001 ", "1001.0", "１００１", "\u200b1001\u00a0", "1001\u3000", "+1001"]
    assert {norm_key(v) for v in same} == {"1001"}
    assert norm_key("007") == "007" and norm_key("007") != norm_key(7)
    assert norm_key("110101199001011234") == "110101199001011234"
    a, b = "12345678901234567890", "12345678901234567891"           # equal as floats, different as IDs
    assert float(a) == float(b) and norm_key(a) != norm_key(b)
    assert norm_key("张三 ") == norm_key("张三") == norm_key("\u3000张三")
    assert norm_key("AB01") == norm_key("ａｂ０１") and norm_key("AB01", case_sensitive=True) != norm_key("ab01", True)
    assert norm_key(12.5) == norm_key("12.50") == "12.5"
    assert norm_key(datetime.date(2024, 3, 1)) == norm_key("2024/3/1") == norm_key(datetime.datetime(2024, 3, 1))
    assert norm_key(None) is None and norm_key(" \u3000\u200b") is None
    assert norm_key("张  三") == norm_key("张 三")
    maker = KeyMaker()
    maker.key(1.1010119900101e17)
    assert maker.lossy == 1 and "15 位" in maker.lossy_note("主键列")


# ---------------------------------------------------------------------------------------------
# Files

@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy_lookup")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows)
    return rows, paths, folder


def bonus(i):
    return Decimal(i * 7 % 1000) + Decimal("0.25")


@pytest.fixture(scope="module")
def roster(messy):
    """A right table keyed by 身份证号 (every 3rd person of the ledger, the key messed up one of five
    ways), one duplicated ID (second row must not be used), and two people not in the ledger."""
    rows, _paths, folder = messy
    path = str(folder / "花名册.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "花名册"
    ws.append(["身份证号", "工号", "奖金"])
    want = {}
    for i, r in enumerate(rows):
        if i % 3:
            continue
        ws.append([messy_key(r["id"], i // 3), "E%04d" % i, float(bonus(i))])
        want[r["id"]] = ("E%04d" % i, bonus(i))
    dup_id = rows[0]["id"]
    ws.append([dup_id + " ", "重复行", 1.0])
    ws.append(["110101209912310000", "E9998", 5.0])
    ws.append(["110101209912310001", "E9999", 6.0])
    wb.save(path)
    return path, want, dup_id


@pytest.mark.parametrize("kind", ["xlsx", "xls", "html", "gbk"])
def test_merge_brings_the_right_columns(run, messy, roster, kind, home):
    rows, paths, _folder = messy
    right, want, dup_id = roster
    data = ok(run("lookup_table", {"left_path": paths[kind], "right_path": right, "left_key": "身份证号",
                                   "bring": ["工号", "奖金"]}))
    assert data["mode"] == "merge" and data["complete"] is True
    assert data["rows_written"] == tio_data.N_ROWS
    assert data["matched"] == len(want) and data["unmatched_left"] == tio_data.N_ROWS - len(want)
    assert data["unmatched_right"] == 2
    assert sorted(e["key"] for e in data["unmatched_right_examples"]) == ["110101209912310000", "110101209912310001"]
    assert data["right_duplicate_keys"] == 1
    dup = data["right_duplicates"][0]
    assert dup["count"] == 2 and dup["used_row"] == 2 and dup["rows"][0] == 2
    assert data["columns"] == tio_data.FLAT_HEADER + ["工号", "奖金"]
    out = data["path"]
    assert out.startswith(str(home)) and "_关联" in os.path.basename(out)
    if kind == "gbk":
        assert out.endswith(".csv")
        with open(out, encoding="utf-8-sig", newline="") as fh:
            got = [tuple(r) for r in csv.reader(fh)][1:]
        got = [(r[4], r[10] or None, Decimal(r[11]) if r[11] else None) for r in got]
    else:
        ws = openpyxl.load_workbook(out)["关联结果"]
        got = [(r[4], r[10], Decimal(repr(r[11])) if r[11] is not None else None)
               for r in ws.iter_rows(min_row=2, values_only=True)]
    expected = []
    for r in rows:
        hit = want.get(r["id"])
        expected.append((r["id"], hit[0] if hit else None, hit[1] if hit else None))
    assert got == expected                                  # every row, in order, IDs exactly as text
    assert all(isinstance(g[0], str) for g in got)


def test_long_ids_are_text_not_floats(run, tmp_path):
    """20-digit order numbers that are equal as floats must not match each other."""
    left = tmp_path / "订单.csv"
    right = tmp_path / "物流.csv"
    a, b, c = "12345678901234567890", "12345678901234567891", "00012345678901234567"
    left.write_text("订单号,商品\n%s,苹果\n%s,香蕉\n%s,梨\n" % (a, b, c), encoding="utf-8")
    right.write_text("订单号,快递单号\n%s,SF0001\n%s ,YT0003\n" % (b, c), encoding="utf-8")
    data = ok(run("lookup_table", {"left_path": str(left), "right_path": str(right), "left_key": "订单号",
                                   "out_path": str(tmp_path / "结果.csv")}))
    assert data["matched"] == 2 and data["unmatched_left"] == 1
    assert data["unmatched_left_examples"] == [{"key": a, "row": 2}]
    with open(data["path"], encoding="utf-8-sig", newline="") as fh:
        got = list(csv.reader(fh))
    assert got == [["订单号", "商品", "快递单号"], [a, "苹果", ""], [b, "香蕉", "SF0001"], [c, "梨", "YT0003"]]


def test_numbers_and_number_text_match(run, tmp_path):
    """Keys as xls numbers (xlwt stores floats) on the left, as text in a csv on the right."""
    import xlwt
    left = str(tmp_path / "库存.xls")
    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("库存")
    for r, line in enumerate([["编码", "数量"], [1001, 5], [1002, 6], [1003.5, 7], [7, 8], [1004, 9]]):
        for c, v in enumerate(line):
            ws.write(r, c, v)
    wb.save(left)
    right = tmp_path / "价格.csv"
    right.write_text("编码,单价\n\"1001\",10\n 1002.0 ,20\n１００３.５０,30\n007,40\n", encoding="utf-8")
    data = ok(run("lookup_table", {"left_path": left, "right_path": str(right), "left_key": "编码",
                                   "bring": ["单价"], "out_path": str(tmp_path / "带价格.xlsx")}))
    assert data["matched"] == 3 and data["unmatched_left"] == 2 and data["unmatched_right"] == 1
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got[0] == ("编码", "数量", "单价")
    assert [r[2] for r in got[1:]] == [10, 20, 30, None, None]       # csv number text became numbers
    assert data["near_misses"][0]["left"] == "7" and data["near_misses"][0]["right"] == "007"
    assert any("前导零" in w for w in data["warnings"])


def expected_reconcile(rows):
    """The bank side of the ledger, built here: (csv lines, expected statuses, totals)."""
    lines = ["交易流水号,入账金额"]
    status = {}
    right_total = Decimal(0)
    for i, r in enumerate(rows):
        amount = r["amount"] if isinstance(r["amount"], Decimal) else None
        if i % 10 == 9:
            status[r["order"]] = "仅左表"
            continue
        if i % 10 == 3:
            bank = (amount or Decimal(0)) + Decimal("0.01")          # one cent off
        elif i % 10 == 6:
            bank = None                                             # the bank line has no amount
        else:
            bank = amount if amount is not None else Decimal("12.34")
        if i % 10 == 1 and bank is not None:
            bank += Decimal("0.000001")                             # float noise of an export
        cell = "" if bank is None else str(bank)
        lines.append("%s,%s" % (messy_key(r["order"], i), cell))
        if bank is not None:
            right_total += bank
        if amount is None or bank is None:
            status[r["order"]] = "缺少金额"
        elif abs(amount - bank) <= Decimal("0.005"):
            status[r["order"]] = "一致"
        else:
            status[r["order"]] = "不一致"
    for k in range(3):
        lines.append("99999999999999999%03d,%d" % (k, 100 + k))
        status["99999999999999999%03d" % k] = "仅右表"
        right_total += 100 + k
    return lines, status, right_total


def without_notes(rows):
    """A derived sheet's rows without its trailing ``注：`` rows (what its numbers left out, see
    write.write_derived), which the tests check on their own."""
    rows = list(rows)
    while rows and isinstance(rows[-1][0], str) and rows[-1][0].startswith("注：") and \
            not any(v not in (None, "") for v in rows[-1][1:]):
        rows.pop()
    return rows


@pytest.mark.parametrize("kind", ["xlsx", "gbk"])
def test_reconcile_against_a_bank_statement(run, messy, kind, tmp_path):
    rows, paths, _folder = messy
    lines, status, right_total = expected_reconcile(rows)
    bank = tmp_path / "银行流水.csv"
    bank.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    data = ok(run("lookup_table", {"left_path": paths[kind], "right_path": str(bank), "left_key": "订单号",
                                   "right_key": "交易流水号", "mode": "reconcile", "left_value": "金额",
                                   "right_value": "入账金额", "out_path": str(tmp_path / "对账.xlsx")}))
    counts = {}
    for s in status.values():
        counts[s] = counts.get(s, 0) + 1
    assert data["status_counts"] == counts
    assert data["tolerance"] == 0.005 and any("0.005" in w for w in data["warnings"])
    left_total = sum((r["amount"] for r in rows if isinstance(r["amount"], Decimal)), Decimal(0))
    assert Decimal(repr(data["left_total"])) == left_total
    assert Decimal(repr(data["right_total"])) == right_total
    assert Decimal(repr(data["total_difference"])) == left_total - right_total
    assert data["complete"] is True
    ws = openpyxl.load_workbook(data["path"])["对账结果"]
    full = list(ws.iter_rows(values_only=True))
    got = without_notes(full)
    assert "不是数字" in full[-1][0]           # amounts left out of the totals: the sheet says so
    assert got[0][:5] == ("订单号", "状态", "金额（左表）", "入账金额（右表）", "差额（左-右）")
    written = {r[0].strip() if isinstance(r[0], str) else r[0]: r[1] for r in got[1:]}
    assert written == status
    order = [r[1] for r in got[1:]]                                     # problems first
    first_same = order.index("一致")
    assert set(order[:first_same]) == {"不一致", "缺少金额", "仅左表", "仅右表"}
    assert set(order[first_same:]) == {"一致"}
    for r in got[1:]:
        if r[1] == "不一致":
            assert r[4] == pytest.approx(-0.01)
    assert len(data["examples"]["不一致"]) == 5


def test_reconcile_keys_only_and_sums_per_key(run, tmp_path):
    left = tmp_path / "应收.csv"
    right = tmp_path / "实收.csv"
    left.write_text("客户,金额\n甲公司,100\n乙公司,50\n甲公司 ,20.10\n丙公司,7\n", encoding="utf-8")
    right.write_text("客户,金额\n甲公司,120.1\n乙公司,49.999\n丁公司,3\n", encoding="utf-8")
    data = ok(run("lookup_table", {"left_path": str(left), "right_path": str(right), "left_key": "客户",
                                   "mode": "reconcile", "left_value": "金额", "right_value": "金额",
                                   "out_path": str(tmp_path / "a.xlsx")}))
    assert data["status_counts"] == {"一致": 2, "不一致": 0, "仅左表": 1, "仅右表": 1}
    assert any("合计后再比对" in w for w in data["warnings"])
    assert data["left_duplicate_keys"] == 1 and data["right_duplicate_keys"] == 0
    data = ok(run("lookup_table", {"left_path": str(left), "right_path": str(right), "left_key": "客户",
                                   "mode": "reconcile", "out_path": str(tmp_path / "b.xlsx")}))
    assert data["status_counts"] == {"两表都有": 2, "仅左表": 1, "仅右表": 1}
    assert "tolerance" not in data
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got[0] == ("客户", "状态", "左表条数", "右表条数", "左表行号", "右表行号")
    assert got[1] == ("丙公司", "仅左表", 1, 0, "5", None)


def test_default_names_never_overwrite(run, messy, roster):
    _rows, paths, _folder = messy
    right, _want, _dup = roster
    args = {"left_path": paths["xls"], "right_path": right, "left_key": "身份证号"}
    first = ok(run("lookup_table", args))["path"]
    second = ok(run("lookup_table", args))["path"]
    assert first != second and os.path.isfile(first) and second.endswith("_关联_2.xlsx")
    third = ok(run("lookup_table", dict(args, mode="reconcile")))["path"]
    assert third.endswith("_对账.xlsx")


def test_errors_are_chinese_and_actionable(run, messy, roster, tmp_path):
    _rows, paths, _folder = messy
    right, _want, _dup = roster
    base = {"left_path": paths["xlsx"], "right_path": right, "left_key": "身份证号"}
    msg = fail(run("lookup_table", dict(base, left_key="不存在的列")))
    assert "找不到列" in msg and "身份证号" in msg
    msg = fail(run("lookup_table", dict(base, right_key="电话")))
    assert "找不到列" in msg and "工号" in msg
    msg = fail(run("lookup_table", dict(base, mode="reconcile", left_value="金额")))
    assert "成对" in msg
    assert "不能和源文件相同" in fail(run("lookup_table", dict(base, out_path=right)))
    assert "找不到" in fail(run("lookup_table", dict(base, right_path=str(tmp_path / "没有.xlsx"))))
    msg = fail(run("lookup_table", dict(base, bring=["奖金", "不存在"])))
    assert "bring[1]" in msg



def test_time_budget_ends_cleanly():
    """An expired deadline (a real one, budget 0): merge stops with the rows so far, the right-hand
    index refuses (a partial index would report false misses), reconcile says where it stopped."""
    from xlakit.errors import Deadline
    from xlakit.tables import lookup
    from xlakit.tables.book import GridBook, Table
    from xlakit.tables.keys import KeyMaker
    grid = [["编号", "金额"]] + [[i, i] for i in range(3000)]
    left, right = Table(GridBook({"S": grid})), Table(GridBook({"S": grid}))
    index = lookup.RightIndex(right, 0, [1], KeyMaker())
    assert len(index.rows) == 3000 and not index.dups
    job = lookup.Merged(left, 0, index, ["金额"], KeyMaker(), deadline=Deadline(0))
    rows = list(job.rows())
    assert job.stopped_at == 1025 and job.rows_written == len(rows) - 1 == 1023 == job.matched
    with pytest.raises(lookup.Stopped):
        lookup.RightIndex(Table(GridBook({"S": grid})), 0, [1], KeyMaker(), deadline=Deadline(0))
    rec = lookup.Reconciled(Table(GridBook({"S": grid})), 0, 1, Table(GridBook({"S": grid})), 0, 1, KeyMaker(),
                            deadline=Deadline(0))
    assert rec.stopped == ("left", 1025) and rec.right == {} and len(rec.results["仅左表"]) == 1023


def test_ids_stored_as_numbers_are_flagged_and_libreoffice_xls(run, tmp_path):
    """A left table whose 身份证号 became numbers (Excel kept 15 digits): nothing matches by accident,
    the answer says why. The right table is an .xls saved by LibreOffice when it runs here,
    otherwise by xlwt."""
    import shutil
    import subprocess
    left = str(tmp_path / "员工.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["身份证号", "姓名"])
    ws.append([110101199001011234, "张三"])
    ws.append(["110101199001011235", "李四"])
    wb.save(left)
    src = tmp_path / "社保.csv"
    src.write_text("身份证号,社保号\n110101199001011234,S01\n110101199001011235,S02\n", encoding="utf-8")
    right = tmp_path / "社保.xls"
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice:
        try:
            # column 1 imported as text (format 2), as a user would set it for ID numbers
            subprocess.run([soffice, "-env:UserInstallation=file://%s" % (tmp_path / "lo"), "--headless",
                            "--infilter=CSV:44,34,76,1,1/2", "--convert-to", "xls", "--outdir", str(tmp_path),
                            str(src)], check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (subprocess.SubprocessError, OSError):
            pass
    if not right.exists():
        import xlwt
        book = xlwt.Workbook(encoding="utf-8")
        sheet = book.add_sheet("社保")
        for r, line in enumerate([["身份证号", "社保号"], ["110101199001011234", "S01"], ["110101199001011235", "S02"]]):
            for c, v in enumerate(line):
                sheet.write(r, c, v)
        book.save(str(right))
    data = ok(run("lookup_table", {"left_path": left, "right_path": str(right), "left_key": "身份证号",
                                   "out_path": str(tmp_path / "结果.xlsx")}))
    assert data["matched"] == 1 and data["unmatched_left"] == 1 and data["unmatched_right"] == 1
    assert any("15 位有效数字" in w for w in data["warnings"])
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got[2] == ("110101199001011235", "李四", "S02")


def test_a_very_wide_table_still_answers_within_the_cap(run, tmp_path):
    left = tmp_path / "宽表.csv"
    head = ["编号"] + ["说明%d" % i for i in range(60)]
    lines = [",".join(head)] + [",".join([str(r)] + ["很长的说明文字" * 12 for _ in range(60)]) for r in range(8)]
    left.write_text("\n".join(lines) + "\n", encoding="utf-8")
    right = tmp_path / "小表.csv"
    right.write_text("编号,负责人\n1,张三\n", encoding="utf-8")
    result = run("lookup_table", {"left_path": str(left), "right_path": str(right), "left_key": "编号",
                                  "out_path": str(tmp_path / "结果.csv")})
    data = ok(result)
    assert len(result.stdout) <= 20000
    assert data["matched"] == 1 and data["rows_written"] == 8 and data.get("preview_shortened") is True
