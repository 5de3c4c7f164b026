"""xlakit.http against real local servers (tests/netserver.py): headers, redirects across mapped
origins, decompression, charsets, the deadline, the cap, cookies, proxies (our own SOCKS5 and HTTP
proxy), TLS verification and every Chinese error. No test reaches the internet: every origin goes
through XLA_NET_MAP to 127.0.0.1, and unknown origins are mapped to "offline"."""
import gzip
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from netserver import HttpProxy, NetServer, Reply, Socks5Server, free_port, http_proxy, serve, socks5  # noqa: F401
from xlakit import http
from xlakit.errors import Deadline, ToolError

CJK = "\u4e00"


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """No real ~/.xla/settings.json (a developer's proxy) leaks into these tests."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XLA_NET_MAP", raising=False)
    return home


def use_map(monkeypatch, server, *origins, **extra):
    monkeypatch.setenv("XLA_NET_MAP", server.env(*origins, **extra)["XLA_NET_MAP"])


def chinese(exc):
    text = str(exc)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text), text
    return text


# ---------------------------------------------------------------------------------------------
# headers, mapping

def test_browser_headers_and_logical_host(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.baidu.com")
    serve.page("/", "<html><title>首页</title></html>", host="www.baidu.com")
    resp = http.Session().get("https://www.baidu.com/")
    assert resp.status == 200 and resp.url == "https://www.baidu.com/"
    assert "首页" in resp.text and resp.encoding == "utf-8"
    req = serve.hits("/")[0]
    assert req.host == "www.baidu.com"
    ua = req.headers["User-Agent"]
    assert "Chrome/" in ua and "Windows NT 10.0" in ua and "Mobile" not in ua
    assert req.headers["Accept-Language"].startswith("zh-CN")
    assert req.headers["Accept-Encoding"] == "gzip, deflate"
    assert req.headers["Accept"].startswith("text/html")
    assert req.headers["Sec-Fetch-Mode"] == "navigate"      # logical https: Chrome sends Sec-Fetch-*


def test_mobile_user_agent_and_ajax_headers(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://m.example.com")
    serve.json("/api", {"a": 1})
    s = http.Session(mobile=True)
    data = s.get("http://m.example.com/api", ajax=True).json()
    assert data == {"a": 1}
    req = serve.hits("/api")[0]
    assert "Android" in req.headers["User-Agent"] and "Mobile Safari" in req.headers["User-Agent"]
    assert req.headers["X-Requested-With"] == "XMLHttpRequest"
    assert "Sec-Fetch-Mode" not in req.headers                # plain http: no Sec-Fetch-*


def test_chrome_version_follows_the_date():
    import datetime
    assert http.chrome_major(datetime.date(2020, 1, 1)) == 142
    assert http.chrome_major(datetime.date(2027, 10, 28)) > http.chrome_major(datetime.date(2026, 10, 28)) > 142


def test_map_forms_bare_host_prefix_and_star(serve, monkeypatch):
    serve.page("/site/a", "prefixed")
    serve.page("/b", "bare")
    monkeypatch.setenv("XLA_NET_MAP", json.dumps({
        "https://p.example": serve.base + "/site", "q.example": serve.base.replace("http://", ""), "*": "offline"}))
    assert http.Session().get("https://p.example/a").text == "prefixed"
    assert http.Session().get("http://q.example/b").text == "bare"
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://elsewhere.example/")
    assert err.value.kind == "offline" and "没有可用的网络" in chinese(err.value)


def test_bad_net_map_is_a_chinese_error(monkeypatch):
    monkeypatch.setenv("XLA_NET_MAP", "{not json")
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://www.baidu.com/")
    assert err.value.kind == "config" and "XLA_NET_MAP" in chinese(err.value)


def test_query_params_and_chinese_url(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.baidu.com")
    serve.handler("/s", lambda req: "wd=%s" % req.arg("wd"))
    serve.handler("/路径", lambda req: "ok %s" % req.arg("q"))
    assert http.Session().get("https://www.baidu.com/s", params={"wd": "北京 天气", "ie": "utf-8"}).text == "wd=北京 天气"
    assert http.Session().get("https://www.baidu.com/路径?q=中文").text == "ok 中文"


def test_post_form_and_json(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://api.example")
    serve.handler("/p", lambda req: Reply(req.body, content_type=req.headers["Content-Type"]))
    s = http.Session()
    assert s.post("http://api.example/p", data={"a": "中"}).text == "a=%E4%B8%AD"
    r = s.post("http://api.example/p", json={"k": "值"})
    assert r.json() == {"k": "值"} and r.content_type == "application/json"


# ---------------------------------------------------------------------------------------------
# redirects

def test_redirect_chain_across_mapped_origins(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.baidu.com", "https://wappass.baidu.com", "http://old.example")
    serve.redirect("/go", "https://www.baidu.com/s?wd=1", host="old.example", status=301)
    serve.redirect("/s", "https://wappass.baidu.com/static/captcha/tuxing.html?ak=1", host="www.baidu.com")
    serve.redirect("/static/captcha/tuxing.html", "/final", host="wappass.baidu.com", status=307)
    serve.page("/final", "<title>百度安全验证</title>", host="wappass.baidu.com")
    resp = http.Session().get("http://old.example/go")
    assert resp.url == "https://wappass.baidu.com/final"
    assert resp.history == ["http://old.example/go", "https://www.baidu.com/s?wd=1",
                            "https://wappass.baidu.com/static/captcha/tuxing.html?ak=1"]
    assert "百度安全验证" in resp.text
    assert [r.host for r in serve.requests] == ["old.example", "www.baidu.com", "wappass.baidu.com", "wappass.baidu.com"]


def test_redirect_not_followed_when_asked(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.baidu.com")
    serve.redirect("/link", "https://example.org/real")
    resp = http.Session().get("https://www.baidu.com/link", allow_redirects=False)
    assert resp.status == 302 and resp.headers.get("Location") == "https://example.org/real"


def test_redirect_loop_is_stopped(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://loop.example")
    serve.redirect("/a", "/b")
    serve.redirect("/b", "/a")
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://loop.example/a")
    assert err.value.kind == "redirects" and "重定向次数过多" in chinese(err.value)
    assert len(serve.requests) <= http.MAX_REDIRECTS + 1


def test_post_303_becomes_get(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://f.example")
    serve.redirect("/submit", "/done", status=303)
    serve.handler("/done", lambda req: req.method)
    assert http.Session().post("http://f.example/submit", data={"x": "1"}).text == "GET"


# ---------------------------------------------------------------------------------------------
# bodies: compression, charsets

@pytest.mark.parametrize("encode", ["gzip", "deflate", "raw-deflate"])
def test_compressed_bodies(serve, monkeypatch, encode):
    use_map(monkeypatch, serve, "http://z.example")
    page = "<html><body>" + "压缩的正文。" * 2000 + "</body></html>"
    serve.page("/z", page, encode=encode)
    resp = http.Session().get("http://z.example/z")
    assert resp.text == page and resp.wire_bytes < len(page.encode("utf-8")) / 5


def test_gzip_chunked(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://z.example")
    serve.page("/zc", "分块" * 5000, encode="gzip", chunked=True)
    assert http.Session().get("http://z.example/zc").text == "分块" * 5000


def test_gbk_page_without_header_charset(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://gbk.example")
    html = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"><title>新闻中心</title>' \
           '</head><body>今天天气很好，镕（GBK 才有的字）</body></html>'
    serve.page("/meta", html.encode("gbk"), content_type="text/html")
    serve.page("/bare", "没有任何声明的国标页面，喆".encode("gbk"), content_type="text/html")
    serve.page("/lie", "头里写 utf-8，其实是 GBK".encode("gbk"), content_type="text/html; charset=utf-8")
    s = http.Session()
    r = s.get("http://gbk.example/meta")
    assert "镕" in r.text and "新闻中心" in r.text and (r.encoding, r.encoding_reason) == ("gb18030", "meta")
    r = s.get("http://gbk.example/bare")
    assert r.text == "没有任何声明的国标页面，喆" and r.encoding == "gb18030"
    assert s.get("http://gbk.example/lie").text == "头里写 utf-8，其实是 GBK"


def test_charset_sources_in_order():
    assert http.decode_body("中文".encode("utf-8"), "text/html; charset=gbk")[0] != "中文"   # header wins if it decodes
    assert http.decode_body(b"\xef\xbb\xbf" + "中".encode("utf-8"), "text/html; charset=gbk")[:2] == ("中", "utf-8")
    assert http.decode_body("中文".encode("utf-8"), "text/html; charset=ISO-8859-1")[0] == "中文"  # Tomcat default
    assert http.decode_body('<?xml version="1.0" encoding="GBK"?><a>中</a>'.encode("gbk"))[1] == "gb18030"
    assert http.decode_body("繁體".encode("big5"), "text/html; charset=big5")[0] == "繁體"
    assert http.decode_body(b"\xff\xfe" + "中".encode("utf-16-le"))[0] == "中"


# ---------------------------------------------------------------------------------------------
# time and size limits

def test_slow_server_against_the_deadline(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://slow.example")
    serve.slow("/slow", 30)
    deadline = Deadline(1.0)
    with pytest.raises(http.NetError) as err:
        http.Session(deadline=deadline).get("http://slow.example/slow")
    assert err.value.kind == "timeout" and "时间" in chinese(err.value)
    assert deadline.remaining() < 0.5    # it waited for the deadline, not for the server


def test_dripping_server_against_the_request_timeout(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://drip.example")
    serve.drip("/drip", interval=0.1)
    with pytest.raises(http.NetError) as err:
        http.Session(timeout=1.0).get("http://drip.example/drip")
    assert err.value.kind == "timeout" and "超时" in chinese(err.value)


def test_spent_deadline_fails_at_once(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://x.example")
    serve.page("/", "x")
    with pytest.raises(http.NetError) as err:
        http.Session(deadline=Deadline(0)).get("http://x.example/")
    assert err.value.kind == "timeout"
    assert serve.requests == []


@pytest.mark.parametrize("declare", [True, False])
def test_huge_page_against_the_cap(serve, monkeypatch, declare):
    use_map(monkeypatch, serve, "http://big.example")
    serve.huge("/big", 50_000_000, declare_length=declare)
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://big.example/big", max_bytes=1_000_000)
    assert err.value.kind == "too_big" and "上限" in chinese(err.value)
    resp = http.Session().get("http://big.example/big", max_bytes=300_000, allow_truncated=True)
    assert resp.truncated and len(resp.content) == 300_000 and resp.wire_bytes < 1_000_000
    assert "中文" in resp.text[:100]


def test_gzip_bomb_is_capped_on_the_inflated_size(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://bomb.example")
    serve.huge("/bomb", 40_000_000, encode="gzip")
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://bomb.example/bomb", max_bytes=2_000_000)
    assert err.value.kind == "too_big"


# ---------------------------------------------------------------------------------------------
# failures

def test_connection_refused(monkeypatch):
    port = free_port()
    monkeypatch.setenv("XLA_NET_MAP", json.dumps({"https://down.example": "http://127.0.0.1:%d" % port}))
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://down.example/")
    assert err.value.kind == "refused" and "连接被拒绝" in chinese(err.value)


def test_http_status_is_a_chinese_error_with_the_page(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.example.cn")
    serve.page("/gone", "<h1>页面找不到了</h1>", status=404)
    serve.page("/busy", "slow down", status=429)
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://www.example.cn/gone")
    assert err.value.kind == "http" and err.value.status == 404 and "页面不存在" in chinese(err.value)
    assert "页面找不到了" in err.value.response.text
    assert isinstance(err.value, ToolError)
    assert http.Session().get("https://www.example.cn/busy", check=False).status == 429
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://www.example.cn/busy")
    assert "太频繁" in str(err.value)


def test_dropped_connection(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://drop.example")
    serve.close("/x")
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://drop.example/x")
    assert err.value.kind == "reset" and chinese(err.value)


def test_dns_failure_message_path():
    """A real lookup would leave the machine; the mapping of resolver errors is tested directly."""
    err = http.dns_error("no-such-host.example", socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    assert err.kind == "dns" and "no-such-host.example" in chinese(err)
    err = http.dns_error("www.baidu.com", socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"))
    assert err.kind == "dns" and "没有联网" in chinese(err)


def test_bad_urls():
    for url in ("ftp://x.example/", "www.baidu.com", "", "http://", "http://x.example:99999/"):
        with pytest.raises(http.NetError) as err:
            http.Session().get(url)
        assert err.value.kind == "url" and chinese(err.value)


def test_keep_alive_reuses_and_survives_server_close(serve, monkeypatch):
    use_map(monkeypatch, serve, "http://ka.example")
    serve.page("/k", "k")
    serve.handler("/bye", lambda req: Reply("bye", close=True))
    s = http.Session()
    for _ in range(3):
        assert s.get("http://ka.example/k").text == "k"
    assert len(s._pool) == 1
    assert s.get("http://ka.example/bye").text == "bye"
    assert s.get("http://ka.example/k").text == "k"


# ---------------------------------------------------------------------------------------------
# cookies, referer, warm-up

def test_cookies_across_requests_and_domains(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.baidu.com", "https://m.baidu.com", "https://www.so.com")
    serve.page("/", "home", host="www.baidu.com", headers=[
        ("Set-Cookie", "BAIDUID=ABC123:FG=1; expires=Thu, 31-Dec-37 23:55:55 GMT; path=/; domain=.baidu.com"),
        ("Set-Cookie", "BD_CK_SAM=1; path=/")])
    serve.handler("*", lambda req: "cookie=%s" % (req.headers.get("Cookie") or ""))
    s = http.Session()
    s.get("https://www.baidu.com/")
    assert s.get("https://www.baidu.com/s").text == "cookie=BAIDUID=ABC123:FG=1; BD_CK_SAM=1"
    assert s.get("https://m.baidu.com/x").text == "cookie=BAIDUID=ABC123:FG=1"     # domain cookie only
    assert s.get("https://www.so.com/s").text == "cookie="
    assert http.Session().get("https://www.baidu.com/s").text == "cookie="          # one jar per session


def test_warmup_and_referer(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.kuaidi.com")
    serve.page("/", "home", host="www.kuaidi.com", headers=[("Set-Cookie", "sid=42; path=/")])
    serve.handler("/api", lambda req: "%s|%s" % (req.headers.get("Cookie"), req.headers.get("Referer")))
    s = http.Session(warmup="https://www.kuaidi.com/", referer="https://www.kuaidi.com/")
    assert s.get("https://www.kuaidi.com/api", ajax=True).text == "sid=42|https://www.kuaidi.com/"
    assert [r.path for r in serve.requests] == ["/", "/api"]
    assert s.get("https://www.kuaidi.com/api", referer="https://x.example/").text.endswith("|https://x.example/")
    assert len(serve.hits("/")) == 1                         # warm-up once per session


def test_failed_warmup_does_not_hide_the_real_answer(serve, monkeypatch):
    use_map(monkeypatch, serve, "https://www.kuaidi.com")
    serve.page("/", "oops", status=500, host="www.kuaidi.com")
    serve.page("/api", "fine")
    assert http.Session(warmup="https://www.kuaidi.com/").get("https://www.kuaidi.com/api").text == "fine"


# ---------------------------------------------------------------------------------------------
# proxies from ~/.xla/settings.json

def write_settings(home, **data):
    (home / ".xla").mkdir(exist_ok=True)
    (home / ".xla" / "settings.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_socks5_proxy_with_password(serve, socks5, monkeypatch, private_home):
    use_map(monkeypatch, serve, "https://www.baidu.com")
    serve.page("/s", "via socks", host="www.baidu.com")
    write_settings(private_home, proxy=socks5.url)
    s = http.Session()
    assert s.proxy.scheme == "socks5h" and s.proxy.user == "xla" and s.proxy.password == "秘密pw"
    assert s.get("https://www.baidu.com/s").text == "via socks"
    assert socks5.auths == [("xla", "秘密pw")] and socks5.connects == [("127.0.0.1", serve.port)]
    assert serve.hits("/s")[0].host == "www.baidu.com"


def test_socks5_local_and_remote_names(serve, monkeypatch, private_home):
    """socks5h:// hands the name to the proxy (ATYP 3); socks5:// resolves here (ATYP 1)."""
    proxy = Socks5Server()
    try:
        serve.page("/", "named")
        monkeypatch.setenv("XLA_NET_MAP", json.dumps({"http://named.example": "http://localhost:%d" % serve.port}))
        write_settings(private_home, proxy="socks5h://127.0.0.1:%d" % proxy.port)
        assert http.Session().get("http://named.example/").text == "named"
        write_settings(private_home, proxy="socks5://127.0.0.1:%d" % proxy.port)
        assert http.Session().get("http://named.example/").text == "named"
        assert proxy.connects[0] == ("localhost", serve.port)
        assert proxy.connects[1][0] in ("127.0.0.1", "::1")
    finally:
        proxy.stop()


