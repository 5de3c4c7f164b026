"""lunar_date and xlakit.lunar: the table, the solar terms and the tool as the host runs it.

The independent oracle is lunar-python (6tail, MIT; 寿星万年历 algorithms), installed in the test
venv only (``pip install lunar_python==1.4.8``); the tool itself never imports it. Without it the
oracle tests skip and say so. The solar-term instants are also checked against equinox and
solstice times published by the US Naval Observatory ("Earth's Seasons", UTC, to the minute).
"""
import datetime as dt
import json
import random

import pytest

from conftest import ok, fail
from xlakit import lunar as L
from xlakit.errors import InputError

D = dt.date
FIRST, LAST = D(1900, 1, 1), D(2100, 12, 31)


def days(a, b):
    d = a
    while d <= b:
        yield d
        d += dt.timedelta(days=1)


@pytest.fixture(scope="module")
def lp():
    return pytest.importorskip("lunar_python", reason="lunar-python (test-only oracle) is not installed")


# ------------------------------------------------------------------------------------------------
# The table on its own

def test_table_invariants():
    info = [L.year_info(y) for y in range(1900, 2101)]
    assert info[0]["start"] == D(1900, 1, 31)
    assert sum(y["days"] for y in info) == 73412                       # 1900-01-31 .. 2101-01-28
    assert L.year_info(1899)["start"] == D(1899, 2, 10)
    for y in info:
        assert all(m["days"] in (29, 30) for m in y["months"])
        assert 0 <= y["leap_month"] <= 12 and len(y["months"]) == (13 if y["leap_month"] else 12)
        assert 353 <= y["days"] <= 385
    assert sum(1 for y in info if y["leap_month"]) == 74
    new_years = [y["start"] for y in info]
    assert min(d.replace(year=2000) for d in new_years) == D(2000, 1, 21)   # 1966
    assert max(d.replace(year=2000) for d in new_years) == D(2000, 2, 20)   # 1985


ANCHORS = [
    (D(1900, 1, 1), (1899, 12, 1, False)), (D(1900, 1, 31), (1900, 1, 1, False)),
    (D(2024, 2, 9), (2023, 12, 30, False)), (D(2024, 2, 10), (2024, 1, 1, False)),
    (D(2023, 3, 22), (2023, 2, 1, True)), (D(2020, 5, 23), (2020, 4, 1, True)),
    (D(2033, 12, 22), (2033, 11, 1, True)), (D(2100, 12, 31), (2100, 12, 1, False)),
    # the rows the widely copied table gets wrong
    (D(1933, 7, 22), (1933, 5, 30, True)), (D(1996, 7, 16), (1996, 6, 1, False)),
    (D(1996, 9, 13), (1996, 8, 1, False)), (D(2060, 4, 30), (2060, 4, 1, False)),
]


@pytest.mark.parametrize("day,expected", ANCHORS, ids=[a[0].isoformat() for a in ANCHORS])
def test_anchor_days(day, expected):
    assert tuple(L.to_lunar(day)[:4]) == expected
    if expected[0] >= 1900:                 # lunar 1899 is only there for January 1900
        assert L.to_solar(*expected) == day


def test_round_trip_every_day():
    for day in days(FIRST, LAST):
        lu = L.to_lunar(day)
        if lu.year >= 1900:
            assert L.to_solar(lu.year, lu.month, lu.day, lu.leap) == day


def test_every_day_against_lunar_python(lp):
    """Every Gregorian day 1900-01-01..2100-12-31 (the 30 January days before 1900's new year
    included) mapped through lunar-python's own months, day by day."""
    expected = {}
    for year in range(1899, 2101):
        for m in lp.LunarYear.fromYear(year).getMonths():
            if m.getYear() != year:
                continue
            first = lp.Solar.fromJulianDay(m.getFirstJulianDay())
            start = D(first.getYear(), first.getMonth(), first.getDay()).toordinal()
            for i in range(m.getDayCount()):
                expected[start + i] = (year, abs(m.getMonth()), i + 1, m.getMonth() < 0)
    wrong = []
    for day in days(FIRST, LAST):
        if tuple(L.to_lunar(day)[:4]) != expected[day.toordinal()]:
            wrong.append(day)
    assert not wrong, "%d days differ, first %s" % (len(wrong), wrong[:5])


