"""``python3 xla.py`` as a developer types it: ``run --env`` hands test seams to the tool (the
host itself passes only PATH, HOME and PYTHONPATH), ``selftest --quick`` selects the quick subset."""
import json
import os
import subprocess
import sys

from conftest import ROOT
from netserver import serve  # noqa: F401

XLA = os.path.join(ROOT, "xla.py")


def _cli(args, home, extra=None, **kw):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "PYTHONPATH": os.pathsep.join([ROOT, os.path.join(ROOT, "tools", "pydeps")])}
    env.update(extra or {})
    return subprocess.run([sys.executable, XLA] + args, cwd=ROOT, env=env, capture_output=True, timeout=90, **kw)


# .invalid never resolves (RFC 6761): a tool that did not get the map fails at once, offline
SITE = "https://notices.invalid"


def test_run_env_reaches_the_tool(serve, home):
    serve.page("/n.html", "<html><head><title>通知</title></head><body><p>" + "本周五下午三点召开全体会议。" * 5
               + "</p></body></html>", host="notices.invalid")
    net_map = serve.env(SITE)["XLA_NET_MAP"]
    args = ["run", "fetch_url", json.dumps({"url": SITE + "/n.html"}), "--env", "XLA_NET_MAP=" + net_map,
            "--env=XLA_UNUSED=1"]
    proc = _cli(args, home)
    data = json.loads(proc.stdout.decode())
    assert proc.returncode == 0 and data["ok"], proc.stderr.decode()
    assert "全体会议" in data["text"]
    # the caller's own environment does not leak into the tool, as with the host: only --env does
    before = len(serve.hits("/n.html"))
    proc = _cli(["run", "fetch_url", json.dumps({"url": SITE + "/n.html"}), "--timeout", "20"], home,
                extra={"XLA_NET_MAP": net_map})
    assert proc.returncode != 0 and len(serve.hits("/n.html")) == before


def test_run_env_needs_name_and_value(home):
    proc = _cli(["run", "current_time", "{}", "--env", "XLA_NET_MAP"], home)
    assert proc.returncode == 2 and "名字=值" in proc.stderr.decode()


def test_quick_marker_selects_a_subset(home):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "PYTHONPATH": os.pathsep.join([ROOT, os.path.join(ROOT, "tools", "pydeps")])}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m",
                          "quick"] + [os.path.join(ROOT, "tests", f) for f in ("test_cli.py", "test_contract.py", "test_ocr.py")],
                         cwd=ROOT, env=env, capture_output=True, timeout=120)
    ids = [ln for ln in out.stdout.decode().splitlines() if "::" in ln]
    files = set(ln.split("::")[0].rsplit("/", 1)[-1] for ln in ids)
    assert files == {"test_cli.py", "test_contract.py"}
    assert not any("test_tool_survives_bad_input" in i for i in ids)      # the 600 bad-input cases stay out


def _legacy_console(home):
    """A child whose stdin/stdout use a non-UTF-8 code page, as Python on a Chinese Windows reads and
    writes pipes in the ANSI code page: here the C locale (ASCII), with UTF-8 mode and locale
    coercion off so Python really uses it."""
    return {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_run_reads_piped_utf8_and_gbk_json_whatever_the_code_page(home):
    """UTF-8 JSON piped into ``xla.py run`` reaches the tool intact (not decoded in the console's code
    page into mojibake, which turned a Chinese path into 找不到文件), and so does GBK typed into cmd."""
    folder = home / "九月"
    folder.mkdir()
    (folder / "笔记.txt").write_text("第一行 ✓\n", encoding="utf-8")
    payload = json.dumps({"path": str(folder / "笔记.txt")}, ensure_ascii=False)
    for raw in (payload.encode("utf-8"), payload.encode("gbk")):
        proc = _cli(["run", "read_text_file"], home, extra=_legacy_console(home), input=raw)
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
        assert b"Traceback" not in proc.stderr
        data = json.loads(proc.stdout.decode("utf-8"))        # piped: written as UTF-8, never a crash
        assert data["ok"] and "第一行 ✓" in json.dumps(data, ensure_ascii=False)


def test_run_answer_outside_the_code_page_does_not_crash(home):
    """A Chinese error on an ASCII/GBK stdout used to end in UnicodeEncodeError: now it arrives."""
    proc = _cli(["run", "read_text_file", json.dumps({"path": str(home / "没有这个文件 ✓.txt")})], home,
                extra=_legacy_console(home))
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr.decode("utf-8", "replace")
    assert "找不到" in json.loads(proc.stdout.decode("utf-8"))["error"]


def test_run_timeout_names_the_real_limit(home):
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    (ws / "慢.py").write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    proc = _cli(["run", "run_python", json.dumps({"path": "慢.py"}), "--timeout", "2"], home)
    err = json.loads(proc.stdout.decode("utf-8"))["error"]
    assert proc.returncode == 1 and "超过 2 秒" in err and "60" not in err
