"""The current time from the network (HTTP ``Date`` headers), and time zones that never crash.

Why the network: the user's clock may be wrong by minutes or years (a dead CMOS battery, a
clock set back to dodge a trial), and the model has no clock of its own. Every web server puts
its UTC time in the ``Date`` header, so asking a few well-known sites at once and taking the first
plausible answer gives the time within about a second, without an API key. When nothing answers
within a few seconds the local clock is used, and the answer says so.

Why careful time zones: ``zoneinfo`` needs a zone database that Windows lacks unless ``tzdata`` is
installed, and Windows reports its zone with a localized display name (``中国标准时间``) that no
library understands. ``resolve_zone`` accepts IANA names (any case), ``UTC+8`` style offsets,
Windows names in Chinese and English and Chinese city names, and falls back to a built-in table
(standard offset plus the US/EU daylight-saving rules) when the database is missing.

Only the standard library and ``xlakit.http``; no process runtime.
"""
import datetime
import email.utils
import os
import queue
import re
import threading
import time

from . import http
from .errors import Deadline, InputError

SITES = ("https://www.baidu.com/", "https://www.qq.com/", "https://www.taobao.com/", "https://www.jd.com/",
         "https://www.163.com/")
WAIT = 4.0                      # seconds the network gets before the local clock is used
WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
UTC = datetime.timezone.utc

# ---------------------------------------------------------------------------------------------
# Network time

def parse_http_date(value):
    """An HTTP ``Date`` header -> aware UTC datetime, or None when it is not a plausible date."""
    if not value or not isinstance(value, str):
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)       # RFC 7231: HTTP dates are always GMT
    if not (2000 <= dt.year <= 2200):
        return None
    return dt.astimezone(UTC)


class NetTime(object):
    """A network reading: ``utc`` at monotonic time ``mono``, from ``site``; ``now()`` moves it on."""

    def __init__(self, utc, mono, site, rtt):
        self.utc, self.mono, self.site, self.rtt = utc, mono, site, rtt

    def now(self):
        return self.utc + datetime.timedelta(seconds=time.monotonic() - self.mono)


def network_time(deadline=None, sites=SITES, wait=WAIT):
    """``(NetTime or None, errors)``: the first plausible ``Date`` among ``sites`` asked in parallel,
    within ``wait`` seconds (and the deadline). ``errors`` lists why the others failed."""
    budget = wait if deadline is None else max(0.0, min(wait, deadline.remaining()))
    if budget <= 0.05:
        return None, ["没有剩余时间访问网络"]
    limit = Deadline(budget)
    answers = queue.Queue()

    def ask(url):
        host = http.host_of(url)
        try:
            with http.Session(deadline=limit, timeout=budget) as s:
                sent = time.monotonic()
                resp = s.head(url, check=False, allow_redirects=False)
                got = time.monotonic()
        except http.NetError as exc:
            answers.put((None, "%s：%s" % (host, exc)))
            return
        except Exception as exc:  # noqa: BLE001 - one site's oddity must not end the others
            answers.put((None, "%s：%s" % (host, exc)))
            return
        utc = parse_http_date(resp.headers.get("Date"))
        if utc is None:
            answers.put((None, "%s：回应里没有有效的 Date 时间" % host))
            return
        # the server stamped the header somewhere during the round trip: take its middle
        rtt = got - sent
        answers.put((NetTime(utc + datetime.timedelta(seconds=min(rtt, 2.0) / 2), got, host, rtt), None))

    for url in sites:
        threading.Thread(target=ask, args=(url,), name="date:" + url, daemon=True).start()
    errors = []
    for _ in sites:
        left = limit.remaining()
        if left <= 0:
            break
        try:
            reading, error = answers.get(timeout=left)
        except queue.Empty:
            break
        if reading is not None:
            return reading, errors
        errors.append(error)
    if len(errors) < len(sites):
        errors.append("%d 个站点在 %.0f 秒内没有回应" % (len(sites) - len(errors), budget))
    return None, errors


# ---------------------------------------------------------------------------------------------
# Time zones

