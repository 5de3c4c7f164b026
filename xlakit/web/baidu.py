"""Baidu result pages -> search hits, across the layouts Baidu has served.

Layouts handled (see the parser tests for a fixture of each):
* classic desktop 2018-2020: ``div.result.c-container`` with ``h3.t > a`` (a ``baidu.com/link``
  redirect) and ``div.c-abstract``; aladdin cards ``div.result-op`` carry the real URL as ``mu`` in
  their ``data-click`` JSON;
* desktop 2021-2023: ``mu`` on the outer container, a nested ``c-container``, the snippet in a
  hashed ``content-right_*`` span;
* desktop 2024+: ``summary-text_*`` spans, ``data-module="abstract"``, titles in ``cosc-title``
  slots and the summary also as ``<!--s-data:{json}-->`` (with invalid ``\\-`` escapes);
* mobile (Android User-Agent): ``div.c-result.result`` with single-quoted attributes and the real
  URL as ``mu`` in the ``data-log`` JSON.

Before any of that, ``detect_block`` recognises the 百度安全验证 wall (wappass / seccaptcha), so a
captcha is reported as blocked instead of as "no results".
"""
import re
from urllib.parse import urlsplit

from . import dom
from .common import absolute, host_of, is_http, loads_lenient, result, dedupe, split_date

BASE = "https://www.baidu.com/s"

_CAPTCHA_MARKS = ("百度安全验证", "wappass.baidu.com", "/static/captcha/", "seccaptcha.baidu.com")
_CONTAINER = re.compile(r"""<div\b[^>]*?\bclass\s*=\s*(["'])([^"']*)\1[^>]*>""", re.I)
_NO_RESULTS = ("很抱歉，没有找到与", "抱歉，没有找到与", "未找到相关结果", "没有找到该URL")
_AD_CLASSES = ("ec_wise_ad", "ec-tuiguang", "ec_tuiguang", "ec-tuiguang-label")
_SKIP_TPL = ("recommend_list", "rel-baike", "rel_baike", "sp_purc", "yl_vd", "ai_agent")


def detect_block(text, url=""):
    """Why this answer is Baidu's anti-bot wall rather than results, or None.

    The real wall (2026) is a 302 to ``wappass.baidu.com/static/captcha/tuxing_v2.html`` ending in
    a 1.5 KB page titled 百度安全验证; variants are a 200 with that title, a newer
    ``seccaptcha.baidu.com`` host, or a tiny body that is only a captcha link."""
    host = host_of(url)
    path = ""
    try:
        path = urlsplit(url or "").path
    except ValueError:
        pass
    if host.startswith("wappass.") or host.startswith("seccaptcha.") or "/static/captcha" in path:
        return "百度返回了安全验证页（%s）" % (host or "captcha")
    head = (text or "")[:6000]
    for mark in _CAPTCHA_MARKS:
        if mark in head:
            if "c-container" in text or "c-result" in text:
                # a results page that merely links to the captcha host somewhere: not a wall
                break
            return "百度返回了安全验证页（%s）" % mark
    return None


def _is_placeholder(url):
    """``mu`` values that are not the result's address: Baidu's own cards and stand-ins."""
    if not is_http(url):
        return True
    host = host_of(url)
    if not host:
        return True
    if host == "nourl.ubs.baidu.com" or host.endswith(".recommend_list.baidu.com"):
        return True
    if host in ("www.baidu.com", "baidu.com", "m.baidu.com", "wap.baidu.com"):
        return True   # /weather/…, /11015 card ids; a /link redirect is handled separately
    return False


def is_redirect(url):
    """True for ``baidu.com/link?url=…`` style redirects (resolve them or label them)."""
    if not is_http(url):
        return False
    host = host_of(url)
    try:
        path = urlsplit(url).path
    except ValueError:
        return False
    return host in ("www.baidu.com", "baidu.com", "m.baidu.com") and path.startswith(("/link", "/baidu.php"))


def _accept(match):
    classes = match.group(2).split()
    if "c-container" in classes and ("result" in classes or "result-op" in classes):
        return True
    return "c-result" in classes and "result" in classes


def _json_mu(node, names=("data-click", "data-log")):
    for name in names:
        data = loads_lenient(node.get(name))
        if isinstance(data, dict):
            mu = data.get("mu")
            if isinstance(mu, str) and mu and not _is_placeholder(mu):
                return mu
    return None


def _s_data(node):
    """Summary lines and date from ``<!--s-data:{…}-->`` comments below ``node``."""
    texts, date = [], ""
    for comment in node.comments():
        if not comment.startswith("s-data:") or "summaryData" not in comment:
            continue
        data = loads_lenient(comment[len("s-data:"):])
        summary = data.get("summaryData") if isinstance(data, dict) else None
        if not isinstance(summary, dict):
            continue
        for line in summary.get("generalLines") or []:
            if not isinstance(line, dict):
                continue
            if not date and isinstance(line.get("prefixTime"), str):
                date = line["prefixTime"]
            for part in line.get("data") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(dom.tag_text(part["text"]))
        if texts:
            break
    return " ".join(t for t in texts if t), date