# Where published tables disagree (the rows the classic table or lunardate get wrong, the 2033
# 闰十一月, the three near-midnight new moons), with some margin on both sides.
DISPUTED = [(D(1933, 7, 1), D(1933, 9, 1)), (D(1954, 11, 15), D(1955, 1, 5)), (D(1978, 8, 25), D(1978, 10, 10)),
            (D(1996, 7, 1), D(1996, 10, 20)), (D(2033, 11, 15), D(2034, 1, 25)), (D(2057, 9, 15), D(2057, 11, 5)),
            (D(2060, 4, 20), D(2060, 6, 5)), (D(2089, 8, 25), D(2089, 10, 10)), (D(2097, 7, 30), D(2097, 9, 15))]


def test_direct_conversion_and_texts_against_lunar_python(lp):
    """Solar -> Lunar one call per day where the published tables disagree, plus a random sample: month/day numbers, the Chinese texts, year 干支/生肖 (at 春节), 立春 干支,
    month 干支 (by 节) and day 干支."""
    rng = random.Random(13)
    sample = [d for a, b in DISPUTED for d in days(a, b)]
    sample += [FIRST + dt.timedelta(days=rng.randrange((LAST - FIRST).days + 1)) for _ in range(1200)]
    for day in sample:
        o = lp.Solar.fromYmd(day.year, day.month, day.day).getLunar()
        got = L.describe(day, today=day)
        month = o.getMonth()
        assert (got["lunar_year"], got["lunar_month"], got["lunar_day"], got["lunar_leap"]) == \
            (o.getYear(), abs(month), o.getDay(), month < 0), day
        assert got["lunar_month_cn"] == o.getMonthInChinese() + "月", day     # theirs has 闰 already
        assert got["lunar_day_cn"] == o.getDayInChinese(), day
        assert got["lunar_ganzhi"] == o.getYearInGanZhi() and got["lunar_shengxiao"] == o.getYearShengXiao()
        assert got["ganzhi"]["day"] == o.getDayInGanZhi(), day
        if not L.term_uncertain(L.current_term(day)[1]) and not L.term_uncertain(L.next_term(day)[1]):
            assert got["ganzhi"]["month"] == o.getMonthInGanZhi(), day
            assert got["ganzhi"]["year_by_lichun"] == o.getYearInGanZhiByLiChun(), day


def test_new_year_eve_against_lunar_python(lp):
    """除夕 is the last day of 腊月: 29 or 30, whatever the year has."""
    lengths = set()
    for year in range(1900, 2100):
        eve = L.festival_dates("除夕", year)
        assert len(eve) == 1
        o = lp.Solar.fromYmd(eve[0].year, eve[0].month, eve[0].day).getLunar()
        assert "除夕" in o.getFestivals(), eve
        assert L.to_lunar(eve[0] + dt.timedelta(days=1))[1:3] == (1, 1)
        lengths.add(L.to_lunar(eve[0]).day)
    assert lengths == {29, 30}


def test_festivals_against_lunar_python(lp):
    names = {"春节", "元宵节", "端午节", "七夕节", "中秋节", "重阳节", "腊八节"}
    for year in (1950, 2000, 2023, 2024, 2025, 2026, 2057, 2099):
        for day in days(D(year, 1, 1), D(year, 12, 31)):
            o = lp.Solar.fromYmd(day.year, day.month, day.day).getLunar()
            theirs = names & set(o.getFestivals())
            ours = names & set(L.festivals_on(day))
            assert ours == theirs, day


def test_leap_month_carries_no_festival():
    # 2020 had 闰四月 and 2023 闰二月; 2017 闰六月 - nothing on 闰 days
    assert L.festivals_on(L.to_solar(2020, 4, 15, True)) == []
    assert "七夕节" not in L.festivals_on(L.to_solar(2017, 6, 7, True))


