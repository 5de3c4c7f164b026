"""query_weather: today's weather and the 7/15/30-day forecast of a Chinese city from tianqi.com.

Why tianqi.com: its city pages are plain server-rendered HTML (no key, no JavaScript), with the
current conditions in one block and the forecasts as simple lists. The city may be given in the
site's pinyin (``hefei``) or in Chinese (合肥, 合肥市): an embedded table of every prefecture-level
city maps the name to the pinyin, the answer says which city was resolved, and a name outside the
table goes through the site's own search. Redirects to other ``*.tianqi.com`` hosts are followed.

Parameters:
    city   pinyin slug as in the site's URLs, or a Chinese city name.
    days   ``today`` (default), ``7``, ``15`` or ``30``.

Returns ``city`` (as the page names it), ``slug``, ``resolved`` (how a Chinese name was mapped),
``today`` (``date``, ``weekday``, ``lunar``, ``temperature``, ``weather``, ``low``/``high``,
``humidity``, ``wind``, ``uv``, ``air_quality``, ``pm``, ``sunrise``, ``sunset``) and, for a
forecast, ``days`` (``date``, ``label``, ``weather``, ``low``, ``high``) with ``returned``;
``source_url`` is the page read.
"""
import datetime
import re
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit
from urllib.parse import quote

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.web import cities, weather  # noqa: E402

OVERALL = 45.0
SITE = "https://www.tianqi.com"
SLUG = re.compile(r"^[a-z0-9]{2,40}$")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _is_tianqi(url):
    host = http.host_of(url)
    return host == "tianqi.com" or host.endswith(".tianqi.com")


def _fetch(session, url, deadline):
    """GET a tianqi page; a 404 is None (no such city), other failures are ToolErrors."""
    try:
        resp = session.get(url, check=False, timeout=deadline.timeout(20))
    except http.NetError as exc:
        raise ToolError("无法访问天气网：%s" % exc)
    if resp.status == 404:
        return None
    if resp.status >= 400:
        raise ToolError("天气网返回 HTTP %d（%s）：%s。请稍后重试" % (resp.status, http.status_text(resp.status), resp.url))
    if not _is_tianqi(resp.url):
        raise ToolError("天气网把请求转到了站外地址 %s，无法读取天气。请稍后重试" % resp.url[:200])
    return resp


def _unknown(city, slug=None):
    near = cities.suggest(slug or city)
    tip = ("可能是：%s。" % "、".join(near)) if near else ""
    if CJK.search(city):
        return ToolError("天气网上找不到「%s」的天气页面。%s请换成地级市名称（如 合肥），或直接给天气网的城市拼音（如 hefei）" % (
            city, tip))
    return ToolError("天气网上没有城市拼音「%s」。%scity 须是天气网网址里的拼音（合肥是 hefei，不是 hefei shi），也可以直接写中文城市名" % (
        city, tip))


def main(params):
    city = (params.get("city") or "").strip()
    days = str(params.get("days") or "today").strip().lower()
    if days not in ("today", "7", "15", "30"):
        raise InputError("days 只能是 today、7、15 或 30，收到的是 %s" % days)
    if not city:
        raise InputError("city 不能为空：请给城市拼音（如 hefei）或中文名（如 合肥）")
    deadline = http.call_deadline(rt.deadline, OVERALL)
    resolved = None
    name = None
    if CJK.search(city):
        hit = cities.lookup(city)
        if hit:
            name, slug = hit
            resolved = "%s → %s" % (city, slug)
        else:
            slug = None
    else:
        slug = re.sub(r"[\s_-]+", "", city.lower())
        if not SLUG.match(slug):
            raise InputError("city「%s」不是城市拼音：只能含小写字母和数字（如 hefei、beijing），也可以写中文城市名" % city)
    suffix = "" if days == "today" else "%s/" % days
    with http.Session(deadline=deadline, referer=SITE + "/") as s:
        resp = None
        if slug:
            resp = _fetch(s, "%s/%s/%s" % (SITE, slug, suffix), deadline)
            if resp is not None and name and weather.page_city(resp.text) and \
                    not weather.page_city(resp.text).startswith(name[:2]):
                resp = None   # a shared spelling (e.g. 抚州/福州) landed on the other city: use the search
        if resp is None and CJK.search(city):
            found = _fetch(s, "%s/tianqi/search?keyword=%s" % (SITE, quote(name or city)), deadline)
            if found is not None and weather.parse_today(found.text):
                m = re.match(r"https?://[^/]+/([a-z0-9]+)/", found.url)
                slug = m.group(1) if m else slug
                resolved = "%s → %s（天气网搜索）" % (city, slug or found.url)
                resp = found if not suffix else _fetch(s, "%s/%s/%s" % (SITE, slug, suffix), deadline)
        if resp is None:
            raise _unknown(city, slug if not CJK.search(city) else None)
        html = resp.text
    today = weather.parse_today(html)
    out = {"city": (today or {}).get("city") or weather.page_city(html) or name or city, "slug": slug,
           "source_url": resp.url}
    if resolved:
        out["resolved"] = resolved
    if days == "today":
        if not today:
            raise ToolError("天气网的页面 %s 里没有找到当天天气（不是城市天气页，或页面已改版）。请确认城市拼音，或稍后重试" % resp.url)
        out["today"] = today
        return out
    ref = weather.page_date(html) or datetime.date.today()
    if today and today.get("date"):
        ref = datetime.date(*map(int, today["date"].split("-")))
    items = weather.parse_days(html, ref)
    if not items:
        raise ToolError("天气网的页面 %s 里没有找到 %s 天预报（页面可能已改版）。可以先用 days=today 查询当天天气" % (resp.url, days))
    if today:
        out["today"] = today
    out["days"] = items
    out["returned"] = len(items)
    return out


if __name__ == "__main__":
    rt.run(main)