# Chinese names, Windows display names (Chinese and English) -> IANA
ALIASES = {
    "北京时间": "Asia/Shanghai", "中国标准时间": "Asia/Shanghai", "中国时间": "Asia/Shanghai", "中国": "Asia/Shanghai",
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "china standard time": "Asia/Shanghai", "cst": "Asia/Shanghai",
    "prc": "Asia/Shanghai", "东八区": "Asia/Shanghai", "中国台北标准时间": "Asia/Taipei", "台北标准时间": "Asia/Taipei",
    "taipei standard time": "Asia/Taipei", "台北": "Asia/Taipei", "台湾": "Asia/Taipei", "香港": "Asia/Hong_Kong",
    "澳门": "Asia/Macau", "东京": "Asia/Tokyo", "日本": "Asia/Tokyo", "东京标准时间": "Asia/Tokyo",
    "tokyo standard time": "Asia/Tokyo", "首尔": "Asia/Seoul", "韩国": "Asia/Seoul", "韩国标准时间": "Asia/Seoul",
    "korea standard time": "Asia/Seoul", "新加坡": "Asia/Singapore", "新加坡标准时间": "Asia/Singapore",
    "singapore standard time": "Asia/Singapore", "曼谷": "Asia/Bangkok", "迪拜": "Asia/Dubai", "新德里": "Asia/Kolkata",
    "印度": "Asia/Kolkata", "india standard time": "Asia/Kolkata", "莫斯科": "Europe/Moscow",
    "russian standard time": "Europe/Moscow", "伦敦": "Europe/London", "英国": "Europe/London",
    "gmt standard time": "Europe/London", "巴黎": "Europe/Paris", "法国": "Europe/Paris",
    "romance standard time": "Europe/Paris", "柏林": "Europe/Berlin", "德国": "Europe/Berlin",
    "w. europe standard time": "Europe/Berlin", "纽约": "America/New_York", "华盛顿": "America/New_York",
    "美国东部": "America/New_York", "eastern standard time": "America/New_York", "芝加哥": "America/Chicago",
    "central standard time": "America/Chicago", "丹佛": "America/Denver", "mountain standard time": "America/Denver",
    "洛杉矶": "America/Los_Angeles", "旧金山": "America/Los_Angeles", "美国西部": "America/Los_Angeles",
    "pacific standard time": "America/Los_Angeles", "温哥华": "America/Vancouver", "多伦多": "America/Toronto",
    "悉尼": "Australia/Sydney", "澳大利亚东部": "Australia/Sydney", "aus eastern standard time": "Australia/Sydney",
    "奥克兰": "Pacific/Auckland", "新西兰": "Pacific/Auckland", "utc": "UTC", "gmt": "UTC", "z": "UTC",
    "协调世界时": "UTC", "世界标准时间": "UTC", "格林尼治时间": "UTC", "coordinated universal time": "UTC",
}
# zones without the database: (standard offset in minutes, DST rule)
FALLBACK = {
    "UTC": (0, None), "Etc/UTC": (0, None), "Asia/Shanghai": (480, None), "Asia/Chongqing": (480, None),
    "Asia/Harbin": (480, None), "Asia/Urumqi": (360, None), "Asia/Hong_Kong": (480, None), "Asia/Macau": (480, None),
    "Asia/Taipei": (480, None), "Asia/Singapore": (480, None), "Asia/Kuala_Lumpur": (480, None),
    "Asia/Manila": (480, None), "Asia/Tokyo": (540, None), "Asia/Seoul": (540, None), "Asia/Bangkok": (420, None),
    "Asia/Ho_Chi_Minh": (420, None), "Asia/Jakarta": (420, None), "Asia/Kolkata": (330, None),
    "Asia/Dubai": (240, None), "Europe/Moscow": (180, None), "Europe/London": (0, "eu"), "Europe/Dublin": (0, "eu"),
    "Europe/Lisbon": (0, "eu"), "Europe/Paris": (60, "eu"), "Europe/Berlin": (60, "eu"), "Europe/Madrid": (60, "eu"),
    "Europe/Rome": (60, "eu"), "Europe/Amsterdam": (60, "eu"), "Europe/Brussels": (60, "eu"),
    "Europe/Vienna": (60, "eu"), "Europe/Zurich": (60, "eu"), "Europe/Stockholm": (60, "eu"),
    "Europe/Athens": (120, "eu"), "Europe/Helsinki": (120, "eu"), "Europe/Kiev": (120, "eu"),
    "America/New_York": (-300, "us"), "America/Toronto": (-300, "us"), "America/Chicago": (-360, "us"),
    "America/Denver": (-420, "us"), "America/Phoenix": (-420, None), "America/Los_Angeles": (-480, "us"),
    "America/Vancouver": (-480, "us"), "America/Anchorage": (-540, "us"), "Pacific/Honolulu": (-600, None),
    "America/Sao_Paulo": (-180, None), "Australia/Sydney": (600, "au"), "Australia/Melbourne": (600, "au"),
    "Australia/Brisbane": (600, None), "Australia/Perth": (480, None), "Pacific/Auckland": (720, "nz"),
}
_OFFSET = re.compile(r"^(?:utc|gmt|ut)?\s*([+-−])\s*(\d{1,2})(?::?(\d{2}))?$", re.I)