def test_bad_lunar_dates():
    with pytest.raises(InputError, match="只有 29 天"):
        L.to_solar(2024, 12, 30)
    with pytest.raises(InputError, match="没有闰月"):
        L.to_solar(2024, 6, 1, True)          # 2024 has no leap month: the message says so
    with pytest.raises(InputError, match="只有闰二月"):
        L.to_solar(2023, 6, 1, True)
    with pytest.raises(InputError, match="1900"):
        L.to_solar(1899, 1, 1)
    with pytest.raises(InputError, match="1 到 12"):
        L.to_solar(2024, 13, 1)
    with pytest.raises(InputError):
        L.to_lunar(D(2101, 1, 1))
    with pytest.raises(InputError):
        L.to_lunar(D(1899, 12, 31))


# ------------------------------------------------------------------------------------------------
# Solar terms

def test_terms_against_lunar_python_1900_2100(lp):
    """Every term 1900-2100: instants within a minute, dates equal unless flagged uncertain."""
    worst = 0
    for year in range(1900, 2101):
        table = lp.Solar.fromYmd(year, 6, 1).getLunar().getJieQiTable()
        for name, moment in L.solar_terms(year):
            s = table["DONG_ZHI" if name == "冬至" else name]
            theirs = dt.datetime(s.getYear(), s.getMonth(), s.getDay(), s.getHour(), s.getMinute(),
                                 s.getSecond(), tzinfo=L.BEIJING)
            diff = abs((moment - theirs).total_seconds())
            worst = max(worst, diff)
            assert diff <= 60, (year, name, moment, theirs)
            if moment.date() != theirs.date():
                assert L.term_uncertain(moment), (year, name, moment, theirs)
    assert worst < 60


# Earth's Seasons (USNO, UTC, rounded to the minute): March equinox, June solstice, September
# equinox, December solstice.
USNO = {
    2000: ("03-20 07:35", "06-21 01:48", "09-22 17:28", "12-21 13:37"),
    2020: ("03-20 03:50", "06-20 21:44", "09-22 13:31", "12-21 10:02"),
    2021: ("03-20 09:37", "06-21 03:32", "09-22 19:21", "12-21 15:59"),
    2023: ("03-20 21:24", "06-21 14:58", "09-23 06:50", "12-22 03:27"),
    2024: ("03-20 03:06", "06-20 20:51", "09-22 12:44", "12-21 09:21"),
    2025: ("03-20 09:01", "06-21 02:42", "09-22 18:19", "12-21 15:03"),
}


@pytest.mark.parametrize("year", sorted(USNO))
def test_equinoxes_and_solstices_against_usno(year):
    terms = dict(L.solar_terms(year))
    for name, published in zip(("春分", "夏至", "秋分", "冬至"), USNO[year]):
        utc = dt.datetime.strptime("%d-%s" % (year, published), "%Y-%m-%d %H:%M").replace(tzinfo=dt.timezone.utc)
        assert abs((terms[name] - utc).total_seconds()) <= 90, (year, name, terms[name], utc)


def test_terms_near_midnight_are_flagged():
    """The Hong Kong Observatory lists these terms as possibly off by a day; so must we."""
    for name, year in (("冬至", 2021), ("春分", 2051), ("立春", 2083), ("春分", 2084)):
        assert L.term_uncertain(L.find_term(name, year)), (name, year)
    assert not L.term_uncertain(L.find_term("立春", 2024))


def test_term_order_and_spacing():
    for year in (1900, 1979, 2024, 2100):
        terms = L.solar_terms(year)
        assert [n for n, _ in terms] == list(L.TERM_NAMES)
        gaps = [(b[1] - a[1]).total_seconds() / 86400 for a, b in zip(terms, terms[1:])]
        assert all(14.7 < g < 15.8 for g in gaps), gaps
        assert terms[0][1].month == 1 and terms[-1][1].month == 12


