"""Main text of a web page, and what kind of page it really is (standard library only).

Why: a model that asks for a page wants the article, not the navigation bar, the footer, the
"相关阅读" link lists and the share buttons, and it must be told plainly when the page is a
captcha wall, an error page dressed as a 200, or an empty shell that JavaScript fills in later;
an empty "success" sends it off believing the page has nothing to say.

How (Readability-style scoring, written for Chinese pages):
1. parse with ``xlakit.web.dom`` (forgiving of broken markup); drop scripts, styles, forms'
   controls, ``nav``/``footer``/``aside``, hidden elements and blocks whose class or id says
   navigation, footer, sidebar, share, comments, related, ads (unless they also say content);
2. every paragraph-like block (``p``, ``li``, ``td``, or a ``div`` holding text itself, as Chinese
   sites that separate paragraphs with ``<br>`` do) scores ``1 + Chinese and Latin commas and
   full stops + min(length / 100, 3)``; the score goes to its parent, half to the grandparent and
   a third to the great-grandparent; each candidate's total is weighted by its class/id and by
   ``1 - link density``;
3. the best candidate and its siblings that score close to it (or are clean long paragraphs) form
   the main text; inside it, link-dense blocks (lists of links) are skipped;
4. a page with little article text (a home page, a listing) falls back to the whole body without
   navigation, so the answer is never shorter than what a reader would see.
All walks are iterative: badly nested pages (thousands of unclosed ``<font>``) are common and
must not hit Python's recursion limit. And every pass is linear in the size of the tree: what a
node needs from its subtree (visible chars, chars in links, punctuation, its own text outside
block children, anchors) is summed once bottom-up in ``_stats``, never re-walked per node, and
walks up the ancestors stop after the levels they use (a page of 200,000 nested tags used to
take minutes; ``tests/test_fetch_url.py`` feeds such pages).
"""
import re
from urllib.parse import urljoin, urlsplit

from . import dom

# tags whose content is never text for a reader
DROP_TAGS = frozenset("script style noscript template svg iframe canvas object embed button select option "
                      "input textarea nav footer aside dialog map head link meta video audio source".split())
BLOCKS = dom.BLOCK | frozenset("center figure figcaption caption tbody thead tfoot details summary".split())
PARA_TAGS = frozenset("p pre blockquote li td dd dt h1 h2 h3 h4 h5 h6".split())
_NEG = re.compile(r"(?:^|[-_\s])(?:nav|navbar|navigation|menu|menus|footer|foot|sidebar|side|sidebox|breadcrumbs?|"
                  r"crumbs?|share|sharing|social|comments?|reply|related|recommend|recom|advert|ads?|adv|adsbygoogle|"
                  r"banner|copyright|toolbar|login|pagination|pager|pagenav|topbar|top-bar|hot|rank|ranking|tags?|"
                  r"subscribe|qrcode|popup|modal|cookie|skip|widget|friendlink|links)(?=$|[-_\s\d])", re.I)
_POS = re.compile(r"(?:^|[-_\s])(?:article|content|contents|main|post|entry|text|body|story|detail|details|"
                  r"news|rich_media|markdown|read|artibody|正文)(?=$|[-_\s\d])", re.I)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none", re.I)
_PUNCT = re.compile(r"[，。！？；、,.!?;：:“”]")
_SPACE = re.compile(r"[ \t\r\f\v\u00a0\u3000\u200b\ufeff]+")


def _weight(node):
    names = "%s %s" % (node.attrs.get("class") or "", node.attrs.get("id") or "")
    if not names.strip():
        return 0
    w = 0
    if _POS.search(names):
        w += 25
    if _NEG.search(names):
        w -= 25
    return w


def _is_junk(node, in_article=False):
    """``in_article``: an ``article``/``main`` encloses the node (a header there is the title)."""
    tag = node.tag
    if tag in DROP_TAGS:
        return True
    attrs = node.attrs
    if "hidden" in attrs or attrs.get("aria-hidden") == "true" or _HIDDEN_STYLE.search(attrs.get("style") or ""):
        return True
    if tag in ("body", "html", "main", "article") or attrs.get("id") == "js_content":
        return False
    if tag == "header" and not in_article:
        return True
    names = "%s %s" % (attrs.get("class") or "", attrs.get("id") or "")
    if names.strip() and _NEG.search(names) and not _POS.search(names):
        return True
    return False


