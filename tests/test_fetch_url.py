"""fetch_url end to end: the real script, spawned as the host does, against pages served by
tests/netserver.py through XLA_NET_MAP (every other origin is "offline"). The fixture pages are
written here, in the shapes of real Chinese sites (a news article with menus and link lists, a
GBK page labelled only by <meta>, Baidu's captcha wall, a Vue shell, a soft 404)."""
import json
import os
import sys

import pytest

from conftest import fail, ok
from netserver import free_port, serve  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "samples", "web")

NEWS = "https://news.example.cn"

ARTICLE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>合肥公布2025年社保缴费基数 - 示例新闻网</title>
<meta name="description" content="合肥市人社局公布了新的社保缴费基数上下限。">
<link rel="stylesheet" href="/a.css"><style>.nav{color:red}</style></head>
<body>
<div id="top-bar"><a href="/">首页</a> | <a href="/login">登录</a> | <a href="/reg">注册</a></div>
<div class="nav"><ul><li><a href="/news">新闻</a></li><li><a href="/finance">财经</a></li><li><a href="/tech">科技</a></li>
<li><a href="/sports">体育</a></li><li><a href="/ent">娱乐</a></li></ul></div>
<div class="container"><div class="left-main">
<h1 class="title">合肥公布2025年社保缴费基数</h1>
<div class="meta">2025-07-01 10:20 来源：示例晚报 作者：张三</div>
<div class="article-content">
<p>记者从合肥市人力资源和社会保障局获悉，2025年度社会保险缴费基数上下限已经确定，自7月1日起执行。</p>
<p>根据通知，职工基本养老保险、失业保险、工伤保险的缴费基数下限为4494元，上限为22470元，单位和个人按规定比例缴纳。</p>
<p>灵活就业人员可以在上下限之间自行选择缴费档次，按月或按季度缴纳；具体办法见社保经办机构的公告，也可拨打12333咨询。</p>
<table><tr><th>险种</th><th>下限</th><th>上限</th></tr><tr><td>养老保险</td><td>4494</td><td>22470</td></tr></table>
<div class="share-bar"><a href="#">微信</a><a href="#">微博</a><a href="#">QQ空间</a></div>
<div class="related-news"><h3>相关阅读</h3><ul><li><a href="/n/1.html">社保基数怎么算？一文读懂</a></li>
<li><a href="/n/2.html">养老金今年上调多少</a></li><li><a href="/n/3.html">医保个人账户新规</a></li></ul></div>
</div></div>
<div class="sidebar"><h3>热门排行</h3><ol><li><a href="/h/1.html">热门新闻一</a></li><li><a href="/h/2.html">热门新闻二</a></li></ol></div>
</div>
<div class="footer"><p>版权所有 © 2025 示例新闻网 皖ICP备00000000号</p><a href="/about">关于我们</a> <a href="/contact">联系我们</a></div>
<script>document.write("脚本里的字不该出现");</script>
</body></html>"""

CAPTCHA = """<!DOCTYPE html>
<html lang="zh-CN">
<head>
    <meta charset="utf-8">
    <title>百度安全验证</title>
    <meta name="viewport" content="width=device-width, initial-scale=1.0">
</head>
<body>
    <div class="timeout hide-callback"><div class="timeout-img"></div><div class="timeout-title">网络不给力，请稍后重试</div>
    <button type="button" class="timeout-button">返回首页</button></div>
    <div class="timeout-feedback hide-callback"><div class="timeout-feedback-icon"></div><p class="timeout-feedback-title">问题反馈</p></div>
<script src="https://ppui-static-wap.cdn.bcebos.com/static/touch/js/mkdjump_v2_21d1ae1.js"></script>
</body>
</html>"""

VUE_SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>某某政务服务平台</title>
<meta name="description" content="在线办理社保、公积金业务"><link href="/css/app.3f2a.css" rel="stylesheet"></head>
<body><noscript><strong>We're sorry but this site doesn't work properly without JavaScript enabled.</strong></noscript>
<div id="app"></div><script src="/js/chunk-vendors.8a1b.js"></script><script src="/js/app.77c2.js"></script></body></html>"""

SOFT_404 = """<html><head><meta charset="utf-8"><title>404 页面不存在</title></head><body><div class="err">
<h2>抱歉，您访问的页面不存在或已被删除</h2><a href="/">返回首页</a></div></body></html>"""


def env(server, *origins):
    return server.env(NEWS, *origins)