# ------------------------------------------------------------------------------------------------
# Input parsing

@pytest.mark.parametrize("text", ["2024-09-17", "2024/9/17", "2024年9月17日", "2024.9.17", "20240917",
                                  "2024-09-17 08:30", "２０２４／９／１７", " 2024年09月17号 "])
def test_date_formats(text):
    assert L.parse_date(text) == D(2024, 9, 17)


@pytest.mark.parametrize("text", ["2024-02-30", "明年", "9月17日", "2024-13-01", "", "2024/9"])
def test_bad_date_text(text):
    with pytest.raises(InputError):
        L.parse_date(text)


def test_festival_names():
    assert L.normalise_festival("中秋") == ("festival", "中秋节")
    assert L.normalise_festival("大年三十") == ("festival", "除夕")
    assert L.normalise_festival("清明") == ("festival", "清明节")
    assert L.normalise_festival("夏至") == ("term", "夏至")
    with pytest.raises(InputError, match="不认识"):
        L.normalise_festival("国庆")


# ------------------------------------------------------------------------------------------------
# The tool, spawned as the host does

TODAY = {"XLA_TODAY": "2025-06-01"}


def test_tool_default_is_today(run):
    data = ok(run("lunar_date", {}, extra_env=TODAY))
    assert data["date"] == "2025-06-01" and data["days_from_today"] == 0
    assert (data["lunar_year"], data["lunar_month"], data["lunar_day"], data["lunar_leap"]) == (2025, 5, 6, False)
    assert data["text"] == "乙巳年五月初六"
    assert "春节" in data["ganzhi_rule"] and "立春" in data["ganzhi_rule"]


def test_tool_mid_autumn(run):
    data = ok(run("lunar_date", {"date": "2024年9月17日"}))
    assert data["text"] == "甲辰年八月十五"
    assert data["lunar_month_cn"] == "八月" and data["lunar_day_cn"] == "十五"
    assert data["festivals"] == ["中秋节"] and "中秋节" in data["display"]
    assert data["next_solar_term"] == {"name": "秋分", "date": "2024-09-22", "time": "2024-09-22 20:43",
                                       "timezone": "北京时间", "days_until": 5}
    assert data["current_solar_term"]["name"] == "白露"
    assert data["ganzhi"] == {"year": "甲辰", "year_by_lichun": "甲辰", "month": "癸酉", "day": "甲申"}


def test_tool_leap_month_text(run):
    data = ok(run("lunar_date", {"date": "2020/5/23"}))
    assert data["lunar_leap"] is True and data["lunar_month_cn"] == "闰四月" and data["text"] == "庚子年闰四月初一"
    data = ok(run("lunar_date", {"date": "2033-12-22"}))
    assert data["lunar_month"] == 11 and data["lunar_leap"] and data["lunar_month_cn"] == "闰冬月"


def test_tool_ganzhi_changes_at_new_year_not_lichun(run):
    eve = ok(run("lunar_date", {"date": "2024-02-09"}))
    new = ok(run("lunar_date", {"date": "2024-02-10"}))
    assert (eve["lunar_ganzhi"], eve["lunar_shengxiao"]) == ("癸卯", "兔")
    assert eve["ganzhi"]["year_by_lichun"] == "甲辰"            # 立春 was 2024-02-04
    assert (new["lunar_ganzhi"], new["lunar_shengxiao"]) == ("甲辰", "龙")
    assert eve["festivals"] == ["除夕"] and new["festivals"] == ["春节"]


def test_tool_solar_term_day(run):
    data = ok(run("lunar_date", {"date": "2024-02-04"}))
    assert data["solar_term"]["name"] == "立春" and data["solar_term"]["time"] == "2024-02-04 16:27"
    assert "立春" in data["display"]
    data = ok(run("lunar_date", {"date": "2021-12-21"}))
    assert data["solar_term"]["name"] == "冬至" and data["solar_term"]["uncertain"] is True