def test_socks5_wrong_password_and_refused_target(serve, socks5, monkeypatch, private_home):
    use_map(monkeypatch, serve, "https://www.baidu.com", "https://down.example")
    write_settings(private_home, proxy="socks5://xla:wrong@127.0.0.1:%d" % socks5.port)
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://www.baidu.com/")
    assert err.value.kind == "proxy" and "用户名或密码" in chinese(err.value)
    monkeypatch.setenv("XLA_NET_MAP", json.dumps({"https://down.example": "http://127.0.0.1:%d" % free_port()}))
    write_settings(private_home, proxy=socks5.url)
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://down.example/")
    assert err.value.kind == "proxy" and "拒绝连接" in chinese(err.value)


def test_http_proxy_absolute_uri(serve, http_proxy, monkeypatch, private_home):
    use_map(monkeypatch, serve, "https://www.so.com")
    serve.page("/s", "via http proxy", host="www.so.com")
    write_settings(private_home, proxy=http_proxy.url)
    assert http.Session().get("https://www.so.com/s").text == "via http proxy"
    assert http_proxy.seen[0][:2] == ("GET", "%s/s" % serve.base)


def test_http_proxy_with_auth(serve, monkeypatch, private_home):
    proxy = HttpProxy(user="u", password="p")
    try:
        use_map(monkeypatch, serve, "http://a.example")
        serve.page("/", "authed")
        write_settings(private_home, proxy="http://u:p@127.0.0.1:%d" % proxy.port)
        assert http.Session().get("http://a.example/").text == "authed"
        write_settings(private_home, proxy="http://127.0.0.1:%d" % proxy.port)
        with pytest.raises(http.NetError) as err:
            http.Session().get("http://a.example/")
        assert err.value.kind == "http" and err.value.status == 407
    finally:
        proxy.stop()


