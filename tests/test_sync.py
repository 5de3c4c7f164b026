"""The tag sync (xla_sync.py) against real git repositories.

Every test builds a bare repository in tmp_path from a small working repository holding a valid
toolbox (tools.json + tools/hello.py + .gitignore for tools/pydeps/), tags releases in it, and syncs
from its ``file://`` address into a destination under tmp_path. Git runs with a private HOME (a
minimal .gitconfig) and GIT_CONFIG_NOSYSTEM=1 so the machine's own git settings do not leak in.
Most steps spawn ``python xla_sync.py`` the way ``xla.py sync`` is used; the speed of an
already-current sync is measured and printed (not asserted)."""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT, CJK

from xlakit.fs import lock as xla_lock
from xlakit import manifest as xla_manifest
import xla_sync

SCRIPT = os.path.join(ROOT, "xla_sync.py")

HELLO = ('import json\nprint(json.dumps({"ok": True, "hello": "你好", "version": open("../VERSION.txt").read().strip()},'
         ' ensure_ascii=False))\n')


def tool_entry(name):
    return {"name": name, "description": "测试工具 %s" % name, "script": "%s.py" % name,
            "parameters": {"type": "object", "properties": {}}}


# ---------------------------------------------------------------------------------------------
# Fixtures: a private git environment and a remote we can release into

