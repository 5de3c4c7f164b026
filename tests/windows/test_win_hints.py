"""Fix-it hints on Windows: they name the Python that runs (``python3`` is the Microsoft Store
alias there), and the no-font hint names the Windows font."""
import os
import shutil

import pytest

from conftest import FIXTURES, fail, ok
from winfixtures import lane, win_home  # noqa: F401 - fixtures
from winlane import lane_python, win_path, win_tool

pytestmark = pytest.mark.windows


def test_missing_ocr_engine_names_this_python(win_home):
    """The lane has no OCR engine: the answer gives the command with the lane's python.exe."""
    shutil.copy(os.path.join(FIXTURES, "ocr", "invoice.jpg"), os.path.join(win_home, "发票.jpg"))
    err = fail(win_tool("read_document", {"path": win_path(os.path.join(win_home, "发票.jpg"))}, home=win_home,
                        env={"XLA_DEADLINE": "20"}))
    assert lane_python() + " xla.py install ocr" in err, err
    assert "python3" not in err and "pip3" not in err


def test_no_font_hint_names_the_windows_font(win_home):
    """The lane's Windows has no Chinese font: the chart is drawn with the bitmap font and the hint
    names YaHei/SimHei, not a Linux package."""
    data = ok(win_tool("draw_chart", {"type": "bar", "labels": ["一月", "二月"], "values": [1, 2]}, home=win_home))
    warning = " ".join(data.get("warnings", []))
    assert "微软雅黑" in warning and "文泉驿" not in warning and "apt" not in warning, data


NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"


@pytest.mark.skipif(not os.path.isfile(NOTO), reason="needs fonts-noto-cjk (installed by .ci/run)")
def test_a_per_user_windows_font_is_found(win_home):
    """A Chinese font in the user's own Fonts folder (%LOCALAPPDATA%\\Microsoft\\Windows\\Fonts,
    where Windows puts fonts installed "for me only") is used: no bitmap font, no hint."""
    folder = os.path.join(win_home, "AppData", "Local", "Microsoft", "Windows", "Fonts")
    os.makedirs(folder)
    shutil.copy(NOTO, os.path.join(folder, "msyh.ttc"))
    data = ok(win_tool("draw_chart", {"type": "bar", "labels": ["一月", "二月"], "values": [1, 2]}, home=win_home))
    assert "点阵" not in data["font"] and not data.get("warnings"), data