def test_no_proxy_and_dead_proxy(serve, monkeypatch, private_home):
    use_map(monkeypatch, serve, "http://intranet.example", "http://www.example.cn")
    serve.page("/", "direct")
    dead = "socks5://127.0.0.1:%d" % free_port()
    write_settings(private_home, proxy=dead, no_proxy=["*.example"])
    assert http.Session().get("http://intranet.example/").text == "direct"
    write_settings(private_home, proxy=dead)
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://www.example.cn/")
    assert err.value.kind == "proxy" and "settings.json" in chinese(err.value) and "代理" in str(err.value)


def test_broken_settings(private_home):
    write_settings(private_home, proxy="ftp://1.2.3.4:21")
    with pytest.raises(http.NetError) as err:
        http.Session()
    assert err.value.kind == "config" and "socks5://" in chinese(err.value)
    (private_home / ".xla" / "settings.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(http.NetError) as err:
        http.Session()
    assert err.value.kind == "config" and "settings.json" in chinese(err.value)
    assert http.Session(proxy=False).proxy is None


# ---------------------------------------------------------------------------------------------
# TLS (a local HTTPS server with a throw-away self-signed certificate made by openssl)

@pytest.fixture
def tls_server(tmp_path):
    if not shutil.which("openssl"):
        pytest.skip("openssl CLI not installed: cannot make a test certificate")
    key, cert = str(tmp_path / "k.pem"), str(tmp_path / "c.pem")
    proc = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                           "-days", "2", "-subj", "/CN=secure.example", "-addext",
                           "subjectAltName=DNS:secure.example,IP:127.0.0.1"], capture_output=True)
    if proc.returncode != 0:
        pytest.skip("openssl could not make a certificate: %s" % proc.stderr[-200:])
    server = NetServer()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.httpd.socket = ctx.wrap_socket(server.httpd.socket, server_side=True, do_handshake_on_connect=False)
    server.base = "https://127.0.0.1:%d" % server.port
    server.cert = cert
    try:
        yield server
    finally:
        server.stop()


