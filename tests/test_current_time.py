"""current_time end to end: the well-known sites are played by tests/netserver.py (their Date
headers chosen by the test), the no-network case by XLA_NET_MAP "offline"; time zones are checked
against the zone database and, for the built-in fallback used where the database is missing
(Windows without tzdata), against the database hour by hour."""
import datetime
import json
import os
import sys

import pytest

from conftest import fail, ok
from netserver import Reply, serve  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from xlakit import clock  # noqa: E402

SITES = ["https://www.baidu.com", "https://www.qq.com", "https://www.taobao.com", "https://www.jd.com",
         "https://www.163.com"]
FUTURE = "Tue, 01 Jul 2031 12:00:00 GMT"


def dated(value):
    return lambda req: Reply("", headers=[("Date", value)] if value else [])


def test_network_time_wins_and_shows_the_skew(serve, run):
    serve.handler("*", dated(FUTURE))
    data = ok(run("current_time", {"timezone": "Asia/Shanghai"}, extra_env=serve.env(*SITES)))
    assert data["source"] == "network" and data["source_site"] in [s[8:] for s in SITES]
    assert data["date"] == "2031-07-01" and data["time"].startswith("2031-07-01 20:00:0")
    assert data["weekday"] == "星期二" and data["utc_offset"] == "+08:00" and data["is_dst"] is False
    assert data["utc"].startswith("2031-07-01T12:00:0") and data["iso"].endswith("+08:00")
    assert data["clock_offset_seconds"] < -86400 * 30
    assert any("本机时钟慢" in w for w in data["warnings"])
    assert all(r.method == "HEAD" for r in serve.requests)


def test_first_good_answer_wins_over_slow_and_broken_sites(serve, run):
    serve.handler("*", lambda req: Reply("", headers=[("Date", FUTURE)], delay=30), host="www.baidu.com")
    serve.handler("*", dated("not a date"), host="www.qq.com")
    serve.handler("*", dated("Mon, 01 Jan 1990 00:00:00 GMT"), host="www.taobao.com")
    serve.handler("*", dated(None), host="www.jd.com")
    serve.handler("*", dated("Wed, 02 Jul 2031 03:04:05 GMT"), host="www.163.com")
    from netserver import free_port
    env = serve.env(*SITES)
    mapping = json.loads(env["XLA_NET_MAP"])
    mapping["https://www.jd.com"] = "http://127.0.0.1:%d" % free_port()     # refused
    data = ok(run("current_time", {"timezone": "UTC"}, extra_env={"XLA_NET_MAP": json.dumps(mapping)}))
    assert data["source_site"] == "www.163.com" and data["time"].startswith("2031-07-02 03:04:0")
    assert data["timezone"] == "UTC"


def test_no_network_falls_back_to_the_local_clock(run):
    res = run("current_time", {}, extra_env={"XLA_NET_MAP": json.dumps({"*": "offline"})})
    data = ok(res)
    assert data["source"] == "local" and data["clock_offset_seconds"] is None
    assert data["network_errors"] and "无法联网" in data["network_errors"][0]
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs(data["timestamp"] - now.timestamp()) < 120
    assert any("本机时钟" in w for w in data["warnings"])


def test_unanswering_sites_fall_back_too(serve, run):
    serve.handler("*", lambda req: Reply("", headers=[("Date", FUTURE)], delay=60))
    data = ok(run("current_time", {}, extra_env=serve.env(*SITES)))
    assert data["source"] == "local" and any("没有回应" in e or "超时" in e for e in data["network_errors"])


def test_zones_dst_and_localized_names(serve, run):
    serve.handler("*", dated(FUTURE))
    env = serve.env(*SITES)
    data = ok(run("current_time", {"timezone": "America/New_York"}, extra_env=env))
    assert data["utc_offset"] == "-04:00" and data["is_dst"] is True and data["time"].startswith("2031-07-01 08:00")
    data = ok(run("current_time", {"timezone": "中国标准时间"}, extra_env=env))
    assert data["timezone"] == "Asia/Shanghai" and data["utc_offset"] == "+08:00"
    data = ok(run("current_time", {"timezone": "utc+5:30"}, extra_env=env))
    assert data["utc_offset"] == "+05:30" and data["time"].startswith("2031-07-01 17:30")
    data = ok(run("current_time", {"timezone": "europe/london"}, extra_env=env))
    assert data["timezone"] == "Europe/London" and data["is_dst"] is True
    data = ok(run("current_time", {"timezone": "东京"}, extra_env=env))
    assert data["timezone"] == "Asia/Tokyo" and data["time"].startswith("2031-07-01 21:00")
    assert "不认识时区" in fail(run("current_time", {"timezone": "Mars/Olympus_Mons"}, extra_env=env))


def test_machine_zone_from_tz(serve, run):
    serve.handler("*", dated(FUTURE))
    data = ok(run("current_time", {}, extra_env=dict(serve.env(*SITES), TZ="Asia/Tokyo")))
    assert data["timezone"] == "Asia/Tokyo" and data["utc_offset"] == "+09:00"


@pytest.mark.parametrize("name", ["America/New_York", "America/Los_Angeles", "Europe/London", "Europe/Berlin",
                                  "Australia/Sydney", "Pacific/Auckland", "Asia/Shanghai"])
def test_builtin_rules_match_the_zone_database(name):
    real = clock._zoneinfo(name)
    if real is None:
        pytest.skip("no zone database on this machine to compare with")
    fallback, label, note = clock.resolve_zone(name, use_zoneinfo=False)
    assert label == name and "内置规则" in note
    t = datetime.datetime(2027, 1, 1, tzinfo=datetime.timezone.utc)
    for hour in range(0, 24 * 366):
        utc = t + datetime.timedelta(hours=hour)
        a, b = utc.astimezone(real), utc.astimezone(fallback)
        assert a.utcoffset() == b.utcoffset() and a.replace(tzinfo=None) == b.replace(tzinfo=None), (name, utc)
        assert bool(a.dst()) == bool(b.dst()), (name, utc)


def test_http_date_parsing():
    assert clock.parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") is None       # implausibly old
    assert clock.parse_http_date("Tue, 01 Jul 2031 12:00:00 GMT").hour == 12
    assert clock.parse_http_date("Tuesday, 01-Jul-31 12:00:00 GMT") is None or True  # obsolete form: never raises
    for junk in ("", None, "garbage", "Tue, 99 Foo 2031 99:99:99 GMT", 12):
        assert clock.parse_http_date(junk) is None


def test_local_zone_never_crashes(monkeypatch):
    import time as _time
    monkeypatch.setattr(_time, "tzname", ("中国标准时间", "中国夏令时"))
    monkeypatch.delenv("TZ", raising=False)
    zone, name = clock.local_zone()
    assert name and datetime.datetime.now(zone).utcoffset() is not None
    monkeypatch.setattr(_time, "tzname", ("\ufffd\ufffd", ""))
    zone, name = clock.local_zone()
    assert name
