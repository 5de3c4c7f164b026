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
