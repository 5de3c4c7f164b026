"""fetch_url: the readable main text of a web page, as a person would read it in a browser.

Why more than a download: the model needs the article, not the menu, footer, share buttons and
"相关阅读" lists around it, and it must never be handed an empty or misleading "success". So the
page is fetched like a browser would (xlakit.http: headers, cookies, redirects, charset, proxy,
deadline), the main text is picked by xlakit.web.readable, and pages that are really a captcha
wall, an error page, an empty JavaScript shell or a page with no text at all are reported as
exactly that. A listing page (a heading and a list of links) is its links: the text carries each
link as ``[text](URL)``. Long pages are
paged with ``start``/``next_start``; non-HTML answers (images, PDFs, archives) are named with their
type and size instead of being dumped as bytes; plain text and JSON are returned as they are.

Parameters:
    url        http:// or https:// address (a bare ``www.example.com`` is refused with the fix).
    max_chars  characters of text per answer, default 12000 (2000-16000; clamped with a note).
    start      where in the text to begin (the ``next_start`` of the previous answer).
    links      also return the page's links (text + absolute URL, main-text links first, capped).

Returns ``url`` (final, after redirects), ``requested_url`` (only when redirected), ``status``,
``title``, ``description``, ``kind`` (article/page/text/json/xml/binary), ``content_type``,
``encoding``, ``text``, ``start``, ``max_chars``, ``returned_chars``, ``total_chars``,
``next_start`` (null at the end), ``truncated``, and ``links``/``links_total`` when asked;
for binary answers ``size`` and ``note`` instead of text. ``complete: false`` (with a warning)
when the deadline cut the page off and the part that had arrived is returned.

Addresses inside this machine or the LAN (loopback, private, link-local and cloud metadata...)
are refused on every hop by ``xlakit.net.policy``, unless the user opted the host in
(``net_allow`` in ~/.xla/settings.json).
"""
import json
import re
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.text import human_size, looks_like_text  # noqa: E402
from xlakit.web import fetch as pages, readable  # noqa: E402

OVERALL = 45.0               # seconds the network part may take, whatever happens
RESERVE = 4.0                # seconds kept for reading the page and answering
LINK_CAP = 60


def check_url(raw):
    url = (raw or "").strip()
    if not url:
        raise InputError("参数 url 不能为空，请给出以 http:// 或 https:// 开头的网址")
    if not re.match(r"^https?://", url, re.I):
        if re.match(r"^[\w\u4e00-\u9fff.-]+\.[a-z\u4e00-\u9fff]{2,}(?::\d+)?(?:[/?#].*)?$", url, re.I):
            raise InputError("网址缺少协议：请写成 https://%s" % url)
        raise InputError("参数 url 须以 http:// 或 https:// 开头，收到「%s」" % url[:100])
    return url


def page_answer(out, text, params, extra_reserve=0):
    """``out`` plus one window of ``text`` under the output budget (start/next_start names)."""
    paged = rt.page_text(text, offset=params["start"], max_chars=params["max_chars"], base=out,
                         reserve=extra_reserve)
    paged["start"] = paged.pop("offset")
    paged["next_start"] = paged.pop("next_offset")
    return paged


