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