def _first_text(root, preds):
    for pred in preds:
        nodes = root.find_all(pred)
        text = " ".join(t for t in (n.text() for n in nodes) if t)
        if text:
            return text
    return ""


def _is_ad(card):
    if "data-tuiguang" in card.attrs:
        return True
    if any(c in _AD_CLASSES or c.startswith("ec_") for c in card.classes):
        return True
    for node in card.iter():
        if any(c.startswith(("ec-tuiguang", "ec_tuiguang")) for c in node.classes) or "data-tuiguang" in node.attrs:
            return True
    return False


def parse_card(html, base=BASE):
    """One result container's outer HTML -> a hit dict (with ``redirect`` True when the URL is
    still a baidu.com/link jump) or None for ads, Baidu's own cards and title-less blocks."""
    root = dom.parse(html)
    card = root.find()
    if card is None:
        return None
    tpl = card.get("tpl") or ""
    if tpl.startswith(_SKIP_TPL) or _is_ad(card):
        return None
    # title: the first h3 (desktop and mobile); mobile/2024 fall back to the cosc title slot
    h3 = card.find(tag="h3")
    title_node = h3 or card.find(dom.by_class_prefix("cosc-title-slot")) or card.find(
        lambda n: n.get("data-module") == "title")
    if title_node is None:
        return None
    title = title_node.text()
    if not title:
        return None
    anchor = title_node.find(lambda n: "href" in n.attrs and n.tag == "a") if title_node.tag != "a" else title_node
    href = absolute(base, anchor.get("href")) if anchor is not None else None

    url = None
    mu = card.get("mu")
    if mu and not _is_placeholder(mu):
        url = mu
    if url is None:
        url = _json_mu(card)
    if url is None and href and not _is_placeholder(href):
        url = href
    if url is None and href and is_redirect(href):
        url = href
    if url is None:
        tools = card.find(lambda n: "data-tools" in n.attrs)
        data = loads_lenient(tools.get("data-tools")) if tools is not None else None
        if isinstance(data, dict) and is_http(data.get("url")) and (is_redirect(data["url"]) or not _is_placeholder(data["url"])):
            url = data["url"]
    if url is None:
        return None

    snippet = _first_text(card, (dom.by_class_prefix("summary-text_"), dom.by_class_prefix("content-right_"),
                                 dom.by_class("c-abstract"), lambda n: n.get("data-module") == "abstract"))
    sdata, sdate = ("", "")
    if not snippet:
        sdata, sdate = _s_data(card)
        snippet = sdata
    structured = False
    if not snippet:   # structured cards (weather tables, lists): their cells, not a prose summary
        structured = True
        snippet = _first_text(card, (dom.by_class_prefix("c-span-last"), dom.by_class("cu-abstract")))
        if snippet.startswith(title):
            snippet = snippet[len(title):]
        snippet = snippet[:300]
    date = ""
    dnode = card.find(lambda n: n.has_class_prefix("prefix-time_") or n.has_class_prefix("newTimeFactor")
                      or n.has_class("c-color-gray2"))
    if dnode is not None:
        date = dnode.text().strip(" -\u00a0")
        if date and snippet.startswith(dnode.text()):
            snippet = snippet[len(dnode.text()):]
    if not date:
        date = sdate
    if not date and not structured:
        date, snippet = split_date(snippet)
    elif snippet.startswith(date):
        snippet = snippet[len(date):].lstrip(" -\u00a0")
    source = ""
    snode = card.find(lambda n: n.has_class("cosc-source-text") or n.has_class("c-showurl")
                      or n.has_class_prefix("source-text") or (n.has_class("c-color-gray") and n.tag == "span"))
    if snode is not None:
        source = snode.text()
        if source == date:
            source = ""
    item = result(title, url, snippet, date=date, source=source)
    if is_redirect(url):
        item["redirect"] = True
    return item


def parse(html, url=BASE):
    """A Baidu answer -> ``{"results": [...], "blocked": reason|None, "layout": ..., "no_results": bool,
    "containers": n}``. ``url`` is the final URL of the answer (a wappass host means blocked)."""
    html = html or ""
    blocked = detect_block(html, url)
    out = {"results": [], "blocked": blocked, "layout": None, "no_results": False, "containers": 0}
    if blocked:
        return out
    cards = dom.slice_elements(html, _CONTAINER, accept=_accept)
    out["containers"] = len(cards)
    if cards:
        out["layout"] = "mobile" if re.search(r"""class\s*=\s*["']c-result\b""", cards[0]) else "desktop"
    items = []
    for chunk in cards:
        item = parse_card(chunk, url or BASE)
        if item is not None:
            items.append(item)
    out["results"] = dedupe(items)
    if not cards:
        text_head = html[:400000]
        if any(mark in text_head for mark in _NO_RESULTS):
            out["no_results"] = True
        elif len(html) < 5000:
            out["blocked"] = "百度返回的页面过短且没有结果块（%d 字节），可能被拦截" % len(html)
    return out
