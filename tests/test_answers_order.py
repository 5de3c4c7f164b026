"""Issue 20, order as a Chinese user expects: pinyin for Chinese text, digits by value, in
pivot_table rows/columns, calc_table groups and list_dir names; ``sort: "codepoint"`` keeps the
old order. The expected orders are written out by hand (their pinyin), not computed."""
import pytest

from conftest import ok
from xlakit import collate

openpyxl = pytest.importorskip("openpyxl")

# one character per initial, in pinyin order: a bei cheng da e fa guang hang ji kun lan ming nan ou
# ping qing ri shang tian wen xi yin zhang
PINYIN = list("阿北成大饿发广杭济昆兰明南欧平青日上天温西银张")
CITIES = ["上海", "北京", "广州", "深圳", "成都", "杭州", "武汉", "西安", "南京", "天津"]
CITIES_PINYIN = ["北京", "成都", "广州", "杭州", "南京", "上海", "深圳", "天津", "武汉", "西安"]


def test_collate_pinyin_and_digits():
    shuffled = PINYIN[::3] + PINYIN[1::3] + PINYIN[2::3]
    assert sorted(shuffled, key=collate.text_key) == PINYIN
    assert sorted(CITIES, key=collate.text_key) == CITIES_PINYIN
    groups = ["第10组", "第2组", "第1组", "第21组", "第3组"]
    assert sorted(groups, key=collate.text_key) == ["第1组", "第2组", "第3组", "第10组", "第21组"]
    assert sorted(["张三", "張四", "李四", "王五"], key=collate.text_key) == ["李四", "王五", "张三", "張四"]
    assert sorted(["b", "上海", "A", "10", "2"], key=collate.text_key) == ["2", "10", "A", "b", "上海"]
    assert sorted(CITIES, key=lambda t: collate.text_key(t, "codepoint")) == sorted(CITIES)
    with pytest.raises(ValueError):
        collate.check_mode("stroke-ish")


def _sales(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["城市", "组", "金额"])
    for i, city in enumerate(CITIES):
        for g in ("第10组", "第2组", "第1组"):
            ws.append([city, g, 10 + i])
    wb.save(str(path))


def test_pivot_rows_and_columns_by_pinyin(run, tmp_path):
    src = tmp_path / "销售.xlsx"
    _sales(src)
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "城市"}, "col": {"column": "组"},
                                  "value": "金额", "out_path": str(tmp_path / "透视.xlsx")}))
    rows = [[c.value for c in r] for r in openpyxl.load_workbook(data["path"]).active.iter_rows()]
    assert rows[0][1:-1] == ["第1组", "第2组", "第10组"]
    assert [r[0] for r in rows[1:-1]] == CITIES_PINYIN
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "城市"}, "col": {"column": "组"},
                                  "value": "金额", "sort": "codepoint", "out_path": str(tmp_path / "码.xlsx")}))
    rows = [[c.value for c in r] for r in openpyxl.load_workbook(data["path"]).active.iter_rows()]
    assert [r[0] for r in rows[1:-1]] == sorted(CITIES) and rows[0][1:-1] == sorted(["第10组", "第2组", "第1组"])
    refused = run("pivot_table", {"path": str(src), "row": {"column": "城市"}, "col": {"column": "组"}, "sort": "笔顺"})
    assert refused.error and "sort" in refused.error and "pinyin" in refused.error


def test_calc_groups_by_pinyin_when_sorted_by_key(run, tmp_path):
    src = tmp_path / "销售.xlsx"
    _sales(src)
    data = ok(run("calc_table", {"path": str(src), "group_by": ["城市"]}))
    assert [g["城市"] for g in data["groups"]] == CITIES_PINYIN
    data = ok(run("calc_table", {"path": str(src), "group_by": ["组"], "sort_by": "组", "order": "asc"}))
    assert [g["组"] for g in data["groups"]] == ["第1组", "第2组", "第10组"]
    data = ok(run("calc_table", {"path": str(src), "group_by": ["城市"], "order": "desc"}))
    assert [g["城市"] for g in data["groups"]] == CITIES_PINYIN[::-1]
    data = ok(run("calc_table", {"path": str(src), "group_by": ["城市"], "sort": "codepoint"}))
    assert [g["城市"] for g in data["groups"]] == sorted(CITIES)


def test_list_dir_names_by_pinyin(run, tmp_path):
    folder = tmp_path / "资料"
    folder.mkdir()
    for name in ["上海.txt", "北京.txt", "第10章.docx", "第2章.docx", "成都.txt", "b.txt", "A.txt"]:
        (folder / name).write_text("x", encoding="utf-8")
    (folder / "照片").mkdir()
    (folder / "档案").mkdir()
    names = [e["name"] for e in ok(run("list_dir", {"path": str(folder)}))["entries"]]
    assert names == ["档案", "照片", "A.txt", "b.txt", "北京.txt", "成都.txt", "第2章.docx", "第10章.docx", "上海.txt"]
    names = [e["name"] for e in ok(run("list_dir", {"path": str(folder), "sort": "codepoint"}))["entries"]]
    assert names[:2] == sorted(["照片", "档案"]) and names[2:] == sorted(names[2:])


# 姓氏笔画 by hand: 广 3 (guang) 上 3 (shang) 天 4 北 5 成 6 (cheng) 西 6 (xi) 杭 8 (hang) 武 8 (wu) 南 9 深 11
CITIES_STROKES = ["广州", "上海", "天津", "北京", "成都", "西安", "杭州", "武汉", "南京", "深圳"]


def test_collate_stroke_order():
    assert sorted(CITIES, key=lambda t: collate.text_key(t, "stroke")) == CITIES_STROKES
    # 丁 2, 王 4, 李 7 = 张 7 (li before zhang), 赵 9, 張 11; digits by value; Latin before Chinese
    names = ["赵敏", "張五", "李四", "张三", "王芳", "丁一", "第10组", "第2组", "Amy"]
    assert sorted(names, key=lambda t: collate.text_key(t, "stroke")) == [
        "Amy", "丁一", "王芳", "李四", "张三", "赵敏", "第2组", "第10组", "張五"]
    assert collate.check_mode("笔画") == "stroke"


def test_stroke_order_in_pivot_calc_and_list_dir(run, tmp_path):
    src = tmp_path / "销售.xlsx"
    _sales(src)
    data = ok(run("pivot_table", {"path": str(src), "row": {"column": "城市"}, "col": {"column": "组"},
                                  "value": "金额", "sort": "stroke", "out_path": str(tmp_path / "笔画.xlsx")}))
    rows = [[c.value for c in r] for r in openpyxl.load_workbook(data["path"]).active.iter_rows()]
    assert [r[0] for r in rows[1:-1]] == CITIES_STROKES and rows[0][1:-1] == ["第1组", "第2组", "第10组"]
    data = ok(run("calc_table", {"path": str(src), "group_by": ["城市"], "sort": "stroke"}))
    assert [g["城市"] for g in data["groups"]] == CITIES_STROKES
    folder = tmp_path / "名单"
    folder.mkdir()
    for name in ("赵敏.docx", "王芳.docx", "丁一.docx", "李四.docx"):
        (folder / name).write_text("x", encoding="utf-8")
    names = [e["name"] for e in ok(run("list_dir", {"path": str(folder), "sort": "stroke"}))["entries"]]
    assert names == ["丁一.docx", "王芳.docx", "李四.docx", "赵敏.docx"]
