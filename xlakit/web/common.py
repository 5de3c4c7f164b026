"""Helpers shared by the site parsers: forgiving JSON, URL checks, result records, dedupe.

Everything here is a pure function of text, so the parsers can be tested on saved pages and
benchmarked without a network.
"""
import json
import re
from urllib.parse import urljoin, urlsplit

from .dom import clean

_BAD_ESCAPE = re.compile(r'\\(?!["\\/bfnrtu])')


def loads_lenient(text):
    """``json.loads`` that survives what sites actually send: Baidu's invalid ``\\-`` escapes in
    ``<!--s-data:…-->``, single-quoted ``data-click`` values (``{'rsv_bdr':'0' }``) and HTML
    entities already decoded by the parser. Returns None when it still is not JSON."""
    if not text:
        return None
    text = text.strip()
    for attempt in (text, _BAD_ESCAPE.sub(r"\\\\", text)):
        try:
            return json.loads(attempt)
        except ValueError:
            pass
    if "'" in text and '"' not in text:
        try:
            return json.loads(_BAD_ESCAPE.sub(r"\\\\", text.replace("'", '"')))
        except ValueError:
            pass
    return None


def is_http(url):
    return isinstance(url, str) and url[:8].lower().startswith(("http://", "https://"))


def host_of(url):
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def absolute(base, href):
    """``href`` made absolute against ``base``; None for javascript:, mailto:, anchors and junk."""
    href = (href or "").strip()
    if not href or href.startswith("#") or href.lower().startswith(("javascript:", "mailto:", "tel:", "data:")):
        return None
    try:
        url = urljoin(base or "", href)
    except ValueError:
        return None
    return url if is_http(url) else None


def result(title, url, snippet="", **extra):
    """One search hit, in the one shape every engine returns."""
    item = {"title": clean(title), "url": url, "snippet": clean(snippet)}
    for key, value in extra.items():
        if value:
            item[key] = clean(value) if isinstance(value, str) else value
    return item


def url_key(url):
    """The form of a URL used to spot duplicates: no scheme, no ``www.``, no trailing slash, no
    fragment (so http/https twins and ``…/`` vs ``…`` collapse)."""
    u = (url or "").strip()
    u = re.sub(r"^[a-zA-Z]+://", "", u).split("#", 1)[0]
    if u.lower().startswith("www."):
        u = u[4:]
    return u.rstrip("/").lower()


def dedupe(items):
    """Keep the first hit of every URL (see ``url_key``), order preserved."""
    seen = set()
    out = []
    for item in items:
        key = url_key(item.get("url"))
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out


_DATE_PREFIX = re.compile(r"^\s*(\d{4}年\d{1,2}月\d{1,2}日|\d{1,2}月\d{1,2}日|\d+\s*(?:秒|分钟|小时|天|周|个月)前|"
                          r"昨天(?:\s*\d{1,2}:\d{2})?|前天|今天|\d{4}-\d{1,2}-\d{1,2})\s*[-—–]?\s*")


def split_date(snippet):
    """``"2天前 - 正文"`` -> ``("2天前", "正文")``; no leading date -> ``("", snippet)``."""
    m = _DATE_PREFIX.match(snippet or "")
    if not m:
        return "", snippet or ""
    return m.group(1), snippet[m.end():]
