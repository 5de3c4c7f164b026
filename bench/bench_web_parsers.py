"""Benchmark of the web parsers: milliseconds to turn one result page into hits.

Why: web_search parses a Baidu page of up to ~2 MB (the mobile layout is mostly inline scripts
and JSON) inside a 45 s budget that is mostly network time; the parse must stay a rounding error.
Side by side for every page:

- ``ours``       the tool's parser (cuts the result containers out first, then builds a small
                 tree per container);
- ``full-tree``  what one would write first: one ``html.parser`` tree of the whole page and a
                 search for the result containers in it (the per-card extraction is not even
                 counted, so this is a lower bound for that approach);
- ``bs4``        BeautifulSoup(html.parser) building the whole tree only, when bs4 is importable
                 (what a user of that library pays before extracting anything).

Pages: the committed fixtures (tests/fixtures/web/) and, when ``../shared/samples/web`` exists,
the real saved pages (2018 Baidu desktop, 2026 Baidu mobile, 360 2020/2022). Each is parsed
``--repeat`` times (default 5); the best time is reported.

Usage: ``python3 bench/bench_web_parsers.py [--repeat 5]``.
"""
import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from xlakit.web import baidu, dom, so360, weather  # noqa: E402

FIX = os.path.join(ROOT, "tests", "fixtures", "web")
SHARED = os.path.join(ROOT, "..", "shared", "samples", "web")


def pages():
    out = []
    for path in sorted(glob.glob(os.path.join(FIX, "*.html"))):
        out.append(("fixture/" + os.path.basename(path), path))
    for rel in ("baidu/desktop_2018-09-18_classic_serp.html", "baidu/mobileUA_2026_beijing-tianqi_c-result.html",
                "so360/2020-01-25_data-mdurl_res-desc.html", "so360/2022-08-21_news_flow_data-mdurl.html"):
        path = os.path.join(SHARED, rel)
        if os.path.exists(path):
            out.append(("real/" + rel, path))
    return out


def parser_for(name):
    base = os.path.basename(name)
    if "baidu" in name or base.startswith(("desktop_", "mobileUA")):
        return "baidu", baidu.parse
    if "so360" in name:
        return "360", so360.parse
    return "tianqi", lambda html: {"results": weather.parse_days(html) or [weather.parse_today(html)]}


def full_tree(kind, html):
    """The naive way: a tree of the whole page and the containers found in it."""
    root = dom.parse(html)
    if kind == "baidu":
        cards = root.find_all(lambda n: n.tag == "div" and (("c-container" in n.classes and (
            "result" in n.classes or "result-op" in n.classes)) or ("c-result" in n.classes and "result" in n.classes)))
    elif kind == "360":
        cards = root.find_all(lambda n: n.tag == "li" and "res-list" in n.classes)
    else:
        return len(root.children)
    return len(cards)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    try:
        import bs4  # noqa: F401
    except ImportError:
        bs4 = None
    print("%-58s %9s %6s %9s %11s %9s" % ("page", "KB", "hits", "ours ms", "full-tree ms", "bs4 ms"))
    for name, path in pages():
        with open(path, encoding="utf-8", errors="replace") as fh:
            html = fh.read()
        kind, parse = parser_for(name)
        hits = len(parse(html).get("results") or [])
        ours = best(lambda: parse(html), args.repeat)
        full = best(lambda: full_tree(kind, html), args.repeat)
        soup = best(lambda: bs4.BeautifulSoup(html, "html.parser"), max(1, args.repeat // 2)) if bs4 else None
        print("%-58s %9.0f %6d %9.1f %11.1f %9s" % (name[:58], len(html.encode("utf-8")) / 1024.0, hits, ours, full,
                                                   "%.1f" % soup if soup is not None else "-"))


if __name__ == "__main__":
    main()