class Page(object):
    """The result of ``extract``: ``title``, ``description``, ``text`` (main text, lines joined by
    newlines), ``kind`` ("article" when a main block was found, "page" for the whole-body
    fallback), ``links`` (list of {"text", "url"}, main-text links first), ``visible_chars``
    (text of the whole body), ``scripts`` (count of script tags), ``html_chars``, ``analysed``
    (characters of the html read when a bound stopped the parse early, else None)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _walk(root):
    """Every element below ``root`` (depth first, document order, comments excluded)."""
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if isinstance(node, dom.Node) and node.tag != "#comment":
            yield node
            if node.children:
                stack.extend(reversed(node.children))


def _prune(root):
    """Drop junk subtrees in place; returns the number of script tags seen (for script-only pages)."""
    scripts = 0
    stack = [(root, False)]
    while stack:
        node, in_article = stack.pop()
        inner = in_article or node.tag in ("article", "main")
        kept = []
        for child in node.children:
            if isinstance(child, str):
                kept.append(child)
                continue
            if child.tag == "#comment":
                continue
            if child.tag == "script":
                scripts += 1
            if _is_junk(child, inner):
                continue
            kept.append(child)
            stack.append((child, inner))
        node.children = kept
    return scripts


def _chars(text):
    return len(_SPACE.sub("", text.replace("\n", "")))


def _stats(root):
    """Per node id: ``(visible chars, chars inside links, punctuation, own chars, own punctuation,
    anchors)``, post-order and iterative. "Own" is the text outside block children (what a
    ``<br>``-separated div holds itself); anchors counts the ``<a>`` in the subtree."""
    stats = {}
    order = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(c for c in node.children if not isinstance(c, str))
    for node in reversed(order):
        chars = links = punct = own = own_punct = anchors = 0
        for child in node.children:
            if isinstance(child, str):
                n = _chars(child)
                p = len(_PUNCT.findall(child))
                chars += n
                punct += p
                own += n
                own_punct += p
            else:
                c, l, p, o, op, a = stats[id(child)]
                chars += c
                links += l
                punct += p
                anchors += a
                if child.tag not in BLOCKS:
                    own += o
                    own_punct += op
        if node.tag == "a":
            links = chars
            anchors += 1
        stats[id(node)] = (chars, links, punct, own, own_punct, anchors)
    return stats


def _short_text(node, limit=400, visits=2000):
    """The first ``limit`` or so characters of the text below ``node`` (a link's words), looking
    at no more than ``visits`` nodes: bounded, so asking it for every link of a deeply nested
    page stays linear."""
    parts = []
    size = 0
    stack = list(reversed(node.children[:visits]))
    while stack and size < limit and visits > 0:
        visits -= 1
        child = stack.pop()
        if isinstance(child, str):
            parts.append(child)
            size += len(child)
        else:
            if child.tag in BLOCKS:
                parts.append(" ")
            stack.extend(reversed(child.children[:visits]))
    return "".join(parts)[:limit]


def _tag_bonus(tag):
    if tag in ("article", "main"):
        return 10
    if tag == "div":
        return 5
    if tag in ("pre", "td", "blockquote", "section"):
        return 3
    if tag in ("ol", "ul", "dl", "dd", "dt", "li", "form"):
        return -3
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "th"):
        return -5
    return 0


def _candidates(root, stats):
    scores = {}
    nodes = {}
    for node in _walk(root):
        st = stats[id(node)]
        if node.tag in PARA_TAGS:
            if node.tag in ("td", "li", "blockquote"):
                length, punct = st[0] - st[1], st[2]
            else:
                length, punct = st[3], st[4]
        elif node.tag in ("div", "section", "article", "span", "font", "center", "main"):
            length, punct = st[3], st[4]
        else:
            continue
        if length < 20:
            continue
        score = 1.0 + punct + min(length / 100.0, 3.0)
        level = 0
        anc = node if node.tag in ("div", "section", "article", "main") else node.parent
        while anc is not None and level <= 3:
            if anc.tag in ("#root", "html"):
                break
            if id(anc) not in scores:
                scores[id(anc)] = _tag_bonus(anc.tag) + _weight(anc)
                nodes[id(anc)] = anc
            scores[id(anc)] += score / (1, 1, 2, 3)[min(level, 3)]
            level += 1
            anc = anc.parent
    final = {}
    for key, score in scores.items():
        chars, links = stats[key][:2]
        density = (links / float(chars)) if chars else 0.0
        final[key] = score * (1.0 - density)
    return final, nodes


def _link_block(node, stats):
    """A list of links (a menu, "相关阅读", tags): most of its text sits in links."""
    chars, links, _, _, _, anchors = stats.get(id(node), (0, 0, 0, 0, 0, 0))
    if chars == 0:
        return False
    return anchors >= 3 and links / float(chars) > 0.6


_JOINED = {}


def _href(node, base):
    """The absolute http(s) address a link points to, or None (anchors, scripts, mail).
    Joins are remembered per (base, href): urljoin is slow and link pages repeat addresses."""
    href = (node.attrs.get("href") or "").strip()
    if not href or href.startswith("#") or href.lower().startswith(("javascript:", "mailto:", "tel:", "data:")):
        return None
    key = (base, href)
    if key in _JOINED:
        return _JOINED[key]
    try:
        url = urljoin(base, href)
    except ValueError:
        url = ""
    url = url if url.lower().startswith(("http://", "https://")) else None
    if len(_JOINED) > 20000:
        _JOINED.clear()
    _JOINED[key] = url
    return url


def render(nodes, stats=None, skip_links=True, link_base=None):
    """Readable text of ``nodes``: one line per block, ``- `` before list items, table cells
    joined by `` | ``, ``<br>`` as a line break; link lists skipped when ``skip_links``. With
    ``link_base`` (the page address) every link is written ``[text](absolute URL)``: on a listing
    page the addresses are the content."""
    lines = []
    cur = []

    def flush():
        line = _SPACE.sub(" ", "".join(cur)).strip()
        if line:
            lines.append(line)
        del cur[:]

    for top in nodes:
        stack = [("node", top, False)]
        while stack:
            kind, item, in_pre = stack.pop()
            if kind == "url":
                cur.append("](%s)" % item)
                continue
            if kind == "end":
                if item in ("td", "th"):
                    cur.append(" | ")
                elif item in BLOCKS or item == "tr":
                    flush()
                continue
            if isinstance(item, str):
                if in_pre and "\n" in item:
                    pieces = item.split("\n")
                    for i, piece in enumerate(pieces):
                        cur.append(piece)
                        if i < len(pieces) - 1:
                            flush()
                else:
                    cur.append(item.replace("\n", " "))
                continue
            tag = item.tag
            if tag == "br":
                flush()
                continue
            if tag == "img":
                continue
            if stats is not None and skip_links and item is not top and tag in BLOCKS and _link_block(item, stats):
                continue
            if (tag in BLOCKS or tag == "tr") and tag not in ("td", "th"):
                flush()
            if tag == "li":
                cur.append("- ")
            stack.append(("end", tag, in_pre))
            if tag == "a" and link_base is not None:
                words = stats[id(item)][0] if stats is not None and id(item) in stats else \
                    _chars(_short_text(item))
                url = _href(item, link_base) if words else None
                if url:
                    cur.append("[")
                    stack.append(("url", url, in_pre))
            pre = in_pre or tag == "pre"
            for child in reversed(item.children):
                stack.append(("node", child, pre))
        flush()
    out = []
    for line in lines:
        # trailing empty cells; no regex: ``(\s*\|\s*)+$`` backtracks exponentially on a row of
        # thousands of empty cells followed by text
        if line.endswith("|"):
            line = line.rstrip(" |")
        line = line.strip()
        if line.startswith("| "):
            line = line[2:]
        if line and line != "-" and (not out or out[-1] != line):
            out.append(line)
    return "\n".join(out)


def _meta(root):
    title = desc = og_title = og_desc = ""
    base = None
    for node in _walk(root):
        tag = node.tag
        if tag == "title" and not title:
            title = dom.clean("".join(c for c in node.children if isinstance(c, str)))
        elif tag == "meta":
            name = (node.attrs.get("name") or node.attrs.get("property") or "").lower()
            content = dom.clean(node.attrs.get("content") or "")
            if name == "description" and not desc:
                desc = content
            elif name == "og:title" and not og_title:
                og_title = content
            elif name == "og:description" and not og_desc:
                og_desc = content
        elif tag == "base" and base is None and node.attrs.get("href"):
            base = node.attrs.get("href")
        elif tag == "body":
            break
    return title or og_title, desc or og_desc, base


def _links(nodes, base, seen, out, cap, stats=None):
    for top in nodes:
        for node in ([top] if top.tag == "a" else []) + list(_walk(top)):
            if len(out) >= cap:
                return
            if node.tag != "a":
                continue
            if stats is not None and not stats.get(id(node), (1,))[0] and not node.attrs.get("title"):
                continue        # no words to show (and no join to pay for)
            url = _href(node, base)
            if url is None or url in seen:
                continue
            text = dom.clean(_short_text(node)) or dom.clean(node.attrs.get("title") or "")
            if not text:
                continue
            seen.add(url)
            out.append({"text": text[:80], "url": url})


MAX_NODES = 200_000        # tags and runs of text read into the tree; real pages have 4,000-100,000


def extract(html, url="", link_cap=0, deadline=None):
    """``Page`` for ``html`` fetched from ``url`` (for absolute links). ``link_cap`` > 0 collects
    up to that many links (main-text links first, then the rest of the page).

    Only the first ``MAX_NODES`` tags and runs of text are read, and with a ``deadline`` the parse stops when
    it has used 40% of the time left (the passes after it cost about as much again); then
    ``Page.analysed`` is the share of ``html`` (characters) that went into the text, else None."""
    budget = None
    if deadline is not None:
        from ..errors import Deadline
        budget = Deadline(max(0.2, deadline.remaining() * 0.4))
    root, parsed = dom.parse_bounded(html, MAX_NODES, budget)
    title, description, base = _meta(root)
    base = urljoin(url, base) if base else url
    body = root.find(tag="body") or root
    if not title:
        h1 = root.find(tag="h1")
        title = dom.clean(render([h1], None, False)) if h1 is not None else ""
    # WeChat articles: the text is in #js_content, title in #activity-name
    wechat = root.find(lambda n: n.attrs.get("id") == "js_content")
    if wechat is not None:
        name = root.find(lambda n: n.attrs.get("id") == "activity-name")
        if name is not None:
            title = dom.clean(render([name], None, False)) or title
    scripts = _prune(root)
    stats = _stats(root)
    visible = stats[id(body)][0]
    chosen = None
    if wechat is not None and stats.get(id(wechat), (0,))[0] > 0:
        chosen = [wechat]
    else:
        scores, nodes = _candidates(root, stats)
        if scores:
            best = max(scores, key=lambda k: scores[k])
            top = nodes[best]
            top_score = scores[best]
            chosen = [top]
            parent = top.parent
            if parent is not None and parent.tag not in ("#root",):
                threshold = max(10.0, top_score * 0.2)
                chosen = []
                for sib in parent.children:
                    if isinstance(sib, str):
                        continue
                    if sib is top:
                        chosen.append(sib)
                        continue
                    s = scores.get(id(sib))
                    chars, links, punct = stats[id(sib)][:3]
                    density = links / float(chars) if chars else 1.0
                    if s is not None and s >= threshold:
                        chosen.append(sib)
                    elif sib.tag in ("p", "pre", "blockquote", "h2", "h3", "h4", "table", "ul", "ol", "figure") and \
                            chars > 0 and density < 0.25 and (chars > 80 or punct > 0):
                        chosen.append(sib)
    text = render(chosen, stats) if chosen else ""
    kind = "article"
    if _chars(text) < 200:
        # little article text: a home page or a listing. The body without menus, and if that is
        # still thin, with its link lists too (on a listing page the links are the content); an
        # empty main text takes whatever the body has, however little (a heading and two links
        # are still what a reader sees)
        for skip in (True, False):
            full = render([body], stats, skip_links=skip)
            more = _chars(full) - _chars(text)
            if more > 0 and (_chars(text) < 30 or _chars(full) > max(3 * _chars(text), _chars(text) + 100)):
                text, kind = full, "page"
            if _chars(text) >= 200:
                break
        chars, in_links = stats[id(body)][:2]
        if kind == "page" and chars and in_links > chars * 0.5:
            # a listing: its links are what the page says, so their addresses go into the text
            text = render([body], stats, skip_links=False, link_base=base)
    links = []
    if link_cap:
        seen = set()
        _links(chosen or [], base, seen, links, link_cap, stats)
    page = Page(title=title, description=description, text=text, kind=kind, visible_chars=visible, scripts=scripts,
                html_chars=len(html), links=links, analysed=parsed if parsed < len(html) else None)
    if link_cap and len(links) < link_cap:
        # the rest of the page's links, after pruning (menus were dropped; listing pages keep theirs)
        _links([body], base, set(l["url"] for l in links), links, link_cap, stats)
    return page


def all_links(html, url, cap):
    """Every link of the page (nothing pruned), for pages that are only link lists."""
    root = dom.parse(html)
    _, _, base = _meta(root)
    out = []
    _links([root.find(tag="body") or root], urljoin(url, base) if base else url, set(), out, cap)
    return out


# ---------------------------------------------------------------------------------------------
# What kind of page is it

_CAPTCHA_HOSTS = ("wappass.baidu.com", "seccaptcha.baidu.com", "verify.meituan.com", "captcha.", "antispider.",
                  "sec.douban.com", "passport.zhihu.com/captcha", "verify.snssdk.com")
_CAPTCHA_PATHS = ("/static/captcha", "/captcha", "/antispider", "/_____tmd_____/punish", "/verify", "/sorry/index",
                  "/cdn-cgi/challenge", "/waf/", "/unhuman")
_CAPTCHA_TITLES = re.compile(r"安全验证|人机验证|验证码|滑动验证|请完成验证|访问验证|身份验证|安全检查|访问异常|异常访问|"
                             r"访问被拒绝|访问受限|环境异常|请稍后再试|security check|verify you are human|are you a robot|"
                             r"just a moment|attention required|access denied|captcha|请输入验证码|unusual traffic", re.I)
_CAPTCHA_BODY = re.compile(r"百度安全验证|wappass\.baidu\.com|/static/captcha/|seccaptcha\.baidu\.com|geetest|"
                           r"TCaptcha|tencentcaptcha|nc_1_n1z|_____tmd_____|cf-chl-|challenge-platform|"
                           r"g-recaptcha|h-captcha|hcaptcha|slide to verify|拖动下方滑块|向右滑动|请按住滑块|"
                           r"访问过于频繁|请求过于频繁|检测到异常流量|异常流量|unusual traffic from your computer|"
                           r"当前环境异常|完成验证后即可继续访问", re.I)
_ERROR_TITLES = re.compile(r"^\s*(?:404|403|500|502|503)\b|not found|页面不存在|页面未找到|找不到(?:页面|网页)|"
                           r"页面已删除|内容已删除|已被删除|该内容不存在|文章不存在|网页不存在|访问的页面不存在|"
                           r"server error|service unavailable|bad gateway|出错了|错误页", re.I)
_LOADING = re.compile(r"正在加载|加载中|页面加载中|loading\.\.\.|enable javascript|开启\s*javascript|启用\s*javascript|"
                      r"javascript is (?:disabled|required)|需要.{0,6}javascript|浏览器版本过低", re.I)


def classify(page, final_url, html):
    """``(kind, reason)`` for a page that is not real content, else ``(None, "")``.

    kind: "captcha" (a verification or anti-bot wall), "error" (an error page served as 200),
    "script_only" (an empty shell that JavaScript would fill), "empty" (no readable text and no
    script that could bring any)."""
    parts = urlsplit(final_url or "")
    host = (parts.hostname or "").lower()
    path = (parts.path or "").lower()
    title = page.title or ""
    visible = page.visible_chars
    for h in _CAPTCHA_HOSTS:
        if "/" in h:
            if (host + path).startswith(h):
                return "captcha", "网址落在验证页 %s" % host
        elif host == h or (h.endswith(".") and host.startswith(h)):
            return "captcha", "网址被重定向到验证页 %s" % host
    if any(path.startswith(p) for p in _CAPTCHA_PATHS) and visible < 3000:
        return "captcha", "网址被重定向到验证页 %s%s" % (host, parts.path)
    if title and _CAPTCHA_TITLES.search(title) and visible < 5000:
        return "captcha", "页面标题是「%s」" % title[:40]
    head = html[:20000] if len(html) > 20000 else html
    m = _CAPTCHA_BODY.search(head)
    if m and visible < 3000:
        return "captcha", "页面含有验证/反爬标记「%s」" % m.group(0)[:30]
    if title and _ERROR_TITLES.search(title) and visible < 3000:
        return "error", "页面标题是「%s」" % title[:40]
    if visible < 200 and _LOADING.search(page.text or ""):
        return "script_only", "页面只有“加载中”之类的占位文字"
    if visible < 30:
        if page.scripts:
            return "script_only", "页面几乎没有文字，只有 %d 段脚本" % page.scripts
        if visible == 0:
            return "empty", "页面没有任何可见文字，也没有脚本"
    return None, ""
