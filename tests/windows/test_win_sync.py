"""``xla.py sync`` on a Windows without git (the lane has none; PATH is only the system folders):
the toolbox arrives from the forge's release zip, verified, and its tools run."""
import json
import os

import pytest

from forge import REMOTE, Forge
from netserver import serve  # noqa: F401 - the fixture
from test_sync import Remote, gitenv  # noqa: F401 - fixture
from winfixtures import lane, win_home  # noqa: F401 - fixtures
from winlane import lane_python, win_path, win_python, win_run, win_xla

pytestmark = pytest.mark.windows

SYSTEM_PATH = "C:\\windows\\system32;C:\\windows"


def test_sync_without_git_installs_and_updates(tmp_path, gitenv, serve, win_home):
    remote = Remote(tmp_path, gitenv)
    remote.release("v1.0.0")
    forge = Forge(serve, remote, gitenv)
    env = dict(forge.env(), PATH=SYSTEM_PATH)
    assert win_python("import shutil; print(shutil.which('git'))", extra_env=env).stdout.strip() == "None"
    dest = os.path.join(win_home, "工具箱")
    out = win_xla(["sync", "--remote", REMOTE, "--dest", win_path(dest)], win_home, extra_env=env)
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["action"] == "cloned" and data["tag"] == "v1.0.0", out
    tool = win_run([lane_python(), "-X", "utf8", "-u", "hello.py"], cwd=os.path.join(dest, "tools"), stdin=b"{}")
    assert json.loads(tool.stdout)["version"] == "v1.0.0", tool
    remote.release("v1.1.0")
    out = win_xla(["sync", "--remote", REMOTE, "--dest", win_path(dest)], win_home, extra_env=env)
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["action"] == "updated" and data["tag"] == "v1.1.0", out
