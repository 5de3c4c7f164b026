"""``python xla.py run`` (README's quick start) on a Chinese Windows, where pipes use code page 936."""
import json
import os

import pytest

from netserver import serve  # noqa: F401 - the fixture
from winfixtures import lane, win_home  # noqa: F401 - fixtures
from winlane import win_path, win_xla

pytestmark = pytest.mark.windows


def test_utf8_json_piped_in_finds_the_chinese_path(win_home):
    folder = os.path.join(win_home, "九月 数据")
    os.makedirs(folder)
    with open(os.path.join(folder, "笔记.txt"), "w", encoding="utf-8") as fh:
        fh.write("第一行 ✓ 😀\n")
    payload = json.dumps({"path": win_path(os.path.join(folder, "笔记.txt"))}, ensure_ascii=False)
    for raw in (payload.encode("utf-8"), payload.encode("gbk")):
        out = win_xla(["run", "read_text_file"], win_home, stdin=raw)
        assert out.exit_code == 0 and "Traceback" not in out.stderr, out
        data = json.loads(out.stdout)             # piped: UTF-8, the emoji (not in GBK) included
        assert "第一行 ✓ 😀" in json.dumps(data, ensure_ascii=False)


def test_error_and_timeout_answers_arrive(serve, win_home):
    out = win_xla(["run", "read_text_file", json.dumps({"path": "C:\\没有这个文件 ✓.txt"})], win_home)
    assert out.exit_code == 1 and "Traceback" not in out.stderr, out
    assert "找不到" in json.loads(out.stdout)["error"]
    serve.slow("/slow.html", 40, host="notices.invalid")
    net = "XLA_NET_MAP=" + serve.env("https://notices.invalid")["XLA_NET_MAP"]
    out = win_xla(["run", "fetch_url", json.dumps({"url": "https://notices.invalid/slow.html"}), "--timeout", "3",
                   "--env", net], win_home)
    err = json.loads(out.stdout)["error"]
    assert out.exit_code == 1 and "超过 3 秒" in err and "60" not in err, out
