"""dedupe_table, spawned as the assistant does, on the 1,000-row messy export from part 1 (xlsx /
xls / fake-html xls / GBK csv; 部门 with trailing spaces and a merged block) and on small files
written by openpyxl and the csv module with the key variants people have (trailing / full-width
spaces, NBSP, zero-width characters, full-width digits, 1001 vs "1001", 18-digit IDs that differ
only in the last digit). Expected groups, kept rows and Excel row numbers are computed here from
the generator's intent; output files are read back with openpyxl / csv."""
import csv
import os

import openpyxl
import pytest

from conftest import fail, ok
import tio_data



@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("messy_dedupe")
    rows = tio_data.messy_rows()
    paths = tio_data.write_messy(folder, rows)
    return rows, paths


def groups_of(rows):
    """(部门, 经办人) -> the rows of that pair, in table order; pairs in order of first appearance."""
    out = {}
    for r in rows:
        out.setdefault((r["dept"], r["person"]), []).append(r)
    return out


def read_back(path, sheet):
    if path.endswith(".csv"):
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return [tuple(r) for r in csv.reader(fh)]
    return list(openpyxl.load_workbook(path)[sheet].iter_rows(values_only=True))


@pytest.mark.parametrize("kind", ["xlsx", "xls", "html", "gbk"])
@pytest.mark.parametrize("keep", ["first", "last"])
def test_remove_keeps_one_row_per_key(run, messy, kind, keep, home):
    rows, paths = messy
    groups = groups_of(rows)
    kept = [g[0] if keep == "first" else g[-1] for g in groups.values()]
    kept.sort(key=lambda r: r["seq"])
    args = {"path": paths[kind], "keys": ["部门", "经办人"]}
    if keep == "last":
        args["keep"] = "last"
    data = ok(run("dedupe_table", args))
    assert data["mode"] == "remove" and data["keep"] == keep and data["complete"] is True
    assert data["rows_before"] == tio_data.N_ROWS
    assert data["rows_after"] == len(kept) == len(groups) and data["removed"] == tio_data.N_ROWS - len(kept)
    assert data["duplicate_groups"] == len([g for g in groups.values() if len(g) > 1])
    out = data["path"]
    assert out.startswith(str(home)) and "_去重" in os.path.basename(out)
    assert out.endswith(".csv") if kind == "gbk" else out.endswith(".xlsx")
    got = read_back(out, "去重结果")
    assert list(got[0]) == tio_data.FLAT_HEADER
    seqs = [int(r[0]) for r in got[1:]]
    assert seqs == [r["seq"] for r in kept]
    ids = [r[4] for r in got[1:]]
    assert ids == [r["id"] for r in kept] and all(isinstance(i, str) for i in ids)     # IDs stay text
    if kind in ("xlsx", "xls"):
        assert data["preview_rows"] == [r["row"] for r in kept[:5]]
        first = data["groups"][0]
        g = next(iter(groups.values()))
        assert first["rows"] == [r["row"] for r in g[:20]] and first["count"] == len(g)
        assert first["kept_row"] == (g[0]["row"] if keep == "first" else g[-1]["row"])
    assert any("合计" in w for w in data["warnings"])


@pytest.mark.parametrize("kind", ["xlsx", "gbk"])
def test_report_lists_groups_with_excel_row_numbers(run, messy, kind, tmp_path):
    rows, paths = messy
    groups = [g for g in groups_of(rows).values() if len(g) > 1]
    out = str(tmp_path / ("重复.csv" if kind == "gbk" else "重复.xlsx"))
    data = ok(run("dedupe_table", {"path": paths[kind], "keys": ["部门", "经办人"], "mode": "report",
                                   "limit": 5, "offset": 5, "out_path": out}))
    assert data["duplicate_groups"] == data["total"] == len(groups)
    assert data["duplicate_rows"] == sum(len(g) - 1 for g in groups)
    assert data["rows_in_groups"] == data["rows_written"] == sum(len(g) for g in groups)
    assert data["returned"] == 5 and data["next_offset"] == 10
    shift = 0 if kind == "xlsx" else -1            # the csv export has a one-row header
    for item, g in zip(data["groups"], groups[5:10]):
        assert item["count"] == len(g)
        assert item["rows"] == [r["row"] + shift for r in g[:20]]
        assert item["key"]["经办人"] == g[0]["person"] and item["key"]["部门"].strip() == g[0]["dept"]
    got = read_back(data["path"], "重复行")
    assert list(got[0]) == ["重复组", "原行号"] + tio_data.FLAT_HEADER
    want = [(n + 1, r["row"] + shift) for n, g in enumerate(groups) for r in g]
    assert [(int(r[0]), int(r[1])) for r in got[1:]] == want
    assert [int(r[2]) for r in got[1:]] == [r["seq"] for g in groups for r in g]          # the rows' own cells