def _nth_sunday(year, month, n):
    """Date of the n-th Sunday of the month (n = -1: the last)."""
    if n > 0:
        first = datetime.date(year, month, 1)
        return first + datetime.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = datetime.date(year + (month == 12), month % 12 + 1, 1)
    last = nxt - datetime.timedelta(days=1)
    return last - datetime.timedelta(days=(last.weekday() + 1) % 7)


class RuleZone(datetime.tzinfo):
    """A zone from FALLBACK: standard offset plus the daylight-saving rule of its region
    (US since 2007, EU since 1996, south-east Australia since 2008, New Zealand since 2007)."""

    def __init__(self, name, minutes, rule):
        self.name, self.std, self.rule = name, datetime.timedelta(minutes=minutes), rule

    def _dst_utc_range(self, year):
        """(start, end) of DST in UTC for ``year``; for southern rules the gap is the winter."""
        h = datetime.timedelta(hours=1)
        if self.rule == "eu":
            return (datetime.datetime.combine(_nth_sunday(year, 3, -1), datetime.time(1)),
                    datetime.datetime.combine(_nth_sunday(year, 10, -1), datetime.time(1)))
        if self.rule == "us":
            start = datetime.datetime.combine(_nth_sunday(year, 3, 2), datetime.time(2)) - self.std
            end = datetime.datetime.combine(_nth_sunday(year, 11, 1), datetime.time(2)) - self.std - h
            return start, end
        if self.rule == "au":   # DST ends first Sunday of April 3:00 local DST, starts first Sunday of Oct 2:00
            end = datetime.datetime.combine(_nth_sunday(year, 4, 1), datetime.time(3)) - self.std - h
            start = datetime.datetime.combine(_nth_sunday(year, 10, 1), datetime.time(2)) - self.std
            return start, end
        if self.rule == "nz":   # ends first Sunday of April 3:00 DST, starts last Sunday of Sept 2:00
            end = datetime.datetime.combine(_nth_sunday(year, 4, 1), datetime.time(3)) - self.std - h
            start = datetime.datetime.combine(_nth_sunday(year, 9, -1), datetime.time(2)) - self.std
            return start, end
        return None

    def _in_dst_utc(self, utc_naive):
        rng = self._dst_utc_range(utc_naive.year)
        if rng is None:
            return False
        start, end = rng
        if self.rule in ("au", "nz"):
            return not (end <= utc_naive < start)
        return start <= utc_naive < end

    def fromutc(self, dt):
        naive = dt.replace(tzinfo=None)
        hour = datetime.timedelta(hours=1)
        if self._in_dst_utc(naive):
            return (naive + self.std + hour).replace(tzinfo=self)
        # the hour after DST ends is shown twice on the wall clock: the second time has fold=1
        fold = 1 if self.rule and self._in_dst_utc(naive - hour) else 0
        return (naive + self.std).replace(tzinfo=self, fold=fold)

    def dst(self, dt):
        """PEP 495: a wall time seen twice is DST on its first pass (fold 0), standard on its
        second (fold 1); a wall time skipped in spring counts as before the change on fold 0."""
        zero = datetime.timedelta(0)
        if dt is None or self.rule is None:
            return zero
        hour = datetime.timedelta(hours=1)
        naive = dt.replace(tzinfo=None)
        as_dst = self._in_dst_utc(naive - self.std - hour)
        as_std = self._in_dst_utc(naive - self.std)
        if as_dst and as_std:
            return hour
        if not as_dst and not as_std:
            return zero
        if as_dst:                       # ambiguous (autumn)
            return zero if getattr(dt, "fold", 0) else hour
        return hour if getattr(dt, "fold", 0) else zero   # skipped (spring)

    def utcoffset(self, dt):
        return self.std + self.dst(dt)

    def tzname(self, dt):
        return self.name


def _zoneinfo(name):
    """``zoneinfo.ZoneInfo(name)`` or None when the module or the database lacks it."""
    try:
        import zoneinfo
    except ImportError:   # pragma: no cover - Python 3.8
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except Exception:   # ZoneInfoNotFoundError, ValueError for odd keys, OSError for a broken file
        return None


def _canonical(name):
    """``asia/shanghai`` -> ``Asia/Shanghai`` (the database is case-sensitive, users are not)."""
    known = dict((k.lower(), k) for k in FALLBACK)
    if name.lower() in known:
        return known[name.lower()]
    try:
        import zoneinfo
        for key in zoneinfo.available_timezones():
            if key.lower() == name.lower():
                return key
    except Exception:
        pass
    return "/".join(p[:1].upper() + p[1:] for p in name.split("/"))


