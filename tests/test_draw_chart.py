"""draw_chart: every chart type and option through the real script, on each font path (glyf TTC,
CFF CID-keyed TTC, the embedded bitmap font with no system font at all); the PNG is decoded back
with the standard library and checked for size, colours and ink where the text should be."""
import base64
import os

import pytest

from conftest import fail, ok
from xlakit.raster import chart, png
from xlakit.raster.chart import PALETTE

NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"

FONT_PATHS = [
    pytest.param({"XLA_CHART_BITMAP": "1"}, id="bitmap"),
    pytest.param({"XLA_CHART_FONT": WQY}, id="glyf-ttc",
                 marks=pytest.mark.skipif(not os.path.exists(WQY), reason="fonts-wqy-microhei not installed")),
    pytest.param({"XLA_CHART_FONT": NOTO}, id="cff-cid-ttc",
                 marks=pytest.mark.skipif(not os.path.exists(NOTO), reason="fonts-noto-cjk not installed")),
]

BAR = {"type": "bar", "title": "2024年各区域销售额", "labels": ["华东", "华南", "华北", "西南"],
       "series": [{"name": "2023", "data": [12000, 9800, 15000, 7000]},
                  {"name": "2024", "data": [13500, 10200, -1400, 8900]}], "y_label": "销售额", "unit": "元"}
LINE = {"type": "line", "title": "月度趋势", "labels": ["%d月" % i for i in range(1, 13)],
        "series": [{"name": "收入", "data": [120, 132, 101, 134, None, 230, 210, 182, 191, 234, 290, 330]},
                   {"name": "支出", "data": [220, 182, 191, 234, 290, 330, 310, 201, 154, 190, 330, 410]}],
        "x_label": "月份"}
PIE = {"type": "pie", "title": "费用构成", "labels": ["差旅", "餐饮", "办公用品", "培训", "通讯", "快递"],
       "values": [12300, 5600, 3100, 2200, 150, 80]}


def image_of(data):
    assert len(data["images"]) == 1
    im = data["images"][0]
    assert im["mime"] == "image/png" and im["name"].endswith(".png")
    raw = base64.b64decode(im["data"])
    with open(data["path"], "rb") as f:
        assert f.read() == raw, "saved file and returned image differ"
    return png.decode(raw)


def pixel(img, x, y):
    w, _h, rgb = img
    o = (y * w + x) * 3
    return tuple(rgb[o:o + 3])


def colours(img):
    _w, _h, rgb = img
    return set(bytes(rgb[i:i + 3]) for i in range(0, len(rgb), 3))


def ink(img, x0, y0, x1, y1, dark=140):
    """Number of dark pixels (text) in a box."""
    n = 0
    for y in range(y0, y1):
        for x in range(x0, x1):
            r, g, b = pixel(img, x, y)
            if r < dark and g < dark and b < dark:
                n += 1
    return n