def test_keys_are_matched_the_way_people_mean_them(run, tmp_path):
    src = str(tmp_path / "报名表.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "报名"
    lines = [
        ["姓名", "身份证号", "工号", "备注"],
        ["张三", "110101199001011234", 1001, "a"],          # 2
        ["张三 ", "110101199001011234\u3000", "1001", "b"],  # 3 dup of 2 (spaces, number text)
        ["李四", "110101199001011235", 1002, "c"],          # 4 differs in the last digit only
        ["\u200b王五\u00a0", "１１０１０１１９９００１０１１２３６", 1003.0, "d"],   # 5
        ["王五", "110101199001011236", "1003", "e"],        # 6 dup of 5
        [None, None, None, "没填"],                         # 7 empty key: kept
        [None, None, None, "也没填"],                       # 8 empty key: kept
        ["ZHAO", "11010119900101123X", 9, "f"],             # 9
        ["zhao", "11010119900101123x", 9, "g"],             # 10 dup of 9 (case)
    ]
    for line in lines:
        ws.append(line)
    wb.save(src)
    data = ok(run("dedupe_table", {"path": src, "keys": ["身份证号"], "mode": "report",
                                   "out_path": str(tmp_path / "r.xlsx")}))
    assert [g["rows"] for g in data["groups"]] == [[2, 3], [5, 6], [9, 10]]
    assert data["empty_key_rows"] == 2 and any("全是空的" in w for w in data["warnings"])
    data = ok(run("dedupe_table", {"path": src, "keys": ["姓名", "工号"], "out_path": str(tmp_path / "去重.xlsx")}))
    assert data["removed"] == 3 and data["rows_after"] == 6
    got = list(openpyxl.load_workbook(data["path"])["去重结果"].iter_rows(values_only=True))
    assert [r[3] for r in got[1:]] == ["a", "c", "d", "没填", "也没填", "f"]
    assert got[1][1] == "110101199001011234"
    data = ok(run("dedupe_table", {"path": src, "keys": ["身份证号"], "case_sensitive": True,
                                   "out_path": str(tmp_path / "区分大小写.xlsx")}))
    assert data["removed"] == 2


def test_whole_row_and_no_duplicates(run, tmp_path):
    src = tmp_path / "流水.csv"
    src.write_text("日期,摘要,金额\n2024-01-02,转账,100\n2024-01-02,转账 ,100.0\n2024/1/2,转账,100\n"
                   "2024-01-03,转账,100\n", encoding="utf-8")
    data = ok(run("dedupe_table", {"path": str(src), "out_path": str(tmp_path / "去重.csv")}))
    assert data["keys"] == "整行" and data["removed"] == 2 and data["rows_after"] == 2
    got = read_back(data["path"], None)
    assert got == [("日期", "摘要", "金额"), ("2024-01-02", "转账", "100"), ("2024-01-03", "转账", "100")]
    data = ok(run("dedupe_table", {"path": str(src), "keys": ["日期", "摘要", "金额"], "mode": "report",
                                   "out_path": str(tmp_path / "重复.csv")}))
    assert data["groups"][0]["rows"] == [2, 3, 4]
    data = ok(run("dedupe_table", {"path": data["path"], "keys": ["原行号"], "mode": "report"}))
    assert data["duplicate_groups"] == 0 and data["path"] is None
    assert any("没有发现重复" in w for w in data["warnings"])


def test_libreoffice_saved_file(run, tmp_path):
    """A workbook saved by LibreOffice (when it runs here), deduplicated by name."""
    import shutil
    import subprocess
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        pytest.skip("LibreOffice is not installed")
    src = tmp_path / "名单.csv"
    src.write_text("姓名,城市\n张三,北京\n李四,上海\n张三 ,天津\n", encoding="utf-8")
    profile = tmp_path / "lo_profile"
    try:
        subprocess.run([soffice, "-env:UserInstallation=file://%s" % profile, "--headless", "--infilter=CSV:44,34,76,1",
                        "--convert-to", "xlsx",
                        "--outdir", str(tmp_path), str(src)], check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.SubprocessError, OSError):
        pytest.skip("LibreOffice could not convert here")
    xlsx = tmp_path / "名单.xlsx"
    if not xlsx.exists():
        pytest.skip("LibreOffice produced no file")
    data = ok(run("dedupe_table", {"path": str(xlsx), "keys": ["姓名"], "keep": "last",
                                   "out_path": str(tmp_path / "去重.xlsx")}))
    assert data["removed"] == 1
    got = list(openpyxl.load_workbook(data["path"]).active.iter_rows(values_only=True))
    assert got == [("姓名", "城市"), ("李四", "上海"), ("张三 ", "天津")]


def test_default_names_never_overwrite(run, messy):
    _rows, paths = messy
    args = {"path": paths["xls"], "keys": ["部门"]}
    first = ok(run("dedupe_table", args))["path"]
    second = ok(run("dedupe_table", args))["path"]
    assert first != second and os.path.isfile(first) and second.endswith("_去重_2.xlsx")
    assert ok(run("dedupe_table", dict(args, mode="report")))["path"].endswith("_重复.xlsx")


def test_errors_are_chinese_and_actionable(run, messy, tmp_path):
    _rows, paths = messy
    msg = fail(run("dedupe_table", {"path": paths["xlsx"], "keys": ["部门", "不存在"]}))
    assert "找不到列" in msg and "keys[1]" in msg and "经办人" in msg
    assert "不能和源文件相同" in fail(run("dedupe_table", {"path": paths["xlsx"], "out_path": paths["xlsx"]}))
    assert ".xlsx" in fail(run("dedupe_table", {"path": paths["xlsx"], "out_path": str(tmp_path / "x.pdf")}))
    assert "找不到" in fail(run("dedupe_table", {"path": str(tmp_path / "没有.xlsx")}))


def test_time_budget_ends_cleanly():
    """An expired deadline (a real one, budget 0): both keep modes stop with the rows so far."""
    from xlakit.errors import Deadline
    from xlakit.tables.book import GridBook, Table
    from xlakit.tables.dedupe import Groups, Remover
    from xlakit.tables.keys import KeyMaker
    grid = [["编号", "序"]] + [[i % 100, i] for i in range(3000)]
    job = Remover(Table(GridBook({"S": grid})), [0], KeyMaker(), deadline=Deadline(0))
    rows = list(job.rows())
    assert job.stopped_at == 1025 and job.written == len(rows) - 1 == 100
    assert job.groups.scanned == 1023 and job.groups.group_count == 100
    groups = Groups(Table(GridBook({"S": grid})), [0], KeyMaker(), deadline=Deadline(0))
    groups.scan()
    assert groups.stopped_at == 1025 and groups.last_row == 1024
    job = Remover(Table(GridBook({"S": grid})), [0], KeyMaker(), keep="last", groups=groups)
    rows = list(job.rows())
    assert job.stopped_at == 1025
    assert [r[1] for r in rows[1:]] == list(range(923, 1023))      # the last of each key before the stop
    full = Groups(Table(GridBook({"S": grid})), [0], KeyMaker())
    full.scan()
    assert full.stopped_at is None and full.removable == 2900 and full.listing(limit=1)[0]["count"] == 30


def test_report_rows_from_memory_and_from_a_second_pass_agree():
    """The report keeps the rows of its first pass up to a cap; beyond it, it reads the table again.
    Both ways give the same grouped rows."""
    from xlakit.tables.book import GridBook, Table
    from xlakit.tables.dedupe import Groups, ReportRows
    from xlakit.tables.keys import KeyMaker
    grid = [["编号", "序"]] + [[" %d" % (i % 7) if i % 3 else i % 7, i] for i in range(50)] + [["唯一", 99]]
    results = []
    for cap in (1000, 5):
        groups = Groups(Table(GridBook({"S": grid})), [0], KeyMaker(), store_cap=cap)
        groups.scan()
        report = ReportRows(Table(GridBook({"S": grid})), [0], KeyMaker(), groups)
        collected = report.from_store()
        assert (collected is None) == (cap == 5)       # 5 kept rows do not hold the report's 50
        if collected is None:
            collected = report.collect()
        results.append(list(report.rows(collected)))
    assert results[0] == results[1]
    want = [[k + 1, i + 2, grid[i + 1][0], i] for k in range(7) for i in range(50) if i % 7 == k]
    assert results[0][1:] == want
    # a capped report (its first 10 rows of groups, in table order) is in a kept prefix of 20 rows:
    # the same rows as a second pass, without reading the table again
    capped = []
    for second_pass in (False, True):
        groups = Groups(Table(GridBook({"S": grid})), [0], KeyMaker(), store_cap=20, report_rows=10)
        groups.scan()
        assert not groups.store_complete and groups.kept_in_groups == 20
        report = ReportRows(Table(GridBook({"S": grid})), [0], KeyMaker(), groups, cap=10)
        collected = report.collect() if second_pass else report.from_store()
        assert collected is not None and report.capped
        capped.append(list(report.rows(collected)))
    assert capped[0] == capped[1]
    assert [r[1] for r in capped[0][1:]] == sorted(range(2, 12), key=lambda r: ((r - 2) % 7, r))


def test_keep_last_from_memory_and_from_a_second_pass_agree():
    """keep="last" keeps each key's latest row (and the empty-key rows) from its one pass while they
    are few enough; beyond the cap it reads the table again. Both ways write the same rows."""
    from xlakit.tables.book import GridBook, Table
    from xlakit.tables.dedupe import Groups, Remover
    from xlakit.tables.keys import KeyMaker
    grid = [["编号", "序"]] + [[None if i % 11 == 0 else " %d" % (i % 7) if i % 3 else i % 7, i] for i in range(60)]
    written = []
    for cap in (1000, 5):
        groups = Groups(Table(GridBook({"S": grid})), [0], KeyMaker(), last_cap=cap)
        groups.scan()
        assert (groups.last_rows is None) == (cap == 5)
        job = Remover(Table(GridBook({"S": grid})), [0], KeyMaker(), keep="last", groups=groups)
        written.append((list(job.rows()), job.written, job.preview_rows))
    assert written[0] == written[1]
    rows = written[0][0]
    empty = [i for i in range(60) if i % 11 == 0]
    last = {}
    for i in range(60):
        if i not in empty:
            last[i % 7] = i
    assert [r[1] for r in rows[1:]] == sorted(empty + list(last.values()))