def test_untrusted_certificate_is_refused_in_chinese(tls_server, monkeypatch):
    use_map(monkeypatch, tls_server, "https://secure.example")
    tls_server.page("/", "secret")
    with pytest.raises(http.NetError) as err:
        http.Session().get("https://secure.example/")
    assert err.value.kind == "tls" and "证书" in chinese(err.value) and "不会跳过校验" in str(err.value)


def test_trusted_certificate_direct_and_through_connect(tls_server, http_proxy, monkeypatch, private_home):
    use_map(monkeypatch, tls_server, "https://secure.example")
    tls_server.page("/", "secret")
    ctx = ssl.create_default_context(cafile=tls_server.cert)
    assert http.Session(ssl_context=ctx).get("https://secure.example/").text == "secret"
    write_settings(private_home, proxy=http_proxy.url)
    assert http.Session(ssl_context=ctx).get("https://secure.example/").text == "secret"
    assert http_proxy.seen[0][:2] == ("CONNECT", "127.0.0.1:%d" % tls_server.port)


# ---------------------------------------------------------------------------------------------
# the address policy (xlakit/net/policy.py): no requests into the machine or the LAN

from xlakit.net import policy  # noqa: E402

REFUSED = ["127.0.0.1", "127.8.9.10", "0.0.0.0", "0.1.2.3", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
           "100.64.0.1", "100.127.255.254", "169.254.169.254", "192.0.0.170", "192.0.2.1", "198.51.100.7",
           "203.0.113.9", "198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
           "::1", "::", "fe80::1", "fe80::1%1", "fec0::1", "fc00::1", "fd12:3456::1", "ff02::1", "100::1",
           "2001:db8::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.1.2.3", "::127.0.0.1",
           "::10.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "2002:7f00:1::1",
           "2002:c0a8:101::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "3fff::1" if False else "1::1"]
PUBLIC = ["1.1.1.1", "223.5.5.5", "36.7.1.2", "100.63.255.255", "100.128.0.1", "172.32.0.1", "192.169.0.1",
          "8.8.8.8", "2400:3200::1", "240e::1", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]


def test_forbidden_ranges_in_ipv4_and_every_ipv6_form():
    for text in REFUSED:
        assert policy.forbidden_reason(text), text
        assert chinese(policy.forbidden_reason(text))
    for text in PUBLIC:
        assert policy.forbidden_reason(text) is None, text
    assert "元数据" in policy.forbidden_reason("169.254.169.254")
    assert "127.0.0.1" in policy.forbidden_reason("::ffff:127.0.0.1")


def test_ipv4_spellings_the_c_library_accepts():
    for text in ("2130706433", "0x7f.1", "127.1", "0177.0.0.1", "0x7f000001", "0x7F.0.0.1", "127.0.1", "017700000001",
                 "127.0.0.1."):
        assert str(policy.parse_ipv4_loose(text)) == "127.0.0.1", text
    assert str(policy.parse_ipv4_loose("2852039166")) == "169.254.169.254"
    for text in ("example.com", "1.2.3.4.5", "256.1.1.1", "08.1.1.1", "0x", "1e3", "", "4294967296"):
        assert policy.parse_ipv4_loose(text) is None or text == "0x", text
    assert str(policy.host_address("[::ffff:127.0.0.1]")) == "::ffff:7f00:1"


def _blocked(exc):
    assert exc.kind == "blocked", (exc.kind, str(exc))
    text = chinese(exc)
    assert "已拒绝访问" in text and "net_allow" in text and "settings.json" in text
    return text


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f.1", "127.1", "0177.0.0.1", "[::1]",
                                  "[::ffff:127.0.0.1]", "localhost"])
