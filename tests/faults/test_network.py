"""Network faults for every web tool: each of ``badnet.FAULTS`` (a server that never answers,
stalls after the headers, trickles a byte a second, resets mid-body, lies about Content-Length,
sends gzip that never ends, redirects to itself, sends 10 MB of garbage, stalls the TLS handshake)
played by the tool's first source through ``XLA_NET_MAP``; every other origin is a correct local
server (``tests/netserver.py``) or offline. Nothing touches the internet.

Every run must answer one JSON object (no traceback) inside its deadline, well under the host's
60 s (``XLA_DEADLINE`` shortens the tools' budget where the tool allows; a run past
:data:`HUNG` counts as hung): a single-source tool with a Chinese error, a tool with a next
source (web_search: Baidu then 360; query_ip: three services; current_time: five sites) with the
next source's answer. The faults of one tool run at once (threads), so a tool costs about one
deadline of wall time.

One overall deadline (issue 38): trickles of the body, of each header line and across redirects
reset any per-read socket timeout, so only a budget for the whole call ends them; each tool's
line on stderr says how long its slowest answer took against its deadline. When every source
trickles (``test_every_source_trickles``: Baidu and 360, all IP services, all clock sites) the
tool still answers before its deadline. ``redirect_local`` checks the address policy: a mapped
server's redirect to the cloud metadata address is refused, never followed.
"""
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import CJK, ROOT
from netserver import NetServer, Reply

from . import badnet, harness, tally

sys.path.insert(0, os.path.join(ROOT, "tests"))
WEB = os.path.join(ROOT, "tests", "fixtures", "web")
HUNG = 45           # seconds: past this a run counts as hung (the host would kill it at 60)
IP9_OK = {"ret": 200, "data": {"ip": "36.7.1.2", "country": "中国", "prov": "安徽", "city": "合肥", "isp": "中国电信"}}
CLOCK_SITES = ("https://www.baidu.com", "https://www.qq.com", "https://www.taobao.com", "https://www.jd.com",
               "https://www.163.com")


def _page(name):
    with open(os.path.join(WEB, name), encoding="utf-8") as fh:
        return fh.read()


def _good_360(server):
    server.page("/s", _page("so360_2026.html"), host="www.so.com")


def _good_ip9(server):
    server.json("/get", IP9_OK, host="ip9.com.cn")


def _good_163(server):
    server.handler("*", lambda req: Reply("", headers=[("Date", "Tue, 01 Jul 2031 12:00:00 GMT")]), host="www.163.com")


# tool -> (args, origins played by the fault, (correct origins, how to set them up), deadline, the fallback's check)
TOOLS = {
    "fetch_url": ({"url": "https://news.example.com/报道/1.html"}, ["https://news.example.com"], None, 6, None),
    "query_weather": ({"city": "hefei"}, ["https://www.tianqi.com"], None, 6, None),
    "query_express": ({"number": "YT7512345678901"}, ["http://www.kuaidi.com"], None, 6, None),
    "query_location": ({"ip": "36.7.1.2"}, ["https://ip9.com.cn"], None, 6, None),
    "web_search": ({"query": "合肥 天气", "limit": 3}, ["https://www.baidu.com"],
                   (["https://www.so.com"], _good_360), 20, lambda d: d.get("engine") == "360" and d.get("results")),
    "query_ip": ({}, ["https://ipv4.jsonip.com"], (["https://ip9.com.cn"], _good_ip9), 16,
                 lambda d: d.get("source") == "ip9.com.cn" and d.get("ip") == "36.7.1.2" and d.get("errors")),
    "current_time": ({}, list(CLOCK_SITES[:4]), (["https://www.163.com"], _good_163), 8,
                     lambda d: d.get("source") == "network" and d.get("source_site") == "www.163.com"),
}


@pytest.fixture(scope="module")
def badserver():
    server = badnet.BadNet()
    yield server
    server.stop()


def _report(capsys, tool, what, deadline, times):
    """One line on the real stderr (capture suspended; xdist passes a worker's stderr through):
    the slowest answer against the tool's deadline and the host's limit."""
    slowest = max(times) if times else 0.0
    with capsys.disabled():
        sys.stderr.write("\nnetwork faults: %s answered %d %s runs, slowest %.1f s (deadline %d s, host kills at 60 s)\n"
                         % (tool, len(times), what, slowest, deadline))
        sys.stderr.flush()