@pytest.fixture
def gitenv(tmp_path, monkeypatch):
    """Environment for git and for the sync subprocess; also applied to this process (in-process calls)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = XLA Test\n\temail = xla-test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    for key in ("SYSTEMROOT", "SYSTEMDRIVE", "TEMP", "TMP", "COMSPEC"):      # needed on Windows
        if key in os.environ:
            env[key] = os.environ[key]
    if os.name == "nt":
        env["USERPROFILE"] = str(home)
    for key in ("XLA_DEV", "XLA_TOOLS_SYNC", "XLA_TOOLS_REMOTE", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return env


def git(env, *args, cwd=None):
    res = subprocess.run(["git"] + list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, "git %s: %s" % (" ".join(args), res.stderr)
    return res.stdout


class Remote:
    """A working repository plus the bare repository it pushes to (the "remote" the sync reads)."""

    def __init__(self, base, env, name="remote"):
        self.env = env
        self.work = str(base / (name + "-work"))
        self.bare = base / (name + ".git")
        git(env, "init", "-q", "--bare", str(self.bare))
        git(env, "init", "-q", self.work)
        git(env, "remote", "add", "origin", str(self.bare), cwd=self.work)
        self.url = self.bare.as_uri()

    def release(self, tag=None, tools=("hello",), broken=None, annotated=False, version=None):
        """Commit a toolbox (``broken``: None / "missing_script" / "bad_json") and push it, tagged."""
        version = version or tag or "untagged"
        tools_dir = os.path.join(self.work, "tools")
        os.makedirs(tools_dir, exist_ok=True)
        with open(os.path.join(self.work, ".gitignore"), "w", encoding="utf-8") as fh:
            fh.write("tools/pydeps/\n__pycache__/\n")
        with open(os.path.join(self.work, "VERSION.txt"), "w", encoding="utf-8") as fh:
            fh.write(version + "\n")
        for name in tools:
            with open(os.path.join(tools_dir, name + ".py"), "w", encoding="utf-8") as fh:
                fh.write(HELLO)
        manifest = {"tools": [tool_entry(n) for n in tools]}
        if broken == "missing_script":
            manifest["tools"].append(tool_entry("ghost"))          # tools/ghost.py is never committed
        text = json.dumps(manifest, ensure_ascii=False, indent=1)
        if broken == "bad_json":
            text = text[:-5]                                        # cut off: not JSON any more
        with open(os.path.join(self.work, "tools.json"), "w", encoding="utf-8") as fh:
            fh.write(text)
        git(self.env, "add", "-A", cwd=self.work)
        git(self.env, "commit", "-q", "--allow-empty", "-m", "release %s" % version, cwd=self.work)
        git(self.env, "push", "-q", "origin", "HEAD:refs/heads/main", cwd=self.work)
        if tag:
            self.tag(tag, annotated)
        return git(self.env, "rev-parse", "HEAD", cwd=self.work).strip()

    def tag(self, name, annotated=False):
        if annotated:
            git(self.env, "tag", "-a", name, "-m", "release " + name, cwd=self.work)
        else:
            git(self.env, "tag", name, cwd=self.work)
        git(self.env, "push", "-q", "origin", "refs/tags/" + name, cwd=self.work)


@pytest.fixture
def remote(tmp_path, gitenv):
    """v1.9.9 (lightweight), v1.10.0 (annotated), then a newer commit tagged only with a pre-release
    and junk names (its manifest is broken, so picking it by mistake would show)."""
    r = Remote(tmp_path, gitenv)
    r.release("v1.9.9")
    r.release("v1.10.0", annotated=True)
    r.release(None, broken="bad_json", version="v2.0.0-rc1")
    for junk in ("v2.0.0-rc1", "release-x", "v3.0", "latest", "v01.2.3"):
        r.tag(junk)
    return r


def run_sync(env, *args, extra_env=None):
    """Spawn ``python xla_sync.py ARGS`` like ``xla.py sync``; returns (parsed JSON, CompletedProcess)."""
    full_env = dict(env)
    full_env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-X", "utf8", SCRIPT] + list(args), env=full_env,
                          capture_output=True, text=True, encoding="utf-8", timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout             # exactly one JSON object on stdout
    data = json.loads(lines[0])
    assert isinstance(data["ok"], bool) and data["action"] in xla_sync.ACTIONS, data
    assert CJK.search(data["message"]), data
    if data["ok"]:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode != 0
        assert data["error"] == data["message"] and data["error"] in proc.stderr
    return data, proc


def read(path):
    with open(path, "r", encoding="utf-8") as fh:
        return fh.read().strip()


def head(env, dest):
    return git(env, "rev-parse", "HEAD", cwd=dest).strip()


def run_tool(dest, name="hello"):
    """Run a synced tool the way the host does (cwd tools/): proves the copy is usable."""
    proc = subprocess.run([sys.executable, "-X", "utf8", "-u", name + ".py"], cwd=os.path.join(dest, "tools"),
                          input="{}", capture_output=True, text=True, encoding="utf-8", timeout=60)
    return json.loads(proc.stdout)


def leftovers(dest):
    parent, base = os.path.split(dest)
    return [n for n in os.listdir(parent) if n.startswith(base + ".") and (".staging-" in n or ".check-" in n)]


# ---------------------------------------------------------------------------------------------
# Tag parsing (no git needed)

def test_release_tags_keep_only_plain_versions_and_order_by_numbers():
    out = "\n".join([
        "1111\trefs/tags/v1.9.9",
        "2222\trefs/tags/v1.10.0",                   # annotated: tag object ...
        "3333\trefs/tags/v1.10.0^{}",                # ... and the commit it points to
        "4444\trefs/tags/v2.0.0-rc1",
        "5555\trefs/tags/release-x",
        "6666\trefs/tags/v3.0",
        "7777\trefs/tags/v01.2.3",
        "8888\trefs/heads/v9.9.9",
        "garbage line",
    ])
    tags = xla_sync.release_tags(out)
    assert tags == {"v1.9.9": "1111", "v1.10.0": "3333"}
    assert xla_sync.newest_first(tags) == ["v1.10.0", "v1.9.9"]
    assert xla_sync.newest_first(["v0.0.9", "v1.2.10", "v1.2.9", "v10.0.0"]) == ["v10.0.0", "v1.2.10", "v1.2.9", "v0.0.9"]
    assert xla_sync.normalize_remote("https://user@Gitee.com/a/b.git/") == xla_sync.normalize_remote("https://gitee.com/a/b")


# ---------------------------------------------------------------------------------------------
# The main story: clone, update (pydeps survives), current, broken release kept out, offline

def test_clone_update_current_broken_offline(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "cloned", data
    assert data["tag"] == "v1.10.0" and data["latest"] == "v1.10.0" and data["previous_tag"] is None
    assert data["path"] == dest
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.0"
    assert read(os.path.join(dest, "VERSION.txt")) == "v1.10.0"
    assert xla_manifest.check_manifest(dest) == []
    assert git(gitenv, "rev-parse", "--is-shallow-repository", cwd=dest).strip() == "true"
    assert git(gitenv, "status", "--porcelain", cwd=dest) == ""          # our tag file does not show
    assert run_tool(dest)["version"] == "v1.10.0"
    assert leftovers(dest) == []

    # A newer release; tools/pydeps/ (ignored by git) must survive the switch.
    marker = os.path.join(dest, "tools", "pydeps", "marker.txt")
    os.makedirs(os.path.dirname(marker))
    with open(marker, "w", encoding="utf-8") as fh:
        fh.write("installed libraries live here")
    new_commit = remote.release("v1.10.1", tools=("hello", "world"))
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "updated", data
    assert data["tag"] == "v1.10.1" and data["previous_tag"] == "v1.10.0"
    assert read(marker) == "installed libraries live here"
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.1"
    assert head(gitenv, dest) == new_commit
    assert os.path.isfile(os.path.join(dest, "tools", "world.py"))
    assert git(gitenv, "status", "--porcelain", cwd=dest) == ""
    assert leftovers(dest) == []
    worktrees = os.path.join(dest, ".git", "worktrees")              # the validation worktree is gone
    assert not os.path.isdir(worktrees) or not os.listdir(worktrees)

    # Already newest: nothing to do (only ls-remote). Timed in-process and as a subprocess.
    start = time.perf_counter()
    result = xla_sync.sync(remote=remote.url, dest=dest)
    in_process = time.perf_counter() - start
    assert result["ok"] and result["action"] == "current" and result["tag"] == "v1.10.1", result
    start = time.perf_counter()
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    cli = time.perf_counter() - start
    assert data["action"] == "current" and data["previous_tag"] == "v1.10.1"
    print("\n[sync] already-current sync: %.3f s in-process, %.3f s as a subprocess" % (in_process, cli))

    # A broken release (manifest names a script that is not there) is never switched to.
    remote.release("v1.11.0", broken="missing_script")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "kept", data
    assert data["tag"] == "v1.10.1" and data["latest"] == "v1.11.0"
    assert "v1.11.0" in data["message"] and "v1.10.1" in data["message"]
    assert any("ghost" in p for p in data["problems"])
    assert head(gitenv, dest) == new_commit
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.1"
    assert xla_manifest.check_manifest(dest) == [] and run_tool(dest)["version"] == "v1.10.1"
    assert read(marker) == "installed libraries live here"
    assert leftovers(dest) == []

    # Remote unreachable (the repository moved away): offline, copy kept and usable.
    moved = str(remote.bare) + ".away"
    os.rename(str(remote.bare), moved)
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "offline", data
    assert data["tag"] == "v1.10.1" and data["latest"] is None
    assert "v1.10.1" in data["message"]
    assert run_tool(dest)["version"] == "v1.10.1"
    os.rename(moved, str(remote.bare))

    # Back online, a fixed release arrives: updated past the broken one.
    remote.release("v1.11.1")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["action"] == "updated" and data["tag"] == "v1.11.1" and data["previous_tag"] == "v1.10.1", data
    assert read(marker) == "installed libraries live here"


def test_verbose_shows_git_progress_on_stderr(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    data, proc = run_sync(gitenv, "--remote", remote.url, "--dest", dest, "--verbose")
    assert data["action"] == "cloned"
    assert "clone --depth 1 --branch v1.10.0" in proc.stderr
    assert "Receiving objects" in proc.stderr or "Cloning into" in proc.stderr, proc.stderr


def test_library_default_dest_is_under_home(tmp_path, gitenv, remote, monkeypatch):
    monkeypatch.setenv("XLA_TOOLS_REMOTE", remote.url)
    result = xla_sync.sync()
    expected = os.path.join(gitenv["HOME"], ".xla-tools")
    assert result["ok"] and result["action"] == "cloned" and result["path"] == expected, result
    assert read(os.path.join(expected, ".xla-tag")) == "v1.10.0"


# ---------------------------------------------------------------------------------------------
# Broken releases on a fresh install

def test_fresh_install_skips_a_broken_newest_release(tmp_path, gitenv):
    r = Remote(tmp_path, gitenv)
    r.release("v1.0.0")
    r.release("v1.1.0", broken="bad_json")
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", r.url, "--dest", dest)
    assert data["ok"] and data["action"] == "cloned" and data["tag"] == "v1.0.0", data
    assert data["latest"] == "v1.1.0" and "v1.1.0" in data["message"]
    assert read(os.path.join(dest, ".xla-tag")) == "v1.0.0" and xla_manifest.check_manifest(dest) == []
    assert leftovers(dest) == []


def test_fresh_install_with_only_broken_releases_installs_nothing(tmp_path, gitenv):
    r = Remote(tmp_path, gitenv)
    r.release("v1.0.0", broken="missing_script")
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", r.url, "--dest", dest)
    assert not data["ok"] and data["action"] == "failed" and data["tag"] is None, data
    assert "v1.0.0" in data["error"] and "ghost" in data["error"]
    assert not os.path.exists(dest) and leftovers(dest) == []


# ---------------------------------------------------------------------------------------------
# Destinations that are not ours

def test_foreign_folder_is_refused_then_replaced_with_force(tmp_path, gitenv, remote):
    dest = tmp_path / "box"
    dest.mkdir()
    (dest / "我的笔记.txt").write_text("重要内容", encoding="utf-8")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", str(dest))
    assert not data["ok"] and data["action"] == "refused", data
    assert "--force" in data["error"]
    assert sorted(os.listdir(str(dest))) == ["我的笔记.txt"]
    assert (dest / "我的笔记.txt").read_text(encoding="utf-8") == "重要内容"

    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", str(dest), "--force")
    assert data["ok"] and data["action"] == "cloned" and data["tag"] == "v1.10.0", data
    backup = data["backup"]
    assert os.path.basename(backup).startswith("box.bak-")
    assert read(os.path.join(backup, "我的笔记.txt")) == "重要内容"
    assert read(str(dest / ".xla-tag")) == "v1.10.0"


def test_a_file_at_dest_is_refused(tmp_path, gitenv, remote):
    dest = tmp_path / "box"
    dest.write_text("not a folder", encoding="utf-8")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", str(dest))
    assert data["action"] == "refused" and dest.read_text(encoding="utf-8") == "not a folder"


def test_checkout_of_another_repository_is_refused(tmp_path, gitenv, remote):
    other = Remote(tmp_path, gitenv, name="other")
    other.release("v5.0.0")
    dest = str(tmp_path / "box")
    assert run_sync(gitenv, "--remote", other.url, "--dest", dest)[0]["action"] == "cloned"
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["action"] == "refused" and other.url.split("/")[-1].replace(".git", "") in data["error"], data
    assert read(os.path.join(dest, ".xla-tag")) == "v5.0.0"


def test_local_edits_are_refused_then_backed_up_with_force(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    assert run_sync(gitenv, "--remote", remote.url, "--dest", dest)[0]["action"] == "cloned"
    hello = os.path.join(dest, "tools", "hello.py")
    with open(hello, "a", encoding="utf-8") as fh:
        fh.write("# my local fix\n")
    os.makedirs(os.path.join(dest, "tools", "pydeps"))
    with open(os.path.join(dest, "tools", "pydeps", "marker.txt"), "w", encoding="utf-8") as fh:
        fh.write("libs")
    remote.release("v1.10.1")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert not data["ok"] and data["action"] == "refused" and data["tag"] == "v1.10.0", data
    assert "tools/hello.py" in data["error"]
    assert read(hello).endswith("# my local fix")
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.0"

    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest, "--force")
    assert data["ok"] and data["action"] == "cloned" and data["tag"] == "v1.10.1", data
    assert data["previous_tag"] == "v1.10.0"
    assert read(os.path.join(data["backup"], "tools", "hello.py")).endswith("# my local fix")
    assert read(os.path.join(dest, "tools", "pydeps", "marker.txt")) == "libs"     # our libraries carried over
    assert git(gitenv, "status", "--porcelain", cwd=dest) == ""


def test_untracked_file_counts_as_local_edit(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    with open(os.path.join(dest, "tools", "我的工具.py"), "w", encoding="utf-8") as fh:
        fh.write("print(1)\n")
    remote.release("v1.10.1")
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["action"] == "refused" and "tools/我的工具.py" in data["error"], data


# ---------------------------------------------------------------------------------------------
# No network, no tags, no git, credentials, dev mode

def test_unreachable_remote_without_a_copy_fails_clearly(tmp_path, gitenv):
    dest = str(tmp_path / "box")
    missing = (tmp_path / "nowhere.git").as_uri()
    data, _ = run_sync(gitenv, "--remote", missing, "--dest", dest)
    assert not data["ok"] and data["action"] == "failed", data
    assert "nowhere" in data["error"] and "不存在" in data["error"]
    assert not os.path.exists(dest)


def test_remote_without_release_tags(tmp_path, gitenv):
    r = Remote(tmp_path, gitenv)
    r.release(None)
    r.tag("release-x")
    r.tag("v2.0.0-beta")
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", r.url, "--dest", dest)
    assert not data["ok"] and data["action"] == "failed" and "vX.Y.Z" in data["error"], data
    assert not os.path.exists(dest)


def test_git_missing(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    no_git = tmp_path / "empty-bin"
    no_git.mkdir()
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest, extra_env={"PATH": str(no_git)})
    assert not data["ok"] and data["action"] == "failed" and "git" in data["error"] and "安装" in data["error"]
    assert not os.path.exists(dest)

    assert run_sync(gitenv, "--remote", remote.url, "--dest", dest)[0]["action"] == "cloned"
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest, extra_env={"PATH": str(no_git)})
    assert data["ok"] and data["action"] == "offline" and data["tag"] == "v1.10.0", data
    assert "安装" in data["message"]


class _AuthHandler(http.server.BaseHTTPRequestHandler):
    """Every request wants a login, like a private repository over HTTPS."""

    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_remote_asking_for_credentials_does_not_prompt(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    assert run_sync(gitenv, "--remote", remote.url, "--dest", dest)[0]["action"] == "cloned"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d/private/xla-tools.git" % server.server_address[1]
        data, _ = run_sync(gitenv, "--remote", url, "--dest", str(tmp_path / "fresh"))
        assert not data["ok"] and data["action"] == "failed" and "登录" in data["error"], data
        assert not os.path.exists(str(tmp_path / "fresh"))
    finally:
        server.shutdown()
        server.server_close()


def test_silent_remote_times_out_and_keeps_the_copy(tmp_path, gitenv, remote):
    """A server that accepts the connection and never answers: git is killed after --timeout."""
    dest = str(tmp_path / "box")
    assert run_sync(gitenv, "--remote", remote.url, "--dest", dest)[0]["action"] == "cloned"
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(5)                                  # never accept(): the request just hangs
    try:
        url = "http://127.0.0.1:%d/xla-tools.git" % sock.getsockname()[1]
        moved = str(remote.bare) + ".away"
        data, _ = run_sync(gitenv, "--remote", url, "--dest", str(tmp_path / "fresh"), "--timeout", "2")
        assert not data["ok"] and "2 秒" in data["error"], data
        # Same copy, same remote address, but the remote now hangs: offline, copy kept.
        os.rename(str(remote.bare), moved)
        git(gitenv, "config", "remote.origin.url", url, cwd=dest)
        data, _ = run_sync(gitenv, "--remote", url, "--dest", dest, "--timeout", "2")
        assert data["ok"] and data["action"] == "offline" and data["tag"] == "v1.10.0", data
        assert "2 秒" in data["message"] and run_tool(dest)["version"] == "v1.10.0"
    finally:
        sock.close()


def test_retracted_release_is_rolled_back_to_the_newest_remaining(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    remote.release("v1.10.1")
    assert run_sync(gitenv, "--remote", remote.url, "--dest", dest)[0]["tag"] == "v1.10.1"
    git(gitenv, "push", "-q", "origin", ":refs/tags/v1.10.1", cwd=remote.work)     # maintainers pull it
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "updated" and data["tag"] == "v1.10.0", data
    assert "回退" in data["message"] and read(os.path.join(dest, "VERSION.txt")) == "v1.10.0"


def test_waiting_for_a_busy_lock_gives_up_cleanly(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    assert xla_sync.sync(remote=remote.url, dest=dest)["action"] == "cloned"
    with xla_lock.FileLock(dest + ".lock", timeout=5):          # another assistant is syncing
        result = xla_sync.sync(remote=remote.url, dest=dest, lock_timeout=0.3)
    assert result["ok"] and result["action"] == "kept" and result["tag"] == "v1.10.0", result
    assert "另一个助手" in result["message"]
    with xla_lock.FileLock(dest + ".lock", timeout=5):
        result = xla_sync.sync(remote=remote.url, dest=str(tmp_path / "fresh"), lock_timeout=0.3)
    assert result["ok"] and result["action"] == "cloned"        # a different dest has its own lock


@pytest.mark.parametrize("var", [{"XLA_DEV": "1"}, {"XLA_TOOLS_SYNC": "0"}])
def test_dev_mode_uses_the_working_tree_and_never_touches_the_remote(tmp_path, gitenv, var):
    dest = str(tmp_path / "box")
    data, _ = run_sync(gitenv, "--remote", (tmp_path / "nowhere.git").as_uri(), "--dest", dest, extra_env=var)
    assert data["ok"] and data["action"] == "local", data
    assert os.path.normcase(data["path"]) == os.path.normcase(ROOT)
    assert not os.path.exists(dest) and not os.path.exists(dest + ".lock")


# ---------------------------------------------------------------------------------------------
# Concurrency and crash recovery

def test_two_syncs_at_once_both_succeed_with_one_copy(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    cmd = [sys.executable, "-X", "utf8", SCRIPT, "--remote", remote.url, "--dest", dest]
    procs = [subprocess.Popen(cmd, env=gitenv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode("utf-8", "replace")
        results.append(json.loads(out.decode("utf-8")))
    assert sorted(r["action"] for r in results) == ["cloned", "current"], results
    assert all(r["tag"] == "v1.10.0" for r in results)
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.0" and xla_manifest.check_manifest(dest) == []
    assert leftovers(dest) == []


def test_interrupted_switch_is_rolled_back(tmp_path, gitenv, remote):
    """Simulate a sync killed mid-switch: new tag checked out (half-written), marker still there."""
    dest = str(tmp_path / "box")
    run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    old = head(gitenv, dest)
    remote.release("v1.10.1")
    git(gitenv, "fetch", "-q", "--depth", "1", "origin", "+refs/tags/v1.10.1:refs/tags/v1.10.1", cwd=dest)
    with open(os.path.join(dest, ".git", xla_sync.SWITCH_MARKER), "w", encoding="utf-8") as fh:
        fh.write(old + " v1.10.0\n")
    git(gitenv, "checkout", "-q", "--detach", "refs/tags/v1.10.1", cwd=dest)
    with open(os.path.join(dest, ".xla-tag"), "w", encoding="utf-8") as fh:
        fh.write("v1.10.1\n")
    os.remove(os.path.join(dest, "tools", "hello.py"))                      # half-written tree

    moved = str(remote.bare) + ".away"                                      # offline: only the rollback runs
    os.rename(str(remote.bare), moved)
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["ok"] and data["action"] == "offline" and data["tag"] == "v1.10.0", data
    assert head(gitenv, dest) == old and git(gitenv, "status", "--porcelain", cwd=dest) == ""
    assert read(os.path.join(dest, ".xla-tag")) == "v1.10.0"
    assert not os.path.exists(os.path.join(dest, ".git", xla_sync.SWITCH_MARKER))
    os.rename(moved, str(remote.bare))
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["action"] == "updated" and data["tag"] == "v1.10.1", data


def test_bad_arguments_give_json(tmp_path, gitenv):
    data, proc = run_sync(gitenv, "--nonsense")
    assert not data["ok"] and proc.returncode == 2 and "用法" in data["error"]


def test_leftover_staging_folder_is_cleaned(tmp_path, gitenv, remote):
    dest = str(tmp_path / "box")
    stale = dest + ".staging-999999"
    os.makedirs(os.path.join(stale, "tools"))
    data, _ = run_sync(gitenv, "--remote", remote.url, "--dest", dest)
    assert data["action"] == "cloned" and not os.path.exists(stale)
    shutil.rmtree(dest)
