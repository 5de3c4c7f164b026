"""The web_search engine chain: Baidu, then 360, inside one deadline.

Why this order and these clients: Baidu has the best Chinese results but walls desktop
User-Agents with its 百度安全验证 captcha (a 302 to wappass.baidu.com), while an Android Chrome
User-Agent still gets the full mobile result page; 360 (so.com) serves a desktop User-Agent
normally and redirects mobile ones to m.so.com. So Baidu is asked as a phone (after a short
warm-up on the home page for its BAIDUID cookie), 360 as a desktop browser.

Time: the chain shares one deadline. Baidu may use only what leaves 360 a fair slice, so a slow
or blocked Baidu never starves the fallback. Redirect links (``baidu.com/link?url=``) are resolved
in parallel with a short cap, and left labelled when time is short.
"""
import re
import threading
from urllib.parse import quote

from .. import http
from ..errors import Deadline
from . import baidu, so360
from .common import dedupe

BAIDU_HOME = "https://www.baidu.com/"
BAIDU_SEARCH = "https://www.baidu.com/s"
SO_SEARCH = "https://www.so.com/s"
RESERVE_FOR_360 = 14.0     # seconds kept back for 360 while Baidu runs
RESOLVE_CAP = 4.0          # seconds for resolving all Baidu redirect links together


class EngineFailed(Exception):
    """One engine gave no usable results; ``str()`` is the Chinese reason, ``kind`` a short code."""

    def __init__(self, message, kind="error"):
        Exception.__init__(self, message)
        self.kind = kind


def _net_reason(exc):
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "…"


def _check_html(resp, name):
    if resp.status >= 400:
        raise EngineFailed("%s 返回 HTTP %d（%s）" % (name, resp.status, http.status_text(resp.status)), "http")
    if resp.content_type and "html" not in resp.content_type and "text" not in resp.content_type:
        raise EngineFailed("%s 返回的不是网页（%s）" % (name, resp.content_type), "format")


def search_baidu(query, limit, deadline):
    """Hits from Baidu or EngineFailed. ``deadline`` bounds everything including the warm-up."""
    with http.Session(deadline=deadline, mobile=True) as s:
        if deadline.remaining() > 8:
            s.warm(BAIDU_HOME, timeout=min(4.0, deadline.remaining() / 4))
        try:
            resp = s.get(BAIDU_SEARCH, params={"wd": query, "ie": "utf-8", "rn": max(10, limit)},
                         referer=BAIDU_HOME, check=False, timeout=deadline.timeout(20))
        except http.NetError as exc:
            raise EngineFailed(_net_reason(exc), exc.kind)
        blocked = baidu.detect_block("", resp.url) or next(
            (baidu.detect_block("", u) for u in resp.history if baidu.detect_block("", u)), None)
        if blocked:
            raise EngineFailed(blocked + "，已改用下一个引擎", "captcha")
        _check_html(resp, "百度")
        page = baidu.parse(resp.text, resp.url)
        if page["blocked"]:
            raise EngineFailed(page["blocked"], "captcha")
        if not page["results"]:
            if page["no_results"]:
                raise EngineFailed("百度没有找到相关结果", "empty")
            raise EngineFailed("百度的页面里没有可识别的结果（%d 个结果块，页面 %d 字；页面结构可能已改版）" % (
                page["containers"], len(resp.text)), "parse")
        hits = page["results"][:limit]
        resolve_redirects(hits, s.user_agent, deadline)
        return hits


def resolve_redirects(hits, user_agent, deadline):
    """Replace ``baidu.com/link?url=`` addresses by their targets where the jump answers within
    ``RESOLVE_CAP`` seconds (a 302 ``Location``, or a meta-refresh / ``location.replace`` page).
    Unresolved hits keep the link and ``redirect: true``; they still open in a browser."""
    todo = [h for h in hits if h.get("redirect")]
    if not todo or deadline.remaining() < 3:
        return
    cap = Deadline(min(RESOLVE_CAP, deadline.remaining() - 2))

    def one(hit):
        try:
            with http.Session(deadline=cap, mobile="Mobile" in user_agent) as s:
                resp = s.get(hit["url"].replace("http://www.baidu.com/", "https://www.baidu.com/", 1),
                             allow_redirects=False, check=False, max_bytes=65536, allow_truncated=True,
                             timeout=cap.timeout())
        except http.NetError:
            return
        target = resp.headers.get("Location") if resp.status in (301, 302, 303, 307, 308) else None
        if not target and resp.status == 200:
            m = re.search(r"""(?:URL|url)\s*=\s*['"]?([^'">\s]+)|location\.replace\(\s*['"]([^'"]+)""", resp.text[:8000])
            if m:
                target = m.group(1) or m.group(2)
        if target and target.startswith(("http://", "https://")) and not baidu.is_redirect(target) \
                and not baidu.detect_block("", target):
            hit["url"] = target
            hit.pop("redirect", None)

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in todo]
    for t in threads:
        t.start()
    for t in threads:
        t.join(cap.timeout())


def search_360(query, limit, deadline):
    with http.Session(deadline=deadline, mobile=False) as s:
        try:
            resp = s.get(SO_SEARCH, params={"q": query, "pn": 1, "ie": "utf-8"}, check=False,
                         referer="https://www.so.com/", timeout=deadline.timeout(20))
        except http.NetError as exc:
            raise EngineFailed(_net_reason(exc), exc.kind)
        _check_html(resp, "360 搜索")
        page = so360.parse(resp.text, resp.url)
        if page["blocked"]:
            raise EngineFailed(page["blocked"], "captcha")
        if not page["results"]:
            if page["no_results"]:
                raise EngineFailed("360 搜索没有找到相关结果", "empty")
            raise EngineFailed("360 搜索的页面里没有可识别的结果（%d 个结果块，页面 %d 字；页面结构可能已改版）" % (
                page["containers"], len(resp.text)), "parse")
        return page["results"][:limit]


ENGINES = (("baidu", "百度", search_baidu), ("360", "360 搜索", search_360))


def search(query, limit=8, deadline=None, engines=ENGINES):
    """Run the chain. Returns ``{"engine", "results", "errors"}``; raises nothing but
    EngineFailed-free results: when every engine failed, ``engine`` is None and ``errors`` says why."""
    deadline = deadline or Deadline(45)
    errors = []
    for i, (key, label, fn) in enumerate(engines):
        if deadline.remaining() < 1.0:
            errors.append({"engine": key, "error": "时间已用完，没有再尝试%s" % label, "kind": "timeout"})
            continue
        later = len(engines) - i - 1
        budget = deadline.remaining() - (RESERVE_FOR_360 if later else 0)
        budget = max(budget, min(deadline.remaining(), 6.0))
        try:
            hits = fn(query, limit, deadline.sub(budget))
        except EngineFailed as exc:
            errors.append({"engine": key, "error": str(exc), "kind": exc.kind})
            continue
        return {"engine": key, "results": dedupe(hits)[:limit], "errors": errors}
    return {"engine": None, "results": [], "errors": errors}


def search_url(engine, query):
    """A link the user can open to see the same search in a browser."""
    if engine == "360":
        return "https://www.so.com/s?q=" + quote(query, safe="")
    return "https://www.baidu.com/s?wd=" + quote(query, safe="")
