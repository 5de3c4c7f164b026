"""A small, forgiving HTML tree for the scrapers (standard library only).

Why not regexes: result pages nest cards inside cards, quote attributes with ' or " or nothing,
put spaces around ``=`` and close lists with the wrong tag (tianqi.com ends ``dl.weather_info``
with ``<dl>``). ``html.parser`` tokenizes all of that correctly; this module adds the tree on top
with one rule that keeps broken markup harmless: an end tag pops back to the nearest open element
of the same name and is ignored when there is none.

Why the depth bound and the open-tag counts: a page of 200,000 unclosed ``<font>`` or ``<div>``
is legal enough for a browser, and a tree that deep makes every walk up the ancestors and every
unmatched end tag (scanning the open elements) cost the depth, so a 1 MB page took minutes. As in
browsers (Blink stops at 512), an element opened below ``MAX_DEPTH`` is attached where the limit
is reached and its content becomes its siblings; an end tag looks its name up in a count of open
elements before scanning, so building is linear in the input. Comments are kept as nodes because Baidu puts
titles in ``<!--s-text-->`` pairs and summaries in ``<!--s-data:{json}-->``.

Class names on Baidu are CSS-module hashes (``content-right_8Zs40``) that change with every
release, so lookups match class *prefixes* (``content-right_``) and never whole hashed names.
"""
import re
from html.parser import HTMLParser

VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
# Elements whose text is never content (scripts, styles, templates).
SKIP_TEXT = frozenset(("script", "style", "noscript", "template", "svg", "head", "title", "iframe"))
BLOCK = frozenset("address article aside blockquote br dd div dl dt figcaption footer form h1 h2 h3 h4 h5 h6 "
                  "header hr li main nav ol p pre section table td th tr ul".split())
_SPACE = re.compile(r"[ \t\r\n\f\u00a0\u3000\u200b]+")
MAX_DEPTH = 512     # open elements at most; deeper ones are attached flat (see the module docstring)


class Node(object):
    """One element (``tag`` set) or a comment (``tag == "#comment"``, text in ``data``)."""

    __slots__ = ("tag", "attrs", "children", "parent", "data")

    def __init__(self, tag, attrs=None, parent=None, data=None):
        self.tag = tag
        self.attrs = attrs or {}
        self.children = []
        self.parent = parent
        self.data = data

    # ---- attributes -------------------------------------------------------------------------
    def get(self, name, default=None):
        return self.attrs.get(name, default)

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def has_class(self, name):
        return name in self.classes

    def has_class_prefix(self, prefix):
        return any(c.startswith(prefix) for c in self.classes)

    # ---- traversal --------------------------------------------------------------------------
    def iter(self):
        """Every element below this one, depth first, document order (comments excluded)."""
        stack = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, Node) and node.tag != "#comment":
                yield node
                if node.children:
                    stack.extend(reversed(node.children))

    def find_all(self, pred=None, tag=None):
        return [n for n in self.iter() if (tag is None or n.tag == tag) and (pred is None or pred(n))]

    def find(self, pred=None, tag=None):
        for n in self.iter():
            if (tag is None or n.tag == tag) and (pred is None or pred(n)):
                return n
        return None

    def comments(self):
        """Comment strings below this node in document order."""
        out = []
        stack = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, Node):
                if node.tag == "#comment":
                    out.append(node.data or "")
                elif node.children:
                    stack.extend(reversed(node.children))
        return out

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    # ---- text -------------------------------------------------------------------------------
    def text(self, sep=""):
        """Visible text below this node: scripts/styles dropped, whitespace collapsed. ``sep`` is
        put between block elements (``""`` joins inline text as a browser shows it in one line)."""
        parts = []
        self._collect(parts, sep)
        return clean("".join(parts))

    def _collect(self, parts, sep):
        # iterative: parsers call this on whatever a site sends, however deep
        stack = list(reversed(self.children))
        while stack:
            child = stack.pop()
            if isinstance(child, str):
                parts.append(child)
            elif child.tag == "#comment" or child.tag in SKIP_TEXT:
                continue
            else:
                block = sep and child.tag in BLOCK
                if block:
                    parts.append(sep)
                    stack.append(sep)
                stack.extend(reversed(child.children))

    def own_text(self):
        """Text of direct string children only (``<span><b>多云</b>16 ~ 27℃</span>`` -> ``16 ~ 27℃``)."""
        return clean("".join(c for c in self.children if isinstance(c, str)))

    def __repr__(self):
        return "<%s %s>" % (self.tag, " ".join('%s="%s"' % kv for kv in self.attrs.items())[:80])


