"""xlakit.raster.fonts against fontTools (a test-only reference): the same glyph ids and the same
outline points for TrueType glyf (TTC, composites, upem 2048/256) and CFF (CID-keyed TTC, non-CID),
and the right face of a collection picked by the name table. Fonts that are absent are skipped."""
import os

import pytest

from xlakit.raster import canvas as cv
from xlakit.raster.fonts import Font, FontError
from xlakit.raster.typeset import bitmap_font, gb2312_cells

FONTS = {
    "noto": ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "cff", 2, "Noto Sans CJK SC"),
    "wqy-microhei": ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "glyf", 0, "WenQuanYi Micro Hei"),
    "wqy-zenhei": ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", "glyf", 0, "WenQuanYi Zen Hei"),
    "droid": ("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf", "glyf", 0, "Droid Sans Fallback"),
    "dejavu": ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "glyf", 0, "DejaVu Sans"),
    "cantarell": ("/usr/share/fonts/opentype/cantarell/Cantarell-Regular.otf", "cff", 0, "Cantarell"),
}
SAMPLE = "中文图表销售额万亿啊座，。（）%ABCxyz0123456789"


def _font(key):
    path = FONTS[key][0]
    if not os.path.exists(path):
        pytest.skip("%s not installed" % path)
    return Font(path)


@pytest.mark.parametrize("key", sorted(FONTS))
def test_face_choice_and_format(key):
    path, fmt, index, family = FONTS[key]
    f = _font(key)
    assert f.outline_format == fmt
    assert f.index == index
    assert f.family == family


def _points(contours):
    out = []
    for c in contours:
        pts = [c[0]]
        for seg in c[1:]:
            pts += [(seg[i], seg[i + 1]) for i in range(0, len(seg), 2)]
        while len(pts) > 1 and pts[-1] == pts[0]:
            pts.pop()
        out.append([(round(x, 3), round(y, 3)) for x, y in pts])
    return out


@pytest.mark.parametrize("key", sorted(FONTS))
def test_outlines_match_fonttools(key):
    ttLib = pytest.importorskip("fontTools.ttLib")
    from fontTools.pens.basePen import BasePen
    f = _font(key)

    class Pen(BasePen):
        def __init__(self, gs):
            BasePen.__init__(self, gs)
            self.out, self.cur = [], None

        def _moveTo(self, p):
            self.cur = [p]

        def _lineTo(self, p):
            self.cur.append(p)

        def _qCurveToOne(self, c, p):
            self.cur += [c, p]

        def _curveToOne(self, a, b, p):
            self.cur += [a, b, p]

        def _closePath(self):
            self.out.append(self.cur)

        _endPath = _closePath

    tt = ttLib.TTFont(f.path, fontNumber=f.index, lazy=True)
    cmap, order, gs = tt.getBestCmap(), tt.getGlyphOrder(), tt.getGlyphSet()
    checked = 0
    for ch in SAMPLE:
        if ord(ch) not in cmap:
            assert not f.has(ch)
            continue
        gid = f.glyph_id(ch)
        assert order[gid] == cmap[ord(ch)]
        assert f.advance(gid) == tt["hmtx"][cmap[ord(ch)]][0]
        pen = Pen(gs)
        gs[cmap[ord(ch)]].draw(pen)
        ours, theirs = _points(f.outline(gid)), _points([[tuple(p) for p in c] for c in pen.out])
        # contours may start at a different point of the same closed loop (all-off-curve starts)
        for a, b in zip(ours, theirs):
            assert len(a) == len(b) and set(a) == set(b), ch
        assert len(ours) == len(theirs)
        checked += 1
    assert checked >= 10


def test_not_a_font_is_a_clean_error(tmp_path):
    p = tmp_path / "x.ttf"
    p.write_bytes(b"hello world, not a font" * 10)
    with pytest.raises(FontError):
        Font(str(p))


def test_bitmap_font_covers_gb2312_level1_and_ascii():
    bf = bitmap_font()
    cells = gb2312_cells()
    assert len([c for c in cells if "\u4e00" <= c <= "\u9fff"]) == 3755
    for ch in "啊座中文图表，。：；（）％、《》ABCxyz019":
        assert bf.has(ch), ch
    assert bf.rows(bf.glyph_id("中")), "中 has no ink"
    assert not bf.has("\U00020000")


def test_rasterizer_coverage_of_a_square():
    """A 10x10 square at fractional offsets covers exactly 100 pixels' worth of area."""
    total = 0.0
    for row, full, partial in cv.rasterize([[(2.5, 3.25), (12.5, 3.25), (12.5, 13.25), (2.5, 13.25)]], 40, 40, S=4):
        total += sum(f1 - f0 for f0, f1 in full) + sum(partial.values())
    assert abs(total - 100.0) < 0.01
