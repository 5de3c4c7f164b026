"""tianqi.com (天气网) pages -> today's conditions and the 7/15/30-day lists.

Today is the ``dl.weather_info`` block of the city page: city (``dd.name h1``, "渭源天气"),
date line (``dd.week``: 2025年06月04日　星期三　乙巳年五月初九 芒种, full-width spaces), the
current temperature (``p.now b``), weather and range (``dd.weather span``: ``<b>多云</b>16 ~ 27℃``),
humidity/wind/UV (``dd.shidu b`` ×3 with full-width colons), air quality (``dd.kongqi h5``), PM
(``h6``, "PM: 9") and sunrise/sunset (``span`` split by ``<br />``). The site closes that list with
``<dl>`` instead of ``</dl>``; the tree builder's pop-to-match rule keeps that harmless.

The forecast pages (``/<slug>/7/``, ``/15/``, ``/30/``) list days as ``ul.weaul > li``: month-day
(``.weaul_q .fl``, no year), a label (今天/明天/星期X), the weather text and ``<span>lo</span>~
<span>hi</span>℃``. The year is inferred from the reference date, across the December->January turn.
"""
import datetime
import re

from . import dom

_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_RANGE = re.compile(r"(-?\d+)\s*[~～至-]\s*(-?\d+)")
_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")


def _int(text):
    m = _NUM.search(text or "")
    if not m:
        return None
    value = float(m.group(0))
    return int(value) if value.is_integer() else value


def _after_label(text):
    """``"湿度：53%"`` -> ``"53%"`` (full-width or ASCII colon)."""
    parts = re.split(r"[：:]", text or "", 1)
    return dom.clean(parts[1] if len(parts) == 2 else parts[0])


def city_name(h1_text):
    """``"渭源天气"`` -> ``"渭源"``."""
    name = dom.clean(h1_text)
    name = re.sub(r"(今[天日]|明天|后天|\d+\s*天|一周|未来\d*\s*天)?\s*天气(预报)?(查询)?$", "", name)
    return name.strip()


def parse_today(html):
    """The ``weather_info`` block -> dict, or None when the page has none (not a city page)."""
    root = dom.parse(_block(html, "weather_info"))
    box = root.find(lambda n: n.tag == "dl" and n.has_class("weather_info"))
    if box is None:
        return None
    out = {}
    name = box.find(lambda n: n.tag == "dd" and n.has_class("name"))
    if name is not None:
        h = name.find(lambda n: n.tag in ("h1", "h2"))
        out["city"] = city_name(h.text() if h is not None else name.text())
    week = box.find(lambda n: n.tag == "dd" and n.has_class("week"))
    if week is not None:
        line = week.text()
        out["date_text"] = line
        m = _DATE.search(line)
        if m:
            out["date"] = "%04d-%02d-%02d" % tuple(int(g) for g in m.groups())
        parts = [p for p in re.split(r"[\s\u3000]+", line) if p]
        for p in parts:
            if p.startswith("星期") or p.startswith("周"):
                out["weekday"] = p
        rest = [p for p in parts[1:] if not p.startswith("星期")]
        if rest:
            out["lunar"] = rest[0]
        if len(rest) > 1:
            out["solar_term"] = " ".join(rest[1:])
    wx = box.find(lambda n: n.tag == "dd" and n.has_class("weather"))
    if wx is not None:
        now = wx.find(lambda n: n.tag == "p" and n.has_class("now"))
        if now is not None:
            out["temperature"] = _int(now.text())
        span = wx.find(tag="span")
        if span is not None:
            b = span.find(tag="b")
            if b is not None:
                out["weather"] = b.text()
            rng = span.own_text() or span.text().replace(out.get("weather", ""), "", 1)
            out["range"] = dom.clean(rng)
            m = _RANGE.search(rng)
            if m:
                out["low"], out["high"] = int(m.group(1)), int(m.group(2))
    shidu = box.find(lambda n: n.tag == "dd" and n.has_class("shidu"))
    if shidu is not None:
        for b in shidu.find_all(tag="b"):
            text = b.text()
            if text.startswith("湿度"):
                out["humidity"] = _after_label(text)
            elif text.startswith("风"):
                out["wind"] = _after_label(text)
            elif text.startswith("紫外线"):
                out["uv"] = _after_label(text)
    kq = box.find(lambda n: n.tag == "dd" and n.has_class("kongqi"))
    if kq is not None:
        h5 = kq.find(tag="h5")
        if h5 is not None:
            out["air_quality"] = _after_label(h5.text())
        h6 = kq.find(tag="h6")
        if h6 is not None:
            out["pm"] = _int(h6.text())
        span = kq.find(tag="span")
        if span is not None:
            for piece in (dom.clean(c) for c in span.children if isinstance(c, str)):
                if piece.startswith("日出"):
                    out["sunrise"] = _after_label(piece)
                elif piece.startswith("日落"):
                    out["sunset"] = _after_label(piece)
    return out if (out.get("city") or out.get("temperature") is not None) else None