def test_tool_lunar_to_gregorian(run):
    data = ok(run("lunar_date", {"lunar": {"year": 2025, "month": 8, "day": 15}}))
    assert data["date"] == "2025-10-06" and data["query"] == "lunar"
    data = ok(run("lunar_date", {"lunar": {"year": 2023, "month": 2, "day": 1, "leap": True}}))
    assert data["date"] == "2023-03-22"
    data = ok(run("lunar_date", {"lunar": {"month": 1, "day": 1}}, extra_env=TODAY))
    assert data["date"] == "2025-01-29"                        # the lunar year of "today"


def test_tool_festival(run):
    data = ok(run("lunar_date", {"festival": "中秋", "year": 2025}))
    assert data["date"] == "2025-10-06" and data["festival"] == "中秋节"
    eve = ok(run("lunar_date", {"festival": "除夕", "year": 2025}))
    assert eve["date"] == "2025-01-28" and eve["lunar_day"] == 29        # 腊月 of 2024 is short
    eve = ok(run("lunar_date", {"festival": "大年三十", "year": 2024}))
    assert eve["date"] == "2024-02-09" and eve["lunar_day"] == 30
    data = ok(run("lunar_date", {"festival": "清明", "year": 2025}))
    assert data["date"] == "2025-04-04" and data["solar_term"]["name"] == "清明"
    data = ok(run("lunar_date", {"festival": "春节"}, extra_env=TODAY))   # the next one from today
    assert data["date"] == "2026-02-17"
    data = ok(run("lunar_date", {"festival": "端午"}, extra_env=TODAY))
    assert data["date"] == "2026-06-19"                        # 2025's was 05-31, the day before


def test_tool_laba_twice_in_one_year(run):
    """When 腊月 starts in late December, one Gregorian year sees two 腊八: both are given."""
    twice = [y for y in range(1901, 2100) if len(L.festival_dates("腊八节", y)) == 2]
    assert twice, "no Gregorian year with two 腊八"
    data = ok(run("lunar_date", {"festival": "腊八", "year": twice[0]}))
    assert len(data["also"]) == 1 and any("2 次" in w for w in data["warnings"])


def test_tool_uncertain_month_says_so(run):
    data = ok(run("lunar_date", {"date": "2057-09-29"}))
    assert (data["lunar_month"], data["lunar_day"]) == (9, 1)
    assert data["uncertain"] is True and any("合朔" in w for w in data["warnings"])


def test_tool_range_ends(run):
    data = ok(run("lunar_date", {"date": "1900-01-01"}))
    assert data["lunar_year"] == 1899 and data["lunar_ganzhi"] == "己亥"
    data = ok(run("lunar_date", {"date": "2100-12-31"}))
    assert data["text"] == "庚申年腊月初一" and data["next_solar_term"]["date"].startswith("2101-01")


@pytest.mark.parametrize("args,needle", [
    ({"date": "1899-12-31"}, "1900-01-01"),
    ({"date": "2101-01-01"}, "2100-12-31"),
    ({"date": "2024-02-30"}, "不存在"),
    ({"date": "下周三"}, "看不懂日期"),
    ({"lunar": {"year": 2024, "month": 12, "day": 30}}, "廿九"),
    ({"lunar": {"year": 2024, "month": 6, "day": 1, "leap": True}}, "没有闰月"),
    ({"lunar": {"year": 2025, "month": 13, "day": 1}}, "lunar.month"),
    ({"lunar": {"year": 2025, "day": 1}}, "month"),
    ({"festival": "国庆"}, "不认识"),
    ({"lunar": {"year": 2100, "month": 12, "day": 29}}, "2101-01-28"),
    ({"date": "2024-01-01", "festival": "中秋"}, "只能给一个"),
    ({"festival": "中秋", "year": 2101}, "year"),
])
def test_tool_bad_inputs(run, args, needle):
    """Sent raw, so the script's own checks answer (the host would stop schema errors earlier)."""
    assert needle in fail(run("lunar_date", None, raw_input=json.dumps(args, ensure_ascii=False)))
