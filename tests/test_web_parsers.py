"""Parsers of the web tools, on small fixture pages in the shapes of the real sites.

The fixtures (tests/fixtures/web/, see its README) copy the markup patterns of saved real pages
with invented text. An extra test runs the parsers over the real samples in ../shared when that
folder exists (a fresh clone has none, so it skips).
"""
import datetime
import glob
import os

import pytest

from xlakit.web import baidu, cities, common, dom, express, location, so360, weather

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures", "web")
SHARED = os.path.join(os.path.dirname(HERE), "..", "shared", "samples", "web")


def page(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as fh:
        return fh.read()


def urls(parsed):
    return [r["url"] for r in parsed["results"]]


# ---- helpers ------------------------------------------------------------------------------------

def test_lenient_json_repairs_baidu_escapes_and_single_quotes():
    assert common.loads_lenient('{"style":"-\\-bottom-gap: .03rem;"}') == {"style": "-\\-bottom-gap: .03rem;"}
    assert common.loads_lenient("{'rsv_bdr':'0' }") == {"rsv_bdr": "0"}
    assert common.loads_lenient("not json") is None
    assert common.loads_lenient("") is None


def test_dedupe_ignores_scheme_www_and_trailing_slash():
    items = [{"url": "https://www.a.cn/x/"}, {"url": "http://a.cn/x"}, {"url": "https://a.cn/x#frag"}, {"url": "https://b.cn"}]
    assert [i["url"] for i in common.dedupe(items)] == ["https://www.a.cn/x/", "https://b.cn"]


def test_split_date_prefixes():
    assert common.split_date("2天前 - 正文") == ("2天前", "正文")
    assert common.split_date("2026年1月5日 - 正文") == ("2026年1月5日", "正文")
    assert common.split_date("正文没有日期") == ("", "正文没有日期")


def test_tree_pops_to_matching_tag_and_keeps_comments():
    root = dom.parse("<dl class='a'><dd>x</dd><dl><div><span>y</div>z<!--s-text-->t<!--/s-text-->")
    assert root.find(tag="dl").find(tag="dd").text() == "x"
    assert root.find(tag="div").text() == "y"
    assert root.comments() == ["s-text", "/s-text"]


def test_class_prefix_match_survives_new_hashes():
    root = dom.parse('<span class="a summary-text_XYZ12">甲</span><span class="content-right_abcde">乙</span>')
    assert root.find(dom.by_class_prefix("summary-text_")).text() == "甲"
    assert root.find(dom.by_class_prefix("content-right_")).text() == "乙"


# ---- Baidu ----------------------------------------------------------------------------------------

def test_baidu_classic_layout():
    got = baidu.parse(page("baidu_classic.html"))
    assert got["blocked"] is None and got["layout"] == "desktop"
    titles = [r["title"] for r in got["results"]]
    assert titles == ["示例查询的第一条结果-样例网站", "第二条：带日期的示例结果", "示例_百度百科"]
    first, second, baike = got["results"]
    assert first["url"].startswith("http://www.baidu.com/link?url=") and first["redirect"] is True
    assert "c-abstract" in first["snippet"] and first["source"] == "www.example-one.cn/"
    assert second["date"] == "2020年5月6日" and second["snippet"] == "第二条结果的摘要在日期之后开始。"
    # aladdin card: the real URL comes from mu in the data-click JSON, not the redirect
    assert baike["url"] == "https://baike.baidu.com/item/%E7%A4%BA%E4%BE%8B/123" and "redirect" not in baike
    # the ad, the title-less block, the right-column card and the duplicate are gone
    assert not any("广告" in t or "重复" in t or "热点" in t for t in titles)


def test_baidu_2023_layout_mu_on_outer_container():
    got = baidu.parse(page("baidu_2023.html"))
    assert urls(got) == ["https://www.example-2023.cn/wiki/one", "https://blog.example-2023.cn/post/2",
                         "http://www.baidu.com/link?url=FFFF6666video"]
    one = got["results"][0]
    assert one["snippet"].startswith("2023 布局的摘要") and one["date"] == "2023年3月2日"
    assert got["results"][1]["snippet"].startswith("另一种哈希后缀")
    assert got["results"][2]["redirect"] is True     # placeholder mu: fall back to the jump link


def test_baidu_2024_layout_summary_text_and_s_data():
    got = baidu.parse(page("baidu_2024.html"))
    assert urls(got) == ["https://www.example-2024.com/article/1", "https://news.example-2024.com/n/2",
                         "http://www.baidu.com/link?url=JJJJ0000"]
    a, b, c = got["results"]
    assert a["snippet"] == "2024 布局的摘要在 summary-text 哈希类里。" and a["date"] == "2026年9月21日"
    assert a["source"] == "样例博客" and a["title"] == "样例2024 新版标题"
    assert b["snippet"].startswith("样例 摘要来自注释里的 JSON") and b["date"] == "2天前"
    assert b["title"] == "只有 s-data 摘要的结果"
    assert c["snippet"] == "第一段 第二段"


def test_baidu_mobile_layout_data_log_mu():
    got = baidu.parse(page("baidu_mobile.html"))
    assert got["layout"] == "mobile"
    assert urls(got) == ["https://m.weather.example.cn/15d/1.shtml#!/xh", "https://m.tianqi.example.com/yangli/",
                         "https://weibo.example.com/qixiang"]
    first = got["results"][0]
    assert first["title"] == "【样例天气预报15天】-样例天气网" and first["source"] == "样例天气"
    assert first["snippet"].startswith("样例天气预报,及时发布天气信息")
    assert got["results"][2]["date"] == "2026年07月31日"


def test_baidu_captcha_is_blocked_not_empty():
    got = baidu.parse(page("baidu_captcha.html"))
    assert got["blocked"] and "安全验证" in got["blocked"] and got["results"] == []
    assert baidu.detect_block("", "https://wappass.baidu.com/static/captcha/tuxing_v2.html?&logid=1")
    assert baidu.detect_block("", "https://seccaptcha.baidu.com/v1/webapi/verint/svcp.html")
    assert baidu.detect_block('<a href="https://wappass.baidu.com/static/captcha/tuxing_v2.html?&amp;logid=1">x</a>')
    assert baidu.detect_block(page("baidu_classic.html")) is None


def test_baidu_empty_page_is_no_results_and_short_junk_is_blocked():
    got = baidu.parse(page("baidu_empty.html"))
    assert got["no_results"] and not got["blocked"] and got["results"] == []
    junk = baidu.parse("<html><body>稍后再试</body></html>")
    assert junk["blocked"] and junk["results"] == []


def test_baidu_placeholders_and_redirects():
    assert baidu.is_redirect("http://www.baidu.com/link?url=abc")
    assert not baidu.is_redirect("https://baike.baidu.com/item/x")
    for mu in ("", "http://nourl.ubs.baidu.com/5893", "http://28608.recommend_list.baidu.com",
               "http://www.baidu.com/weather/101010100", "javascript:;"):
        assert baidu._is_placeholder(mu), mu
    assert not baidu._is_placeholder("https://zhidao.baidu.com/question/1.html")


# ---- 360 ------------------------------------------------------------------------------------------

def test_360_2019_data_url_on_title_anchor_only():
    got = so360.parse(page("so360_2019.html"))
    assert urls(got) == ["http://www.example-360.cn/one.html", "https://direct.example-360.org/two"]
    assert got["results"][1]["snippet"] == "最佳答案：问答型摘要在 so-ask-best 里。"


def test_360_2022_data_mdurl_news_flow_and_cards():
    got = so360.parse(page("so360_2022.html"))
    assert urls(got) == ["http://news.example-news.com/a/1001", "https://www.example-2020.cn/visa/",
                         "http://wenda.so.com/q/1364251591064481?src=150"]
    news = got["results"][0]
    assert news["date"] == "2天前" and news["snippet"] == "新闻流的摘要文字，位于 res-rich 容器里。"
    assert got["results"][1]["snippet"] == "标准的 res-desc 摘要。"


def test_360_2026_summary_ads_ai_and_duplicates():
    got = so360.parse(page("so360_2026.html"))
    assert urls(got) == ["https://www.tianqi.example.com/yangli/15/", "https://weather.example.org/city/yangli"]
    first, second = got["results"]
    assert first["snippet"] == "样例蓝天预报综合天气现象。" and first["date"] == "2026年1月5日"
    assert second["snippet"] == "日期之后的正文。" and second["date"] == "2026年5月27日"


def test_360_block_detection_only_without_results():
    assert so360.detect_block("<html><title>安全验证</title></html>")
    assert so360.detect_block('<li class="res-list">安全验证</li>') is None
    assert so360.parse("<html>short</html>")["blocked"]


# ---- tianqi.com -----------------------------------------------------------------------------------

def test_weather_today_block():
    got = weather.parse_today(page("tianqi_city.html"))
    assert got == {"city": "合肥", "date_text": "2025年12月30日 星期二 乙巳年冬月十一", "date": "2025-12-30",
                   "weekday": "星期二", "lunar": "乙巳年冬月十一", "temperature": -3, "weather": "多云",
                   "range": "-6 ~ 4℃", "low": -6, "high": 4, "humidity": "53%", "wind": "东南风 1级", "uv": "弱",
                   "air_quality": "良", "pm": 41, "sunrise": "07:12", "sunset": "17:08"}


def test_weather_solar_term_suffix():
    html = page("tianqi_city.html").replace("乙巳年冬月十一 ", "乙巳年五月初九 芒种")
    got = weather.parse_today(html)
    assert got["lunar"] == "乙巳年五月初九" and got["solar_term"] == "芒种"


def test_weather_days_cross_the_new_year():
    got = weather.parse_days(page("tianqi_15.html"))
    assert [d["date"] for d in got] == ["2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02"]
    assert got[0] == {"label": "今天", "date": "2025-12-30", "weather": "多云", "low": -6, "high": 4, "range": "-6~4℃"}
    assert weather.page_city(page("tianqi_15.html")) == "合肥"


def test_weather_old_30_day_layout():
    got = weather.parse_days(page("tianqi_30_old.html"), datetime.date(2025, 12, 30))
    assert got[0] == {"date": "2025-12-30", "label": "今天", "weather": "雨", "low": 4, "high": 11,
                      "range": "4~11℃", "wind": "西北风 2级"}
    assert len(got) == 2


def test_weather_not_a_city_page():
    assert weather.parse_today(page("tianqi_404.html")) is None
    assert weather.parse_days(page("tianqi_404.html")) == []


def test_city_table():
    assert cities.lookup("合肥") == ("合肥", "hefei")
    assert cities.lookup(" 合肥市 ") == ("合肥", "hefei")
    assert cities.lookup("延边朝鲜族自治州") == ("延边", "yanbian")
    assert cities.lookup("锡林郭勒盟")[1] == "xilinguolemeng"
    assert cities.lookup("不存在的地方") is None
    assert len(set(cities.CITIES.values())) == len(cities.CITIES), "two names share one slug"
    assert len(cities.CITIES) >= 340
    assert any("hefei" in s for s in cities.suggest("hefie"))


# ---- kuaidi.com -----------------------------------------------------------------------------------

def test_express_candidates_object_and_array():
    got = express.parse_candidates(page("kuaidi_select.json"))
    assert [c["code"] for c in got] == ["zhongtong", "shentong", "yunda", "yuantong"]
    assert got[0]["name"] == "中通快递"
    assert [c["code"] for c in express.parse_candidates('[{"name":"韵达","exname":"yunda"}]')] == ["yunda"]
    assert express.parse_candidates("{}") == [] and express.parse_candidates("<html>") == []


def test_express_trace_newest_first_and_status():
    got = express.parse_trace(page("kuaidi_trace_ok.json"))
    assert got["found"] and got["status"] == "已签收" and got["status_code"] == 6
    assert [t["time"] for t in got["traces"]] == ["2025-03-17 13:32:03", "2025-03-16 15:27:44",
                                                  "2025-03-15 18:10:46", "2025-03-14 22:45:07"]
    none = express.parse_trace(page("kuaidi_trace_none.json"))
    assert not none["found"] and none["traces"] == [] and none["status"] == "暂无结果"
    phone = express.parse_trace(page("kuaidi_trace_phone.json"))
    assert not phone["found"] and phone["needs_phone"]
    assert not express.parse_trace("<html>").get("valid_json")
    assert [express.STATUS[i] for i in range(10)] == ["暂无结果", "查询成功", "接口异常", "在途", "揽件", "疑难",
                                                      "已签收", "退签", "派件中", "退回"]


# ---- IP -------------------------------------------------------------------------------------------

def test_ipv4_checks():
    assert location.check_ipv4(" 223.5.5.5 ") == "223.5.5.5"
    for bad, word in (("192.168.1.1", "局域网"), ("127.0.0.1", "回环"), ("10.0.0.8", "局域网"), ("100.64.1.1", "内网"),
                      ("224.0.0.1", "组播"), ("0.0.0.0", "保留"), ("999.1.1.1", "0-255"), ("1.2.3", "IPv4"),
                      ("::1", "IPv6"), ("01.2.3.4", "前导")):
        with pytest.raises(ValueError) as exc:
            location.check_ipv4(bad)
        assert word in str(exc.value), (bad, str(exc.value))


def test_ip9_answer():
    got = location.parse_ip9(page("ip9_ok.json"))
    assert got["province"] == "安徽" and got["city"] == "合肥" and got["isp"] == "中国电信"
    assert location.describe(got) == "中国 安徽 合肥 蜀山"
    with pytest.raises(ValueError) as exc:
        location.parse_ip9(page("ip9_fail.json"))
    assert "查询失败" in str(exc.value)
    with pytest.raises(ValueError):
        location.parse_ip9("<html>")


# ---- the real samples (only where ../shared exists) ----------------------------------------------

@pytest.mark.skipif(not os.path.isdir(SHARED), reason="real samples not present (fresh clone)")
def test_real_samples():
    def read(rel):
        with open(os.path.join(SHARED, rel), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    classic = baidu.parse(read("baidu/desktop_2018-09-18_classic_serp.html"))
    assert len(classic["results"]) == 10 and all(r["snippet"] for r in classic["results"])
    block = baidu.parse(read("baidu/desktop_2023-05_se_com_default_block_excerpt.html"))
    assert urls(block) == ["https://www.itsfun.com.tw/porshe/wiki-1580696-6036476"]
    assert block["results"][0]["snippet"].startswith("盡管如此")
    mobile = baidu.parse(read("baidu/mobileUA_2026_beijing-tianqi_c-result.html"))
    assert mobile["layout"] == "mobile" and len(mobile["results"]) == 8
    assert not any("baidu.com" in u for u in urls(mobile))
    for name in glob.glob(os.path.join(SHARED, "so360", "*.html")):
        got = so360.parse(read(name))
        assert len(got["results"]) >= 6 and all(r["title"] and r["url"].startswith("http") for r in got["results"])
    for name in glob.glob(os.path.join(SHARED, "tianqi", "weather_info_*.html")):
        got = weather.parse_today(read(name))
        assert got["city"] == "北京" and isinstance(got["temperature"], int) and got["sunset"]
    li = read("tianqi/weaul_30day_li_shanghai_excerpt.html")
    days = weather.parse_days('<ul class="weaul">%s</ul>' % li, datetime.date(2025, 11, 27))
    assert days[0]["weather"] == "晴" and (days[0]["low"], days[0]["high"]) == (12, 16)
    assert location.parse_ip9(read("ip/ip9_get_success_redacted.json"))["city"] == "深圳"


# ---- the tree under hostile nesting -------------------------------------------------------------

def _depth(root):
    deepest, stack = 0, [(root, 0)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in node.children if isinstance(c, dom.Node))
    return deepest


def test_tree_depth_is_bounded_and_deep_content_is_kept_flat():
    root = dom.parse("<div>" * 5000 + "底部的字" + "</div>" * 5000 + "<p>后面的段落</p>")
    assert _depth(root) <= dom.MAX_DEPTH + 2
    text = root.text()                       # iterative: no RecursionError however deep
    assert "底部的字" in text and text.endswith("后面的段落")
    assert root.find(tag="p").text() == "后面的段落"


def test_unmatched_end_tags_are_ignored_and_matched_ones_pop():
    root = dom.parse("<div><span>a" + "</p>" * 10000 + "</span>b</div><i>c</i>")
    div = root.find(tag="div")
    assert div.own_text() == "b" and root.find(tag="span").text() == "a"
    assert root.find(tag="i").parent is root


def test_parse_bounded_stops_at_the_tag_budget():
    html = "<html><body>" + "<p>段落</p>" * 50000 + "</body></html>"
    root, parsed = dom.parse_bounded(html, max_nodes=2000)
    assert 1000 <= len(root.find_all(tag="p")) < 50000 and parsed < len(html)
    root, parsed = dom.parse_bounded(html)
    assert len(root.find_all(tag="p")) == 50000 and parsed == len(html)


def test_readable_marks_a_page_read_only_in_part():
    from xlakit.web import readable
    html = "<html><body>" + "".join("<p>第%d段，正文。</p>" % i for i in range(readable.MAX_NODES // 2 + 5000)) + "</body></html>"
    page = readable.extract(html, "https://x.example/")
    assert page.analysed is not None and page.analysed < len(html) and "第0段" in page.text
    assert readable.extract("<p>短的，正文。</p>", "https://x.example/").analysed is None
