"""The Windows lane's own promises that hold on any machine: without Wine its tests skip with the
reason, but under CI=true they fail (a lane that skips in CI proves nothing); the `windows` marker
stays out of the quick subset."""
import os
import subprocess
import sys

from conftest import ROOT


def _pytest(extra_env, *args):
    env = {"PATH": "/nonexistent-bin", "HOME": os.environ.get("HOME", "/root"),
           "PYTHONPATH": os.pathsep.join([ROOT, os.path.join(ROOT, "tools", "pydeps")])}
    env.update(extra_env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"] + list(args),
                          cwd=ROOT, env=env, capture_output=True, timeout=300)


def test_without_wine_the_lane_skips_with_the_reason_and_fails_in_ci():
    test = os.path.join(ROOT, "tests", "windows", "test_win_lane.py") + "::test_path_mapping_round_trips"
    out = _pytest({}, test)
    text = out.stdout.decode()
    assert out.returncode == 0 and "1 skipped" in text and "wine is not installed" in text, text[-1500:]
    out = _pytest({"CI": "true"}, test)
    text = out.stdout.decode()
    assert out.returncode != 0 and "wine is not installed" in text and "CI=true" in text, text[-1500:]


def test_windows_tests_are_marked_and_not_quick():
    folder = os.path.join(ROOT, "tests", "windows")
    assert _pytest({}, "--collect-only", "-q", folder).returncode == 0          # collected...
    assert _pytest({}, "--collect-only", "-q", "-m", "quick", folder).returncode == 5   # ...none quick
    assert _pytest({}, "--collect-only", "-q", "-m", "not windows", folder).returncode == 5   # all marked
