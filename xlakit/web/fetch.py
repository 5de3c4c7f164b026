"""Fetching one web page as a reader would: HTTP redirects plus the jump pages sites put in
between (meta refresh, ``location.replace``, Baidu's link pages), and naming what a non-text
answer is (a PDF, an image, an archive) by its bytes rather than dumping it.

fetch_url's machinery; the tool script keeps its parameters and the shape of its answer. Every
request goes through ``xlakit.http`` (headers, cookies, deadline, caps, charset, proxy).
"""
import re
from urllib.parse import urljoin

from .. import sniff

MAX_BYTES = 5_000_000        # HTML read at most (the first 5 MB of a bigger page are used)
BINARY_PEEK = 65536          # bytes of a non-text answer read to say what it is
MAX_REFRESH = 2              # meta-refresh / location.replace hops followed

_REFRESH = re.compile(r"""<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*content\s*=\s*["']?\s*(\d*)\s*[;,]?\s*"""
                      r"""(?:url\s*=\s*)?['"]?([^'">\s]+)""", re.I)
_JS_JUMP = re.compile(r"""(?:window\.|document\.|top\.)?location(?:\.href)?\s*(?:=|\.replace\(|\.assign\()\s*["']"""
                      r"""([^"']+)["']""")

_BINARY_NAMES = {"pdf": "PDF 文档", "zip": "zip 压缩包", "gzip": "gzip 压缩包", "rar": "RAR 压缩包", "7z": "7z 压缩包",
                 "png": "PNG 图片", "jpeg": "JPEG 图片", "gif": "GIF 图片", "webp": "WebP 图片", "bmp": "BMP 图片",
                 "docx": "Word 文档", "xlsx": "Excel 表格", "pptx": "PowerPoint 演示文稿", "doc": "Word 文档",
                 "xls": "Excel 表格", "ppt": "PowerPoint 演示文稿"}


def describe_binary(resp):
    """Chinese name of what a non-text answer is (by its bytes first, then by its type)."""
    kind = None
    try:
        kind = sniff.sniff(resp.content[:BINARY_PEEK]).kind
    except Exception:   # sniffing is a nicety; the content type still says enough
        kind = None
    if kind in _BINARY_NAMES:
        return _BINARY_NAMES[kind]
    ctype = resp.content_type
    for prefix, name in (("image/", "图片"), ("audio/", "音频"), ("video/", "视频"), ("font/", "字体文件")):
        if ctype.startswith(prefix):
            return name
    if "pdf" in ctype:
        return "PDF 文档"
    if "zip" in ctype or "compressed" in ctype:
        return "压缩包"
    if "msword" in ctype or "officedocument" in ctype or "ms-excel" in ctype or "ms-powerpoint" in ctype:
        return "Office 文档"
    return "二进制文件"


def size_of(resp):
    declared = resp.headers.get("Content-Length")
    if declared and declared.isdigit() and not resp.headers.get("Content-Encoding"):
        return int(declared), True
    return len(resp.content), not resp.truncated


def looks_like_html(data):
    head = data[:2048].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<meta", b"<body")) or b"<html" in head[:512]


def refresh_target(resp, text):
    """The address of a meta-refresh or ``location.replace`` jump page (Baidu's link pages, old
    sites' "redirecting…" pages), or None. Only on small pages: a real page with a refresh tag
    (auto-reload every 5 minutes) is content."""
    if len(resp.content) > 20000:
        return None
    m = _REFRESH.search(text)
    if m and (not m.group(1) or int(m.group(1)) <= 10):
        return m.group(2)
    if len(resp.content) < 4000:
        m = _JS_JUMP.search(text)
        if m:
            return m.group(1)
    return None


def fetch(session, url):
    """GET ``url`` following HTTP redirects and jump pages; returns (response, hops). When the
    session's deadline runs out while the page's body is arriving, the part read so far comes
    back (``resp.timed_out`` says what was slow): a slow page's beginning is often enough."""
    hops = []
    resp = session.get(url, check=False, max_bytes=MAX_BYTES, allow_truncated=True, binary_max_bytes=BINARY_PEEK,
                       partial_on_timeout=True)
    for _ in range(MAX_REFRESH):
        if resp.timed_out or resp.status >= 400 or not (resp.content_type in ("text/html", "application/xhtml+xml", "")):
            break
        target = refresh_target(resp, resp.text)
        if not target:
            break
        target = urljoin(resp.url, target.strip())
        if not target.lower().startswith(("http://", "https://")) or target == resp.url:
            break
        hops.append(resp.url)
        resp = session.get(target, check=False, max_bytes=MAX_BYTES, allow_truncated=True,
                           binary_max_bytes=BINARY_PEEK, referer=resp.url, partial_on_timeout=True)
    return resp, hops