def _one(tool, fault, bad, good, home, times=None):
    args, faulty, fallback, deadline, check = TOOLS[tool]
    mapping = {o: bad.base(fault) for o in faulty}
    if fallback:
        mapping.update({o: good.base for o in fallback[0]})
    mapping["*"] = "offline"
    env = {"XLA_NET_MAP": json.dumps(mapping), "XLA_DEADLINE": str(deadline)}
    start = time.monotonic()
    try:
        code, out, err, _secs = harness.spawn(tool, args, home / fault, extra_env=env, timeout=HUNG)
    except AssertionError as exc:        # spawn counted it as hung
        return "%s under %s: %s" % (tool, fault, exc)
    secs = time.monotonic() - start
    if times is not None:
        times.append(secs)
    where = "%s under %s (%.1f s)" % (tool, fault, secs)
    if "Traceback" in out + err or len(out) > 20000:
        return "%s: traceback or oversize answer: %s" % (where, (out + err)[-1500:])
    try:
        data = json.loads(out)
    except ValueError:
        return "%s: not one JSON answer: %r %s" % (where, out[-500:], err[-500:])
    if check is None:
        if data.get("ok") is not False or code == 0 or not CJK.search(data.get("error", "")):
            return "%s: wanted a Chinese error, got %s" % (where, out[:600])
        if fault == "redirect_local" and "169.254.169.254" not in data["error"]:
            return "%s: the redirect to the metadata address was not refused by the policy: %s" % (where, out[:600])
    elif not (data.get("ok") and check(data)):
        return "%s: the next source did not answer: %s" % (where, out[:800])
    return None


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_network_faults(tool, badserver, tmp_path, capsys):
    good = NetServer()
    try:
        if TOOLS[tool][2]:
            TOOLS[tool][2][1](good)
        for fault in badnet.FAULTS:
            (tmp_path / fault).mkdir()
        times = []
        with ThreadPoolExecutor(len(badnet.FAULTS)) as pool:
            problems = list(pool.map(lambda f: _one(tool, f, badserver, good, tmp_path, times), badnet.FAULTS))
    finally:
        good.stop()
    tally.scenario(len(badnet.FAULTS))
    _report(capsys, tool, "fault", TOOLS[tool][3], times)
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


# tools with a next source: every source they have, and the deadline they run under
ALL_SOURCES = {
    "web_search": ["https://www.baidu.com", "https://www.so.com"],
    "query_ip": ["https://ipv4.jsonip.com", "https://ip9.com.cn", "https://4.ipw.cn"],
    "current_time": list(CLOCK_SITES),
}


@pytest.mark.parametrize("tool", sorted(ALL_SOURCES))
def test_every_source_trickles(tool, badserver, tmp_path, capsys):
    """The fallback is slow too: every engine, service or site trickles (its body, or its header
    lines), and the tool still answers one JSON object before its deadline, in Chinese when it
    has nothing (current_time falls back to this machine's clock and says so)."""
    args, _, _, deadline, _ = TOOLS[tool]
    times, problems = [], []

    def one(fault):
        mapping = dict((o, badserver.base(fault)) for o in ALL_SOURCES[tool])
        mapping["*"] = "offline"
        env = {"XLA_NET_MAP": json.dumps(mapping), "XLA_DEADLINE": str(deadline)}
        (tmp_path / fault).mkdir()
        start = time.monotonic()
        try:
            code, out, err, _ = harness.spawn(tool, args, tmp_path / fault, extra_env=env, timeout=HUNG)
        except AssertionError as exc:
            return "%s with every source under %s: %s" % (tool, fault, exc)
        times.append(time.monotonic() - start)
        try:
            data = json.loads(out)
        except ValueError:
            return "%s with every source under %s: not one JSON answer: %r %s" % (tool, fault, out[-500:], err[-500:])
        if "Traceback" in out + err:
            return "%s with every source under %s: traceback: %s" % (tool, fault, (out + err)[-1500:])
        if data.get("ok") is False and not CJK.search(data.get("error", "")):
            return "%s with every source under %s: no Chinese error: %s" % (tool, fault, out[:600])
        if tool == "web_search" and data.get("ok"):
            return "web_search with every engine trickling claimed results: %s" % out[:600]
        return None

    faults = ("trickle", "trickle_headers", "trickle_redirects")
    with ThreadPoolExecutor(len(faults)) as pool:
        problems = [p for p in pool.map(one, faults) if p]
    tally.scenario(len(faults))
    _report(capsys, tool, "every-source-trickling", deadline, times)
    assert not problems, "\n".join(problems)
