"""web_search, query_weather, query_express, query_location end to end.

Each test spawns the real script as the host does, against a real HTTP server on 127.0.0.1 that
plays the sites (by ``Host``), reached through the ``XLA_NET_MAP`` seam; every other origin is
mapped to "offline", so nothing here touches the internet. Slow-server cases shorten the tool's
budget with ``XLA_DEADLINE`` instead of waiting the full 45 s; no test asserts on timing.
"""
import json
import os

import pytest

from conftest import fail, ok
from netserver import free_port, serve  # noqa: F401 - the fixture

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "web")
BAIDU = "https://www.baidu.com"
WAPPASS = "https://wappass.baidu.com"
SO = "https://www.so.com"
TIANQI = "https://www.tianqi.com"
KUAIDI = "http://www.kuaidi.com"
IP9 = "https://ip9.com.cn"


def page(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as fh:
        return fh.read()


def env(server, *origins, **extra):
    out = server.env(*origins)
    if extra:
        mapping = json.loads(out["XLA_NET_MAP"])
        mapping.update(extra.pop("net", {}))
        out["XLA_NET_MAP"] = json.dumps(mapping)
        out.update(extra)
    return out


def baidu_home(server):
    server.page("/", "<html><body>百度一下</body></html>", host="www.baidu.com",
                headers=[("Set-Cookie", "BAIDUID=0123456789ABCDEF:FG=1; path=/; domain=.baidu.com")])


# ---- web_search -----------------------------------------------------------------------------------

def test_search_baidu_mobile_page(serve, run):
    baidu_home(serve)
    serve.page("/s", page("baidu_mobile.html"), host="www.baidu.com")
    data = ok(run("web_search", {"query": "样例 天气", "limit": 5}, extra_env=env(serve, BAIDU, SO)))
    assert data["engine"] == "baidu" and "errors" not in data
    assert [r["url"] for r in data["results"]] == ["https://m.weather.example.cn/15d/1.shtml#!/xh",
                                                   "https://m.tianqi.example.com/yangli/", "https://weibo.example.com/qixiang"]
    assert data["returned"] == 3 and data["search_url"].startswith("https://www.baidu.com/s?wd=")
    req = serve.hits("/s", host="www.baidu.com")[0]
    assert req.arg("wd") == "样例 天气" and "Android" in req.headers.get("User-Agent")
    assert "BAIDUID=0123456789ABCDEF" in (req.headers.get("Cookie") or ""), "warm-up cookie sent"
    assert not serve.hits(host="www.so.com"), "360 not asked when Baidu answered"


def test_search_resolves_baidu_redirects_and_limits(serve, run):
    baidu_home(serve)
    serve.page("/s", page("baidu_classic.html"), host="www.baidu.com")

    def link(req):
        from netserver import Reply
        target = {"AAAA1111exampleRedirectOne": "https://www.example-one.cn/"}.get(req.arg("url"))
        if target:
            return Reply("", status=302, headers=[("Location", target)])
        return Reply('<html><head><meta http-equiv="refresh" content="0;URL=\'https://www.example-two.com/p\'"></head></html>')
    serve.handler("/link", link, host="www.baidu.com")
    data = ok(run("web_search", {"query": "示例", "limit": 2}, extra_env=env(serve, BAIDU, SO)))
    assert data["engine"] == "baidu"
    assert [r["url"] for r in data["results"]] == ["https://www.example-one.cn/", "https://www.example-two.com/p"]
    assert not any(r.get("redirect") for r in data["results"])


def test_search_limit_above_maximum_is_clamped(serve, run):
    baidu_home(serve)
    serve.page("/s", page("baidu_2024.html"), host="www.baidu.com")
    data = ok(run("web_search", {"query": "样例", "limit": 50}, extra_env=env(serve, BAIDU, SO)))
    assert data["returned"] == 3 and any("limit" in w for w in data["warnings"])
    # the jump link that could not be resolved is labelled, not dropped
    assert data["results"][-1].get("redirect") is True


def test_search_captcha_redirect_falls_through_to_360(serve, run):
    baidu_home(serve)
    serve.redirect("/s", "https://wappass.baidu.com/static/captcha/tuxing_v2.html?&logid=1&backurl=x", host="www.baidu.com")
    serve.page("/static/captcha/tuxing_v2.html", page("baidu_captcha.html"), content_type="text/html", host="wappass.baidu.com")
    serve.page("/s", page("so360_2022.html"), host="www.so.com")
    data = ok(run("web_search", {"query": "样例"}, extra_env=env(serve, BAIDU, WAPPASS, SO)))
    assert data["engine"] == "360"
    assert data["results"][0]["url"] == "http://news.example-news.com/a/1001"
    assert data["errors"][0]["engine"] == "baidu" and "安全验证" in data["errors"][0]["error"]
    req = serve.hits("/s", host="www.so.com")[0]
    assert req.arg("q") == "样例" and "Windows" in req.headers.get("User-Agent")


def test_search_captcha_body_without_redirect_falls_through(serve, run):
    serve.page("/s", page("baidu_captcha.html"), content_type="text/html", host="www.baidu.com")
    serve.page("/s", page("so360_2026.html"), host="www.so.com")
    data = ok(run("web_search", {"query": "样例"}, extra_env=env(serve, BAIDU, SO)))
    assert data["engine"] == "360" and "安全验证" in data["errors"][0]["error"]
    assert [r["url"] for r in data["results"]] == ["https://www.tianqi.example.com/yangli/15/",
                                                   "https://weather.example.org/city/yangli"]


def test_search_slow_baidu_leaves_time_for_360(serve, run):
    serve.slow("/s", 120, host="www.baidu.com")
    serve.page("/s", page("so360_2019.html"), host="www.so.com")
    data = ok(run("web_search", {"query": "样例"}, extra_env=env(serve, BAIDU, SO, XLA_DEADLINE="14")))
    assert data["engine"] == "360" and data["errors"][0]["engine"] == "baidu"
    assert "超时" in data["errors"][0]["error"] or "时间" in data["errors"][0]["error"]


def test_search_baidu_unreachable_and_huge_pages(serve, run):
    serve.huge("/s", 7_000_000, host="www.so.com")
    port = free_port()
    res = run("web_search", {"query": "样例"}, extra_env=env(serve, SO, net={BAIDU: "http://127.0.0.1:%d" % port}))
    err = fail(res)
    assert "百度" in err and "360" in err
    data = json.loads(res.stdout)
    assert [e["engine"] for e in data["errors"]] == ["baidu", "360"]
    assert "上限" in data["errors"][1]["error"]


def test_search_nothing_found_is_an_error_not_an_empty_success(serve, run):
    serve.page("/s", page("baidu_empty.html"), host="www.baidu.com")
    serve.page("/s", "<html><body>" + "<p>抱歉，未找到和“zzqqxx”相关的结果。</p>" + " " * 9000 + "</body></html>",
               host="www.so.com")
    err = fail(run("web_search", {"query": "zzqqxx"}, extra_env=env(serve, BAIDU, SO)))
    assert "没有搜到" in err


def test_search_unparseable_pages_are_errors(serve, run):
    serve.page("/s", "<html><body>" + "<div>改版后的页面</div>" * 2000 + "</body></html>", host="www.baidu.com")
    serve.page("/s", "<html><body>blocked</body></html>", status=403, host="www.so.com")
    err = fail(run("web_search", {"query": "样例"}, extra_env=env(serve, BAIDU, SO)))
    assert "结构" in err and "403" in err


def test_search_without_network(run):
    err = fail(run("web_search", {"query": "样例"}, extra_env={"XLA_NET_MAP": json.dumps({"*": "offline"})}))
    assert "无法联网" in err


def test_search_rejects_empty_and_long_queries(run):
    assert "不能为空" in fail(run("web_search", {"query": "   "}))
    assert "太长" in fail(run("web_search", {"query": "字" * 201}))


# ---- query_weather -------------------------------------------------------------------------------

def test_weather_chinese_name_today(serve, run):
    serve.page("/hefei/", page("tianqi_city.html"), host="www.tianqi.com")
    data = ok(run("query_weather", {"city": "合肥市"}, extra_env=env(serve, TIANQI)))
    assert data["city"] == "合肥" and data["slug"] == "hefei" and "hefei" in data["resolved"]
    today = data["today"]
    assert (today["temperature"], today["low"], today["high"]) == (-3, -6, 4)
    assert today["weather"] == "多云" and today["air_quality"] == "良" and today["sunrise"] == "07:12"


def test_weather_forecast_days(serve, run):
    serve.page("/hefei/15/", page("tianqi_15.html"), host="www.tianqi.com")
    data = ok(run("query_weather", {"city": "hefei", "days": "15"}, extra_env=env(serve, TIANQI)))
    assert data["returned"] == 4 and data["days"][2] == {"label": "星期四", "date": "2026-01-01", "weather": "小雪",
                                                         "low": -8, "high": 0, "range": "-8~0℃"}
    assert "resolved" not in data


def test_weather_follows_redirect_to_city_subdomain_and_reads_gbk(serve, run):
    serve.redirect("/beijing/", "https://beijing.tianqi.com/beijing/", status=301, host="www.tianqi.com")
    gbk = page("tianqi_city.html").replace("合肥", "北京").replace('<meta charset="utf-8">', "").encode("gb18030")
    serve.page("/beijing/", gbk, content_type="text/html", host="beijing.tianqi.com")
    data = ok(run("query_weather", {"city": "北京"}, extra_env=env(serve, TIANQI, "https://beijing.tianqi.com")))
    assert data["city"] == "北京" and data["today"]["wind"] == "东南风 1级"
    assert data["source_url"] == "https://beijing.tianqi.com/beijing/"


def test_weather_redirect_off_site_is_refused(serve, run):
    serve.redirect("/hefei/", "https://elsewhere.example.com/", host="www.tianqi.com")
    serve.page("/", "<html>别的网站</html>", host="elsewhere.example.com")
    err = fail(run("query_weather", {"city": "hefei"}, extra_env=env(serve, TIANQI, "https://elsewhere.example.com")))
    assert "站外" in err


def test_weather_unknown_slug_suggests(serve, run):
    serve.page("/hefie/", page("tianqi_404.html"), status=404, host="www.tianqi.com")
    err = fail(run("query_weather", {"city": "hefie"}, extra_env=env(serve, TIANQI)))
    assert "hefie" in err and "hefei" in err


def test_weather_name_outside_table_uses_site_search(serve, run):
    serve.redirect("/tianqi/search", "https://www.tianqi.com/feixi/", host="www.tianqi.com")
    serve.page("/feixi/", page("tianqi_city.html").replace("合肥", "肥西"), host="www.tianqi.com")
    data = ok(run("query_weather", {"city": "肥西"}, extra_env=env(serve, TIANQI)))
    assert data["city"] == "肥西" and data["slug"] == "feixi" and "搜索" in data["resolved"]
    assert serve.hits("/tianqi/search")[0].arg("keyword") == "肥西"


def test_weather_unknown_chinese_name(serve, run):
    err = fail(run("query_weather", {"city": "不存在的城"}, extra_env=env(serve, TIANQI)))
    assert "不存在的城" in err and "拼音" in err


def test_weather_not_a_city_page(serve, run):
    serve.page("/hefei/", "<html><body>" + "<p>首页</p>" * 100 + "</body></html>", host="www.tianqi.com")
    err = fail(run("query_weather", {"city": "hefei"}, extra_env=env(serve, TIANQI)))
    assert "没有找到当天天气" in err


def test_weather_slow_server_honours_deadline(serve, run):
    serve.drip("/hefei/", interval=0.2, host="www.tianqi.com")
    res = run("query_weather", {"city": "hefei"}, extra_env=env(serve, TIANQI, XLA_DEADLINE="4"))
    assert "时间" in fail(res) or "超时" in fail(res)


def test_weather_bad_slug(run):
    assert "拼音" in fail(run("query_weather", {"city": "he fei!"}))


# ---- query_express -------------------------------------------------------------------------------

def kuaidi(server, traces):
    server.page("/", "<html>快递网</html>", host="www.kuaidi.com", headers=[("Set-Cookie", "kd=1; path=/")])
    server.json("/index-ajaxselectinfo-773000000000001.html", json.loads(page("kuaidi_select.json")), host="www.kuaidi.com")
    for code, body in traces.items():
        server.page("/index-ajaxselectcourierinfo-773000000000001-%s.html" % code, body,
                    content_type="application/json", host="www.kuaidi.com")


def test_express_tries_candidates_until_one_answers(serve, run):
    kuaidi(serve, {"zhongtong": page("kuaidi_trace_none.json"), "shentong": page("kuaidi_trace_ok.json")})
    data = ok(run("query_express", {"number": "773000000000001"}, extra_env=env(serve, KUAIDI)))
    assert data["company"] == "shentong" and data["company_name"] == "申通快递"
    assert data["status"] == "已签收" and data["status_code"] == 6
    assert data["latest"]["context"].startswith("已签收") and data["returned"] == 4
    assert data["traces"][-1]["time"] == "2025-03-14 22:45:07"
    assert [c["code"] for c in data["candidates"]][:2] == ["zhongtong", "shentong"]
    assert serve.hits("/", host="www.kuaidi.com"), "home page visited for its cookie"
    req = serve.hits("/index-ajaxselectcourierinfo-773000000000001-shentong.html")[0]
    assert "kd=1" in (req.headers.get("Cookie") or "") and req.headers.get("X-Requested-With") == "XMLHttpRequest"


def test_express_phone_needed_is_said_clearly(serve, run):
    kuaidi(serve, {c: page("kuaidi_trace_phone.json") for c in ("zhongtong", "shentong", "yunda")})
    res = run("query_express", {"number": "773000000000001"}, extra_env=env(serve, KUAIDI))
    err = fail(res)
    assert "后四位" in err and "phone" in err
    data = json.loads(res.stdout)
    assert [c["code"] for c in data["candidates"]] == ["zhongtong", "shentong", "yunda", "yuantong"]
    assert len(data["errors"]) == 3, "at most three carriers tried"


def test_express_phone_is_passed(serve, run):
    kuaidi(serve, {"shunfeng": page("kuaidi_trace_ok.json")})
    data = ok(run("query_express", {"number": "773000000000001", "company": "shunfeng", "phone": "1234"},
                  extra_env=env(serve, KUAIDI)))
    assert data["company"] == "shunfeng"
    assert serve.hits("/index-ajaxselectcourierinfo-773000000000001-shunfeng.html")[0].arg("phone") == "1234"
    assert not serve.hits("/index-ajaxselectinfo-773000000000001.html"), "no detection when company is given"


def test_express_nothing_found_lists_candidates(serve, run):
    kuaidi(serve, {c: page("kuaidi_trace_none.json") for c in ("shentong", "yunda", "yuantong")})
    res = run("query_express", {"number": "773000000000001", "phone": "1234"}, extra_env=env(serve, KUAIDI))
    assert "没有查到" in fail(res)
    assert json.loads(res.stdout)["candidates"][0]["code"] == "zhongtong"


def test_express_unknown_number(serve, run):
    serve.json("/index-ajaxselectinfo-ABC12345.html", {}, host="www.kuaidi.com")
    res = run("query_express", {"number": "ABC12345"}, extra_env=env(serve, KUAIDI))
    assert "认不出" in fail(res) and json.loads(res.stdout)["candidates"] == []


def test_express_html_instead_of_json(serve, run):
    kuaidi(serve, {c: "<html><title>验证</title></html>" for c in ("zhongtong", "shentong", "yunda")})
    res = run("query_express", {"number": "773000000000001", "phone": "1234"}, extra_env=env(serve, KUAIDI))
    assert "不是查询结果" in fail(res)


def test_express_refused_and_bad_input(run):
    port = free_port()
    err = fail(run("query_express", {"number": "773000000000001"},
                   extra_env={"XLA_NET_MAP": json.dumps({KUAIDI: "http://127.0.0.1:%d" % port, "*": "offline"})}))
    assert "快递网" in err
    assert "快递单号" in fail(run("query_express", {"number": "12"}))
    assert "后四位" in fail(run("query_express", {"number": "773000000000001", "phone": "12ab"}))


# ---- query_location ------------------------------------------------------------------------------

def test_location_of_given_ip(serve, run):
    serve.json("/get", json.loads(page("ip9_ok.json").replace("203.0.113.7", "223.5.5.5")), host="ip9.com.cn")
    data = ok(run("query_location", {"ip": "223.5.5.5"}, extra_env=env(serve, IP9)))
    assert data["ip"] == "223.5.5.5" and data["location"] == "中国 安徽 合肥 蜀山"
    assert data["province"] == "安徽" and data["isp"] == "中国电信" and data["source"] == "ip9.com.cn"
    assert serve.hits("/get")[0].arg("ip") == "223.5.5.5"


def test_location_of_current_network(serve, run):
    serve.json("/get", json.loads(page("ip9_ok.json")), host="ip9.com.cn")
    data = ok(run("query_location", {}, extra_env=env(serve, IP9)))
    assert data["city"] == "合肥" and serve.hits("/get")[0].arg("ip") is None


@pytest.mark.parametrize("ip,word", [("192.168.1.10", "局域网"), ("127.0.0.1", "回环"), ("1.2.3.400", "0-255"),
                                     ("abc", "IPv4")])
def test_location_rejects_non_public_addresses_before_asking(serve, run, ip, word):
    err = fail(run("query_location", {"ip": ip}, extra_env=env(serve, IP9)))
    assert word in err and not serve.hits()


def test_location_service_failure(serve, run):
    serve.json("/get", json.loads(page("ip9_fail.json")), host="ip9.com.cn")
    assert "查询失败" in fail(run("query_location", {"ip": "223.5.5.5"}, extra_env=env(serve, IP9)))
    serve.page("/get", "<html>502</html>", status=502, host="ip9.com.cn")
    assert "502" in fail(run("query_location", {"ip": "223.5.5.5"}, extra_env=env(serve, IP9)))


def test_location_without_network(run):
    err = fail(run("query_location", {"ip": "223.5.5.5"}, extra_env={"XLA_NET_MAP": json.dumps({"*": "offline"})}))
    assert "无法联网" in err
