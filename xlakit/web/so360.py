"""360 search (so.com) result pages -> search hits.

Results are ``li.res-list`` items (the class may carry extras such as ``referer-news-flow``); the
title is the first ``a`` of ``h3.res-title``. The title link is usually an encrypted
``so.com/link?m=`` jump, so the real address is read from the anchor's ``data-mdurl`` (2020+) or
``data-url`` (2019), else the ``href`` is already direct. Only the title anchor counts: the
``res-linkinfo`` "名片" link also has a ``data-url`` that points at 360's own site.
Items without ``h3.res-title`` are 360's own cards (news boxes, "mohe"), ads carry ``lianmeng-ad``,
and "AI精选" entries link to ``ai.so.com``: all skipped.
"""
import re
from urllib.parse import urlsplit

from . import dom
from .common import absolute, dedupe, host_of, is_http, result, split_date

BASE = "https://www.so.com/s"
_ITEM = re.compile(r"""<li\b[^>]*?\bclass\s*=\s*(["'])([^"']*)\1[^>]*>""", re.I)
_BLOCK_MARKS = ("安全验证", "请输入验证码", "访问异常", "captcha")
_NO_RESULTS = ("抱歉，未找到", "没有找到相关", "未找到和")


def detect_block(text, url=""):
    """360's verification page, or None. Only when the page has no ``res-list`` at all: a normal
    result page can mention 验证 anywhere."""
    if "res-list" in (text or ""):
        return None
    host = host_of(url)
    if host.startswith(("qcaptcha.", "captcha.")) or "/captcha" in (url or ""):
        return "360 搜索返回了验证码页"
    head = (text or "")[:4000]
    for mark in _BLOCK_MARKS:
        if mark in head:
            return "360 搜索返回了验证页（%s）" % mark
    return None


def _internal(url):
    """360's own search pages and widgets (not results). 360 问答 / 百科 pages are content and stay."""
    host = host_of(url)
    if not host:
        return True
    path = urlsplit(url).path
    if host in ("so.com", "www.so.com", "m.so.com"):
        return not path.startswith("/link")   # /link?m= jumps still open the result
    if host == "ai.so.com" or (host.endswith(".so.com") and path in ("/s", "/ns", "/search")):
        return True
    return host == "mingpian.360.cn"


def parse_item(html, base=BASE):
    root = dom.parse(html)
    li = root.find()
    if li is None or "lianmeng-ad" in html:
        return None
    h3 = li.find(lambda n: n.tag == "h3" and n.has_class("res-title"))
    if h3 is None:
        return None
    a = h3.find(tag="a")
    if a is None:
        return None
    title = a.text()
    if not title:
        return None
    url = None
    for name in ("data-mdurl", "data-url"):
        value = (a.get(name) or "").strip()
        if is_http(value):
            url = value
            break
    if url is None:
        url = absolute(base, a.get("href"))
    if not url or _internal(url):
        return None
    snippet_node = (li.find(dom.by_class("res-list-summary")) or li.find(lambda n: n.tag == "p" and n.has_class("res-desc"))
                    or li.find(dom.by_class("res-desc")) or li.find(dom.by_class("so-ask-best"))
                    or li.find(dom.by_class("best-ans")) or li.find(dom.by_class("res-rich")))
    snippet, date = "", ""
    if snippet_node is not None:
        gray = li.find(lambda n: n.tag == "span" and (n.has_class("gray") or n.has_class("g-c-gray")))
        snippet = snippet_node.text()
        if snippet_node.has_class("res-rich"):
            # drop the link-info line that repeats the site name
            info = snippet_node.find(dom.by_class("g-linkinfo"))
            if info is not None and info.text():
                snippet = snippet.replace(info.text(), "").strip()
        if gray is not None:
            date = gray.text().strip(" -\u00a0")
            if snippet.startswith(gray.text()):
                snippet = snippet[len(gray.text()):]
        if not date:
            date, snippet = split_date(snippet)
    cite = li.find(tag="cite")
    source = cite.text() if cite is not None else ""
    snippet = snippet.strip(" -\u00a0")
    if len(snippet) > 300:
        snippet = snippet[:300] + "…"
    return result(title, url, snippet, date=date, source=source)


def parse(html, url=BASE):
    """A so.com answer -> ``{"results": [...], "blocked": reason|None, "no_results": bool, "containers": n}``."""
    html = html or ""
    out = {"results": [], "blocked": detect_block(html, url), "no_results": False, "containers": 0}
    if out["blocked"]:
        return out
    items = dom.slice_elements(html, _ITEM, tag="li", accept=lambda m: "res-list" in m.group(2).split())
    out["containers"] = len(items)
    hits = []
    for chunk in items:
        item = parse_item(chunk, url or BASE)
        if item is not None:
            hits.append(item)
    out["results"] = dedupe(hits)
    if not items:
        if any(mark in html for mark in _NO_RESULTS):
            out["no_results"] = True
        elif len(html) < 8000:
            out["blocked"] = "360 搜索返回的页面过短且没有结果块（%d 字节），可能被拦截" % len(html)
    return out