def test_unmapped_local_addresses_are_refused_before_any_byte(serve, monkeypatch, host):
    serve.page("/", "secret")
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://%s:%d/" % (host, serve.port))
    _blocked(err.value)
    assert serve.requests == []
    # a catch-all mapping does not make a written local address acceptable either
    use_map(monkeypatch, serve, **{"*": serve.base})
    with pytest.raises(http.NetError) as err:
        http.Session().get("http://%s:%d/" % (host, serve.port))
    _blocked(err.value)
    assert serve.requests == []


def test_a_name_is_checked_on_the_addresses_it_resolves_to(serve):
    """What a name resolves to is checked before the connect, and the peer after it."""
    serve.page("/", "secret")
    url = "http://localhost:%d/" % serve.port
    with pytest.raises(http.NetError) as err:
        http._connect("localhost", serve.port, 3.0, url, check=lambda a: policy.check_address(a, "localhost", url))
    assert "解析到的地址" in _blocked(err.value)
    checked = []
    sock = http._connect("localhost", serve.port, 3.0, url, check=checked.append)
    sock.close()
    assert checked and checked[-1] in ("127.0.0.1", "::1")   # resolved ones first, then the peer itself
    assert serve.requests == []


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/secret", "http://169.254.169.254/latest/meta-data/",
                                    "http://[::1]:{port}/secret", "http://2130706433:{port}/secret",
                                    "http://localhost:{port}/secret"])