@pytest.mark.parametrize("env", FONT_PATHS)
@pytest.mark.parametrize("spec", [BAR, LINE, PIE], ids=["bar", "line", "pie"])
def test_every_type_on_every_font_path(run, home, env, spec):
    data = ok(run("draw_chart", spec, extra_env=env))
    img = image_of(data)
    w, h, _ = img
    assert (w, h) == (data["width"], data["height"]) == ((640, 480) if spec["type"] == "pie" else (800, 500))
    assert data["path"].startswith(str(home / ".xla" / "workspace" / "charts"))
    assert "missing_chars" not in data
    if env.get("XLA_CHART_BITMAP"):
        assert "内嵌点阵" in data["font"]
    else:
        assert env["XLA_CHART_FONT"] in data["font"]
    cols = colours(img)
    assert bytes(PALETTE[0]) in cols and bytes(PALETTE[1]) in cols      # two series / slices
    # the title is centred in the top band: dark ink there, and none in the top-left corner
    assert ink(img, w // 2 - 60, 5, w // 2 + 60, 45) > 80
    assert ink(img, 0, 0, 12, 12) == 0
    assert data["summary"].endswith("。") and spec["title"] in data["summary"]


def test_bitmap_font_draws_category_labels_under_bars(run):
    spec = {"type": "bar", "labels": ["甲", "乙", "丙"], "series": [{"name": "数量", "data": [3, 5, 4]}],
            "value_labels": False}
    img = image_of(ok(run("draw_chart", spec, extra_env={"XLA_CHART_BITMAP": "1"})))
    w, h, _ = img
    # three labels centred under three equal slots between the y-axis labels and the right edge
    band = [ink(img, x, h - 30, x + 1, h - 2) for x in range(w)]
    columns = [x for x, v in enumerate(band) if v]
    assert columns, "no label ink under the axis"
    groups = []
    for x in columns:
        if groups and x - groups[-1][-1] <= 3:
            groups[-1].append(x)
        else:
            groups.append([x])
    assert len(groups) == 3, [(g[0], g[-1]) for g in groups]
    bar_color = bytes(PALETTE[0])
    for g in groups:
        cx = (g[0] + g[-1]) // 2
        assert bytes(pixel(img, cx, h - 70)) == bar_color   # each label sits under its bar


@pytest.mark.parametrize("env", FONT_PATHS)
def test_options_stacked_horizontal_rotated(run, env):
    stacked = {"type": "bar", "stacked": True, "title": "季度构成", "labels": ["一季度", "二季度", "三季度"],
               "series": [{"name": "线上", "data": [3.2e8, 4.1e8, 3.9e8]}, {"name": "线下", "data": [2.1e8, 1.9e8, 2.4e8]}]}
    img = image_of(ok(run("draw_chart", stacked, extra_env=env)))
    assert bytes(PALETTE[1]) in colours(img)
    horizontal = {"type": "bar", "horizontal": True, "labels": ["研发中心（北京）", "市场营销部", "人力资源与行政管理部"],
                  "series": [{"name": "人数", "data": [120, 45, 18]}], "width": 600, "height": 320}
    img = image_of(ok(run("draw_chart", horizontal, extra_env=env)))
    assert img[0] == 600 and img[1] == 320
    # the longest category name is right-aligned left of the bars: ink on the left third
    assert ink(img, 0, 0, 200, 320) > 150
    many = {"type": "bar", "labels": ["产品型号-%02d号" % i for i in range(30)],
            "series": [{"name": "销量", "data": [(i * 37) % 100 - 20 for i in range(30)]}]}
    data = ok(run("draw_chart", many, extra_env=env))
    img = image_of(data)
    assert ink(img, 0, 380, 800, 500) > 500   # rotated labels fill the bottom band


def test_sizes_are_clamped_with_a_warning(run):
    data = ok(run("draw_chart", dict(PIE, width=5000, height=100), extra_env={"XLA_CHART_BITMAP": "1"}))
    assert (data["width"], data["height"]) == (2400, 240)
    assert any("超出范围" in w for w in data["warnings"])


def test_unique_file_names(run, home):
    spec = dict(PIE, file_name="占比")
    a = ok(run("draw_chart", spec, extra_env={"XLA_CHART_BITMAP": "1"}))
    b = ok(run("draw_chart", spec, extra_env={"XLA_CHART_BITMAP": "1"}))
    assert os.path.basename(a["path"]) == "占比.png"
    assert os.path.basename(b["path"]) == "占比_2.png"
    assert os.path.exists(a["path"]) and os.path.exists(b["path"])


def test_character_in_no_font_is_a_box_and_reported(run):
    data = ok(run("draw_chart", {"type": "bar", "title": "𠀀测试", "labels": ["A"],
                                 "series": [{"name": "x", "data": [1]}]}, extra_env={"XLA_CHART_BITMAP": "1"}))
    assert data["missing_chars"] == "𠀀"
    assert any("方框" in w for w in data["warnings"])


def test_settings_file_chooses_the_bitmap_font(run, home):
    (home / ".xla").mkdir(exist_ok=True)
    (home / ".xla" / "settings.json").write_text('{"chart_bitmap": true}', encoding="utf-8")
    data = ok(run("draw_chart", PIE))
    assert "内嵌点阵" in data["font"]


def test_missing_configured_font_falls_back(run):
    data = ok(run("draw_chart", PIE, extra_env={"XLA_CHART_FONT": "/nonexistent/font.ttf"}))
    assert any("不存在" in w for w in data["warnings"])
    image_of(data)


@pytest.mark.parametrize("spec,words", [
    ({"type": "bar", "labels": ["a", "b"], "series": [{"name": "x", "data": [1, 2, 3]}]}, "数量要一致"),
    ({"type": "line", "series": [{"name": "x", "data": [1, 2]}, {"name": "y", "data": [1]}]}, "长度要一致"),
    ({"type": "bar", "series": [{"name": "x", "data": [1, "abc"]}]}, "不是数字"),
    ({"type": "bar", "series": [{"name": "x", "data": []}]}, "为空"),
    ({"type": "bar", "series": []}, "需要 series"),
    ({"type": "line", "series": [{"name": "x", "data": [None, None]}]}, "全是 null"),
    ({"type": "pie", "labels": ["a", "b"], "values": [0, 0]}, "全是 0"),
    ({"type": "pie", "labels": ["a", "b"], "values": [5, -1]}, "不能为负"),
    ({"type": "pie"}, "需要 values"),
])
def test_bad_data_gets_a_chinese_error(run, spec, words):
    err = fail(run("draw_chart", spec, extra_env={"XLA_CHART_BITMAP": "1"}))
    assert words in err, err


# -- unit level ------------------------------------------------------------------------------------

def test_nice_ticks_and_numbers():
    ticks, step = chart.nice_ticks(0, 87)
    assert step == 20 and ticks[0] == 0 and ticks[-1] == 100
    ticks, step = chart.nice_ticks(-13, 42)
    assert step == 25 and ticks[0] == -25 and ticks[-1] == 50 and 0.0 in ticks
    # issue 37 item 10: the nearest nice step above the data, not 40% of the plot empty
    assert chart.nice_ticks(0, 95700)[0][-1] == 100000            # was 15万 for a max of 9.57万
    assert chart.nice_ticks(-568000, 568000)[0][-1] <= 600000     # was ±100万 for ±56.8万
    for lo, hi in ((0, 3), (0, 1234567), (-0.3, 0.9), (17, 23)):
        ticks, step = chart.nice_ticks(lo, hi)
        assert ticks[0] <= lo and ticks[-1] >= hi and 4 <= len(ticks) <= 7
        assert (ticks[-1] - ticks[0]) <= (hi - lo) * 1.6 + step
    assert chart.nice_ticks(0, 0.037)[1] == pytest.approx(0.01)
    unit = chart.unit_for(150000)
    assert chart.fmt_number(150000, 50000, unit) == "15万"
    assert chart.fmt_number(12000, None, unit) == "1.2万"
    assert chart.fmt_number(3.5e8, None, chart.unit_for(3.5e8)) == "3.5亿"
    assert chart.fmt_number(3100, None, chart.unit_for(3100)) == "3,100"
    assert chart.fmt_number(1234567, None, (1.0, ""), "comma") == "1,234,567"


def test_png_round_trip_palette_and_rgb():
    w, h = 37, 11
    flat = bytearray(bytes((10, 20, 30)) * (w * h))
    flat[0:3] = b"\xff\x00\x00"
    data = png.encode(w, h, flat)
    assert data[25] == 3   # colour type: palette
    assert png.decode(data) == (w, h, flat)
    import random
    rnd = random.Random(5)
    noisy = bytearray(rnd.randrange(256) for _ in range(w * h * 3))
    data = png.encode(w, h, noisy)
    assert data[25] == 2
    assert png.decode(data) == (w, h, noisy)


LONG_LABELS = ["西北区大客户事业部", "华东区", "华南区大客户部", "东北区", "西南区大客户事业部门", "华中", "华北区", "华西"]


@pytest.mark.skipif(not os.path.exists(NOTO), reason="fonts-noto-cjk not installed")
def test_bar_labels_break_evenly_shrink_first_and_stay_on_the_canvas(run):
    """Issue 20: no "西北区大客户事业/部". In-process over many widths: labels are straight (maybe a
    little smaller), or two even lines with no single-character line, or rotated; never cut into
    a wrap. Then the real tool: no ink in the image's outer 2 px."""
    from xlakit.raster import typeset
    fonts = typeset.choose_fonts(NOTO)
    assert chart.wrap(fonts, "西北区大客户事业部", 13, 110) == ["西北区", "大客户事业部"]    # after a unit word
    # issue 37 item 7: never inside a common word (采/购, 数/字化, 转/型); no such break -> None
    assert chart.split_two(fonts, "数字化转型办公室", 13, 80) == ["数字化转型", "办公室"]
    assert chart.split_two(fonts, "华东区域营销管理中心", 13, 80) == ["华东区域营销", "管理中心"]
    assert chart.split_two(fonts, "采购部", 13, 30) is None
    assert chart.split_two(fonts, "部门", 13, 14) is None           # 1 + 1 is not a wrap
    seen = set()
    for width in range(400, 1300, 100):
        for n in (4, 6, 8):
            spec = chart.normalize({"type": "bar", "labels": LONG_LABELS[:n], "values": list(range(1, n + 1)),
                                    "width": width})
            c = chart.Chart(spec, fonts)
            c.render()
            plan = c.label_plan
            seen.add(plan["mode"])
            assert plan["size"] >= 10
            for label, lines in zip(LONG_LABELS, plan["lines"]):
                if plan["mode"] == "wrap":
                    assert "".join(lines) == label and all(len(ln) >= 2 for ln in lines), (width, n, lines)
                elif plan["mode"] == "flat":
                    assert lines == [label]
    assert {"flat", "wrap"} <= seen
    data = ok(run("draw_chart", {"type": "bar", "labels": LONG_LABELS, "values": [5, 3, 8, 2, 9, 4, 6, 1],
                                 "width": 600, "height": 360}, extra_env={"XLA_CHART_FONT": NOTO}))
    img = image_of(data)
    w, h, _ = img
    assert ink(img, 0, 0, w, 2) == ink(img, 0, h - 2, w, h) == 0
    assert ink(img, 0, 0, 2, h) == ink(img, w - 2, 0, w, h) == 0
    assert ink(img, 0, h - 60, w, h) > 0                            # the labels are there


def test_no_font_hint_names_this_systems_font():
    """The hint a user gets when no Chinese font is found names a font of their own OS: YaHei and
    SimHei on Windows (a Linux package means nothing there), a package command on Linux."""
    from xlakit.raster import sfnt
    win = sfnt.install_hint("win32")
    assert "微软雅黑" in win and "msyh.ttc" in win and "simhei" in win and "文泉驿" not in win and "apt" not in win
    assert "PingFang" in sfnt.install_hint("darwin")
    assert "fonts-wqy-microhei" in sfnt.install_hint("linux")


def _overlap(a, b, across=0.0):
    return a[0] < b[2] + across and b[0] < a[2] + across and a[1] < b[3] and b[1] < a[3]


@pytest.mark.skipif(not os.path.exists(NOTO), reason="fonts-noto-cjk not installed")
def test_value_labels_never_run_together_or_hide_under_a_bar(run):
    """Issue 37 item 2: grouped bars' labels read "34.5亿39.8亿45.2亿" and a negative bar's minus
    sign hid under the neighbouring bar. Every label drawn keeps half a character from the next,
    covers no bar but its own, and (in the real tool's PNG) the pixels of "-23.4万" hold no bar colour."""
    from xlakit.raster import typeset
    fonts = typeset.choose_fonts(NOTO)
    grouped = {"type": "bar", "labels": ["2022", "2023", "2024", "2025"], "series": [
        {"name": "华东", "data": [34.5e8, 39.8e8, 45.2e8, 41.0e8]}, {"name": "华南", "data": [30.1e8, 36.7e8, 40.2e8, 44.4e8]},
        {"name": "华北", "data": [28.5e8, 31.2e8, 37.9e8, 39.9e8]}]}
    negative = {"type": "bar", "labels": ["一月", "二月", "三月", "四月", "五月", "六月"], "series": [
        {"name": "利润", "data": [120000, -234500, 568000, -98000, 310000, 45000]},
        {"name": "预算", "data": [150000, 100000, 500000, 80000, 300000, 60000]}]}
    for params in (grouped, negative, dict(negative, horizontal=True), dict(grouped, horizontal=True)):
        for width in (420, 600, 900):
            c = chart.Chart(chart.normalize(dict(params, width=width, height=380)), fonts)
            c.render()
            boxes = [b for b, _t in c.value_boxes]
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert not _overlap(a, b, c.fs_value * 0.4), (params["type"], width, c.value_boxes)
            owners = dict((t, None) for _b, t in c.value_boxes)
            for box, text in c.value_boxes:
                hits = [bar for bar, _who in c.bar_boxes if _overlap(box, bar, -0.5)]
                assert len(hits) <= 1, (width, text, hits)     # at most its own bar (a label inside a stack)
            if width >= 600:
                assert c.value_skipped == 0 and len(boxes) == sum(len(s["data"]) for s in params["series"])
            assert owners
    data = ok(run("draw_chart", dict(negative, width=640, height=400), extra_env={"XLA_CHART_FONT": NOTO}))
    w, h, flat = png.decode(open(data["path"], "rb").read())
    c = chart.Chart(chart.normalize(dict(negative, width=640, height=400)), fonts)
    c.render()
    box = next(b for b, t in c.value_boxes if t == "-23.4万")
    colours = set(PALETTE[:2])
    ink = 0
    for y in range(int(box[1]), int(box[3]) + 1):
        for x in range(int(box[0]), int(box[2]) + 1):
            px = tuple(flat[(y * w + x) * 3:(y * w + x) * 3 + 3])
            assert px not in colours, (x, y, px)
            ink += sum(px) < 600
    assert ink > 20                     # the label is really drawn there


def test_png_carries_print_dpi_and_axis_titles_keep_their_band(run):
    """Issue 37 item 10: the PNG says 144 dpi (pHYs); a horizontal bar chart's value-axis title
    (y_label + unit, drawn at the bottom) has its own band below the tick labels."""
    data = ok(run("draw_chart", {"type": "bar", "horizontal": True, "labels": ["华东", "华南", "华北"],
                                 "series": [{"name": "销售额", "data": [95700, 61200, 38800]}], "y_label": "销售额",
                                 "unit": "元"}, extra_env={"XLA_CHART_FONT": NOTO} if os.path.exists(NOTO) else None))
    raw = open(data["path"], "rb").read()
    assert png.dpi_of(raw) == 144.0
    if not os.path.exists(NOTO):
        return
    from xlakit.raster import typeset
    fonts = typeset.choose_fonts(NOTO)
    c = chart.Chart(chart.normalize({"type": "bar", "horizontal": True, "labels": ["华东", "华南", "华北"],
                                     "series": [{"name": "销售额", "data": [95700, 61200, 38800]}],
                                     "y_label": "销售额", "unit": "元"}), fonts)
    c.render()
    x0, y0, x1, y1 = c.plot
    tick_bottom = y1 + 6 + c.fs * 1.2
    assert tick_bottom <= c.h - c.pad * 0.6 - c.fs * 1.1          # the title's line starts below the ticks
    assert c.ticks[-1] <= 120000                                   # 9.57万 and its label: not 15万