def _block(html, cls):
    """Just the part of a big page around ``cls`` (parsing 200 KB of page for one block is waste)."""
    html = html or ""
    i = html.find(cls)
    if i < 0:
        return html if len(html) < 300000 else ""
    start = html.rfind("<", 0, i)
    return html[max(0, start): i + 20000]


def _year_for(month, day, ref):
    """The year of ``MM-DD`` seen from reference date ``ref`` (a forecast never lies far behind)."""
    year = ref.year
    try:
        cand = datetime.date(year, month, day)
    except ValueError:
        return year
    if (cand - ref).days < -180:
        return year + 1
    if (cand - ref).days > 180:
        return year - 1
    return year


def parse_days(html, ref=None):
    """``ul.weaul > li`` -> ``[{"date", "label", "weather", "low", "high", "range"}]``.

    ``ref`` (a date) decides the year of ``MM-DD``; default today. Also reads the older 30-day
    layout (``<h3><b>12月30日</b> <em>今天</em></h3> … <li class="temp">雨 4~<b>11</b>℃</li>``)."""
    ref = ref or page_date(html) or datetime.date.today()
    root = dom.parse(_block(html, "weaul") if "weaul" in (html or "") else html)
    days = []
    ul = root.find(lambda n: n.tag == "ul" and n.has_class("weaul"))
    if ul is not None:
        for li in (c for c in ul.children if isinstance(c, dom.Node) and c.tag == "li"):
            q = li.find(dom.by_class("weaul_q"))
            if q is None:
                continue
            fl = q.find(dom.by_class("fl"))
            fr = q.find(dom.by_class("fr"))
            md = fl.text() if fl is not None else ""
            day = {"label": fr.text() if fr is not None else ""}
            m = re.search(r"(\d{1,2})\s*[-/月]\s*(\d{1,2})", md)
            if m:
                month, dd = int(m.group(1)), int(m.group(2))
                day["date"] = "%04d-%02d-%02d" % (_year_for(month, dd, ref), month, dd)
            zs = li.find_all(dom.by_class("weaul_z"))
            if zs:
                day["weather"] = zs[0].text()
            if len(zs) > 1:
                spans = [_int(s.text()) for s in zs[1].find_all(tag="span")]
                spans = [s for s in spans if s is not None]
                if len(spans) >= 2:
                    day["low"], day["high"] = min(spans[0], spans[1]), max(spans[0], spans[1])
                day["range"] = zs[1].text()
            wind = li.find(dom.by_class("weaul_s"))
            if wind is not None and wind.text():
                day["wind"] = wind.text()
            days.append(day)
        return days
    # older layout: h3 (date + label) followed by a ul with li.temp
    for h3 in root.find_all(tag="h3"):
        b = h3.find(tag="b")
        m = re.search(r"(\d{1,2})月(\d{1,2})日", b.text() if b is not None else "")
        if not m:
            continue
        month, dd = int(m.group(1)), int(m.group(2))
        em = h3.find(tag="em")
        day = {"date": "%04d-%02d-%02d" % (_year_for(month, dd, ref), month, dd),
               "label": em.text() if em is not None else ""}
        parent = h3.parent
        siblings = parent.children if parent is not None else []
        idx = siblings.index(h3)
        ul2 = next((s for s in siblings[idx + 1:] if isinstance(s, dom.Node) and s.tag == "ul"), None)
        if ul2 is not None:
            temp = ul2.find(lambda n: n.tag == "li" and n.has_class("temp"))
            if temp is not None:
                text = temp.text()
                m2 = _RANGE.search(text)
                day["weather"] = dom.clean(text.split(m2.group(0))[0]) if m2 else text
                if m2:
                    lo, hi = int(m2.group(1)), int(m2.group(2))
                    day["low"], day["high"] = min(lo, hi), max(lo, hi)
                day["range"] = text[len(day["weather"]):].strip()
            plain = [li for li in ul2.find_all(tag="li") if not li.classes]
            if plain:
                day["wind"] = plain[0].text()
        days.append(day)
    return days


def page_date(html):
    """The first full date written on the page before its day list (the site prints today's
    date in the header: 2025年12月30日), or None."""
    html = html or ""
    end = html.find("weaul")
    m = _DATE.search(html, 0, end if end > 0 else min(len(html), 200000))
    if not m:
        return None
    try:
        return datetime.date(*(int(g) for g in m.groups()))
    except ValueError:
        return None


def page_city(html):
    """The city a forecast or city page is about (``h1`` "上海天气" / ``.weaone_b h1``), or ""."""
    root = dom.parse(_block(html, "weather_info") if "weather_info" in (html or "") else (html or "")[:200000])
    h = root.find(lambda n: n.tag == "h1")
    return city_name(h.text()) if h is not None else ""