def main(params):
    url = check_url(params.get("url"))
    rt.clamp(params, "max_chars", 16000, 2000)
    params["max_chars"] = int(params.get("max_chars") or 12000)
    params["start"] = max(0, int(params.get("start") or 0))
    want_links = bool(params.get("links"))
    deadline = http.call_deadline(rt.deadline, OVERALL, RESERVE)
    with http.Session(deadline=deadline, timeout=40.0) as session:   # one page may take its time
        resp, hops = pages.fetch(session, url)
    out = {"url": resp.url}
    if resp.url != url:
        out["requested_url"] = url
    out["status"] = resp.status
    if resp.timed_out:
        out["complete"] = False
    host = http.host_of(resp.url)
    ctype = resp.content_type
    if resp.status >= 400:
        title = ""
        if http.is_text_type(resp.headers.get("Content-Type")):
            title = readable.extract(resp.text).title
        raise ToolError("打不开这个网页：%s 返回 HTTP %d（%s）%s。请检查网址，或稍后重试" % (
            host, resp.status, http.status_text(resp.status), "，页面标题「%s」" % title[:60] if title else ""),
            status=resp.status, url=resp.url)
    is_html = ctype in ("text/html", "application/xhtml+xml") or (
        (not ctype or ctype in ("application/octet-stream", "text/plain")) and pages.looks_like_html(resp.content))
    if not is_html and not http.is_text_type(resp.headers.get("Content-Type")):
        size, exact = pages.size_of(resp)
        exact = exact and not resp.timed_out
        what = pages.describe_binary(resp)
        out.update({"kind": "binary", "content_type": ctype or "未知", "size": size,
                    "note": "这个地址返回的不是网页正文，而是%s（%s，%s%s）" % (
                        what, ctype or "未声明类型", "" if exact else "至少 ", human_size(size))})
        return out
    if resp.content and not looks_like_text(resp.content[:65536]):   # random bytes, an endless gzip of zeros
        raise ToolError("%s 声称返回的是%s，但内容是乱码或二进制数据，读不出文字（收到 %s）。请检查网址是否正确，或稍后重试" % (
            host, "网页" if is_html else (ctype or "文本"), human_size(len(resp.content))), url=resp.url)
    text = resp.text
    if resp.timed_out and is_html and text.rfind("<") > text.rfind(">"):
        text = text[:text.rfind("<")]      # a tag cut off by the deadline is not text
    out["content_type"] = ctype or ("text/html" if is_html else "")
    out["encoding"] = resp.encoding
    if resp.timed_out:
        rt.warn("打开 %s 时%s，到时间上限时只读到了这些，内容不完整（complete: false）。需要全文请稍后重试" % (
            host, resp.timed_out))
    elif resp.truncated:
        rt.warn("网页超过 %s，只读取了前 %s" % (human_size(pages.MAX_BYTES), human_size(pages.MAX_BYTES)))
    if not is_html:
        kind = "text"
        if "json" in ctype:
            kind = "json"
            try:
                data = json.loads(text)
                pretty = json.dumps(data, ensure_ascii=False, indent=1)
                if len(pretty) < len(text) * 2:
                    text = pretty
            except ValueError:
                pass
        elif "xml" in ctype:
            kind = "xml"
        out["kind"] = kind
        if not text.strip():
            slow_error(resp, host)
            raise ToolError("%s 返回了空内容（%s）" % (host, ctype or "未声明类型"), url=resp.url)
        return finish(out, text, params, [])
    page = readable.extract(text, resp.url, link_cap=LINK_CAP if want_links else 0, deadline=rt.deadline)
    if page.analysed is not None:
        rt.warn("网页的标签太多（结构过于复杂），按时只分析了开头的 %d%%（共 %d 字符中的前 %d），后面的内容没有读" % (
            max(1, page.analysed * 100 // max(1, len(text))), len(text), page.analysed))
    blocked, reason = readable.classify(page, resp.url, text)
    if blocked in ("script_only", "empty") or not page.text.strip():
        slow_error(resp, host)
    if blocked == "captcha":
        raise ToolError("打开的是网站的人机验证/反爬拦截页，没有拿到正文（%s）。这类页面需要在浏览器里人工验证；"
                        "请稍后重试，或换一个来源（如用搜索找其它网站上的同一内容）" % reason,
                        blocked="captcha", url=resp.url)
    if blocked == "error":
        raise ToolError("网站返回的是错误页而不是正文（%s，虽然状态码是 %d）。网址可能已失效，请检查或换一个地址" % (
            reason, resp.status), blocked="error", url=resp.url)
    if blocked == "script_only":
        detail = "；".join(x for x in ("标题「%s」" % page.title[:60] if page.title else "",
                                       "简介「%s」" % page.description[:200] if page.description else "") if x)
        raise ToolError("这个页面的正文由 JavaScript 在浏览器里动态加载，直接抓取只拿到空壳（%s%s）。"
                        "请换一个能直接打开的地址（如文章的移动版或其它网站的转载）" % (reason, "；" + detail if detail else ""),
                        blocked="script_only", url=resp.url, title=page.title)
    if blocked == "empty" or not page.text.strip():
        detail = "；".join(x for x in ("标题「%s」" % page.title[:60] if page.title else "",
                                       "简介「%s」" % page.description[:200] if page.description else "") if x)
        raise ToolError("这个网页没有可读的文字（%s%s）：可能只有图片，或内容要登录后才显示。请在浏览器里打开确认，"
                        "或换一个地址" % (reason or "正文为空", "；" + detail if detail else ""),
                        blocked="empty", url=resp.url, title=page.title)
    out["title"] = page.title
    if page.description:
        out["description"] = page.description[:500]
    out["kind"] = page.kind
    return finish(out, page.text, params, page.links if want_links else None)


def slow_error(resp, host):
    """A page cut off by the deadline with nothing readable yet: say it was slow, not empty."""
    if resp.timed_out:
        raise ToolError("打开 %s 时%s，到时间上限时读到的部分里还没有正文。请稍后重试，或换一个来源" % (
            host, resp.timed_out), url=resp.url, complete=False)


def finish(out, text, params, links):
    total = len(text)
    if params["start"] and params["start"] >= total:
        raise InputError("start=%d 超出了正文长度（共 %d 字），请从 0 开始或用上次返回的 next_start" % (
            params["start"], total))
    if links is None:
        return page_answer(out, text, params)
    # links share the budget: keep at most a quarter of it for them
    kept = []
    room = (rt.OUTPUT_LIMIT - rt.text_size(out)) // 4
    used = 0
    for link in links:
        if len(link["url"]) > 1000:
            continue
        size = rt.text_size(link) + 1
        if used + size > room:
            break
        kept.append(link)
        used += size
    out["links"] = kept
    out["links_total"] = len(links)
    if len(kept) < len(links):
        out["links_truncated"] = True
    return page_answer(out, text, params)


if __name__ == "__main__":
    rt.run(main)
