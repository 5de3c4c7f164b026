"""web_search: search the Chinese web (Baidu first, 360 search when Baidu fails).

Why a chain: Baidu has the best Chinese results but answers scripted visitors with its 百度安全验证
captcha now and then; 360 search is the fallback. A captcha, an error page or an unreadable page
is never reported as "zero results": the next engine is tried, and when all fail the error says
why each one failed. Everything runs inside one deadline (about 45 s), however many engines and
redirect look-ups it takes.

Parameters:
    query   the search words (at most 200 characters).
    limit   how many results (default 8, at most 10).

Returns ``query``, ``engine`` (``baidu`` or ``360``: who answered), ``results`` (``title``,
``url``, ``snippet``, optional ``date`` and ``source``; ``redirect: true`` marks a Baidu jump link
that could not be resolved in time, it still opens the page), ``returned``, ``search_url`` (the
same search for a browser) and ``errors`` (why earlier engines failed, when any did).
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.web import search as engine_chain  # noqa: E402

OVERALL = 45.0
MAX_QUERY = 200
MAX_LIMIT = 10
NAMES = {"baidu": "百度", "360": "360 搜索"}


def main(params):
    query = " ".join(str(params.get("query") or "").split())
    if not query:
        raise InputError("query 不能为空：请给出要搜索的关键词，如 {\"query\": \"合肥 天气\"}")
    if len(query) > MAX_QUERY:
        raise InputError("query 太长（%d 字），最多 %d 字。请只保留关键的几个词" % (len(query), MAX_QUERY))
    limit = rt.clamp(params, "limit", MAX_LIMIT, 1)
    deadline = http.call_deadline(rt.deadline, OVERALL)
    found = engine_chain.search(query, limit or 8, deadline)
    errors = [{"engine": e["engine"], "error": e["error"]} for e in found["errors"]]
    if not found["engine"]:
        kinds = set(e["kind"] for e in found["errors"])
        reasons = "；".join("%s：%s" % (NAMES.get(e["engine"], e["engine"]), e["error"]) for e in found["errors"])
        if kinds == {"empty"}:
            raise ToolError("没有搜到与「%s」相关的网页（%s）。请换个说法、减少关键词或去掉引号后再试" % (query, reasons),
                            errors=errors)
        hint = "请稍后重试" if kinds & {"timeout", "offline", "dns", "refused", "reset"} else "请稍后重试或换个关键词"
        raise ToolError("搜索失败，所有搜索引擎都没有给出结果：%s。%s" % (reasons, hint), errors=errors)
    results = found["results"]
    out = {"query": query, "engine": found["engine"], "results": results, "returned": len(results),
           "search_url": engine_chain.search_url(found["engine"], query)}
    if errors:
        out["errors"] = errors
    if any(r.get("redirect") for r in results):
        rt.warn("部分结果的 url 仍是百度跳转链接（redirect: true），可以直接打开" +
                rt.tool_hint("fetch_url", "，也可以用 fetch_url 读取正文"))
    return out


if __name__ == "__main__":
    rt.run(main)
