"""read_document on pictures and scans: the real OCR engine (RapidOCR in tools/pydeps, installed by
``python3 xla.py selftest`` / ``install ocr``), spawned as the host does, on the fixtures made by
tests/fixtures/ocr/make_fixtures.py (known text, so accuracy is measured, not guessed).

Accuracy is asserted as a floor on character accuracy (1 - edit distance / length, spaces
ignored), never as exact text: a different engine build may misread one character. The missing
engine is simulated by a copy of the project whose tools/pydeps lacks it, not by a mock.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, ROOT, fail, ok

OCR = os.path.join(FIXTURES, "ocr")
sys.path.insert(0, OCR)
import make_fixtures  # noqa: E402 - the fixture maker's PDF writer builds the long scan


@pytest.fixture(scope="module", autouse=True)
def engine():
    """The tests run the real engine: install it as selftest does when a developer has not."""
    sys.path.insert(0, ROOT)
    import pydeps_boot
    if not pydeps_boot.group_ready("ocr"):
        subprocess.check_call([sys.executable, os.path.join(ROOT, "pydeps_boot.py"), "install", "ocr"])


def expected(name):
    with open(os.path.join(OCR, name), encoding="utf-8") as fh:
        return fh.read()


def accuracy(truth, got):
    """1 - CER: Levenshtein distance over the truth's characters, whitespace and table marks ignored."""
    strip = re.compile(r"[\s|\-]|〔\?|〕")
    a, b = strip.sub("", truth), strip.sub("", got)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return 1.0 - prev[-1] / float(max(1, len(a)))


def read(run, name, **params):
    params["path"] = os.path.join(OCR, name)
    return run("read_document", params)


def test_a_png_notice_is_read_in_paragraphs(run):
    data = ok(read(run, "notice.png"))
    assert data["format"] == "png"
    assert accuracy(expected("notice.txt"), data["text"]) >= 0.95, data["text"]
    paras = data["text"].split("\n")
    assert paras[0] == "关于调整办公时间的通知"             # the title is its own paragraph
    assert len(paras) == 5, paras                              # wrapped lines are joined again
    assert paras[2].startswith("根据公司安排") and paras[2].endswith("合理安排工作。")
    assert data["ocr"]["confidence"]["图片"] > 0.9


def test_two_columns_with_a_narrow_gutter_are_read_column_by_column(run):
    data = ok(read(run, "narrow_columns.png"))
    assert accuracy(expected("narrow_columns.txt"), data["text"]) >= 0.95, data["text"]
    paras = data["text"].split("\n")
    assert paras[0] == "关于调整办公区域的通知"
    assert [p[:4] for p in paras[1:]] == ["各部门：", "请各部门", "搬迁当天", "改造预计"], paras


def _box(x0, y0, x1, y1, text):
    from xlakit.documents import ocr_layout
    return ocr_layout.Line([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], text, 0.99)


def _layout(lines):
    sys.path.insert(0, ROOT)
    from xlakit.documents import ocr_layout
    return [text for _kind, text in ocr_layout.layout(lines)]


def test_a_gutter_narrower_than_a_line_splits_columns_of_prose():
    """The geometry of ocrmypdf's linn.png (an English two-column sheet at 300 dpi): lines 32 px
    tall, the columns 26 px apart, their lines not level with each other, a heading across both."""
    sys.path.insert(0, ROOT)
    lines = [_box(250, 40, 1590, 72, "A heading line that runs across the whole page")]
    for k in range(5):
        lines.append(_box(247, 120 + 40 * k, 905 if k < 4 else 700, 152 + 40 * k, "left %d" % k))
        lines.append(_box(931, 134 + 40 * k, 1575 if k < 4 else 1200, 166 + 40 * k, "right %d" % k))
    assert _layout(lines) == ["A heading line that runs across the whole page",
                              "left 0 left 1 left 2 left 3 left 4", "right 0 right 1 right 2 right 3 right 4"]


