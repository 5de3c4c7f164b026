"""The sync without git (xlakit/sync_archive.py): an HTTPS remote is synced from the forge's
release zips, verified by the commit id git archive stores in them, as office PCs have no git.
The forge is tests/forge.py over tests/netserver.py; the sync process gets a PATH without git."""
import json
import os

from forge import REMOTE, Forge
from netserver import serve  # noqa: F401 - the fixture
from test_sync import Remote, gitenv, read, run_sync, run_tool  # noqa: F401 - fixtures and helpers


def _no_git(tmp_path, forge):
    empty = tmp_path / "no-git-bin"
    empty.mkdir(exist_ok=True)
    return dict(forge.env(), PATH=str(empty))


def test_install_update_current_edits_without_git(tmp_path, gitenv, serve):
    remote = Remote(tmp_path, gitenv)
    remote.release("v1.0.0")
    forge = Forge(serve, remote, gitenv)
    dest = str(tmp_path / "工具 箱")
    env = _no_git(tmp_path, forge)
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=env)
    assert data["ok"] and data["action"] == "cloned" and data["tag"] == "v1.0.0" and data["via"] == "archive", data
    assert "没有 git" in data["message"] and not os.path.exists(os.path.join(dest, ".git"))
    assert run_tool(dest)["version"] == "v1.0.0" and read(os.path.join(dest, ".xla-tag")) == "v1.0.0"
    os.makedirs(os.path.join(dest, "tools", "pydeps", "libx"))             # installed libraries survive updates

    assert run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=env)[0]["action"] == "current"
    remote.release("v1.1.0", annotated=True)
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=env)
    assert data["ok"] and data["action"] == "updated" and data["previous_tag"] == "v1.0.0" and data["tag"] == "v1.1.0"
    assert run_tool(dest)["version"] == "v1.1.0" and os.path.isdir(os.path.join(dest, "tools", "pydeps", "libx"))
    assert [n for n in os.listdir(str(tmp_path)) if ".old-" in n or ".staging-" in n] == []

    # a local edit is refused, then kept in a backup with --force
    with open(os.path.join(dest, "VERSION.txt"), "w", encoding="utf-8") as fh:
        fh.write("edited\n")
    remote.release("v1.2.0")
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=env)
    assert not data["ok"] and data["action"] == "refused" and data["local_edits"] == ["VERSION.txt"], data
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, "--force", extra_env=env)
    assert data["ok"] and data["tag"] == "v1.2.0" and read(os.path.join(data["backup"], "VERSION.txt")) == "edited"


def test_an_archive_of_another_commit_is_refused(tmp_path, gitenv, serve):
    remote = Remote(tmp_path, gitenv)
    remote.release("v1.0.0")
    remote.release("v1.1.0")
    forge = Forge(serve, remote, gitenv)
    forge.tamper("v1.1.0", "v1.0.0")                 # the zip served as v1.1.0 is v1.0.0's
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=_no_git(tmp_path, forge))
    assert not data["ok"] and "对不上" in data["error"] and not os.path.exists(dest), data


def test_a_broken_newest_release_is_skipped_and_offline_keeps_the_copy(tmp_path, gitenv, serve):
    remote = Remote(tmp_path, gitenv)
    remote.release("v1.0.0")
    remote.release("v1.1.0", broken="bad_json")
    forge = Forge(serve, remote, gitenv)
    dest = str(tmp_path / "box")
    env = _no_git(tmp_path, forge)
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=env)
    assert data["ok"] and data["tag"] == "v1.0.0" and "v1.1.0" in data["message"], data
    offline = dict(env, XLA_NET_MAP=json.dumps({"*": "offline"}))
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", dest, extra_env=offline)
    assert data["ok"] and data["action"] == "offline" and data["tag"] == "v1.0.0", data


def test_a_foreign_folder_is_not_touched(tmp_path, gitenv, serve):
    remote = Remote(tmp_path, gitenv)
    remote.release("v1.0.0")
    forge = Forge(serve, remote, gitenv)
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "我的.txt").write_text("x", encoding="utf-8")
    data, _ = run_sync(gitenv, "--remote", REMOTE, "--dest", str(dest), extra_env=_no_git(tmp_path, forge))
    assert not data["ok"] and data["action"] == "refused" and (dest / "我的.txt").exists()