class _Builder(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]
        self.open = {}          # tag -> how many elements of that name are on the stack
        self.nodes = 0          # start tags and runs of text, for parse_bounded

    def handle_starttag(self, tag, attrs):
        self.nodes += 1
        parent = self.stack[-1]
        node = Node(tag, dict((k, v if v is not None else "") for k, v in attrs), parent)
        parent.children.append(node)
        if tag not in VOID and len(self.stack) <= MAX_DEPTH:
            self.stack.append(node)
            self.open[tag] = self.open.get(tag, 0) + 1

    def handle_startendtag(self, tag, attrs):
        parent = self.stack[-1]
        node = Node(tag, dict((k, v if v is not None else "") for k, v in attrs), parent)
        parent.children.append(node)

    def handle_endtag(self, tag):
        if not self.open.get(tag):
            return          # unmatched end tag (or one of an element attached flat): ignored
        stack, open_ = self.stack, self.open
        while True:
            node = stack.pop()
            open_[node.tag] -= 1
            if node.tag == tag:
                return

    def handle_data(self, data):
        self.nodes += 1
        self.stack[-1].children.append(data)

    def handle_comment(self, data):
        parent = self.stack[-1]
        parent.children.append(Node("#comment", parent=parent, data=data))


FEED = 65536        # characters handed to html.parser at a time by ``parse_bounded``


def parse(html):
    """Build the tree of ``html`` (a str). Never raises on malformed markup."""
    return parse_bounded(html)[0]


def parse_bounded(html, max_nodes=None, deadline=None):
    """``(root, parsed)``: the tree of ``html`` and how many of its characters went into it
    (``len(html)`` unless a bound stopped the parse). Never raises on malformed markup.

    Why bounds: html.parser costs microseconds per tag and per run of text, so a 5 MB page of
    tiny tags (or of stray ``<`` signs) takes seconds however linear the rest is. The input is
    fed in pieces and the parse stops after the piece that passes ``max_nodes`` (start tags
    plus runs of text) or when ``deadline`` (anything with ``remaining()``) has run out; what
    was read up to there is a complete tree of the page's beginning, which is where the title
    and, almost always, the main text are (an unfinished construct at the cut is dropped).
    Pieces grow with what html.parser still holds unparsed: it re-reads an unfinished start tag
    from its ``<`` on every feed, so a tag of a million attributes fed in fixed pieces would
    cost the square of its length; doubling keeps the re-reading linear."""
    builder = _Builder()
    html = html or ""
    parsed = len(html)
    try:
        if max_nodes is None and deadline is None:
            builder.feed(html)
        else:
            pos = 0
            while pos < len(html):
                size = max(FEED, len(builder.rawdata))
                builder.feed(html[pos:pos + size])
                pos += size
                if pos < len(html) and ((max_nodes is not None and builder.nodes >= max_nodes) or
                                        (deadline is not None and deadline.remaining() <= 0)):
                    return builder.root, pos
            if builder.cdata_elem is None and len(builder.rawdata) > FEED and builder.rawdata.startswith("<"):
                # a tag or comment never finished: html.parser's close() would re-read it and hand
                # it over as text; a browser reads it as that tag or comment, i.e. no text at all
                return builder.root, parsed
        builder.close()
    except Exception:   # html.parser is lenient; this guards exotic input (e.g. broken declarations)
        pass
    return builder.root, parsed


def clean(text):
    """Collapse whitespace (incl. full-width and non-breaking spaces) and strip."""
    return _SPACE.sub(" ", text or "").strip()


def by_class(name):
    return lambda n: name in n.classes


def by_class_prefix(prefix):
    return lambda n: any(c.startswith(prefix) for c in n.classes)


def tag_text(html_fragment):
    """Plain text of a small HTML fragment (``<em>北京</em>天气`` -> ``北京天气``)."""
    if "<" not in (html_fragment or "") and "&" not in (html_fragment or ""):
        return clean(html_fragment)
    return parse(html_fragment).text()


def slice_elements(html, start_re, tag="div", accept=None):
    """Cut ``html`` into the outer-HTML strings of the elements whose start tag matches
    ``start_re`` (a compiled regex), balancing ``<tag`` / ``</tag>`` to find each end.

    Why: a 2 MB mobile Baidu page is mostly scripts and JSON; finding the ~10 result cards by their
    start tag and parsing only those is many times faster than a tree of the whole page. Nested
    matches inside an earlier match are skipped (Baidu nests ``c-container`` in ``c-container``).
    """
    out = []
    token = re.compile(r"<(/?)%s\b[^>]*>" % tag, re.I)
    pos = 0
    while True:
        m = start_re.search(html, pos)
        if not m:
            break
        if accept is not None and not accept(m):
            pos = m.end()
            continue
        start = m.start()
        depth = 0
        end = len(html)
        for t in token.finditer(html, start):
            if t.group(1):
                depth -= 1
                if depth == 0:
                    end = t.end()
                    break
            elif not t.group(0).endswith("/>"):
                depth += 1
        out.append(html[start:end])
        pos = max(end, m.end())
    return out