def test_a_narrow_gap_between_short_values_or_inside_one_line_is_no_gutter():
    # A form: short labels, values in a column 0.8 line heights to their right, row by row.
    form = []
    for k, (label, value) in enumerate([("姓名", "张三丰先生"), ("部门", "行政部办公室"), ("电话", "010-12345678")]):
        form.append(_box(100, 100 + 50 * k, 160, 130 + 50 * k, label + "："))
        form.append(_box(184, 100 + 50 * k, 400, 130 + 50 * k, value))
    assert _layout(form) == ["姓名：  张三丰先生", "部门：  行政部办公室", "电话：  010-12345678"]
    # Prose where the detector split one line at a word gap: still one column.
    prose = [_box(100, 100 + 40 * k, 1000, 130 + 40 * k, "line %d" % k) for k in range(4)]
    prose[1:2] = [_box(100, 140, 500, 170, "line 1a"), _box(520, 140, 1000, 170, "line 1b")]
    assert "line 0" in _layout(prose)[0] and "line 3" in _layout(prose)[-1]
    assert not any(p.startswith("line 1b") for p in _layout(prose))


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_a_page_scanned_sideways_or_upside_down_reads_in_order(run, tmp_path, angle):
    """The engine reads each line the right way round; the page's own turn (from the direction it
    chose per line) puts the lines back in reading order: title first, five paragraphs."""
    from PIL import Image
    path = tmp_path / ("turned_%d.png" % angle)
    Image.open(os.path.join(OCR, "notice.png")).rotate(angle, expand=True).save(str(path))
    data = ok(run("read_document", {"path": str(path)}))
    assert accuracy(expected("notice.txt"), data["text"]) >= 0.95, data["text"]
    paras = data["text"].split("\n")
    assert paras[0] == "关于调整办公时间的通知" and len(paras) == 5, paras
    assert paras[-1] == "特此通知。"


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_boxes_turn_exactly_as_pillow_turns_the_pixels(angle):
    from PIL import Image
    sys.path.insert(0, ROOT)
    from xlakit.documents import ocr_turn
    im = Image.new("L", (40, 25), 255)
    im.putpixel((7, 3), 0)
    turned = im.rotate(angle, expand=True)
    dark = [(x, y) for y in range(turned.size[1]) for x in range(turned.size[0]) if turned.getpixel((x, y)) < 128]
    # pixel (7, 3) covers [7, 8) x [3, 4): its centre lands on the dark pixel's centre
    x, y = ocr_turn.turn_point(7.5, 3.5, angle, 40, 25)
    assert dark == [(int(x), int(y))]
    quad = ocr_turn.turn_quads([[(0, 0), (10, 0), (10, 2), (0, 2)]], angle, 40, 25)[0]
    assert quad[0] == min(quad, key=lambda p: p[0] + p[1])      # again from the top-left corner
    seen = {"boxes": [[(0, 0), (2, 0), (2, 10), (0, 10)]] * 3, "labels": [angle == 270] * 3}
    if angle != 180:
        assert ocr_turn.page_angle(seen) == angle
    seen = {"boxes": [[(0, 0), (10, 0), (10, 2), (0, 2)]] * 3, "labels": [angle == 180] * 3}
    assert ocr_turn.page_angle(seen) == (180 if angle == 180 else 0)


def test_a_long_line_the_direction_model_calls_upside_down_is_read_upright(run):
    """On this picture the direction model says "upside down" (95 %) for one upright 40-character
    line, which read turned over came out as three wrong characters; the page's other lines
    are upright, so that line is read upright too."""
    data = ok(read(run, "long_lines.jpg"))
    assert "第五条行政部汇总各部门需求后编制采购计划" in "".join(data["text"].split()), data["text"]
    assert accuracy(expected("long_lines.txt"), data["text"]) >= 0.98, data["text"]


def test_the_lines_of_a_page_are_read_the_way_most_of_them_lie():
    sys.path.insert(0, ROOT)
    import numpy
    from xlakit.documents import ocr_turn
    crop = numpy.arange(24, dtype=numpy.uint8).reshape(2, 4, 3)
    over = crop[::-1, ::-1]
    wide, tall = [(0, 0), (40, 0), (40, 4), (0, 4)], [(0, 0), (4, 0), (4, 40), (0, 40)]
    # Four wide lines, the model turned one: all are read as detected (the tall one keeps its verdict).
    got = ocr_turn.one_direction([crop] * 5, [crop, over, crop, crop, over], [wide] * 4 + [tall],
                                 [False, True, False, False, True])
    assert all((g == crop).all() for g in got[:4]) and (got[4] == over).all()
    # Upside down: the model turned three of four, the fourth is turned as well.
    got = ocr_turn.one_direction([crop] * 4, [over, over, crop, over], [wide] * 4, [True, True, False, True])
    assert all((g == over).all() for g in got)
    # No clear majority: each line as the model said.
    got = ocr_turn.one_direction([crop] * 2, [over, crop], [wide] * 2, [True, False])
    assert (got[0] == over).all() and (got[1] == crop).all()


