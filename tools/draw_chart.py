"""draw_chart: turn a handful of numbers into a colour line, bar or pie chart (PNG).

Why a tool: the model cannot draw, and users want a picture they can paste into a report. Standard
library only (no matplotlib/Pillow): fonts are parsed and rasterized by :mod:`xlakit.raster`, so the
chart looks the same on every machine and Chinese text never turns into boxes.

Parameters: type line/bar/pie; labels (categories); series [{"name", "data"}] for line/bar (null =
a gap in a line); values for pie; title, x_label, y_label, unit; stacked / horizontal bars;
value_labels (default: shown when they fit); number_format auto (1.2万 / 3.5亿) / comma / plain;
width / height (clamped to sane bounds); file_name (saved under the workspace's charts/ folder).

The PNG says 144 dpi (pHYs): the default 800 px chart is 141 mm wide, about a Word page's text
width, so it is placed at print size and prints at 144 ppi rather than a guessed 96 dpi. ``scale``
(1–3) draws the same layout with that many pixels per unit and says that much more dpi: with
``scale: 2`` a chart for a printed report is 1600 px at 288 dpi, the same 141 mm, about 280 ppi in
the PDF instead of about 139 (the layout, label breaks and font sizes do not change).

Returns by the images convention: ``images`` (base64 PNG, shown to the user by the host), a
one-sentence Chinese ``summary`` for the model, ``path`` of the saved PNG, size, the font used and
``missing_chars`` when some character was found in no font (drawn as a box).

Fonts, in order: ``XLA_CHART_FONT`` / ``chart_font`` in ~/.xla/settings.json; Microsoft YaHei at
~/.xla/fonts/msyh.ttc when it is there (this version uses it but does not download it yet); the
system's Chinese fonts; the embedded 24x24 bitmap font (``XLA_CHART_BITMAP=1`` / ``chart_bitmap:
true`` forces it). A font that does not parse is skipped with a warning, never an error.
"""
import base64
import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import files, paths  # noqa: E402
from xlakit.errors import InputError  # noqa: E402
from xlakit.raster import chart, png, sfnt  # noqa: E402
from xlakit.raster.typeset import choose_fonts  # noqa: E402

KIND_NAMES = {"line": "折线图", "bar": "柱状图", "pie": "饼图"}


def _file_name(params, spec):
    name = (params.get("file_name") or "").strip()
    if name:
        name = os.path.basename(name.replace("\\", "/"))
        if not name.lower().endswith(".png"):
            name += ".png"
    else:
        base = spec["title"] or KIND_NAMES[spec["type"]]
        base = re.sub(r'[\\/:*?"<>|\s]+', "_", base).strip("_.")[:40] or "chart"
        name = "%s_%s.png" % (base, datetime.datetime.now().strftime("%Y%m%d_%H%M%S"))
    if re.search(r'[\\/:*?"<>|]', name) or name.startswith("."):
        raise InputError("file_name「%s」含有不能用于文件名的字符，请换一个，如 销售额.png" % name)
    return name


def main(params):
    notes = []
    fonts = choose_fonts(notes=notes)
    canvas, spec, summary, layout_notes = chart.draw(params, fonts)
    data = png.encode(canvas.w, canvas.h, canvas.buf, dpi=chart.PRINT_DPI * spec["scale"])
    folder = os.path.join(paths.workspace_dir(create=True), "charts")
    os.makedirs(folder, exist_ok=True)
    path = files.unique_path(os.path.join(folder, _file_name(params, spec)))
    paths.check_write_allowed(path)
    files.write_bytes(path, data, backup=False)
    for n in notes + layout_notes:
        rt.warn(n)
    if fonts.primary.kind == "bitmap" and os.environ.get("XLA_CHART_BITMAP") != "1":
        rt.warn("没有找到中文字体，用内嵌点阵字库画了文字；" + sfnt.install_hint())
    out = {"summary": summary, "path": path, "width": canvas.w, "height": canvas.h, "bytes": len(data),
           "font": fonts.describe(),
           "images": [{"name": os.path.basename(path), "mime": "image/png",
                       "data": base64.b64encode(data).decode("ascii")}]}
    if fonts.missing:
        out["missing_chars"] = "".join(fonts.missing[:50])
        rt.warn("有 %d 个字符在所有字体里都找不到，画成了方框：%s" % (len(fonts.missing), "".join(fonts.missing[:20])))
    return out


if __name__ == "__main__":
    rt.run(main)
