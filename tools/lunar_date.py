"""lunar_date: the Chinese lunar calendar for one day, the way people ask about it.

Three ways in, one answer shape out:
- ``date`` (Gregorian, default today): "今天农历几号", "1990-05-20 是农历哪天";
- ``lunar`` {"year", "month", "day", "leap"}: the Gregorian day of a lunar date ("农历八月十五是几号");
- ``festival`` with an optional ``year``: "今年中秋是几号", "2026 年除夕", "清明" (any of the 24 solar
  terms works too). Without ``year`` it is the next occurrence from today.

Why a tool: models get lunar dates wrong from memory (leap months, 29-day 腊月, the year a 干支
changes), and the host's lunar reminders match on the numeric keys ``lunar_year`` /
``lunar_month`` / ``lunar_day`` / ``lunar_leap``, which must be exact. Everything is computed from
the table and the solar-term algorithm in :mod:`xlakit.lunar` (stdlib only, 1900-2100).

Returns the day's lunar date (numbers and Chinese texts), 干支 year and 生肖 (changing at 春节,
stated in ``ganzhi_rule``), the solar term of the day / the current one / the next one with its
date, festivals, the next festival, ``text`` (e.g. 甲辰年八月十五) and a one-line ``display``.
"""
import datetime as dt
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.errors import InputError  # noqa: E402
from xlakit import lunar  # noqa: E402


def _today():
    """The local date; ``XLA_TODAY`` (YYYY-MM-DD) pins it in tests of "today" and "next" answers."""
    fixed = os.environ.get("XLA_TODAY", "").strip()
    if fixed:
        try:
            return dt.date.fromisoformat(fixed)
        except ValueError:
            pass
    return dt.date.today()


def _from_lunar(spec, today):
    if not isinstance(spec, dict):
        raise InputError("lunar 应为对象，如 {\"year\": 2025, \"month\": 8, \"day\": 15}")
    year = spec.get("year")
    if year is None:
        year = lunar.to_lunar(today).year
    month, day = spec.get("month"), spec.get("day")
    if month is None or day is None:
        raise InputError("lunar 里缺少 month 或 day：请同时给出农历月（1-12，11 = 冬月，12 = 腊月）和日（1-30）")
    leap = bool(spec.get("leap", False))
    day_ = lunar.to_solar(year, month, day, leap)
    if day_ > lunar.MAX_DATE:
        raise InputError("农历 %d 年%s%s 是公历 %s，超出支持范围（公历 1900-01-01 到 2100-12-31）" % (
            year, lunar.month_text(month, leap), lunar.day_text(day), day_.isoformat()))
    return day_


def _from_festival(name, year, today):
    kind, canon = lunar.normalise_festival(name)
    years = [year] if year is not None else [today.year, today.year + 1]
    for y in years:
        if not (lunar.MIN_DATE.year <= y <= lunar.MAX_DATE.year):
            raise InputError("年份 %d 超出支持范围（1900-2100）" % y)
        if kind == "term":
            days = [lunar.find_term(canon, y).date()]
        else:
            days = lunar.festival_dates(canon, y)
        if year is None:
            days = [d for d in days if d >= today]
        if days:
            return canon, days
    raise InputError("在支持范围内找不到 %s 的日期" % name)   # only past 2100


def main(params):
    today = _today()
    given = [k for k in ("date", "lunar", "festival") if params.get(k) not in (None, "")]
    if len(given) > 1:
        raise InputError("date、lunar、festival 一次只能给一个（收到 %s）。查公历某天用 date，"
                         "农历日期换公历用 lunar，查节日日期用 festival" % "、".join(given))
    extra = {}
    if "lunar" in given:
        day = _from_lunar(params["lunar"], today)
        extra["query"] = "lunar"
    elif "festival" in given:
        name, days = _from_festival(params["festival"], params.get("year"), today)
        day = days[0]
        extra["query"] = "festival"
        extra["festival"] = name
        if len(days) > 1:
            extra["also"] = [d.isoformat() for d in days[1:]]
            rt.warn("%d 年里%s出现了 %d 次（%s），下面按第一次给出" % (
                day.year, name, len(days), "、".join(d.isoformat() for d in days)))
    else:
        day = lunar.parse_date(params["date"], today) if "date" in given else today
        extra["query"] = "date"
    if params.get("year") is not None and "festival" not in given:
        rt.warn("year 只和 festival 一起使用，已忽略")
    out = lunar.describe(day, today=today)
    out.update(extra)
    if out.get("note"):
        rt.warn(out["note"])
    return out


if __name__ == "__main__":
    rt.run(main)