def test_a_photographed_invoice_becomes_a_markdown_table(run):
    data = ok(read(run, "invoice.jpg"))
    text = data["text"]
    assert text.startswith("采购清单\n")
    assert "| 品名 | 数量 | 单价 | 金额 |\n|---|---|---|---|\n" in text
    for row in ("| 打印纸 | 10 | 25.00 | 250.00 |", "| 签字笔 | 50 | 2.50 | 125.00 |", "| 文件夹 | 20 | 8.00 | 160.00 |"):
        assert row in text
    assert re.search(r"\| 合计 \|  \|  \| [^|]*535\.00", text), text   # the stamp may share the cell


def test_a_scanned_pdf_reads_page_by_page_and_says_which_page_is_blank(run):
    data = ok(read(run, "scan.pdf"))
    assert data["pages"] == 2
    page1, page2 = data["text"].split("【第 2 页】")
    assert page1.startswith("【第 1 页】\n〔本页由文字识别")
    assert accuracy(expected("notice.txt"), page1.split("\n", 2)[2]) >= 0.95
    assert "没有识别出文字" in page2                          # blank, said so, no noise
    assert any("文字识别" in w for w in data["warnings"])


def test_a_wrong_hidden_text_layer_is_replaced_by_ocr(run):
    data = ok(read(run, "garbage_layer.pdf"))
    assert "Invoice total" not in data["text"]
    assert accuracy(expected("notice.txt"), data["text"].split("\n", 2)[2]) >= 0.95
    assert any("隐藏文字层" in w for w in data["warnings"])


def test_a_pdf_keeps_its_text_layer_and_reads_its_scanned_page(run):
    data = ok(read(run, "mixed.pdf"))
    page1, page2 = data["text"].split("【第 2 页】")
    assert "Quarterly report: page one has a real text layer." in page1
    assert "〔本页由文字识别" not in page1
    body = page2.split("〕\n", 1)[1]
    assert accuracy(expected("two_columns.txt"), body) >= 0.95
    # Two columns are read column by column, each wrapped clause joined again.
    assert body.index("结清上月账款") < body.index("第二条") < body.index("第三条") < body.index("第四条")


def test_force_reads_even_a_page_with_a_text_layer_by_rendering_it(run, tmp_path):
    printed = tmp_path / "printed.pdf"
    printed.write_bytes(make_fixtures.pdf([(None, (1240, 400), "Quarterly report: page one has a real text layer.")]))
    data = ok(run("read_document", {"path": str(printed), "ocr": "force"}))
    assert data["text"].startswith("【第 1 页】\n〔本页由文字识别")      # rendered by pdfium, then read
    assert accuracy("Quarterly report: page one has a real text layer.", data["text"].split("\n", 2)[2]) >= 0.9


def test_ocr_off_gives_the_old_answers(run):
    error = fail(read(run, "scan.pdf", ocr="off"))
    assert "扫描版" in error and "共 2 页" in error
    error = fail(read(run, "notice.png", ocr="off"))
    assert "图片" in error and "ocr" in error


def test_a_word_file_that_is_only_a_picture_is_read(run):
    data = ok(read(run, "picture_only.docx"))
    assert accuracy(expected("two_columns.txt"), data["text"]) >= 0.95
    assert any("只有图片" in w for w in data["warnings"])


def test_a_deck_of_picture_only_slides_is_read(run):
    """picture_only.pptx: one blank-layout slide holding notice.png (made with python-pptx). The
    slide marker alone is not text: the pictures are read."""
    data = ok(read(run, "picture_only.pptx"))
    assert data["text"].startswith("【第 1 页】\n关于调整办公时间的通知")
    assert accuracy(expected("notice.txt"), data["text"].split("\n", 1)[1]) >= 0.95
    assert data["ocr"]["pages_read"] == 1