def test_article_main_text_without_chrome(serve, run):
    serve.page("/2025/0701/a.html", ARTICLE, host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/2025/0701/a.html"}, extra_env=env(serve)))
    assert data["title"] == "合肥公布2025年社保缴费基数 - 示例新闻网"
    assert data["description"].startswith("合肥市人社局")
    assert data["kind"] == "article" and data["status"] == 200 and data["encoding"] == "utf-8"
    text = data["text"]
    assert "缴费基数下限为4494元" in text and "12333" in text and "来源：示例晚报" in text
    assert "养老保险 | 4494 | 22470" in text                 # tables keep their cells
    for junk in ("首页", "财经", "相关阅读", "社保基数怎么算", "热门排行", "版权所有", "微博", "脚本里的字", "color:red"):
        assert junk not in text, junk
    assert data["next_start"] is None and data["truncated"] is False and data["total_chars"] == len(text)
    assert "links" not in data
    req = serve.hits("/2025/0701/a.html")[0]
    assert "Chrome/" in req.headers["User-Agent"] and req.headers["Accept-Language"].startswith("zh-CN")


def test_links_are_absolute_and_main_text_first(serve, run):
    page = ARTICLE.replace('<p>灵活就业', '<p>详见<a href="/notice/2025.html">官方通知</a>。灵活就业')
    serve.page("/a.html", page, host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/a.html", "links": True}, extra_env=env(serve)))
    links = data["links"]
    assert links[0] == {"text": "官方通知", "url": NEWS + "/notice/2025.html"}
    assert all(link["url"].startswith("https://") for link in links)
    assert data["links_total"] == len(links)


def test_redirect_chain_gives_the_final_url(serve, run):
    serve.redirect("/s/abc", NEWS + "/go?id=1", host="t.example.cn", status=301)
    serve.redirect("/go", "/2025/0701/a.html", host="news.example.cn")
    serve.page("/2025/0701/a.html", ARTICLE, host="news.example.cn")
    data = ok(run("fetch_url", {"url": "http://t.example.cn/s/abc"}, extra_env=env(serve, "http://t.example.cn")))
    assert data["url"] == NEWS + "/2025/0701/a.html" and data["requested_url"] == "http://t.example.cn/s/abc"
    assert "4494" in data["text"]


def test_jump_page_is_followed(serve, run):
    jump = ('<html><head><script>window.location.replace("https://news.example.cn/a.html")</script>'
            '<noscript><META http-equiv="refresh" content="0;URL=\'https://news.example.cn/a.html\'"></noscript></head></html>')
    serve.page("/link", jump, host="www.baidu.com")
    serve.page("/a.html", ARTICLE, host="news.example.cn")
    data = ok(run("fetch_url", {"url": "https://www.baidu.com/link?url=abc"}, extra_env=env(serve, "https://www.baidu.com")))
    assert data["url"] == NEWS + "/a.html" and "4494" in data["text"]


def test_gbk_page_without_header_charset(serve, run):
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
            '<title>区政府公告</title></head><body><div class="content"><p>关于做好2025年度城乡居民医疗保险参保缴费工作的通知，'
            '请各街道、社区按时完成登记。</p><p>缴费时间为每年9月1日至12月31日，逾期将影响次年待遇。喆、镕等字也要正确。</p>'
            '</div></body></html>')
    serve.page("/gg.html", html.encode("gbk"), content_type="text/html", host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/gg.html"}, extra_env=env(serve)))
    assert data["title"] == "区政府公告" and data["encoding"] == "gb18030"
    assert "城乡居民医疗保险" in data["text"] and "喆、镕" in data["text"]


def test_long_page_is_paged_with_start(serve, run):
    paras = "".join("<p>第%d段：这是一段很长的正文，用来测试分页读取是否连续，没有重复也没有遗漏。</p>" % i for i in range(1, 1201))
    serve.page("/long.html", "<html><head><title>长文</title></head><body><article>%s</article></body></html>" % paras,
               host="news.example.cn")
    pieces = []
    start = 0
    for _ in range(20):
        data = ok(run("fetch_url", {"url": NEWS + "/long.html", "max_chars": 16000, "start": start},
                      extra_env=env(serve)))
        assert data["start"] == start and data["returned_chars"] == len(data["text"])
        pieces.append(data["text"])
        if data["next_start"] is None:
            break
        assert data["truncated"] and data["next_start"] == start + len(data["text"])
        start = data["next_start"]
    whole = "".join(pieces)
    assert len(pieces) > 2 and len(whole) == data["total_chars"]
    assert "第1段" in whole and "第1200段" in whole and whole.count("第600段：") == 1


def test_max_chars_is_clamped_with_a_note(serve, run):
    serve.page("/a.html", ARTICLE, host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/a.html", "max_chars": 100}, extra_env=env(serve)))
    assert data["max_chars"] == 2000 and any("max_chars" in w for w in data["warnings"])


def test_start_beyond_the_end(serve, run):
    serve.page("/a.html", ARTICLE, host="news.example.cn")
    assert "超出了正文长度" in fail(run("fetch_url", {"url": NEWS + "/a.html", "start": 999999}, extra_env=env(serve)))


def test_captcha_wall_is_reported(serve, run):
    serve.redirect("/s", "https://wappass.baidu.com/static/captcha/tuxing_v2.html?&logid=1&ak=c27b&backurl=x",
                   host="www.baidu.com")
    serve.page("/static/captcha/tuxing_v2.html", CAPTCHA, content_type="text/html", host="wappass.baidu.com")
    res = run("fetch_url", {"url": "https://www.baidu.com/s?wd=%E5%A4%A9%E6%B0%94"},
              extra_env=env(serve, "https://www.baidu.com", "https://wappass.baidu.com"))
    assert "人机验证" in fail(res) and res.data["blocked"] == "captcha"
    # the same wall served in place (no redirect) is recognised by its title
    serve.page("/wall", CAPTCHA, content_type="text/html", host="news.example.cn")
    res = run("fetch_url", {"url": NEWS + "/wall"}, extra_env=env(serve))
    assert "百度安全验证" in fail(res)


def test_script_only_shell_is_reported(serve, run):
    serve.page("/app", VUE_SHELL, host="news.example.cn")
    res = run("fetch_url", {"url": NEWS + "/app"}, extra_env=env(serve))
    err = fail(res)
    assert "JavaScript" in err and "某某政务服务平台" in err and res.data["blocked"] == "script_only"


NOTICES = ('<html><head><meta charset="utf-8"><title>通知公告</title></head><body><h1>通知公告</h1><ul>'
           '<li><a href="/n/1.html">关于2026年元旦放假安排的通知</a></li><li><a href="n/2.html">关于开展安全检查的通知</a></li>'
           '</ul><p>更多内容见<a href="/old/">往期通知</a></p></body></html>')


def test_link_list_page_is_its_headings_and_links(serve, run):
    """A heading, two links in a list and a paragraph with a link: all under 100 characters, no
    article block; the answer is what a reader sees, addresses included, never an empty success."""
    serve.page("/tzgg/", NOTICES, host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/tzgg/"}, extra_env=env(serve)))
    assert data["kind"] == "page" and data["total_chars"] == len(data["text"]) > 0
    assert data["text"].splitlines() == [
        "通知公告", "- [关于2026年元旦放假安排的通知](%s/n/1.html)" % NEWS,
        "- [关于开展安全检查的通知](%s/tzgg/n/2.html)" % NEWS, "更多内容见[往期通知](%s/old/)" % NEWS]
    data = ok(run("fetch_url", {"url": NEWS + "/tzgg/", "links": True}, extra_env=env(serve)))
    assert [l["url"] for l in data["links"]] == [NEWS + "/n/1.html", NEWS + "/tzgg/n/2.html", NEWS + "/old/"]


def test_page_with_nothing_readable_says_so(serve, run):
    serve.page("/blank", '<html><head><title>图片新闻</title></head><body><div><img src="/a.jpg"></div></body></html>',
               host="news.example.cn")
    res = run("fetch_url", {"url": NEWS + "/blank"}, extra_env=env(serve))
    err = fail(res)
    assert "没有可读的文字" in err and "图片新闻" in err and res.data["blocked"] == "empty"
    assert "JavaScript" not in err


def test_soft_404_and_real_404(serve, run):
    serve.page("/gone", SOFT_404, host="news.example.cn")
    res = run("fetch_url", {"url": NEWS + "/gone"}, extra_env=env(serve))
    assert "错误页" in fail(res) and res.data["blocked"] == "error"
    serve.page("/missing", SOFT_404, status=404, host="news.example.cn")
    res = run("fetch_url", {"url": NEWS + "/missing"}, extra_env=env(serve))
    err = fail(res)
    assert "HTTP 404" in err and "页面不存在" in err and res.data["status"] == 404


def test_non_html_answers(serve, run):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 200000
    serve.page("/logo.png", png, content_type="image/png", host="news.example.cn")
    serve.page("/file.pdf", b"%PDF-1.7\n" + b"x" * 5000, content_type="application/octet-stream", host="news.example.cn")
    serve.json("/api.json", {"城市": "合肥", "温度": 30}, host="news.example.cn")
    serve.page("/robots.txt", "User-agent: *\nDisallow: /admin\n", content_type="text/plain", host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/logo.png"}, extra_env=env(serve)))
    assert data["kind"] == "binary" and data["size"] == len(png) and "PNG 图片" in data["note"] and "text" not in data
    assert len(serve.hits("/logo.png")) == 1
    data = ok(run("fetch_url", {"url": NEWS + "/file.pdf"}, extra_env=env(serve)))
    assert "PDF" in data["note"] and data["content_type"] == "application/octet-stream"
    data = ok(run("fetch_url", {"url": NEWS + "/api.json"}, extra_env=env(serve)))
    assert data["kind"] == "json" and json.loads(data["text"]) == {"城市": "合肥", "温度": 30}
    data = ok(run("fetch_url", {"url": NEWS + "/robots.txt"}, extra_env=env(serve)))
    assert data["kind"] == "text" and "Disallow: /admin" in data["text"]


def test_slow_server_answers_within_the_deadline(serve, run):
    serve.slow("/slow", 120, host="news.example.cn")
    extra = dict(env(serve), XLA_DEADLINE="3")
    err = fail(run("fetch_url", {"url": NEWS + "/slow"}, extra_env=extra))
    assert "时间" in err


def test_huge_page_is_capped(serve, run):
    serve.huge("/huge.html", 40_000_000, host="news.example.cn")
    data = ok(run("fetch_url", {"url": NEWS + "/huge.html", "max_chars": 2000}, extra_env=env(serve)))
    assert any("只读取了前" in w for w in data["warnings"])
    assert data["text"].startswith("中文中文") and data["next_start"] is not None


def test_refused_and_offline(serve, run):
    port = free_port()
    res = run("fetch_url", {"url": "https://down.example.cn/"},
              extra_env={"XLA_NET_MAP": json.dumps({"https://down.example.cn": "http://127.0.0.1:%d" % port})})
    assert "连接被拒绝" in fail(res)
    res = run("fetch_url", {"url": "https://www.example.cn/"}, extra_env={"XLA_NET_MAP": json.dumps({"*": "offline"})})
    assert "无法联网" in fail(res)


def test_bad_urls(run):
    assert "https://www.baidu.com" in fail(run("fetch_url", {"url": "www.baidu.com"}))
    assert "http://" in fail(run("fetch_url", {"url": "ftp://x.example/a"}))
    assert "不能为空" in fail(run("fetch_url", {"url": "  "}))


@pytest.mark.skipif(not os.path.isdir(SAMPLES), reason="real samples live in ../shared (absent on a fresh clone)")
def test_real_samples_are_not_empty_or_misclassified():
    sys.path.insert(0, os.path.dirname(HERE))
    from xlakit.web import readable
    from xlakit import http
    for name in ("baidu/desktop_2018-09-18_classic_serp.html", "so360/2020-01-25_data-mdurl_res-desc.html",
                 "so360/2022-08-21_news_flow_data-mdurl.html", "baidu/mobileUA_2026_beijing-tianqi_c-result.html"):
        with open(os.path.join(SAMPLES, name), "rb") as fh:
            html = http.decode_body(fh.read(), "text/html")[0]
        page = readable.extract(html, "https://www.example.com/")
        assert readable.classify(page, "https://www.example.com/", html) == (None, ""), name
        assert len(page.text) > 500 and page.title, name


def test_extraction_shapes_of_old_and_listing_pages():
    """In-process checks of xlakit.web.readable on layouts common on Chinese sites: an ASP.NET
    <form> around everything with a table layout and <br>-separated text, and a portal home page
    whose content *is* its link lists."""
    sys.path.insert(0, os.path.dirname(HERE))
    from xlakit.web import readable
    gov = ('<html><head><title>关于开展统计工作的通知</title></head><body><form id="form1">'
           '<div class="top"><a href="/">首页</a><a href="/a">机构</a><a href="/b">政务公开</a></div>'
           '<table><tr><td class="left"><a href="/1">通知公告</a><br><a href="/2">政策法规</a><br><a href="/3">办事指南</a></td>'
           '<td><div id="zoom">各有关单位：<br>为做好2025年度统计工作，现将有关事项通知如下。<br>一、统计范围：全市规模以上工业企业。'
           '<br>二、报送时间：2026年1月15日前。<br>三、联系电话0551-12345678。<br><br>特此通知。</div></td></tr></table>'
           '<div class="bottom">主办单位：某某市人民政府</div></form></body></html>')
    page = readable.extract(gov, "http://gov.example.cn/a.html")
    assert page.text.splitlines() == ["各有关单位：", "为做好2025年度统计工作，现将有关事项通知如下。",
                                      "一、统计范围：全市规模以上工业企业。", "二、报送时间：2026年1月15日前。",
                                      "三、联系电话0551-12345678。", "特此通知。"]
    portal = "<html><head><title>门户</title></head><body>" + "".join(
        '<div class="box"><h2>栏目%d</h2><ul>%s</ul></div>' % (i, "".join(
            '<li><a href="/n/%d/%d.html">第%d条新闻：关于某事的报道</a></li>' % (i, j, j) for j in range(8)))
        for i in range(6)) + "</body></html>"
    page = readable.extract(portal, "https://www.example.cn/", link_cap=5)
    assert page.kind == "page" and "栏目5" in page.text
    assert "- [第7条新闻：关于某事的报道](https://www.example.cn/n/5/7.html)" in page.text
    assert readable.classify(page, "https://www.example.cn/", portal) == (None, "")
    assert [l["url"] for l in page.links][:2] == ["https://www.example.cn/n/0/0.html", "https://www.example.cn/n/0/1.html"]
    deep = "<html><body>" + "<font>" * 5000 + "很深的嵌套，也要读得出来。" * 20 + "</body></html>"
    assert "很深的嵌套" in readable.extract(deep).text


def test_a_page_cut_short_of_its_content_length_is_an_error(serve, run):
    """Found by tests/faults: a server that closes before the Content-Length it promised gave a
    half page (a UTF-8 character cut in two even made it read as GB18030 mojibake) as the page."""
    from netserver import Reply
    half = ARTICLE.encode("utf-8")[:1001]
    serve.handler("/cut.html", lambda req: Reply(half, length=len(half) * 3, close=True), host="news.example.cn")
    err = fail(run("fetch_url", {"url": NEWS + "/cut.html"}, extra_env=env(serve)))
    assert "中途断开" in err and "只收到" in err


def test_random_bytes_sent_as_html_are_an_error_not_a_page(serve, run):
    """Found by tests/faults: 10 MB of random bytes (or a gzip stream of zeros) labelled text/html
    came back as the page's "text"."""
    serve.page("/noise.html", os.urandom(200000), host="news.example.cn")
    err = fail(run("fetch_url", {"url": NEWS + "/noise.html"}, extra_env=env(serve)))
    assert "乱码或二进制" in err


# ---- the address policy: no fetches into this machine or the LAN ------------------------------

def _refused(res, address):
    err = fail(res)
    assert "已拒绝访问" in err and address in err and "net_allow" in err and "settings.json" in err, err
    return err


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "localhost", "[::1]"])
def test_a_direct_local_address_is_refused(serve, run, host):
    serve.page("/", ARTICLE)
    res = run("fetch_url", {"url": "http://%s:%d/" % (host, serve.port)}, extra_env={"XLA_NET_MAP": "{}"})
    _refused(res, host.strip("[]"))
    assert serve.requests == []


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/", "http://169.254.169.254/latest/meta-data/",
                                    "http://[::1]:{port}/", "http://2130706433:{port}/"])
def test_a_redirect_to_a_local_address_is_refused(serve, run, target):
    """The mapped origin is the operator's opt-in; where its server redirects is not."""
    from netserver import NetServer
    inner = NetServer()
    try:
        inner.page("/", ARTICLE)
        serve.redirect("/go", target.format(port=inner.port), host="news.example.cn")
        res = run("fetch_url", {"url": NEWS + "/go"}, extra_env={"XLA_NET_MAP": json.dumps({NEWS: serve.base})})
        err = _refused(res, target.split("//")[1].split("/")[0].rsplit(":", 1)[0].strip("[]")
                       if "169.254" not in target else "169.254.169.254")
        assert "news.example.cn/go" in err and "重定向" in err
        assert inner.requests == [] and len(serve.hits("/go")) == 1
    finally:
        inner.stop()


def test_net_allow_lets_the_user_opt_a_host_in(serve, run, home):
    serve.page("/", ARTICLE)
    os.makedirs(os.path.join(str(home), ".xla"), exist_ok=True)
    with open(os.path.join(str(home), ".xla", "settings.json"), "w", encoding="utf-8") as fh:
        json.dump({"net_allow": ["127.0.0.1"]}, fh)
    data = ok(run("fetch_url", {"url": "http://127.0.0.1:%d/" % serve.port}, extra_env={"XLA_NET_MAP": "{}"}))
    assert "缴费基数下限为4494元" in data["text"]


# ---- slow servers: one deadline, and the part read so far --------------------------------------

def test_a_trickling_page_answers_with_what_arrived(serve, run):
    head = "<html><head><title>慢网站</title></head><body><p>%s</p>" % ("这是开头已经收到的一段正文，内容完整可读。" * 20)
    serve.drip("/drip", interval=0.3, host="news.example.cn", head=head)
    data = ok(run("fetch_url", {"url": NEWS + "/drip"}, extra_env=dict(env(serve), XLA_DEADLINE="4")))
    assert data["complete"] is False and "开头已经收到的一段正文" in data["text"]
    assert any("太慢" in w and "complete: false" in w for w in data["warnings"])


def test_a_trickle_with_nothing_readable_says_it_was_slow(serve, run):
    serve.drip("/drip", interval=0.3, host="news.example.cn", head="<html><head><script>var a='")
    err = fail(run("fetch_url", {"url": NEWS + "/drip"}, extra_env=dict(env(serve), XLA_DEADLINE="4")))
    assert "太慢" in err and "还没有正文" in err


# ---- deeply nested markup: linear, whatever the nesting ------------------------------------------

def _nested(shape, n):
    if shape == "inline":
        return "<html><body>" + "".join("<span>文字%d，" % i for i in range(n)) + "</body></html>"
    if shape == "inline_closed":
        return "<html><body><p>" + "<b><i>" * (n // 2) + "正文。" * 50 + "</i></b>" * (n // 2) + "</p></body></html>"
    if shape == "block":
        return "<html><body>" + "".join("<div>第%d段，内容。" % i for i in range(n)) + "</body></html>"
    if shape == "mixed":
        return "<html><body>" + "".join("<div><font><p>文字%d，" % i for i in range(n // 3)) + "</p>" * n + "</body></html>"
    if shape == "cells":       # a row of empty cells: the old trailing-cell regex backtracked exponentially
        return "<html><body><table><tr>" + "<td></td>" * n + "<td>末尾的格子，有字。</td></tr></table></body></html>"
    if shape == "links":
        return "<html><body>" + "<a href='/x%d'>" * n % tuple(range(n)) + "链接的文字" + "</body></html>"
    if shape == "stray_lt":     # "<" that open nothing: a run of text each, as costly as tags
        return "<html><body><p>开头的正文，内容。</p>" + "< x " * n + "</body></html>"
    if shape == "attrs":        # one start tag of n attributes, never closed
        return "<html><body><p>开头的正文，内容。</p><div " + "a=1 " * n
    raise ValueError(shape)


@pytest.mark.parametrize("shape,n", [("inline", 8000), ("inline_closed", 8000), ("block", 8000), ("mixed", 8000),
                                     ("cells", 8000), ("links", 8000), ("inline", 50000), ("mixed", 50000),
                                     ("inline", 200000), ("inline_closed", 200000), ("block", 200000),
                                     ("mixed", 200000), ("cells", 200000), ("links", 200000),
                                     ("stray_lt", 1000000), ("attrs", 1000000)])
def test_deeply_nested_markup_answers_in_time(serve, run, shape, n):
    import time
    html = _nested(shape, n)
    serve.page("/deep.html", html, host="news.example.cn")
    start = time.monotonic()
    res = run("fetch_url", {"url": NEWS + "/deep.html", "max_chars": 2000, "links": shape == "links"},
              extra_env=env(serve))
    secs = time.monotonic() - start
    data = ok(res)
    print("fetch_url, %d nested %s tags (%d KB): %.1f s, %d chars of text" % (
        n, shape, len(html.encode("utf-8")) // 1024, secs, data["total_chars"]))
    assert data["text"].strip()
