"""query_ip end to end: the three public sources are played by tests/netserver.py; each answer is
parsed strictly, so an error page, a captcha, an IPv6 answer or a malformed address is a failure
of that source and the next one is asked."""
import json

from conftest import fail, ok
from netserver import serve  # noqa: F401

ORIGINS = ("https://ipv4.jsonip.com", "https://ip9.com.cn", "https://4.ipw.cn")
IP9_OK = {"ret": 200, "data": {"ip": "36.7.1.2", "country": "中国", "prov": "安徽", "city": "合肥", "isp": "中国电信"},
          "qt": 0}


def test_first_source(serve, run):
    serve.json("/", {"ip": "223.5.5.5", "geo-ip": "https://getjsonip.com/#plus", "API Help": "https://getjsonip.com/#docs"},
               host="ipv4.jsonip.com")
    data = ok(run("query_ip", {}, extra_env=serve.env(*ORIGINS)))
    assert data == {"ok": True, "ip": "223.5.5.5", "source": "ipv4.jsonip.com", "is_public": True}
    assert serve.hits()[0].headers["Accept"].startswith("application/json")


def test_fallbacks_in_order_with_reasons(serve, run):
    serve.page("/", "<html><title>安全验证</title></html>", host="ipv4.jsonip.com")
    serve.json("/get", IP9_OK, host="ip9.com.cn")
    data = ok(run("query_ip", {}, extra_env=serve.env(*ORIGINS)))
    assert data["ip"] == "36.7.1.2" and data["source"] == "ip9.com.cn"
    assert len(data["errors"]) == 1 and data["errors"][0].startswith("ipv4.jsonip.com：")


def test_third_source_after_http_error_and_bad_answers(serve, run):
    serve.page("/", "busy", status=503, host="ipv4.jsonip.com")
    serve.json("/get", {"ret": 400, "msg": "limit"}, host="ip9.com.cn")
    serve.page("/", "120.10.20.30\n", content_type="text/plain", host="4.ipw.cn")
    data = ok(run("query_ip", {}, extra_env=serve.env(*ORIGINS)))
    assert data["ip"] == "120.10.20.30" and data["source"] == "4.ipw.cn" and len(data["errors"]) == 2
    assert "503" in data["errors"][0]


def test_strict_parsing_rejects_lookalikes(serve, run):
    serve.json("/", {"ip": "2408:8207:1234::1"}, host="ipv4.jsonip.com")
    serve.json("/get", {"ret": 200, "data": {"ip": "1.2.3.256"}}, host="ip9.com.cn")
    serve.page("/", "IP: 01.2.3.4", content_type="text/plain", host="4.ipw.cn")
    res = run("query_ip", {}, extra_env=serve.env(*ORIGINS))
    err = fail(res)
    assert "所有来源" in err and err.count("没有有效的 IPv4") == 3
    assert len(res.data["errors"]) == 3


def test_private_address_is_flagged(serve, run):
    serve.json("/", {"ip": "100.64.3.4"}, host="ipv4.jsonip.com")
    data = ok(run("query_ip", {}, extra_env=serve.env(*ORIGINS)))
    assert data["is_public"] is False and any("不是公网地址" in w for w in data["warnings"])


def test_no_network(run):
    err = fail(run("query_ip", {}, extra_env={"XLA_NET_MAP": json.dumps({"*": "offline"})}))
    assert "无法联网" in err and "4.ipw.cn" in err


def test_slow_sources_stay_within_the_deadline(serve, run):
    serve.slow("/", 120, host="ipv4.jsonip.com")
    serve.slow("/get", 120, host="ip9.com.cn")
    serve.page("/", "8.8.4.4", content_type="text/plain", host="4.ipw.cn")
    res = run("query_ip", {}, extra_env=dict(serve.env(*ORIGINS), XLA_DEADLINE="4"))
    # the whole budget went to the slow sources: an honest failure that names the timeouts
    err = fail(res)
    assert "超时" in err or "时间" in err


def test_redirect_404_huge_and_refused_sources(serve, run):
    from netserver import free_port
    serve.redirect("/", "https://ipv4.jsonip.com/v4", host="ipv4.jsonip.com", status=301)
    serve.huge("/v4", 5_000_000, host="ipv4.jsonip.com")             # over the 64 KB an IP answer may take
    serve.page("/get", "<h1>404</h1>", status=404, host="ip9.com.cn")
    mapping = json.loads(serve.env(*ORIGINS)["XLA_NET_MAP"])
    mapping["https://4.ipw.cn"] = "http://127.0.0.1:%d" % free_port()
    err = fail(run("query_ip", {}, extra_env={"XLA_NET_MAP": json.dumps(mapping)}))
    assert "上限" in err and "HTTP 404" in err and "连接被拒绝" in err
    serve.page("/v4", '{"ip": "1.0.0.1"}', content_type="application/json", host="ipv4.jsonip.com")
    data = ok(run("query_ip", {}, extra_env=serve.env(*ORIGINS)))
    assert data["ip"] == "1.0.0.1" and data["source"] == "ipv4.jsonip.com"