def test_a_long_scan_stops_before_the_deadline_and_says_where_to_continue(run, tmp_path):
    """40 pages under a 10 s budget: a fast machine read 12 such pages inside the budget (CI once
    answered with the whole text and no next_page), so the scan is long enough that no machine
    reads it in one call; the call still ends at the budget, so the test costs the same."""
    with open(os.path.join(OCR, "scan.pdf"), "rb") as fh:
        raw = fh.read()
    jpeg = re.search(rb"/DCTDecode /Length (\d+) >>\nstream\n", raw)
    start = jpeg.end()
    picture = raw[start:start + int(jpeg.group(1))]
    size = tuple(int(v) for v in re.search(rb"/Width (\d+) /Height (\d+)", raw).groups())
    long_scan = tmp_path / "长扫描件.pdf"
    long_scan.write_bytes(make_fixtures.pdf([(picture, size, None)] * 40))
    started = time.monotonic()
    data = ok(run("read_document", {"path": str(long_scan)}, extra_env={"XLA_DEADLINE": "10"}))
    assert time.monotonic() - started < 40
    assert "next_page" in data, {k: v for k, v in data.items() if k != "text"}
    nxt = data["next_page"]
    assert 2 <= nxt <= 40 and data["pages"] == 40
    assert "【第 %d 页】" % (nxt - 1) in data["text"] and "【第 %d 页】" % nxt not in data["text"]
    assert any("start_page=%d" % nxt in w for w in data["warnings"])
    more = ok(run("read_document", {"path": str(long_scan), "start_page": nxt}, extra_env={"XLA_DEADLINE": "10"}))
    assert more["text"].startswith("【第 %d 页】" % nxt)


def test_a_scan_paged_window_by_window_goes_on_exactly_where_it_stopped(run, tmp_path):
    """Issue 36.5: a 5-page image-only PDF read in small windows that also stop for time. Both
    ways of going on (``next_offset`` alone; ``start_page=next_page`` with ``next_offset``) give
    the whole text exactly: no page twice, none missing, and no page OCR'd twice (the earlier
    pages come from ~/.xla/cache/ocr_pages). Each way starts from a fresh home (cold caches)."""
    path = _scan_of_the_fixture_page(tmp_path / "五页扫描.pdf", 5)
    homes = []
    for name in ("whole", "offsets", "pages"):
        homes.append(tmp_path / name)
        homes[-1].mkdir()
    whole = ok(run("read_document", {"path": path, "max_chars": 100000}, home=str(homes[0])))["text"]
    assert [int(n) for n in re.findall(r"【第 (\d+) 页】", whole)] == [1, 2, 3, 4, 5]
    for follow_pages, home in ((False, homes[1]), (True, homes[2])):
        offset, start, parts, calls, recognised, stopped = 0, None, [], 0, 0, 0
        while offset is not None:
            args = {"path": path, "offset": offset, "max_chars": 400}
            if start:
                args["start_page"] = start
            data = ok(run("read_document", args, home=str(home), extra_env={"XLA_DEADLINE": "5"}))
            calls += 1
            assert calls <= 30, "no progress: %r" % data
            parts.append(data["text"])
            recognised += data.get("ocr", {}).get("pages_read", 0)
            stopped += 1 if data.get("next_page") else 0
            offset = data["next_offset"]
            start = data.get("next_page") if follow_pages else None
        assert "".join(parts) == whole, (follow_pages, parts)
        assert recognised == 5, (follow_pages, recognised, stopped)