def fixed_zone(minutes):
    sign = "+" if minutes >= 0 else "-"
    label = "UTC%s%02d:%02d" % (sign, abs(minutes) // 60, abs(minutes) % 60)
    return datetime.timezone(datetime.timedelta(minutes=minutes), label), label


def resolve_zone(name, use_zoneinfo=True):
    """``(tzinfo, display name, note)`` for what the user typed; note is "" or a Chinese remark
    (e.g. the database is missing). Raises InputError for a name nobody knows."""
    raw = (name or "").strip()
    key = ALIASES.get(raw) or ALIASES.get(raw.lower())
    if key is None:
        m = _OFFSET.match(raw.replace("：", ":"))
        if m:
            hours, mins = int(m.group(2)), int(m.group(3) or 0)
            if hours > 14 or mins >= 60:
                raise InputError("时区偏移 %s 超出范围（应在 UTC-12 到 UTC+14 之间）" % raw)
            total = (hours * 60 + mins) * (-1 if m.group(1) in "-−" else 1)
            tz, label = fixed_zone(total)
            return tz, label, ""
        key = _canonical(raw)
    if key == "UTC":
        return UTC, "UTC", ""
    zone = _zoneinfo(key) if use_zoneinfo else None
    if zone is not None:
        return zone, key, ""
    if key in FALLBACK:
        minutes, rule = FALLBACK[key]
        note = "本机缺少时区数据库，%s 按内置规则计算" % key + ("（含夏令时规则）" if rule else "")
        return RuleZone(key, minutes, rule), key, note
    raise InputError("不认识时区「%s」。请用 IANA 时区名（如 Asia/Shanghai、America/New_York、Europe/London）、"
                     "UTC+8 这样的偏移，或中文城市名（北京、东京、纽约、伦敦）" % raw[:60])


def _printable(text):
    return bool(text) and all(ch.isprintable() for ch in text) and "\ufffd" not in text


def local_zone():
    """``(tzinfo, name)`` of this machine. The name is IANA when it can be found (TZ, /etc/timezone,
    the /etc/localtime link), a known Windows display name mapped to IANA, else ``UTC+08:00``."""
    now = datetime.datetime.now().astimezone()
    offset_tz = now.tzinfo
    minutes = int(now.utcoffset().total_seconds() // 60)
    candidates = []
    tz_env = os.environ.get("TZ", "").lstrip(":")
    if tz_env:
        candidates.append(tz_env.split("zoneinfo/")[-1])
    try:
        with open("/etc/timezone", encoding="utf-8") as fh:
            candidates.append(fh.read().strip())
    except (OSError, UnicodeError):
        pass
    try:
        link = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in link:
            candidates.append(link.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        if name and "/" in name or name == "UTC":
            zone = _zoneinfo(name)
            if zone is not None and int(datetime.datetime.now(zone).utcoffset().total_seconds() // 60) == minutes:
                return zone, name
    try:
        names = [n for n in time.tzname if n]
    except Exception:   # a broken locale can make even this fail on Windows
        names = []
    for n in names:
        if not _printable(n):
            continue
        mapped = ALIASES.get(n) or ALIASES.get(n.lower())
        if mapped and mapped != "UTC":
            zone = _zoneinfo(mapped)
            if zone is None and mapped in FALLBACK:
                zone = RuleZone(mapped, *FALLBACK[mapped])
            if zone is not None and int(datetime.datetime.now(zone).utcoffset().total_seconds() // 60) == minutes:
                return zone, mapped
    return offset_tz, fixed_zone(minutes)[1]


def describe(utc, zone, zone_name):
    """The answer fields for an aware UTC datetime shown in ``zone``."""
    local = utc.astimezone(zone)
    off = local.utcoffset() or datetime.timedelta(0)
    minutes = int(off.total_seconds() // 60)
    dst = local.dst()
    return {
        "time": local.strftime("%Y-%m-%d %H:%M:%S"),
        "iso": local.isoformat(timespec="seconds"),
        "date": local.strftime("%Y-%m-%d"),
        "weekday": WEEKDAYS[local.weekday()],
        "timezone": zone_name,
        "utc_offset": "%s%02d:%02d" % ("+" if minutes >= 0 else "-", abs(minutes) // 60, abs(minutes) % 60),
        "is_dst": bool(dst) if dst is not None else False,
        "utc": utc.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "timestamp": int(utc.timestamp()),
    }