def test_redirect_from_a_mapped_server_to_a_local_address_is_refused(serve, monkeypatch, target):
    inner = NetServer()
    try:
        inner.page("/secret", "the metadata")
        use_map(monkeypatch, serve, "https://news.example")
        serve.redirect("/go", target.format(port=inner.port), host="news.example")
        with pytest.raises(http.NetError) as err:
            http.Session().get("https://news.example/go")
        text = _blocked(err.value)
        assert "news.example/go" in text           # names where the redirect came from
        assert inner.requests == [] and len(serve.hits("/go")) == 1
    finally:
        inner.stop()


def test_an_exactly_mapped_origin_is_the_operators_opt_in(serve, monkeypatch):
    serve.page("/", "intranet")
    use_map(monkeypatch, serve, "http://10.1.2.3")
    assert http.Session().get("http://10.1.2.3/").text == "intranet"


def test_net_allow_in_settings_and_environment(serve, monkeypatch, private_home):
    serve.page("/", "allowed")
    url = "http://127.0.0.1:%d/" % serve.port
    write_settings(private_home, net_allow=["127.0.0.1"])
    assert http.Session().get(url).text == "allowed"
    write_settings(private_home, net_allow=["127.0.0.0/8"])
    assert http.Session().get("http://localhost:%d/" % serve.port).text == "allowed"   # by the resolved address
    write_settings(private_home, net_allow=["localhost"])
    assert http.Session().get("http://localhost:%d/" % serve.port).text == "allowed"   # by name
    with pytest.raises(http.NetError) as err:
        http.Session().get(url)
    _blocked(err.value)
    write_settings(private_home)
    monkeypatch.setenv("XLA_NET_ALLOW", "intranet.example, 127.0.0.1")
    assert http.Session().get(url).text == "allowed"


