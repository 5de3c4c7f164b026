"""Fixtures of the Windows lane (tests/windows/, marker ``windows``); a test module imports the
ones it uses (``from winfixtures import lane, win_home, win_tmp``). Not a conftest.py: the test
modules import tests/conftest.py as ``conftest``, which a second conftest.py would shadow.

Without Wine the lane's tests skip with the reason; under ``CI=true`` they fail instead, since a
lane that silently skips in CI proves nothing (``.ci/run`` installs Wine and ``xla.py selftest``
prepares the lane before pytest starts)."""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import winlane  # noqa: E402


def in_ci():
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def lane():
    """The prepared lane, or skip (fail under CI) with the reason."""
    try:
        return winlane.lane()
    except winlane.LaneUnavailable as exc:
        message = "Windows lane unavailable: %s" % exc
        if in_ci():
            pytest.fail(message + " (CI=true: the lane must run in CI)", pytrace=False)
        pytest.skip(message)


@pytest.fixture
def win_home(lane):
    """A fresh HOME for the tool under C:\\users\\<user>\\xla-homes (Linux path; pass to win_tool)."""
    path = winlane.new_home()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def win_tmp(lane, request):
    """A fresh folder under C:\\users\\<user>\\xla-tests (a pathlib.Path on the Linux side)."""
    import pathlib
    import tempfile
    parent = os.path.join(lane.profile, "xla-tests")
    os.makedirs(parent, exist_ok=True)
    path = tempfile.mkdtemp(prefix="t%d-" % os.getpid(), dir=parent)
    yield pathlib.Path(path)
    shutil.rmtree(path, ignore_errors=True)
