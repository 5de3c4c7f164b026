"""Benchmark of the HTTP layer (xlakit.http) against what a user would otherwise pick.

Why: every web tool goes through xlakit.http, which does more than urllib per request (browser
headers, cookie jar, XLA_NET_MAP routing, deadline bookkeeping, streamed reads with a cap,
charset detection). This measures what that costs, against the local test server
(tests/netserver.py, 127.0.0.1, so the numbers are the client's overhead, not the network):

- ``xlakit Session``      one Session, kept-alive connection (what a tool doing several requests gets);
- ``xlakit get()``        one-shot ``http.get`` (a new session and connection per request);
- ``xlakit via map``      a Session asking ``https://www.baidu.com`` routed by XLA_NET_MAP;
- ``urllib urlopen``      ``urllib.request.urlopen`` (new connection per request, no decompression);
- ``http.client``         a raw kept-alive ``HTTPConnection`` (the floor);
- ``requests Session``    if the ``requests`` package is importable.
Pages: a 20 KB HTML page (plain and gzip) and a 1 MB one. Also timed: charset detection of a
1 MB GBK page, and main-text extraction (xlakit.web.readable) of a 200 KB article.

Usage: ``python3 bench/bench_http.py [--n 300]``.
"""
import argparse
import gzip
import http.client as httpclient
import json
import os
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from netserver import NetServer  # noqa: E402
from xlakit import http  # noqa: E402

PARA = "<p>记者从合肥市人力资源和社会保障局获悉，2025年度社会保险缴费基数上下限已经确定，自7月1日起执行。</p>\n"


def page(size):
    body = PARA * (size // len(PARA.encode("utf-8")) + 1)
    return ("<html><head><meta charset='utf-8'><title>测试</title></head><body><article>%s</article></body></html>"
            % body).encode("utf-8")[:size]


def timed(fn, n):
    fn()   # warm-up (connection, imports)
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    n = args.n
    srv = NetServer()
    small, big = page(20_000), page(1_000_000)
    srv.page("/small", small)
    srv.page("/gz", small, encode="gzip")
    srv.page("/big", big)
    base = srv.base
    os.environ["XLA_NET_MAP"] = json.dumps({"https://www.baidu.com": base})
    rows = []

    try:
        import requests  # noqa: F401
        have_requests = True
    except ImportError:
        have_requests = False

    for path, label, count in (("/small", "20 KB", n), ("/gz", "20 KB gzip", n), ("/big", "1 MB", max(20, n // 10))):
        url = base + path
        sess = http.Session(proxy=False)
        results = [("xlakit Session", timed(lambda: sess.get(url).text, count)),
                   ("xlakit get()", timed(lambda: http.get(url).text, count)),
                   ("xlakit via map", timed(lambda: sess.get("https://www.baidu.com" + path).text, count))]

        def via_urllib():
            with urllib.request.urlopen(url) as r:
                data = r.read()
            if r.headers.get("Content-Encoding") == "gzip":
                data = gzip.decompress(data)
            return data.decode("utf-8")
        results.append(("urllib urlopen", timed(via_urllib, count)))
        conn = httpclient.HTTPConnection("127.0.0.1", srv.port)

        def via_client():
            conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
            r = conn.getresponse()
            data = r.read()
            if r.getheader("Content-Encoding") == "gzip":
                data = gzip.decompress(data)
            return data.decode("utf-8")
        results.append(("http.client (floor)", timed(via_client, count)))
        if have_requests:
            import requests
            rs = requests.Session()
            results.append(("requests Session", timed(lambda: rs.get(url).text, count)))
        for name, sec in results:
            rows.append((label, name, 1.0 / sec, sec * 1000.0))
        sess.close()
        conn.close()

    srv.stop()
    print("%-12s %-22s %10s %14s" % ("page", "client", "req/s", "ms/request"))
    for label, name, rps, ms in rows:
        print("%-12s %-22s %10.0f %14.3f" % (label, name, rps, ms))
    if not have_requests:
        print("(requests not installed: not compared)")

    gbk = ("<html><head><meta http-equiv='Content-Type' content='text/html; charset=gb2312'></head><body>%s</body></html>"
           % (PARA * 6000)).encode("gbk")
    t = time.perf_counter()
    for _ in range(10):
        http.decode_body(gbk, "text/html")
    print("decode_body  1 MB GBK page (meta charset): %.1f ms" % ((time.perf_counter() - t) / 10 * 1000))
    try:
        from xlakit.web import readable
        art = page(200_000).decode("utf-8", "ignore")
        art = art.replace("<body>", "<body><div class='nav'>" + "<a href='/x'>导航</a>" * 200 + "</div>")
        t = time.perf_counter()
        for _ in range(5):
            readable.extract(art, "https://news.example.cn/a.html", link_cap=60)
        print("readable.extract  200 KB article: %.1f ms" % ((time.perf_counter() - t) / 5 * 1000))
    except ImportError:
        pass


if __name__ == "__main__":
    main()