def test_through_a_proxy_written_local_addresses_are_still_refused(serve, http_proxy, socks5, private_home):
    serve.page("/", "secret")
    for proxy in (http_proxy.url, socks5.url):
        write_settings(private_home, proxy=proxy)
        with pytest.raises(http.NetError) as err:
            http.Session().get("http://127.0.0.1:%d/" % serve.port)
        _blocked(err.value)
    assert serve.requests == [] and http_proxy.seen == [] and socks5.connects == []


# ---------------------------------------------------------------------------------------------
# one overall deadline: trickles reset a per-call socket timeout, never the request's budget

def _raw_server(behave):
    """A one-port raw server on 127.0.0.1 that runs ``behave(conn)`` per connection."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=lambda: _quietly(behave, conn, stop), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return srv, stop


def _quietly(behave, conn, stop):
    try:
        conn.recv(65536)
        behave(conn, stop)
    except OSError:
        pass
    finally:
        conn.close()


def _trickle_head(conn, stop):
    for ch in b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Slow: " + b"a" * 100000:
        if stop.wait(0.05):
            return
        conn.sendall(bytes([ch]))


def _trickle_body(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 100000\r\n\r\n"
                 + "<html><body><p>开头的一段正文，".encode("utf-8"))
    for _ in range(100000):
        if stop.wait(0.05):
            return
        conn.sendall(b"x")


@pytest.mark.parametrize("behave,words", [(_trickle_head, "回应头"), (_trickle_body, "正文太慢")])
def test_trickle_never_outlives_the_deadline(monkeypatch, behave, words):
    srv, stop = _raw_server(behave)
    try:
        monkeypatch.setenv("XLA_NET_MAP", json.dumps({"http://slow.example": "http://127.0.0.1:%d" % srv.getsockname()[1]}))
        deadline = Deadline(1.5)
        with pytest.raises(http.NetError) as err:
            http.Session(deadline=deadline, timeout=30).get("http://slow.example/")
        assert err.value.kind == "timeout" and words in chinese(err.value)
        assert deadline.remaining() < 0.5     # the whole budget was used, and no more (the test's timeout bounds it)
    finally:
        stop.set()
        srv.close()


def test_body_trickle_can_hand_back_the_part_read(monkeypatch):
    srv, stop = _raw_server(_trickle_body)
    try:
        monkeypatch.setenv("XLA_NET_MAP", json.dumps({"http://slow.example": "http://127.0.0.1:%d" % srv.getsockname()[1]}))
        resp = http.Session(deadline=Deadline(1.5)).get("http://slow.example/", partial_on_timeout=True)
        assert resp.truncated and "正文太慢" in resp.timed_out and "100000" not in resp.timed_out
        assert resp.text.startswith("<html><body><p>开头的一段正文，")
    finally:
        stop.set()
        srv.close()