def test_a_clean_scan_in_every_picture_encoding_reads_to_the_end_at_98_percent(run, tmp_path):
    """Issue 36.6: clean A4 pages at 200 dpi, each different text (sans and serif, 10.5 and
    12 pt), stored grey JPEG, 1 bit, a 16-grey palette and Pillow's hex-coded 256-entry palette
    (pypdf decodes that one all black: the page once read as empty). Read window by window under
    a short budget as the model reads it, every page is there once and reads at >= 98 %."""
    import random
    rnd = random.Random(6)
    pool = make_fixtures.RULES[2:] + make_fixtures.NOTICE + make_fixtures.NARROW_LEFT + make_fixtures.NARROW_RIGHT
    pages, truths = [], []
    for i, how in enumerate(make_fixtures.ENCODINGS):
        img, truth = make_fixtures.text_page(["第 %d 部分" % (i + 1)] + rnd.sample(pool, 6),
                                             size=(29, 33)[i % 2], serif=i // 2 == 1)
        pages.append((make_fixtures.encoded(img, how), img.size, None))
        truths.append(truth)
    path = tmp_path / "清晰扫描件.pdf"
    path.write_bytes(make_fixtures.pdf(pages, dpi=200))
    args, text, calls = {"path": str(path)}, "", 0
    while True:
        data = ok(run("read_document", args, extra_env={"XLA_DEADLINE": "6"}))
        calls += 1
        assert calls <= 8, "no progress: %r" % {k: v for k, v in data.items() if k != "text"}
        text += data["text"]
        if data.get("next_page"):
            args = {"path": str(path), "start_page": data["next_page"]}
        elif data.get("next_offset") is not None:
            args = dict(args, offset=data["next_offset"])
        else:
            break
    assert [int(n) for n in re.findall(r"【第 (\d+) 页】", text)] == [1, 2, 3, 4]
    read = re.split(r"【第 \d+ 页】", re.sub(r"〔本页由文字识别[^〕]*〕", "", text))[1:]
    scores = [round(accuracy(t, got), 3) for t, got in zip(truths, read)]
    assert min(scores) >= 0.98, (scores, read)


def _scan_of_the_fixture_page(path, count):
    """A ``count``-page scan, every page the picture of fixtures/ocr/scan.pdf."""
    with open(os.path.join(OCR, "scan.pdf"), "rb") as fh:
        raw = fh.read()
    jpeg = re.search(rb"/DCTDecode /Length (\d+) >>\nstream\n", raw)
    picture = raw[jpeg.end():jpeg.end() + int(jpeg.group(1))]
    size = tuple(int(v) for v in re.search(rb"/Width (\d+) /Height (\d+)", raw).groups())
    path.write_bytes(make_fixtures.pdf([(picture, size, None)] * count))
    return str(path)


def test_pages_detected_ahead_read_as_the_first_and_no_thread_outlives_the_read(tmp_path):
    """Page 1 is detected on the reading thread, pages 2 and 3 on a thread while the page before
    is recognised: the same picture must give the same text. A window that stops early drops
    the page detected ahead: nothing is left running."""
    import threading
    sys.path.insert(0, ROOT)
    from xlakit import documents
    from xlakit.errors import Deadline
    path = _scan_of_the_fixture_page(tmp_path / "三页.pdf", 3)
    whole = documents.read(path)
    pages = [page.strip() for page in re.split(r"【第 \d+ 页】", whole.text)[1:]]
    assert len(pages) == 3 and pages[0].strip() and pages[0] == pages[1] == pages[2]
    assert not [t for t in threading.enumerate() if t.name == "ocr-ahead"]
    for budget in (4.0, 8.0):         # wherever the window stops, the pages it read are the same
        part = documents.read(path, deadline=Deadline(budget))
        read = [page.strip() for page in re.split(r"【第 \d+ 页】", part.text)[1:]]
        assert read and all(page == pages[0] for page in read[:-1])
        assert read[-1] == pages[0] or part.next_page
        assert not [t for t in threading.enumerate() if t.name == "ocr-ahead"]


def _project_without_engine(tmp_path):
    """A copy of the toolbox whose tools/pydeps has every library except the OCR group's."""
    root = tmp_path / "xla"
    root.mkdir()
    for name in ("pydeps_boot.py", "tools.json"):
        shutil.copy(os.path.join(ROOT, name), str(root / name))
    shutil.copytree(os.path.join(ROOT, "xlakit"), str(root / "xlakit"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tools" / "pydeps").mkdir(parents=True)
    for name in os.listdir(os.path.join(ROOT, "tools")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "tools", name), str(root / "tools" / name))
    keep = ("pypdf", "olefile", "openpyxl", "et_xmlfile", "xlrd", "xlwt")
    src = os.path.join(ROOT, "tools", "pydeps")
    for name in os.listdir(src):
        if name.split("-")[0].lower() in keep or name == "OleFileIO_PL.py":
            os.symlink(os.path.join(src, name), str(root / "tools" / "pydeps" / name))
    return str(root)


def test_without_the_engine_the_answer_says_at_once_how_to_install_it(run, tmp_path):
    root = _project_without_engine(tmp_path)
    env = {"XLA_DEADLINE": "20"}          # too little time left for a 130 MB install
    started = time.monotonic()
    error = fail(run("read_document", {"path": os.path.join(OCR, "scan.pdf")}, root=root, extra_env=env))
    assert time.monotonic() - started < 15
    assert "python3 xla.py install ocr" in error and "130 MB" in error and "共 2 页" in error
    error = fail(run("read_document", {"path": os.path.join(OCR, "invoice.jpg")}, root=root, extra_env=env))
    assert "python3 xla.py install ocr" in error
    # A PDF with some real text keeps it, and says what the scanned page needs.
    data = ok(run("read_document", {"path": os.path.join(OCR, "mixed.pdf")}, root=root, extra_env=env))
    assert "Quarterly report: page one has a real text layer." in data["text"]
    assert any("python3 xla.py install ocr" in w for w in data["warnings"])
    assert not os.path.exists(os.path.join(root, "tools", "pydeps", "rapidocr"))
